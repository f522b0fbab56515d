/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * RAII owners for UCP objects, used by the tools and the replication layer.
 * Construction reports failure through a ucs_status_t (no exceptions cross
 * into or out of UCX); an object whose status() is not UCS_OK owns nothing.
 */
#pragma once

#include "common/member_channel.hpp"
#include "common/node_collectives.hpp"
#include "common/node_peers.hpp"
#include "common/rank_set.hpp"
#include "common/ucp_owners.hpp"

#include <twochains/bootstrap.h>
#include <twochains/lane.h>
#include <twochains/progress.h>
#include <ucp/api/ucp.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tc {

/* Wait for a UCP request with the engine's wait policy, then free it. */
ucs_status_t request_wait(tc_progress_engine_h engine, ucs_status_ptr_t request,
                          double timeout_s = 30.0);

/* Memory registered with ucp_mem_map (allocated by UCX) and its packed rkey. */
class registered_memory {
public:
    registered_memory(ucp_context_h context, size_t length);
    ~registered_memory();
    registered_memory(const registered_memory &)            = delete;
    registered_memory &operator=(const registered_memory &) = delete;

    ucs_status_t status() const { return status_; }
    void *address() const { return address_; }
    size_t length() const { return length_; }
    /* what UCX mapped: length() rounded up to its allocation unit (a page) */
    size_t mapped_length() const { return mapped_length_; }
    ucp_mem_h memh() const { return memh_; }
    /* packed rkey, prefixed by the 8-byte remote address and the 8-byte
     * write-lane key (0 until ucp_node::allow_writes) */
    const std::vector<std::byte> &packed_descriptor() const { return descriptor_; }
    uint64_t write_key() const { return write_key_; }
    void set_write_key(uint64_t key);

private:
    ucp_context_h          context_;
    ucp_mem_h              memh_    = nullptr;
    void                   *address_ = nullptr;
    size_t                 length_;
    size_t                 mapped_length_ = 0;
    std::vector<std::byte> descriptor_;
    uint64_t               write_key_ = 0;
    ucs_status_t           status_;
};

/* A peer's registered memory as seen through an endpoint. */
struct remote_memory {
    uint64_t address   = 0;
    uint64_t write_key = 0;  /* its write-lane key at the peer */
    rkey_ptr rkey;
};

/* With @a length: the peer's memory is a put target for [address,
 * address+length), checked where we can see its registration
 * (tc_put_target_unpack); a range outside it fails. */
ucs_status_t remote_memory_unpack(ucp_ep_h ep, std::span<const std::byte> descriptor,
                                  remote_memory &out, size_t length = 0);

/* One put target of remote_memory_unpack_all(). */
struct remote_memory_request {
    ucp_ep_h                   ep;
    std::span<const std::byte> descriptor;
    size_t                     length;   /* > 0 */
    remote_memory              *out;
    ucs_status_t               status = UCS_INPROGRESS;   /* out */
};

/* remote_memory_unpack() of each request, checked as one batch
 * (tc_put_targets_unpack): what a region gets from all its members costs
 * two reads of the process's mappings, not two per member. Each request's
 * verdict is in its status (logged); returns the first that failed. */
ucs_status_t remote_memory_unpack_all(std::span<remote_memory_request> requests);

/*
 * One UCP context + worker + progress engine over the ranks of a bootstrap.
 * Worker addresses are exchanged once, by one allgatherv at construction;
 * the endpoint to a rank is created on first use (ep() or connect()), so a
 * rank that talks to a few others (its shard mates) holds endpoints to
 * those few only, whatever the job's size. The node owns the UCP objects
 * and the write lane; its peers (common/node_peers.hpp) and where its
 * collectives run (common/node_collectives.hpp) are parts of their own,
 * which the calls below forward to.
 */
class ucp_node {
public:
    explicit ucp_node(tc_bootstrap_h boot, uint64_t features = UCP_FEATURE_RMA);
    ~ucp_node();
    ucp_node(const ucp_node &)            = delete;
    ucp_node &operator=(const ucp_node &) = delete;

    /* Node ids index per-node state that grows with the largest id (linear
     * in the job size); the bound keeps an id a peer names (a joiner's, in
     * a sponsor's reply) from making us allocate without limit. */
    static constexpr int kMaxNodeId = 1 << 20;

    ucs_status_t status() const { return status_; }
    /* This rank gives up on the job (it saw a wrong byte, a peer did not
     * answer): the destructor then skips the closing flush and barrier,
     * which the other ranks, still waiting for this one's traffic, would
     * not reach, so that the launcher sees this rank's exit now and ends
     * the rest (as MPI_Abort), not when their own timeouts expire. */
    void abandon() { status_ = UCS_ERR_CANCELED; }
    ucp_context_h context() const { return context_.get(); }
    ucp_worker_h worker() const { return worker_.get(); }
    tc_progress_engine_h engine() const { return engine_.get(); }
    /* The endpoint to @a rank, created now if this is its first use;
     * nullptr (logged) if UCX cannot create it or the rank is unknown. */
    ucp_ep_h ep(int rank) const { return peers_.ep(rank); }
    ucs_status_t connect(int rank) const { return ep(rank) ? UCS_OK : UCS_ERR_UNREACHABLE; }
    /* endpoints created so far (to itself included) */
    int connected_peers() const { return peers_.connected(); }
    int rank() const { return peers_.self(); }
    int size() const { return peers_.size(); }

