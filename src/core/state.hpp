/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Where a member stands in its current view, as one explicit state:
 *
 *   open ──wedge──> wedged ──trim delivered──> trimmed ──install──> open (epoch + 1)
 *                     │                          │
 *                     │                          └──rebuild / joiner──> superseded
 *                     └──(leader) too few survivors──> minority   (also from trimmed)
 *   any ──a trusted member suspects us──> expelled
 *   open ──a delivered jam this member cannot run──> left (the others, who
 *                 ran it, suspect the silence and go on without us)
 *   open ──close() pushed phase 2──> drained
 *
 * superseded, minority, expelled, left and drained are final for this view's
 * object: superseded hands calls to the next view's object; minority and
 * expelled and left fail them; drained means our last put went out, so nothing may
 * follow it (a peer that sees every member drained frees its regions).
 *
 * A protocol error (a failed put, a malformed slot) is not a state: the
 * member stops the ordinary protocol (sending, receiving, delivering) but
 * still follows membership, so that the others can wedge and go on.
 *
 * Threads: written by the engine's thread only; threaded senders read it.
 */
#pragma once

#include <atomic>

namespace tc {

enum class member_state { open, wedged, trimmed, minority, expelled, left, superseded, drained };

class group_state {
public:
    member_state get() const { return s_.load(std::memory_order_acquire); }
    void enter(member_state next) { s_.store(next, std::memory_order_release); }

    bool is(member_state s) const { return get() == s; }
    bool open() const { return is(member_state::open); }
    /* wedged, trimmed or a minority: the view change protocol runs */
    bool changing_view() const
    {
        const member_state s = get();
        return s == member_state::wedged || s == member_state::trimmed ||
               s == member_state::minority;
    }
    /* this member can no longer take part in the group */
    bool out_of_group() const
    {
        const member_state s = get();
        return s == member_state::expelled || s == member_state::minority ||
               s == member_state::left;
    }

private:
    std::atomic<member_state> s_{member_state::open};
};

} // namespace tc
