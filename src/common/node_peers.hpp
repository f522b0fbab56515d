/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The node's table of peers (ucp_node, common/ucp_handles.hpp), indexed by
 * node id: each peer's worker address, the endpoint to it (created on first
 * use), whether UCX reported an error on that endpoint, and which lane
 * writes to it take. ucp_node owns one and forwards ep(), peer_failed(),
 * connected_peers() and writes_over_am() to it. ep() and writes_over_am()
 * run on every write: their common case (an endpoint exists, its lane is
 * known) is inline here; only a peer's first use goes out of line.
 *
 * Invariants:
 *  - eps_, peers_, peer_errors_ and addresses_ hold one entry per id; they
 *    grow together (add()) and never shrink;
 *  - a peer's record never moves: UCX holds its address as the error
 *    argument of the endpoint to it;
 *  - an endpoint was made to its id's current address: set_address() with
 *    another address closes it, and the next use connects to the new one;
 *  - an endpoint is bound to its id in the write lane
 *    (tc_write_lane_bind_sender) from its creation until it is closed, so
 *    a write in that id's name is believed on that endpoint only;
 *  - peer_errors_[id]: the endpoint to id has peer error handling, the only
 *    kind UCX closes by force;
 *  - the worker and the write lane belong to the node. Endpoints are closed
 *    by set_address() and close_all() only, which the node calls while the
 *    worker lives; destroying the table closes nothing.
 *
 * Threads: the thread that progresses the node's worker (a single-threaded
 * one).
 */
#pragma once

#include <twochains/lane.h>
#include <twochains/progress.h>
#include <ucp/api/ucp.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

namespace tc {

class node_peers {
public:
    /* @a self: this node's id, its rank in the job until a view renames it */
    explicit node_peers(int self) : self_(self) {}
    node_peers(const node_peers &)            = delete;
    node_peers &operator=(const node_peers &) = delete;

    /* The node's worker, where endpoints are created, and its write lane,
     * where they are bound: the node creates both after this table. */
    void attach(ucp_worker_h worker, tc_write_lane_h lane);

    int self() const { return self_; }
    void set_self(int id) { self_ = id; }
    int size() const { return static_cast<int>(eps_.size()); }
    /* ids below @a count become known (without an address until set) */
    void add(size_t count);
    /* @a id's worker address; an endpoint to an older one is closed */
    void set_address(int id, std::vector<std::byte> address);

    /* The endpoint to @a id, created now if this is its first use; nullptr
     * (logged) if UCX cannot create it or the id is unknown. */
    ucp_ep_h ep(int id) const
    {
        if (static_cast<size_t>(id) < eps_.size() && eps_[id] != nullptr) {
            return eps_[id];
        }
        return connect(id);
    }
    /* endpoints created so far (to itself included) */
    int connected() const;
    /* UCX reported an error on the endpoint to @a id */
    bool failed(int id) const
    {
        return static_cast<size_t>(id) < peers_.size() &&
               peers_[id]->failed.load(std::memory_order_acquire);
    }
    /* writes to @a id (a known id) go by active messages, not by puts */
    bool writes_over_am(int id) const
    {
        const peer &p = *peers_[id];
        return (p.lane == TC_WRITE_LANE_AUTO) ? resolve_lane(id) : p.lane == TC_WRITE_LANE_AM;
    }

    /* Close every endpoint, waiting for each with @a engine: force where
     * UCX allows it, else flush (the node made sure no peer still needs a
     * close handshake). */
    void close_all(tc_progress_engine_h engine);

private:
    /* What the node keeps per peer id; UCX holds its address as the
     * endpoint's error argument, so each lives apart and never moves. */
    struct peer {
        int               rank;
        std::atomic<bool> failed{false};
        /* the lane writes take, TC_WRITE_LANE_AUTO until looked at */
        tc_write_lane_mode_t lane = TC_WRITE_LANE_AUTO;
    };

    /* ep()'s first use of @a id (or an unknown id: logged) */
    ucp_ep_h connect(int id) const;
    ucs_status_t create_ep(const ucp_address_t *remote, int id, bool peer_errors) const;
    /* the lane of the endpoint to @a id, asked of the write lane once */
    bool resolve_lane(int id) const;

    int                    self_;
    ucp_worker_h           worker_ = nullptr;
    tc_write_lane_h        lane_   = nullptr;
    std::vector<std::vector<std::byte>> addresses_;  /* by id: worker address */
    /* created on first use (ep()), hence mutable */
    mutable std::vector<ucp_ep_h> eps_;
    std::vector<std::unique_ptr<peer>> peers_;   /* by id */
    mutable std::vector<bool> peer_errors_;  /* endpoint has peer error handling */
};

} // namespace tc
