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

} // namespace tc_test
