/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The value types of a group's API: its parameters, the messages, views and
 * jam events it hands out, and its counters. The ground floor of the
 * replication layer: every component below the facade (api/group.hpp)
 * speaks in them.
 */
#pragma once

#include "common/ucp_handles.hpp"
#include "sst/pusher.hpp"

#include <twochains/ifunc.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

namespace tc {

enum class delivery_mode {
    ordered,  /* total order, delivered once stable at every member */
    raw       /* delivered on receipt, per-sender FIFO only */
};

/* What send() calls, once, to write a message in place: a non-owning
 * reference to any callable void(std::span<std::byte>) (a lambda, a
 * std::function, a function), valid for the call only. One indirect call,
 * no allocation, however much the callable captures. */
class fill_ref {
public:
    template<class F>
        requires(std::is_invocable_v<F &, std::span<std::byte>> &&
                 !std::is_same_v<std::remove_cvref_t<F>, fill_ref>)
    fill_ref(F &&f) noexcept // NOLINT: converts like std::function does
        : callable_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
          call_([](void *c, std::span<std::byte> b) {
              (*static_cast<std::remove_reference_t<F>*>(c))(b);
          })
    {
    }
    void operator()(std::span<std::byte> b) const { call_(callable_, b); }

private:
    void *callable_;
    void (*call_)(void *, std::span<std::byte>);
};

struct message {
    int                        sender;  /* bootstrap rank of the sender */
    int64_t                    index;   /* k: the sender's message number */
    int64_t                    seq;     /* global sequence k*S + sender index */
    std::span<const std::byte> data;
};

struct view {
    int64_t          epoch = 0;
    std::vector<int> members;  /* bootstrap ranks, in view order */
    std::vector<int> senders;  /* subset of members */
};

/* A replicated jam as it ran (or was rejected) at this member. */
struct jam_event {
    int                        sender;   /* member rank of the sender */
    int64_t                    index;    /* the sender's message number */
    int64_t                    seq;      /* in the view's total order */
    int64_t                    view;     /* epoch */
    uint64_t                   pkg_id;
    uint32_t                   element;
    std::span<const std::byte> payload;  /* valid for the callback */
    int                        status;   /* what the jam set (0: success) */
    tc_ifunc_reject_t          reject;   /* TC_IFUNC_REJECT_NONE: it ran */
};

enum class smc_mode {
    urgent,  /* every message pushed at once, one receive report per message */
    batched  /* committed slots and receive reports go out in batches */
};

struct group_params {
    std::vector<int>                        members;
    std::vector<int>                        senders;  /* empty: every member sends */
    size_t                                  max_payload = 1024;
    unsigned                                window      = 64;
    delivery_mode                           mode        = delivery_mode::ordered;
    /* SMC mode, batch size B and flush deadline T; unset: UCX_TC_SMC_MODE,
     * UCX_TC_SMC_BATCH, UCX_TC_SMC_FLUSH_US */
    std::optional<smc_mode>                 smc;
    std::optional<unsigned>                 batch;
    std::optional<double>                   flush_us;
    /* A progress thread drives the engine (tc_progress_thread_start) and
     * application threads call send() concurrently (batched mode only):
     * senders then never touch UCX; the engine's thread pushes. */
    bool                                    threaded_senders = false;
    /* Messages above max_payload go over RDMC (binomial pipeline) when this
     * is non-zero: the largest such message. Their place in the total order
     * is an SMC slot; they are delivered, like any message, once stable. */
    size_t                                  rdmc_max_message = 0;
    size_t                                  rdmc_block       = 0;   /* 0: UCX_TC_RDMC_BLOCK */
    /* Delivery: one message per call, or (set one of the two, not both)
     * consecutive messages in delivery order per call, fewer calls at high
     * rates. A message's data points into its slot (or RDMC buffer) and is
     * valid until the callback returns. */
    std::function<void(const message &)>    on_deliver;
    std::function<void(std::span<const message>)> on_deliver_span;
    std::function<void(const view &)>       on_view;
    /* Joins (see group::join). A member with a join port admits joiners
     * that connect to it there (0: it admits none). When it sponsors one,
     * get_state is called on it after the old view's last delivery and its
     * bytes reach the joiner's set_state before the new view's first
     * message. Not with threaded_senders. */
    /* Replicated jams (send_jam): every member runs each at delivery, in
     * sequence order, against its jam_state (a region, or a ried's data);
     * a joiner receives the region and the codes with the state transfer.
     * jam_security unset: UCX_TC_IFUNC_SECURITY. send_jam() sends in
     * jam_mode unless told otherwise. on_jam sees each jam run or rejected
     * here, after it ran, in delivery order. */
    /* Packages whose jams the group runs: their code must be the same at
     * every member (tc_ifunc_pkg_code_digest), or creation and joins are
     * refused. Empty: any package; a member whose build of one differs
     * then finds out at the first frame it cannot run, and leaves. */
    std::vector<tc_ifunc_pkg_h>             jam_packages;
    std::span<std::byte>                    jam_state;
    std::optional<tc_ifunc_security_t>      jam_security;
    tc_ifunc_mode_t                         jam_mode = TC_IFUNC_MODE_LOCAL;
    std::function<void(const jam_event &)>  on_jam;
    uint16_t                                join_port = 0;
    std::function<std::vector<std::byte>()> get_state;
    std::function<void(std::span<const std::byte>)> set_state;
};

struct group_stats {
    uint64_t        sent            = 0;  /* application messages */
    uint64_t        nulls_sent      = 0;
    uint64_t        delivered       = 0;  /* application messages delivered here */
    uint64_t        callback_errors = 0;  /* delivery callbacks that threw */
    uint64_t        window_stalls   = 0;  /* sends that found the window full */
    uint64_t        batches         = 0;  /* pushes of committed slots */
    uint64_t        batched_msgs    = 0;  /* messages (nulls included) in them */
    uint64_t        flush_full      = 0;  /* batch reached B */
    uint64_t        flush_deadline  = 0;  /* oldest waited T */
    uint64_t        flush_idle      = 0;  /* the engine found the sender idle */
    uint64_t        flush_explicit  = 0;  /* flush() or an urgent message */
    uint64_t        views           = 0;  /* views installed after the first */
    uint64_t        trimmed         = 0;  /* received messages discarded beyond a trim */
    uint64_t        rdmc_sent       = 0;  /* large messages sent over RDMC */
    uint64_t        rdmc_delivered  = 0;
    uint64_t        joins           = 0;  /* views installed with a joiner */
    uint64_t        join_rejects    = 0;  /* join requests refused here */
    uint64_t        jams_sent       = 0;  /* replicated jams sent from here */
    uint64_t        jam_codes_sent  = 0;  /* of them, frames that carried code */
    uint64_t        jams_run        = 0;  /* replicated jams run here */
    uint64_t        jam_errors      = 0;  /* of them, jams that set a failure status */
    uint64_t        peer_faults     = 0;  /* values members wrote into our memory that
                                             they could not legally have written (a
                                             slot header, a descriptor): each writer
                                             is suspected and leaves the view */
    uint64_t        jam_rejects     = 0;  /* jams rejected here (every member alike,
                                             or this member's, which then left) */
    sst::put_counts puts;
};

} // namespace tc
