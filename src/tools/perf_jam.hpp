/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * twochains-perf --jam: the replicated jam it sends instead of a plain
 * message, tcbench's server_side_sum (it adds the payload's integers to a
 * ried global), with --size bytes of payload, in Local, Injected or Cached
 * mode; and the plan of its first frame (how large slots must be).
 */
#pragma once

#include <twochains/ifunc.h>
#include <twochains/ifunc_exec.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace tc::perf {

class perf_jam {
public:
    perf_jam() = default;
    perf_jam(const perf_jam &)            = delete;
    perf_jam &operator=(const perf_jam &) = delete;
    ~perf_jam()
    {
        if (pkg != nullptr) {
            tc_ifunc_pkg_unload(pkg);
        }
    }

    /* @a mode: local, injected or cached; @a prefix: where tcbench is */
    bool load(const std::string &mode_name, const std::string &prefix)
    {
        for (int m = 0; m < TC_IFUNC_MODE_LAST; ++m) {
            if (mode_name == tc_ifunc_mode_names[m]) {
                mode = static_cast<tc_ifunc_mode_t>(m);
            }
        }
        if (mode == TC_IFUNC_MODE_LAST) {
            std::fprintf(stderr, "twochains-perf: --jam local|injected|cached\n");
            return false;
        }
        if (tc_ifunc_pkg_load(prefix.c_str(), "tcbench", &pkg) != UCS_OK ||
            tc_ifunc_pkg_element(pkg, "server_side_sum", &element) != UCS_OK) {
            std::fprintf(stderr, "twochains-perf: no tcbench package under '%s' (--pkgs, or "
                                 "UCX_TC_IFUNC_PKG_PATH)\n", prefix.c_str());
            return false;
        }
        return true;
    }

    /* the plan of a first frame with @a payload bytes (a new executor knows
     * no code): its capacity, and known_capacity, what the frames after it
     * take once the code is known */
    bool plan(size_t payload, tc_ifunc_exec_plan_t &out) const
    {
        tc_ifunc_exec_h exec;
        if (tc_ifunc_exec_create(TC_IFUNC_SECURITY_VERIFY, &exec) != UCS_OK) {
            return false;
        }
        std::string args(payload, '\0');
        tc_ifunc_exec_jam_t jam{pkg, element, mode, args.data(), payload};
        const bool ok = tc_ifunc_exec_plan_frame(exec, &jam, &out) == UCS_OK;
        tc_ifunc_exec_destroy(exec);
        return ok;
    }

    tc_ifunc_pkg_h  pkg     = nullptr;
    uint32_t        element = 0;
    tc_ifunc_mode_t mode    = TC_IFUNC_MODE_LAST;
};

} // namespace tc::perf
