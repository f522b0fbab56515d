/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The RDMC engine: moves whole messages from a root to every member of a
 * member list over a tc::ucp_node, block by block, following a schedule
 * (schedule.hpp). UCP one-sided puts only; no threads of its own: a poller
 * on the node's progress engine does everything.
 *
 * Per member, at creation (collective, like the SMC group):
 *   - a pool of `buffers` receive buffers of `max_message` bytes each, one
 *     ucp_mem_map'ed region whose address and rkey every member learns;
 *   - control words, int64, one registration per writer (the part of
 *     member w holds what w writes, and only w receives its rkey, so no
 *     member can write a word in another's name):
 *       offer[r]        root r's current transfer: (index+1 mod 2^24) << 40 | size
 *       ready[r][m]     member m is ready for root r's transfer i in buffer b:
 *                       (i+1) << 16 | b   (written by m to every member)
 *       arrived[r][p]   at member m: blocks of root r's transfers that p has put
 *                       into m, cumulative (written by p only, to m only)
 *
 * A control word is a peer's input: read once per look, checked against
 * what its writer can have written (an offer no larger than our buffers, a
 * buffer index we have, a ready word no further than the transfer we still
 * owe it blocks of, an arrived count the schedule allows and that never
 * shrinks). A word that fails on two looks in a row (a put may be landing:
 * a torn word is not a lie) is its writer's fault: counted, reported once
 * through on_peer_fault, and the engine reads and writes nothing of that
 * member's from then on, while transfers that do not pass through it go
 * on. An offer is taken only when two looks read the same word.
 *
 * One transfer, root r, index i, size S, k = ceil(S / block) blocks:
 *   1. r writes offer[r] to every member, once every member is ready for its
 *      transfer i-1 (so nobody misses an offer).
 *   2. Each member accepts it (in offer order, or in the order the owner
 *      calls accept()) when it has finished r's transfer i-1 and has a free
 *      buffer, and announces ready[r][me] = (i+1, buffer) to every member.
 *   3. Each member runs its part of the schedule in step order: a block goes
 *      to a peer once the member has it, the peer announced ready for (r, i),
 *      and no other block of ours is in flight to that peer (nor more than
 *      max_sends_in_flight in all). A block is one ucp_put_nbx straight from
 *      the registered buffer it sits in (zero-copy: the pool's memh goes with
 *      the put), then ucp_worker_fence, then a put of arrived[r][me] to the
 *      peer. The fence is the "data, then signal" guarantee: the receiver
 *      never polls payload bytes, only its arrived words, one per sender.
 *   4. When all k blocks have arrived, on_receive(root, index, span) runs at
 *      the receiver; the buffer stays the application's until release()
 *      (or until the callback returns, with auto_release), and is reused only
 *      once its relay puts have completed too.
 *
 * Transfers of one root are processed in order everywhere. Transfers of
 * different roots run concurrently: each member accepts them in offer
 * discovery order (auto) or in the order of accept() calls (manual_accept),
 * as long as it has free buffers. Deadlock freedom with concurrent roots:
 * guaranteed when buffers >= the number of roots that may send at once, or
 * when every member calls accept() in the same order (a total order, e.g.
 * the group's sequence numbers) and releases in that order.
 *
 * Threads: every call and every callback happens on the thread that drives
 * the node's progress engine. Callbacks run inside the engine's poller: they
 * may call send(), release(), accept(), get_send_buffer(), but must not
 * drive the progress engine themselves (no tc_progress*, wait_idle, close).
 */
#pragma once

#include "common/ucp_handles.hpp"
#include "rdmc/schedule.hpp"
#include "sst/pusher.hpp"

#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace tc::rdmc {

/* Default block size when neither the parameter nor UCX_TC_RDMC_BLOCK is set. */
constexpr size_t kDefaultBlockSize = size_t{1} << 20;

/* UCX_TC_RDMC_BLOCK ("1m", "256k", "65536"; UCX's memunits parser, table
 * in rdmc_config.c); kDefaultBlockSize when unset; 0 with an error logged
 * when set to something that is not a positive size. */
size_t block_size_from_env();

/* "1m" -> 1048576; binary units k/m/g with optional "b"/"ib"; false if bad. */
bool parse_size(const char *text, size_t &out);

struct engine_params;

/* Collective over @a node's bootstrap, before any region exists: every rank
 * learns whether the members' parameters agree (UCS_ERR_INVALID_PARAM on
 * every rank if not, the reason logged by the members); @a block is the
 * block size the members use. */
ucs_status_t agree_on_params(ucp_node &node, const engine_params &params, bool member,
                             size_t &block);

/* A message that arrived (receivers), or whose sending finished (the root). */
struct transfer_info {
    int                        root;       /* member index of the root, view order */
    int                        root_rank;  /* its bootstrap rank */
    int64_t                    index;      /* the root's transfer number: 0, 1, ... */
    std::span<const std::byte> data;
};

struct engine_params {
    std::vector<int> members;             /* bootstrap ranks, in view order */
    size_t           max_message = 0;     /* capacity of each receive buffer, > 0 */
    size_t           block_size  = 0;     /* 0: block_size_from_env() */
    unsigned         buffers     = 2;     /* receive buffers per member */
    schedule_kind    kind        = schedule_kind::binomial;
    unsigned         max_sends_in_flight = 1;  /* data puts per member at a time */
    bool             auto_release  = true;  /* buffer back to the pool after on_receive */
    bool             manual_accept = false; /* the owner calls accept(root) in its order */
    std::function<void(const transfer_info &)> on_receive;  /* all blocks arrived here */
    std::function<void(const transfer_info &)> on_sent;     /* root: our puts completed */
    std::function<void(int root, int64_t index, size_t size)> on_offer;  /* optional */
    /* optional: member @a member wrote @a what into a control word of ours,
     * a value it cannot have written (see the protocol above); once per
     * member. Without it the fault is logged. */
    std::function<void(int member, const char *what)> on_peer_fault;
};

struct engine_stats {
    uint64_t transfers_sent     = 0;  /* as root, completed */
    uint64_t transfers_received = 0;
    uint64_t bytes_sent         = 0;  /* payload bytes we put (root and relay) */
    uint64_t bytes_received     = 0;  /* payload bytes of completed receives */
    uint64_t blocks_sent        = 0;  /* data puts issued */
    uint64_t blocks_received    = 0;
    uint64_t control_puts       = 0;  /* arrived counters, ready words, offers */
    uint64_t peer_busy_waits    = 0;  /* a send waited for the previous block to that peer */
    uint64_t not_ready_waits    = 0;  /* a send waited for the peer's ready word */
    uint64_t peer_faults        = 0;  /* control words no honest peer writes, blamed */
};

class engine_impl;
class engine;

namespace fault_injection {
/* For the hostile-member tests (test/helpers/group_fault_probe.cc): our own
 * control word @a which ("offer", "ready" or "arrived", for root @a root)
 * := @a value, pushed to every member, and kept so: the engine writes
 * @a value whenever it would write that word. It reaches nothing a member
 * cannot write anyway (its own part). Not part of the installed API. */
ucs_status_t keep_own_control_word(engine &e, std::string_view which, int root, int64_t value);
} // namespace fault_injection

class engine {
public:
    /*
     * Collective over every rank of @a node's bootstrap, in the same order
     * on every rank. Ranks outside params.members take part and get an empty
     * @a out. Parameters that differ between members fail everywhere with
     * UCS_ERR_INVALID_PARAM.
     */
    static ucs_status_t create(ucp_node &node, const engine_params &params,
                               std::unique_ptr<engine> &out);
    ~engine();
    engine(const engine &)            = delete;
    engine &operator=(const engine &) = delete;

    /*
     * Multicast @a data (size <= max_message) from this member to all. Starts
     * when this member's previous transfers have; returns UCS_INPROGRESS and
     * the transfer's index. @a data must stay unchanged until on_sent. If it
     * lies in a buffer from get_send_buffer(), the puts are zero-copy from
     * registered memory; otherwise UCP registers or copies as the transport
     * needs.
     */
    ucs_status_t send(std::span<const std::byte> data, int64_t *index_p = nullptr);

    /* A registered pool buffer of @a size bytes to fill, then send() it.
     * UCS_ERR_NO_RESOURCE when every buffer is in use. */
    ucs_status_t get_send_buffer(size_t size, std::span<std::byte> &buffer);

    /* manual_accept: take root @a root's next transfer next (view index). */
    ucs_status_t accept(int root);

    /* Give a received (or, without auto_release, a sent pool) buffer back. */
    ucs_status_t release(int root, int64_t index);

    /* Nothing queued, in flight or unaccepted here. */
    bool idle() const;

    /* Progress the node's engine until idle() or the timeout. */
    ucs_status_t wait_idle(double timeout_s = 60.0);

    /* Collective over the node's bootstrap: wait idle, flush, barrier. */
    ucs_status_t close();

    engine_stats stats() const;
    sst::put_counts control_put_counts() const;
    size_t block_size() const;
    size_t max_message() const;
    int my_index() const;
    int member_count() const;
    schedule_kind kind() const;

    /* Human-readable state (queues, per-root transfers, buffers): debugging. */
    void dump(FILE *out) const;

    explicit engine(std::unique_ptr<engine_impl> impl);

private:
    friend ucs_status_t fault_injection::keep_own_control_word(engine &, std::string_view, int,
                                                               int64_t);
    std::unique_ptr<engine_impl> impl_;
};

} // namespace tc::rdmc
