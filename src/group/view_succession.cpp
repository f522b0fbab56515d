/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * See view_succession.hpp: the next view, once every survivor delivered
 * the same prefix.
 */
#include "group/view_succession.hpp"

#include "group/group_impl.hpp"

#include <ucs/debug/log_def.h>

#include <algorithm>

namespace tc {

using sst::put_purpose;

view_succession::view_succession(group_impl &view)
    : ctx_(view.ctx_), send_(view.send_), receive_(view.receive_), deliver_(view.deliver_),
      detect_(view.detect_), change_(view.change_), exchange_(view.exchange_),
      joins_(view.joins_), poller_(view.poller_), jams_(view.jams_)
{
}

unsigned view_succession::move_on()
{
    const int64_t admit = change_.admitted();
    if (admit > 0 && admit_joiner(static_cast<int>(admit - 1))) {
        return 1;
    }
    if (admit == 0 && exchange_.available() && rebuild_over_survivors()) {
        return 1;
    }
    return install_narrowed_view();
}

/* The survivors go on in this object: same SST and slots, their part. */
unsigned view_succession::install_narrowed_view()
{
    const double took = change_.wedged_for_s();
    {
        auto guard      = send_.lock();
        const view next = ctx_.map.next_view(change_.next_rows());
        /* puts to those who leave may never complete (a cut link): not ours
         * to wait for any more */
        for (int row : ctx_.map.rows()) {
            const int rank = ctx_.map.rank_of_row(row);
            if (std::find(next.members.begin(), next.members.end(), rank) == next.members.end()) {
                ctx_.pusher.forget(rank);
            }
        }
        ctx_.map.enter(next);
        /* our counters restart for the new epoch: reset, fence, then the
         * epoch, so that nobody reads old counters as new ones */
        send_.start_epoch();
        receive_.start_epoch();
        deliver_.start_epoch();
        ctx_.fail_on(ctx_.push(ctx_.cols.sent, ctx_.cols.delivered, put_purpose::other));
        ctx_.fail_on(ctx_.pusher.fence());
        ctx_.set(ctx_.cols.epoch, next.epoch);
        change_.start_epoch();
        const std::vector<bool> active = ctx_.map.rows_of(next);
        ctx_.table->set_active(active);
        ctx_.slots->set_active(active);
        ctx_.fail_on(ctx_.push(ctx_.cols.epoch, ctx_.cols.heartbeat, put_purpose::other));
        ctx_.state.enter(member_state::open);
    }
    detect_.start_epoch();
    ctx_.count(&group_stats::views);
    ucs_diag("group: installed epoch %ld with %d members, %.3f ms after the wedge",
             static_cast<long>(ctx_.epoch()), ctx_.map.member_count(), took * 1e3);
    if (ctx_.params.on_view) {
        ctx_.params.on_view(ctx_.map.current());
    }
    return 1;
}

/* Every survivor delivered the same prefix and the leader admitted the
 * joiner of @a sponsor: meet at the sponsor's rendezvous and build the new
 * view over survivors and joiner. false: the rendezvous failed everywhere
 * alike (the joiner died, say); the caller installs the view without it. */
bool view_succession::admit_joiner(int sponsor)
{
    const double took_trim = change_.wedged_for_s();
    const int joiner_id    = joins_.max_id() + 1;
    view next              = ctx_.map.next_view(change_.next_rows());
    next.members.push_back(joiner_id);
    if (ctx_.params.senders.empty()) {
        next.senders.push_back(joiner_id);   /* everyone sends: the joiner too */
    }
    tc_bootstrap_h boot = nullptr;
    std::vector<int> ids;
    ucs_status_t status = joins_.meet(sponsor, next, boot, ids);
    if (status != UCS_OK) {
        ucs_error("group: epoch %ld: the rendezvous with the joiner failed (%s); the next "
                  "view goes on without it", static_cast<long>(ctx_.epoch()),
                  ucs_status_string(status));
        return false;
    }
    status = ctx_.node.enter_view(boot, ids, ctx_.node.rank());
    if (status == UCS_OK) {
        ucs_diag("group: epoch %ld: admitting joiner %d, %.3f ms after the wedge "
                 "(%.3f ms to the trim)", static_cast<long>(ctx_.epoch()), joiner_id,
                 change_.wedged_for_s() * 1e3, took_trim * 1e3);
    }
    move_to_next_view(status, next, ctx_.map.rank_of_row(sponsor), joiner_id, true);
    return true;
}

/* After a failure, with RDMC: the next view's SST, SMC and RDMC over the
 * survivors. false: the exchange failed (another failure meanwhile);
 * install the narrowed view instead. */
bool view_succession::rebuild_over_survivors()
{
    const std::vector<int> rows = change_.next_rows();
    const view next             = ctx_.map.next_view(rows);
    tc_bootstrap_h boot;
    if (exchange_.bootstrap_over(rows, boot) != UCS_OK) {
        return false;
    }
    const ucs_status_t status = ctx_.node.enter_view(boot, next.members, ctx_.node.rank(), true);
    move_to_next_view(status, next, -1, joins_.max_id(), false);
    return true;
}

/* Every member of the next view is here (the node's collectives run over
 * their bootstrap after @a entered): build that view, hand it what
 * outlives a view, and retire this one. A failure fails the group: the
 * others have left this view too. */
void view_succession::move_to_next_view(ucs_status_t entered, const view &next, int sponsor_id,
                                       int max_id, bool with_joiner)
{
    std::unique_ptr<group_impl> successor;
    ucs_status_t status = entered;
    if (status == UCS_OK) {
        group_params p = ctx_.params;
        p.members      = next.members;
        p.senders      = ctx_.params.senders.empty() ? std::vector<int>{} : next.senders;
        status = group_impl::build_view(ctx_.node, p, next.senders, next.epoch, sponsor_id,
                                        false, jams_, successor);
    }
    if (status != UCS_OK) {
        ucs_error("group: epoch %ld: building the next view failed: %s",
                  static_cast<long>(ctx_.epoch()), ucs_status_string(status));
        ctx_.fail_on(status);
        return;
    }
    /* a joiner another member sponsors asks again in the new view */
    joins_.hand_over(successor->joins_, max_id);
    successor->ctx_.stats.inherit(ctx_.stats);
    successor->ctx_.count(&group_stats::views);
    if (with_joiner) {
        successor->ctx_.count(&group_stats::joins);
    }
    ucs_diag("group: installed epoch %ld with %zu members (%s), %.3f ms after the wedge",
             static_cast<long>(next.epoch), next.members.size(),
             with_joiner ? "with a joiner" : "rebuilt", change_.wedged_for_s() * 1e3);
    ctx_.state.enter(member_state::superseded);
    poller_.remove();
    owner_->replace(std::move(successor));   /* keeps this object alive, retired */
}

} // namespace tc
