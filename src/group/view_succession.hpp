/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The next view of a group, once every survivor delivered the same prefix
 * (view_change::install_due): narrowed in place after a failure (the same
 * SST and slots, the survivors' part), or built anew, with a joiner or over
 * the survivors when RDMC must span exactly the members. A view built anew
 * is handed to the view's owner (the facade), and this one retires.
 *
 * Invariants: every survivor takes the same branch (the leader's admitted
 * word and the exchange are agreed state); counters restart for the new
 * epoch before the epoch itself is pushed, fenced, so nobody reads old
 * counters as new ones; a view that fails to build fails the group, never
 * hangs it (the others have left this view too).
 */
#pragma once

#include "core/context.hpp"
#include "core/view_owner.hpp"

#include <memory>

namespace tc {

class group_impl;
class delivery;
class quiet_poller;
class replicated_jams;
namespace smc {
class receiver;
class sender;
}
namespace membership {
class failure_detector;
class join_sponsor;
class view_change;
class view_exchange;
}

class view_succession {
public:
    /* the components of @a view it moves on (friend of group_impl) */
    explicit view_succession(group_impl &view);

    void set_owner(view_owner *owner) { owner_ = owner; }
    unsigned move_on();

private:
    unsigned install_narrowed_view();
    /* false: the rendezvous failed everywhere alike; narrow instead */
    bool admit_joiner(int sponsor);
    /* false: the exchange failed (another failure); narrow instead */
    bool rebuild_over_survivors();
    void move_to_next_view(ucs_status_t entered, const view &next, int sponsor_id, int max_id,
                           bool with_joiner);

    group_context                          &ctx_;
    smc::sender                            &send_;
    smc::receiver                          &receive_;
    delivery                               &deliver_;
    membership::failure_detector           &detect_;
    membership::view_change                &change_;
    membership::view_exchange              &exchange_;
    membership::join_sponsor               &joins_;
    quiet_poller                           &poller_;
    const std::shared_ptr<replicated_jams> &jams_;   /* outlives the view */
    view_owner                             *owner_ = nullptr;
};

} // namespace tc
