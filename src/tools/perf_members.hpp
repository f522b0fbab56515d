/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * How every twochains-perf shape starts its members: under twochains-run
 * (one member per process, bootstrap from the environment) or --inproc (all
 * members in this process, one thread each, in-process bootstrap).
 */
#pragma once

#include "common/ucp_handles.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>

namespace tc::perf {

/* Returns the worst exit code of the members (2: setup failed). */
inline int run_members(bool inproc, int members, double inproc_timeout_s,
                       const std::function<int(tc_bootstrap_h)> &member)
{
    if (!inproc) {
        tc_bootstrap_h boot;
        if (tc_bootstrap_create_from_env(&boot) != UCS_OK) {
            return 2;
        }
        bootstrap_ptr owner(boot);
        if (members != 0 && members != tc_bootstrap_size(boot)) {
            std::fprintf(stderr, "twochains-perf: --members %d but %d ranks were started\n",
                         members, tc_bootstrap_size(boot));
            return 2;
        }
        return member(boot);
    }

    tc_bootstrap_inproc_domain_h domain;
    if (tc_bootstrap_inproc_domain_create(members, inproc_timeout_s, &domain) != UCS_OK) {
        return 2;
    }
    std::vector<int> rc(members, 2);
    std::vector<std::thread> threads;
    for (int r = 0; r < members; ++r) {
        threads.emplace_back([&, r] {
            tc_bootstrap_h boot;
            if (tc_bootstrap_inproc_create(domain, r, &boot) != UCS_OK) {
                return;
            }
            bootstrap_ptr owner(boot);
            rc[r] = member(boot);
        });
    }
    for (auto &t : threads) {
        t.join();
    }
    tc_bootstrap_inproc_domain_destroy(domain);
    return *std::max_element(rc.begin(), rc.end());
}

} // namespace tc::perf
