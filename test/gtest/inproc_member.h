/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * One member of an in-process bootstrap domain, as the multi-member tests
 * start it on its own thread: its bootstrap and its node, owned in that
 * order (the node goes first).
 */
#pragma once

#include "common/ucp_handles.hpp"

#include <twochains/bootstrap.h>

#include <memory>
#include <thread>
#include <vector>

namespace tc_test {

class inproc_member {
public:
    inproc_member(tc_bootstrap_inproc_domain_h domain, int rank)
    {
        tc_bootstrap_h raw;
        status_ = tc_bootstrap_inproc_create(domain, rank, &raw);
        if (status_ == UCS_OK) {
            boot_.reset(raw);
            node_   = std::make_unique<tc::ucp_node>(boot_.get());
            status_ = node_->status();
        }
    }

    /* UCS_OK, or why the bootstrap or the node could not be made */
    ucs_status_t status() const { return status_; }
    tc::ucp_node &node() { return *node_; }

private:
    tc::bootstrap_ptr             boot_;
    std::unique_ptr<tc::ucp_node> node_;
    ucs_status_t                  status_;
};

/*
 * @a n members of one in-process domain, a thread each: @a body(rank, node)
 * runs once that member's node is up and returns its status. Returns each
 * member's status: its body's, or why it could not start.
 */
template <class Body> std::vector<ucs_status_t> run_inproc_members(int n, Body body)
{
    tc_bootstrap_inproc_domain_h domain;
    std::vector<ucs_status_t> status(n, UCS_ERR_NO_PROGRESS);
    if (tc_bootstrap_inproc_domain_create(n, 60.0, &domain) != UCS_OK) {
        return status;
    }
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
        threads.emplace_back([&, r] {
            inproc_member member(domain, r);
            status[r] = (member.status() != UCS_OK) ? member.status() : body(r, member.node());
        });
    }
    for (auto &t : threads) {
        t.join();
    }
    tc_bootstrap_inproc_domain_destroy(domain);
    return status;
}

} // namespace tc_test