    /*
     * While the returned scope lives, this node's collectives (barrier(),
     * allgather_blobs(), exchange()) run among the nodes @a ids only (the
     * same distinct ids, in the same order, at each of them; this node among
     * them), over active messages between them (common/member_channel.hpp),
     * not over the bootstrap; allgather_blobs() then returns blobs indexed
     * by id, empty for ids outside the list. Nodes that open scopes over the
     * same ids open them in the same order. Not inside a poller.
     */
    class member_scope {
    public:
        ~member_scope();
        member_scope(const member_scope &)            = delete;
        member_scope &operator=(const member_scope &) = delete;
        ucs_status_t status() const { return channel_.status(); }

    private:
        friend class ucp_node;
        member_scope(ucp_node &node, uint64_t name, std::vector<int> ids, int my_index);
        ucp_node       &node_;
        member_channel channel_;
        member_channel *outer_;
    };
    ucs_status_t open_member_scope(std::span<const int> ids, std::unique_ptr<member_scope> &out);
    collective_inbox &inbox() const { return collectives_.inbox(); }

    /*
     * Move this node's collectives to the bootstrap of a new view (a
     * replication group admitting a joiner), whose rank i is the node with
     * id @a ids[i]; this node becomes @a my_id. Worker addresses are
     * exchanged over @a view_boot and endpoints created to nodes not known
     * yet (or known under another address). Afterwards allgather_blobs()
     * returns blobs indexed by id (empty for ids outside the view), and
     * collectives progress the worker only: this runs inside a progress
     * engine poller. With @a inline_ops the bootstrap's operations drive the
     * worker themselves (one over UCP puts) and run on this thread. Takes
     * @a view_boot (also on error).
     */
    ucs_status_t enter_view(tc_bootstrap_h view_boot, std::span<const int> ids, int my_id,
                            bool inline_ops = false);

    /* Bootstrap barrier, progressing the worker while it waits. */
    ucs_status_t barrier() const { return collectives_.barrier(); }

    /* Bootstrap allgatherv: @a all[r] receives rank r's bytes. */
    ucs_status_t allgather_blobs(std::span<const std::byte> mine,
                                 std::vector<std::vector<std::byte>> &all) const
    {
        return collectives_.allgather_blobs(mine, all);
    }

    /*
     * Collective among the nodes @a ids (this node among them; the same
     * list, in the same order, at each; nodes that share exchanges over a
     * list make them in the same order): @a to[i] goes to node ids[i] alone
     * and @a from[i] is what node ids[i] sent us, over active messages
     * between the two only (so an rkey meant for one peer reaches no
     * other). Progresses the way this node's collectives do; fails after
     * the bootstrap timeout or when UCX reports one of them failed.
     */
    ucs_status_t exchange_personal(std::span<const int> ids,
                                   const std::vector<std::vector<std::byte>> &to,
                                   std::vector<std::vector<std::byte>> &from)
    {
        return collectives_.exchange_personal(ids, to, from);
    }

    /* Exchange a registered region's descriptor with every rank. */
    ucs_status_t exchange(const registered_memory &mem, std::vector<remote_memory> &remotes);

    /* UCX reported an error on the endpoint to @a rank (peer closed,
     * unreachable): endpoints are created with UCP_ERR_HANDLING_MODE_PEER. */
    bool peer_failed(int rank) const { return peers_.failed(rank); }

    /* "posix/memory", "tcp/lo": the transport carrying RMA to @a rank */
    std::string rma_transport(int rank) const;

    /*
     * The write lane (<twochains/lane.h>): @a len bytes from @a src to
     * @a raddr at @a rank, by ucp_put_nbx where UCP has an RMA lane to it and
     * by an active message where it only emulates puts (or as
     * UCX_TC_WRITE_LANE says). Same completion (a request or NULL) and the
     * same order on one endpoint behind ucp_worker_fence as a put. @a header
     * lives until the request completes.
     */
    ucs_status_ptr_t write(int rank, const void *src, size_t len, uint64_t raddr,
                           const remote_memory &dst, const ucp_request_param_t &param,
                           tc_write_header_t &header);
    bool writes_over_am(int rank) const { return peers_.writes_over_am(rank); }
    /* "rma posix/memory.0", "am tcp/lo.0" */
    std::string write_lane_name(int rank) const;

    /* Memory the node ids in @a senders may write through the
     * active-message lane (every mirrored region's local copy); anything
     * else is rejected, counted and logged once. Gives @a mem its write key
     * (in its descriptor), so allow before exchanging it. */
    ucs_status_t allow_writes(registered_memory &mem, const rank_set &senders);
    void forbid_writes(const registered_memory &mem);
    tc_write_lane_stats_t write_lane_stats() const;
    /* the worker's write lane itself, for tools and tests */
    tc_write_lane_h write_lane() const { return write_lane_.get(); }

private:
    /* Destroyed in reverse: the write lane first, then the parts (whose
     * only UCX object, the view's bootstrap, ~ucp_node releases first), the
     * engine, the worker and the context; the order these had when the
     * node held the parts' state itself. */
    context_ptr            context_;
    worker_ptr             worker_;
    engine_ptr             engine_;
    node_collectives       collectives_;
    node_peers             peers_;
    write_lane_ptr         write_lane_;
    ucs_status_t           status_;
};

} // namespace tc
