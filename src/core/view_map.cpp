/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "core/view_map.hpp"

#include <algorithm>

namespace tc {

namespace {

int index_in(const std::vector<int> &v, int x)
{
    return static_cast<int>(std::find(v.begin(), v.end(), x) - v.begin());
}

} // namespace

view_map::view_map(view creation, int my_rank)
    : original_members_(creation.members), original_senders_(creation.senders),
      mask_(static_cast<int>(creation.members.size())), my_rank_(my_rank)
{
    enter(std::move(creation));
}

void view_map::enter(view next)
{
    view_ = std::move(next);
    rows_.clear();
    mask_.clear();
    for (int m : view_.members) {
        rows_.push_back(index_in(original_members_, m));
        mask_.set(rows_.back());
    }
    sender_row_.clear();
    sender_column_.clear();
    my_sender_ = -1;
    for (int i = 0; i < sender_count(); ++i) {
        sender_row_.push_back(index_in(original_members_, view_.senders[i]));
        sender_column_.push_back(index_in(original_senders_, view_.senders[i]));
        if (view_.senders[i] == my_rank_) {
            my_sender_ = i;
        }
    }
}

int view_map::row_of_rank(int rank) const
{
    const int row = index_in(original_members_, rank);
    return row < creation_member_count() ? row : -1;
}

std::vector<int> view_map::survivors(const member_mask &suspected) const
{
    std::vector<int> out;
    for (int row : rows_) {
        if (survives(row, suspected)) {
            out.push_back(row);
        }
    }
    return out;
}

int view_map::leader(const member_mask &suspected) const
{
    for (int row : rows_) {
        if (survives(row, suspected)) {
            return row;
        }
    }
    return -1;
}

view view_map::next_view(const std::vector<int> &rows) const
{
    view next;
    next.epoch = view_.epoch + 1;
    for (int row : rows) {
        next.members.push_back(original_members_[row]);
    }
    for (int rank : view_.senders) {
        if (std::find(next.members.begin(), next.members.end(), rank) != next.members.end()) {
            next.senders.push_back(rank);
        }
    }
    return next;
}

std::vector<bool> view_map::rows_of(const view &v) const
{
    std::vector<bool> in(original_members_.size(), false);
    for (int rank : v.members) {
        in[index_in(original_members_, rank)] = true;
    }
    return in;
}

} // namespace tc
