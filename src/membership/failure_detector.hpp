/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Heartbeats, suspicion and expulsion. Every member bumps its heartbeat
 * column every UCX_TC_HEARTBEAT_INTERVAL; a view member whose heartbeat has
 * not moved for UCX_TC_SUSPECT_TIMEOUT, whose endpoint failed, or to which a
 * put failed is suspected.
 *
 * Invariants:
 *  - suspicion only grows within a view and spreads through the SST: every
 *    member ORs every view member's mask into its own (never its own bit);
 *  - a member that one it still trusts suspects is expelled: it stops, and
 *    its calls fail; checked before our own timeouts, which a stall of ours
 *    also trips;
 *  - a stall of ours (no watch for half a suspicion timeout) restarts the
 *    others' clocks instead of counting against them: over the
 *    active-message lane the verdict that expels us may still be queued;
 *  - a member that left cleanly (phase drained) is silent on purpose and is
 *    not suspected;
 *  - once per heartbeat interval the rows are audited (row_audit.hpp): a
 *    member whose row holds what it cannot is blamed, and suspected at the
 *    next look; what such a row says about others (its suspicions) is not
 *    believed while it holds the impossible.
 */
#pragma once

#include "core/context.hpp"
#include "membership/row_audit.hpp"

#include <vector>

namespace tc::membership {

class failure_detector {
public:
    explicit failure_detector(group_context &ctx);

    /* The clocks start now: after creation's collectives, and at every
     * view, so that nobody is suspected for the time those took. */
    void restart_clocks();
    /* a new view: nobody's silence so far counts against it */
    void start_epoch();

    /* an expelled member, or one that left, falls silent */
    bool watching() const
    {
        return !ctx_.state.is(member_state::expelled) && !ctx_.state.is(member_state::left);
    }
    unsigned watch();
    /* the next watch() looks, whatever its pass count (a quiet group's
     * passes mostly skip the detector) */
    void look_next_time() { passes_ = kWatchEvery - 1; }

private:
    void suspect(int row, const char *why);
    void publish_suspected();

    group_context        &ctx_;
    double               last_heartbeat_s_ = 0;
    double               last_watch_s_     = 0;  /* a longer gap: we stalled */
    static constexpr unsigned kWatchEvery  = 16;  /* engine passes per look */
    unsigned             passes_           = 0;
    std::vector<double>  last_seen_;        /* by row */
    std::vector<int64_t> seen_heartbeat_;   /* by row */
    std::vector<int>     put_failed_rank_;  /* reported by the pusher */
    member_mask          peer_mask_;        /* a peer's suspected column, read once */
    member_mask          spread_;           /* what the view members suspect */
    row_audit            audit_;
};

} // namespace tc::membership
