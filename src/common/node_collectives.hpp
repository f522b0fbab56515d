/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Where the node's collectives (ucp_node::barrier(), allgather_blobs(),
 * exchange_personal(), common/ucp_handles.hpp) run and how they wait: over
 * the job's bootstrap from the node's construction, over a view's bootstrap
 * once ucp_node::enter_view() moved them, and over the innermost member
 * scope's channel (common/member_channel.hpp) while one is open. ucp_node
 * owns one and forwards to it; it reaches the endpoints and the progress
 * engine through the node's public interface, so the node's own state stays
 * the node's.
 *
 * Invariants:
 *  - the collectives run over one bootstrap at a time (current_bootstrap()):
 *    the open member scope's, else the view's, else the job's; ids() maps
 *    its ranks to node ids, nullptr while they are the job's ranks;
 *  - member scopes nest: set_scope() returns the scope it replaces, which
 *    the closing scope puts back, so the innermost open one is current;
 *  - a member scope's or a personal exchange's name counts the ones over
 *    the same id list before it, so nodes that open them in the same order
 *    agree on the name without talking;
 *  - the view's bootstrap may own registered memory and puts in flight (a
 *    group's view exchange): the node releases it (leave_view()) while its
 *    endpoints, worker and context still exist;
 *  - waiting: over the job's bootstrap a helper thread blocks in the
 *    operation while this one progresses the engine (peers may need our
 *    worker before they reach the same collective); over a view's, the
 *    worker only (enter_view() runs inside a poller); a member scope's
 *    rounds and a view's inline operations progress by themselves.
 *
 * Threads: the thread that drives the node's progress engine.
 */
#pragma once

#include "common/member_channel.hpp"
#include "common/ucp_owners.hpp"

#include <twochains/bootstrap.h>
#include <twochains/lane.h>
#include <ucp/api/ucp.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <utility>
#include <vector>

namespace tc {

class ucp_node;

class node_collectives {
public:
    /* @a boot: the job's bootstrap, which the caller keeps */
    node_collectives(ucp_node &node, tc_bootstrap_h boot) : node_(node), boot_(boot) {}
    node_collectives(const node_collectives &)            = delete;
    node_collectives &operator=(const node_collectives &) = delete;

    /* member collectives' messages reach inbox() by the node's worker */
    ucs_status_t attach(ucp_worker_h worker, tc_write_lane_h lane)
    {
        return inbox_.attach(worker, lane);
    }
    collective_inbox &inbox() const { return inbox_; }
    /* the bootstrap timeout (UCX_TC_BOOTSTRAP_TIMEOUT): how long a collective
     * among members or a personal exchange waits */
    double timeout() const { return timeout_s_; }
    void set_timeout(double timeout_s) { timeout_s_ = timeout_s; }

    /* the open member scope becomes @a scope (nullptr: none); returns the
     * one it replaces */
    member_channel *set_scope(member_channel *scope) { return std::exchange(members_, scope); }
    /* the name of the next member scope over @a ids */
    uint64_t next_scope_name(const std::vector<int> &ids)
    {
        return member_channel::name_of(ids, scopes_opened_[ids]++);
    }

    /* Collectives run over @a view_boot from now on, its rank i being node
     * @a ids[i] (ucp_node::enter_view() says the rest). */
    void enter_view(bootstrap_ptr view_boot, std::span<const int> ids, bool inline_ops);
    void leave_view() { view_boot_.reset(); }

    ucs_status_t barrier() const;
    ucs_status_t allgather_blobs(std::span<const std::byte> mine,
                                 std::vector<std::vector<std::byte>> &all) const;
    ucs_status_t exchange_personal(std::span<const int> ids,
                                   const std::vector<std::vector<std::byte>> &to,
                                   std::vector<std::vector<std::byte>> &from);
    /* the collectives' rank -> node id, or nullptr where they are the same */
    const std::vector<int> *ids() const
    {
        return members_ ? &members_->ids() : view_boot_ ? &view_ids_ : nullptr;
    }

private:
    /* run @a op, progressing as the current bootstrap needs (see above) */
    ucs_status_t collective(const std::function<ucs_status_t()> &op) const;
    tc_bootstrap_h current_bootstrap() const
    {
        return members_ ? members_->bootstrap() : view_boot_ ? view_boot_.get() : boot_;
    }

    ucp_node               &node_;
    tc_bootstrap_h         boot_;
    bootstrap_ptr          view_boot_;   /* set by enter_view() */
    std::vector<int>       view_ids_;    /* view_boot_ rank -> node id */
    bool                   inline_ops_ = false;
    double                 timeout_s_  = 30.0;
    mutable collective_inbox inbox_;
    member_channel         *members_ = nullptr;   /* the open member scope */
    std::map<std::vector<int>, uint32_t> scopes_opened_;   /* by ids */
    std::map<std::vector<int>, uint32_t> personal_exchanges_;   /* by ids */
};

} // namespace tc
