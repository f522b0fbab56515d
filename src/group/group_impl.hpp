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
 * A group with nothing under way goes quiet (group/quiet_poller.hpp): the
 * engine calls its poller every 4th loop only, which then reads one flag
 * and one word per peer and returns, until an application call, a peer's
 * new message or every 256th loop.
 *
 * It also does what spans components: creation, close (the phase column,
 * group/close_phases.hpp), and moving to the next view
 * (group/view_succession.hpp), narrowed in place after a failure or built
 * anew, in which case this object retires (superseded) and the group facade
 * moves calls to the new one.
 *
 * Invariants: only the engine's thread issues puts; a member drained of its
 * last put issues none after it; every member of a view runs the same
 * collectives in the same order, members and non-members alike, so one
 * member's failure to create fails everyone, never hangs them.
 */
#pragma once

#include "core/context.hpp"
#include "core/view_owner.hpp"
#include "core/wait.hpp"
#include "group/close_phases.hpp"
#include "group/quiet_poller.hpp"
#include "group/view_succession.hpp"
#include "large/large.hpp"
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
    /* not copyable: its components hold references to each other */
    ~group_impl();

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
        poller_.poke();
        return send_.get_buffer(size, buffer, block);
    }
    ucs_status_t commit()
    {
        poller_.poke();
        return send_.commit();
    }
    ucs_status_t flush(bool stable);
    ucs_status_t close();

    group_stats stats() const { return ctx_.stats.snapshot(ctx_.pusher.counts()); }
    const view &current_view() const { return ctx_.map.current(); }
    bool is_sender() const { return ctx_.map.my_sender() >= 0; }
    bool superseded() const { return ctx_.state.is(member_state::superseded); }
    bool has_left() const { return ctx_.state.is(member_state::left); }
    void set_owner(view_owner *owner) { next_.set_owner(owner); }

private:
    friend struct fault_injection_access;   /* api/own_row_writer.hpp */
    friend class view_succession;           /* moves this view's components on */

    ucs_status_t send_as(size_t size, uint32_t flags, fill_ref fill, bool block, bool urgent);
    static unsigned poll(void *arg);
    /* Nothing of ours is under way: the group may go quiet. */
    bool idle() const;
    void add_protocol_predicates();

    /* the ordinary protocol runs only in an undisturbed view */
    bool ok() const { return !ctx_.failed && ctx_.state.open(); }

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
    close_phases               phases_;
    quiet_poller               poller_;
    view_succession            next_;
    sst::predicates            protocol_;
};

} // namespace tc
