/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * A view change, Derecho's way, through the SST: wedge, ragged trim, install.
 *
 *  1. wedge: a member that sees a suspected view member, or a survivor
 *     sponsoring a joiner, pushes what it committed, fences, and stops
 *     sending, receiving and delivering (wedged = epoch);
 *  2. trim: once every survivor is wedged, the leader (first survivor)
 *     publishes per sender the fewest messages any survivor received, whom
 *     to admit and who leaves; a trim some survivor already adopted wins, so
 *     a new leader repeats an old leader's decision; followers copy it;
 *  3. once every survivor shows the same trim, each delivers up to it in
 *     sequence order, discards the rest, and says done; when every survivor
 *     is done, the composition root installs the next view.
 *
 * Invariants: a minority (half or fewer of the view survive) never installs a
 * view, and a decision that names one is its leader's fault, refused
 * (check_decision); every member installs the next view the trim names (who leaves is
 * part of the decision, never read from a member's own later suspicion: a
 * member that meanwhile suspects one more still installs that view, and
 * removes the other in the next change); the decision lands before its
 * trim_epoch (fenced); a join-only change (nobody suspected) waits until everything sent
 * was received everywhere, so its trim discards nothing; a held get_buffer()
 * slot defers our wedge to its commit(): the slot is ours in this view, and a
 * message committed after the wedge would miss the trim.
 */
#pragma once

#include "core/context.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace tc {

class delivery;
namespace smc {
class sender;
}

namespace membership {

/* A leader's decision, as read once from its row */
struct trim_decision {
    std::vector<int64_t> trim;        /* by creation sender column */
    int64_t              admit = 0;   /* 1 + the sponsor's row, or 0 */
    member_mask          leaving{0};  /* over the creation view's rows */
};

/* nullptr when @a d is a decision a leader could have made for this member
 * (row @a me), else why not: who leaves is in @a view (the view's rows,
 * over the creation view's), and more than half of the view stays (a
 * leader decides only then); whom it admits is through a member that
 * stays; no trim is negative or, unless this member leaves, past
 * @a received[o], what this member has of column o's sender (INT64_MAX for
 * a column of no sender of the view); a trim per column of @a received. */
const char *check_decision(const trim_decision &d, const member_mask &view, int me,
                           std::span<const int64_t> received);

class view_change {
public:
    view_change(group_context &ctx, smc::sender &send, delivery &deliver)
        : ctx_(ctx), send_(send), deliver_(deliver),
          leaving_(ctx.map.creation_member_count()),
          their_leaving_(ctx.map.creation_member_count())
    {
    }

    bool must_wedge() const;
    unsigned wedge();

    bool leads() const
    {
        return ctx_.state.changing_view() && ctx_.map.leader(ctx_.suspected) == ctx_.me();
    }
    unsigned lead_trim();

    bool follows() const { return ctx_.state.is(member_state::wedged); }
    unsigned follow_trim();

    /* every survivor delivered up to the same trim */
    bool install_due() const;

    /* The survivor that sponsors a joiner in this epoch (its row), or -1 */
    int sponsor_row() const;
    /* the leader's decision: 1 + the sponsor's row, or 0 */
    int64_t admitted() const { return ctx_.mine(ctx_.cols.admit); }
    /* the leader's decision: the rows that go on into the next view */
    std::vector<int> next_rows() const;
    /* somebody was suspected (not a join-only change) */
    bool lost_members() const { return ctx_.suspected.intersects(ctx_.map.mask()); }

    /* Receiving and reporting go on in a wedge that only admits a joiner:
     * every member is alive, so the trim can wait until nothing is in flight. */
    bool receives_while_wedged() const
    {
        return ctx_.state.is(member_state::wedged) && !lost_members() &&
               ctx_.mine(ctx_.cols.trim_epoch) != ctx_.epoch();
    }

    void start_epoch() { ctx_.set(ctx_.cols.wedged, 0); }
    double wedged_for_s() const { return now_s() - wedge_started_s_; }

private:
    /* @a row's published decision into @a d, read once, and checked
     * (check_decision): nullptr, or why no leader could have made it */
    const char *read_decision(int row, trim_decision &d) const;

    bool everything_received_everywhere() const;
    void publish_trim(const std::vector<int64_t> &trim, int64_t admit, const member_mask &leaving);
    /* @a row's leaving column, read once (no allocation) */
    const member_mask &leaving_of(int row) const;

    group_context &ctx_;
    smc::sender   &send_;
    delivery      &deliver_;
    double        wedge_started_s_ = 0;
    /* private copies of leaving columns (ours, and a peer's), sized once */
    mutable member_mask leaving_, their_leaving_;
    trim_decision       theirs_;   /* a leader's decision, read once */
    /* what this member has of each sender column: a trim's bound */
    mutable std::vector<int64_t> received_bound_;
};

} // namespace membership
} // namespace tc
