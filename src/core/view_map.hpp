/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The current view and its maps onto the creation layout of the SST and the
 * slot region: view member -> row (its original member index), view sender
 * -> its row and its column (original sender index).
 *
 * Invariants: rows and columns never move; a later view is a subset of the
 * creation view (a view with a joiner is a new SST, not a later view here);
 * the leader of the survivors is the first of them in view order, so every
 * member that sees the same suspicions names the same leader.
 */
#pragma once

#include "core/group_types.hpp"
#include "core/member_mask.hpp"

#include <cstdint>
#include <vector>

namespace tc {

class view_map {
public:
    view_map(view creation, int my_rank);

    /* The survivors' next view: narrows this one (same rows and columns). */
    void enter(view next);

    const view &current() const { return view_; }
    int64_t epoch() const { return view_.epoch; }
    int member_count() const { return static_cast<int>(view_.members.size()); }
    int sender_count() const { return static_cast<int>(view_.senders.size()); }
    int creation_sender_count() const { return static_cast<int>(original_senders_.size()); }
    int creation_member_count() const { return static_cast<int>(original_members_.size()); }

    int my_row() const { return my_row_; }
    void set_my_row(int row) { my_row_ = row; }
    int my_sender() const { return my_sender_; }   /* view sender index, -1: not one */

    const std::vector<int> &rows() const { return rows_; }   /* view order */
    int sender_row(int sender) const { return sender_row_[sender]; }
    int sender_column(int sender) const { return sender_column_[sender]; }
    int rank_of_row(int row) const { return original_members_[row]; }
    int row_of_rank(int rank) const;   /* -1: not a creation member */
    /* the view's rows, over the creation view's rows */
    const member_mask &mask() const { return mask_; }

    /* The view's rows not in @a suspected, in view order (no allocation
     * in the first two forms: they run on every engine pass). */
    static bool survives(int row, const member_mask &suspected) { return !suspected.test(row); }
    int leader(const member_mask &suspected) const;   /* -1: nobody */
    std::vector<int> survivors(const member_mask &suspected) const;

    /* The view of @a rows (survivors): their ranks, and this view's
     * senders among them, in order. */
    view next_view(const std::vector<int> &rows) const;

    /* per creation row: is it a member of @a v */
    std::vector<bool> rows_of(const view &v) const;

private:
    view             view_;
    std::vector<int> original_members_, original_senders_;
    std::vector<int> rows_;
    member_mask      mask_;
    std::vector<int> sender_row_, sender_column_;
    int              my_rank_;
    int              my_row_    = -1;
    int              my_sender_ = -1;
};

} // namespace tc
