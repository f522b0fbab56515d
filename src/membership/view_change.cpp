/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "membership/view_change.hpp"

#include "order/delivery.hpp"
#include "smc/sender.hpp"

#include <ucs/debug/log_def.h>

namespace tc::membership {

using sst::put_purpose;

bool view_change::must_wedge() const
{
    return ctx_.state.open() && !send_.holds_buffer() && (lost_members() || sponsor_row() >= 0);
}

int view_change::sponsor_row() const
{
    /* a predicate of every engine pass: no allocation */
    const member_mask &out = ctx_.suspected;
    for (int row : ctx_.map.rows()) {
        if (ctx_.map.survives(row, out) && ctx_.raw(row, ctx_.cols.join_req) == ctx_.epoch()) {
            return row;
        }
    }
    return -1;
}

unsigned view_change::wedge()
{
    /* what we committed goes out before our counters freeze: a batch still
     * waiting for B or T would otherwise vanish with the view */
    if (ctx_.map.my_sender() >= 0 && !ctx_.settings.threaded && !ctx_.failed) {
        ctx_.fail_on(send_.push_now(smc::flush_cause::explicit_call));
    }
    /* whoever sees us wedged sees our final counters: a join-only trim takes
     * "sent" from them (over tcp the puts could pass each other) */
    ctx_.fail_on(ctx_.pusher.fence());
    ctx_.state.enter(member_state::wedged);
    wedge_started_s_ = now_s();
    ucs_diag("group: epoch %ld wedged", static_cast<long>(ctx_.epoch()));
    ctx_.set(ctx_.cols.wedged, ctx_.epoch());
    ctx_.fail_on(ctx_.push(ctx_.cols.wedged, put_purpose::other));
    return 1;
}

unsigned view_change::lead_trim()
{
    const auto &c       = ctx_.cols;
    const int64_t epoch = ctx_.epoch();
    const auto rows     = ctx_.map.survivors(ctx_.suspected);
    const auto all      = ctx_.map.rows().size();
    if (2 * rows.size() <= all) {
        if (!ctx_.state.is(member_state::minority)) {
            ctx_.state.enter(member_state::minority);
            ucs_error("group: epoch %ld: only %zu of %zu members left: a minority "
                      "cannot install a view; wedged", static_cast<long>(epoch), rows.size(),
                      all);
        }
        return 0;
    }
    if (ctx_.mine(c.trim_epoch) == epoch) {
        return 0;
    }
    for (int row : rows) {
        if (ctx_.raw(row, c.wedged) != epoch) {
            return 0; /* not all survivors have frozen their counters yet */
        }
    }
    if (!lost_members() && !everything_received_everywhere()) {
        return 0; /* a join only: nobody died, so nothing needs trimming */
    }
    std::vector<int64_t> trim(ctx_.map.creation_sender_count(), INT64_MAX);
    int adopted = -1;
    for (int row : rows) {
        if (ctx_.raw(row, c.trim_epoch) == epoch) {
            if (const char *why = read_decision(row, theirs_)) {
                ctx_.blame(row, why);   /* a decision nobody could have made */
                return 0;
            }
            adopted = row;   /* (every survivor that adopted one adopted the same) */
        }
    }
    /* at most one joiner per view change; the others ask again */
    const int64_t admit = adopted >= 0 ? theirs_.admit : sponsor_row() + 1;
    /* who leaves is decided here, once: a member that suspects more by the
     * time it installs still installs this view, and changes it next */
    member_mask leaving = ctx_.suspected;
    if (adopted >= 0) {
        leaving = theirs_.leaving;
    } else {
        leaving &= ctx_.map.mask();
    }
    for (int s = 0; s < ctx_.map.sender_count(); ++s) {
        const int o    = ctx_.map.sender_column(s);
        const int from = ctx_.map.sender_row(s);
        for (int row : rows) {
            /* a sender has all it sent; its own receive report may lag its
             * final "sent" (batched mode defers reports, and the wedge
             * pushes only the counters), and taking it would trim messages
             * every member received */
            const int64_t has = (row == from) ? ctx_.get(row, c.sent) :
                                                ctx_.get(row, c.received, o);
            trim[o] = std::min(trim[o], adopted >= 0 ? theirs_.trim[o] : has);
        }
    }
    publish_trim(trim, admit, leaving);
    return 1;
}

std::vector<int> view_change::next_rows() const
{
    ctx_.read_mask(ctx_.me(), ctx_.cols.leaving, leaving_);
    return ctx_.map.survivors(leaving_);
}

const char *check_decision(const trim_decision &d, const member_mask &view, int me,
                           std::span<const int64_t> received)
{
    if (!d.leaving.subset_of(view)) {
        return "a view change that removes members outside the view";
    }
    /* a leader decides only while more than half of the view survive */
    int members = 0, staying = 0;
    for (size_t i = 0; i < view.word_count(); ++i) {
        const uint64_t leaving = (i < d.leaving.word_count()) ? d.leaving.word(i) : 0;
        members += __builtin_popcountll(view.word(i));
        staying += __builtin_popcountll(view.word(i) & ~leaving);
    }
    if (2 * staying <= members) {
        return "a view change that leaves a minority of the view";
    }
    if (d.admit < 0 || d.admit > view.rows() ||
        (d.admit > 0 && (!view.test(static_cast<int>(d.admit - 1)) ||
                         d.leaving.test(static_cast<int>(d.admit - 1))))) {
        return "a view change that admits through no member that stays";
    }
    if (d.trim.size() != received.size()) {
        return "a trim of another layout";
    }
    for (int64_t t : d.trim) {
        if (t < 0) {
            return "a negative trim";
        }
    }
    if (d.leaving.test(me)) {
        return nullptr;   /* we leave: what we received bounds nothing */
    }
    for (size_t o = 0; o < d.trim.size(); ++o) {
        if (d.trim[o] > received[o]) {
            return "a trim past what this member received";
        }
    }
    return nullptr;
}

const char *view_change::read_decision(int row, trim_decision &d) const
{
    const auto &c = ctx_.cols;
    const int s0  = ctx_.map.creation_sender_count();
    d.trim.resize(static_cast<size_t>(s0));
    for (int o = 0; o < s0; ++o) {
        d.trim[o] = ctx_.raw(row, c.trim, o);
    }
    d.admit = ctx_.raw(row, c.admit);
    if (d.leaving.rows() != ctx_.map.creation_member_count()) {
        d.leaving = member_mask(ctx_.map.creation_member_count());
    }
    ctx_.read_mask(row, c.leaving, d.leaving);
    /* our own counters: what a trim may not pass (sized once) */
    received_bound_.assign(static_cast<size_t>(s0), INT64_MAX);
    for (int s = 0; s < ctx_.map.sender_count(); ++s) {
        const int o         = ctx_.map.sender_column(s);
        received_bound_[o] = (s == ctx_.map.my_sender()) ? ctx_.mine(c.sent) :
                                                           ctx_.mine(c.received, o);
    }
    return check_decision(d, ctx_.map.mask(), ctx_.me(), received_bound_);
}

const member_mask &view_change::leaving_of(int row) const
{
    ctx_.read_mask(row, ctx_.cols.leaving, their_leaving_);
    return their_leaving_;
}

bool view_change::everything_received_everywhere() const
{
    for (int s = 0; s < ctx_.map.sender_count(); ++s) {
        const int from     = ctx_.map.sender_row(s);
        const int64_t sent = ctx_.get(from, ctx_.cols.sent);
        for (int row : ctx_.map.rows()) {
            if (row != from &&
                ctx_.get(row, ctx_.cols.received, ctx_.map.sender_column(s)) < sent) {
                return false;
            }
        }
    }
    return true;
}

void view_change::publish_trim(const std::vector<int64_t> &trim, int64_t admit,
                               const member_mask &leaving)
{
    for (int o = 0; o < ctx_.map.creation_sender_count(); ++o) {
        ctx_.set(ctx_.cols.trim, trim[o] == INT64_MAX ? 0 : trim[o], o);
    }
    ctx_.set(ctx_.cols.admit, admit);
    ctx_.write_mask(ctx_.cols.leaving, leaving);
    /* the decision, then its epoch: a put may land in any byte order, so
     * whoever reads trim_epoch == epoch must find the decision already there */
    ctx_.fail_on(ctx_.push(ctx_.cols.trim, ctx_.cols.leaving, put_purpose::other));
    ctx_.fail_on(ctx_.pusher.fence());
    ctx_.set(ctx_.cols.trim_epoch, ctx_.epoch());
    ctx_.fail_on(ctx_.push(ctx_.cols.trim_epoch, put_purpose::other));
}

unsigned view_change::follow_trim()
{
    const auto &c       = ctx_.cols;
    const int64_t epoch = ctx_.epoch();
    const int s0        = ctx_.map.creation_sender_count();
    const int lead      = ctx_.map.leader(ctx_.suspected);
    if (lead < 0 || ctx_.raw(lead, c.trim_epoch) != epoch) {
        return 0;
    }
    /* the leader's decision once, into our copy, and checked: followers
     * suspect a leader that publishes one nobody could have made */
    if (const char *why = read_decision(lead, theirs_)) {
        ctx_.blame(lead, why);
        return 1;
    }
    ctx_.read_mask(ctx_.me(), c.leaving, leaving_);
    bool same_as_leader = ctx_.mine(c.trim_epoch) == epoch &&
                          ctx_.mine(c.admit) == theirs_.admit && leaving_ == theirs_.leaving;
    for (int o = 0; o < s0 && same_as_leader; ++o) {
        same_as_leader = ctx_.mine(c.trim, o) == theirs_.trim[o];
    }
    if (!same_as_leader) {
        publish_trim(theirs_.trim, theirs_.admit, theirs_.leaving);
        return 1;
    }
    for (int row : ctx_.map.survivors(ctx_.suspected)) {
        if (ctx_.raw(row, c.trim_epoch) != epoch || ctx_.raw(row, c.admit) != ctx_.mine(c.admit) ||
            !(leaving_of(row) == leaving_)) {
            return 0;
        }
        for (int o = 0; o < s0; ++o) {
            if (ctx_.raw(row, c.trim, o) != ctx_.mine(c.trim, o)) {
                return 0;
            }
        }
    }
    deliver_.deliver_up_to_trim();
    if (ctx_.state.is(member_state::left)) {
        return 1;   /* a jam of the trimmed prefix that this member cannot run */
    }
    ctx_.state.enter(member_state::trimmed);
    ctx_.set(c.done, epoch);
    ctx_.fail_on(ctx_.push(c.done, put_purpose::other));
    return 1;
}

bool view_change::install_due() const
{
    if (!ctx_.state.is(member_state::trimmed)) {
        return false;
    }
    for (int row : ctx_.map.survivors(ctx_.suspected)) {
        if (ctx_.raw(row, ctx_.cols.done) != ctx_.epoch()) {
            return false;
        }
    }
    return true;
}

} // namespace tc::membership
