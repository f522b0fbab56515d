/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * One view of a group: the composition root. It owns the shared context
 * (SST, slot region, pusher, view maps, state, counters) and one component
 * per protocol, and its single poller calls them in one visible order:
 *
 *   reap puts, joins, failure detector, wedge, trim (lead, follow), install,
 *   close requests, send (batched push), receive, nulls, deliver, report.
 *
 * A group with nothing under way goes quiet: the engine calls its poller
 * every 4th loop only (tc_progress_poller_set_quiet), which then reads one
 * flag and one word per peer (its 'sent' counter) and returns, until an
 * application call, a peer's new message or every 256th loop; so the idle
 * shards of a node cost an active one next to nothing.
 *
 * It also does what spans components: creation, close (the phase column),
 * and moving to the next view, narrowed in place after a failure or built
 * anew (with a joiner, or over the survivors when RDMC must span exactly
 * the members), in which case this object retires (superseded) and the
 * group facade moves calls to the new one.
 *
 * Invariants: only the engine's thread issues puts; a member drained of its
 * last put issues none after it; every member of a view runs the same
 * collectives in the same order, members and non-members alike, so one
 * member's failure to create fails everyone, never hangs them.
 */
#pragma once

#include "core/context.hpp"
#include "core/view_owner.hpp"
#include "large/large.hpp"
#include "core/wait.hpp"
#include "jam/replicated_jams.hpp"
#include "membership/failure_detector.hpp"
#include "membership/join_sponsor.hpp"
#include "membership/view_change.hpp"
#include "membership/view_exchange.hpp"
#include "order/delivery.hpp"
#include "smc/receiver.hpp"
#include "smc/sender.hpp"

#include <memory>

namespace tc {

class group_impl {
public:
    group_impl(ucp_node &node, const group_params &params, std::vector<int> senders,
               const group_settings &settings, std::shared_ptr<replicated_jams> jams,
               int64_t epoch = 1);
    ~group_impl();
    group_impl(const group_impl &)            = delete;
    group_impl &operator=(const group_impl &) = delete;

    /* Collective: the regions (SST, slots, exchange) of the view. */
    ucs_status_t init();
    /* Collective: RDMC for messages above max_payload. */
    ucs_status_t add_large_messages();
    /* After every collective step of creation: the clocks start now. */
    ucs_status_t start();
    ucs_status_t listen_for_joiners() { return joins_.listen(); }

    /* The part of creating a view every member of it does together: SST,
     * SMC and RDMC, the sponsor's state to a joiner, then start. */
    static ucs_status_t build_view(ucp_node &node, const group_params &p,
                                   std::vector<int> senders, int64_t epoch, int sponsor_id,
                                   bool joiner, std::shared_ptr<replicated_jams> jams,
                                   std::unique_ptr<group_impl> &out);

    ucs_status_t send(size_t size, fill_ref fill,
                      bool block, bool urgent);
    ucs_status_t send_jam(const tc_ifunc_exec_jam_t &jam, bool block);
    tc_ifunc_mode_t jam_mode() const { return ctx_.params.jam_mode; }
    ucs_status_t get_buffer(size_t size, std::span<std::byte> &buffer, bool block)
    {
        poke();
        return send_.get_buffer(size, buffer, block);
    }
    ucs_status_t commit()
    {
        poke();
        return send_.commit();
    }
    ucs_status_t flush(bool stable);
    ucs_status_t close();

    group_stats stats() const { return ctx_.stats.snapshot(ctx_.pusher.counts()); }
    const view &current_view() const { return ctx_.map.current(); }
    bool is_sender() const { return ctx_.map.my_sender() >= 0; }
    bool superseded() const { return ctx_.state.is(member_state::superseded); }
    bool has_left() const { return ctx_.state.is(member_state::left); }
    void set_owner(view_owner *owner) { owner_ = owner; }

private:
    friend struct fault_injection_access;   /* api/own_row_writer.hpp */

    ucs_status_t send_as(size_t size, uint32_t flags, fill_ref fill, bool block, bool urgent);
    static unsigned poll(void *arg);
    bool idle() const;
    bool woken();
    void note_peers_sent();
    /* any thread: a quiet group looks at everything on the next pass */
    void poke();
    void set_quiet(bool quiet);
    void add_protocol_predicates();

    /* the ordinary protocol runs only in an undisturbed view */
    bool ok() const { return !ctx_.failed && ctx_.state.open(); }
    bool receiving() const
    {
        return ok() || (!ctx_.failed && change_.receives_while_wedged());
    }

    /* close(): the phase column; threaded, the engine's thread pushes it */
    ucs_status_t set_phase(int64_t phase);
    ucs_status_t push_phase(int64_t phase);
    bool drained() const;

    /* every survivor delivered the same prefix: the next view */
    unsigned move_on();
    unsigned install_narrowed_view();
    bool admit_joiner(int sponsor);
    bool rebuild_over_survivors();
    void move_to_next_view(ucs_status_t entered, const view &next, int sponsor_id, int max_id,
                           bool with_joiner);

    void log_sender(ucs_log_level_t level) const;

    std::shared_ptr<replicated_jams> jams_;   /* outlives the view: codes, state */
    group_context              ctx_;
    large_messages             large_;
    waiter                     wait_;
    smc::receiver              receive_;
    delivery                   deliver_;
    smc::sender                send_;
    membership::failure_detector detect_;
    membership::view_change    change_;
    membership::view_exchange  exchange_;
    membership::join_sponsor   joins_;
    sst::predicates            protocol_;
    std::atomic<int64_t>       phase_request_{0};  /* threaded close() -> engine's thread */
    /* A quiet group (idle() after a pass that did nothing) is called every
     * TC_PROGRESS_QUIET_EVERY loops, and costs then only woken(): a flag and
     * the peers' 'sent' words. */
    static constexpr unsigned  kQuietLookEvery = 64;   /* looks: 256 loops */
    /* ... or sooner, once a heartbeat interval passed since it went quiet
     * (the clock read every kQuietClockEvery looks): when hundreds of
     * processes share a few cores, 256 loops can take seconds, and the
     * heartbeats must not wait for them */
    static constexpr unsigned  kQuietClockEvery = 8;
    struct watched_word {
        const int64_t *word;
        int64_t       seen;
    };
    /* what a quiet look touches, side by side */
    std::atomic<bool>          quiet_{false};   /* the engine's thread writes it */
    std::atomic<bool>          poked_{false};
    unsigned                   quiet_passes_ = 0;
    double                     quiet_until_s_ = 0;   /* the next heartbeat's time */
    std::vector<watched_word>  peer_sent_;   /* quiet: what woken() compares */
    int                        poller_id_ = -1;
    view_owner                 *owner_    = nullptr;
};

} // namespace tc
