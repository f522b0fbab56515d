/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "membership/failure_detector.hpp"

#include <ucs/debug/log_def.h>

#include <cstdio>

namespace tc::membership {

using sst::put_purpose;

failure_detector::failure_detector(group_context &ctx)
    : ctx_(ctx), last_seen_(ctx.map.creation_member_count(), now_s()),
      seen_heartbeat_(ctx.map.creation_member_count(), 0),
      peer_mask_(ctx.map.creation_member_count()), spread_(ctx.map.creation_member_count()),
      audit_(ctx)
{
    last_heartbeat_s_ = now_s();
    ctx_.pusher.on_peer_error([this](int rank) { put_failed_rank_.push_back(rank); });
}

void failure_detector::restart_clocks()
{
    const double now = now_s();
    std::fill(last_seen_.begin(), last_seen_.end(), now);
    last_heartbeat_s_ = now;
}

void failure_detector::start_epoch()
{
    std::fill(last_seen_.begin(), last_seen_.end(), now_s());
}

void failure_detector::suspect(int row, const char *why)
{
    if (row == ctx_.me() || ctx_.suspected.test(row)) {
        return;
    }
    ucs_diag("group: epoch %ld: suspecting rank %d (%s)", static_cast<long>(ctx_.epoch()),
             ctx_.map.rank_of_row(row), why);
    ctx_.suspected.set(row);
    publish_suspected();
}

void failure_detector::publish_suspected()
{
    /* the mask's words together, in one put */
    ctx_.write_mask(ctx_.cols.suspected, ctx_.suspected);
    ctx_.fail_on(ctx_.push(ctx_.cols.suspected, put_purpose::other));
}

unsigned failure_detector::watch()
{
    /* heartbeats and timeouts are milliseconds; a pass of the engine is
     * well under a microsecond, and a clock read was 13 % of a batched SMC
     * member's time: look every kWatchEvery passes */
    if (++passes_ % kWatchEvery != 0) {
        return 0;
    }
    const auto &c    = ctx_.cols;
    const int me     = ctx_.me();
    const double now = now_s();
    unsigned events  = 0;
    if ((last_watch_s_ != 0) && (now - last_watch_s_ > ctx_.settings.suspect_s / 2)) {
        /* we did not run for that long (stopped, descheduled): our own
         * silence is no evidence against the others, whose heartbeats and
         * verdicts may still wait in our receive queue (the active-message
         * lane delivers them in progress calls to come). Their clocks
         * start again; a dead one is suspected a timeout from now. */
        ucs_diag("group: epoch %ld: the failure detector did not run for %.0f ms; "
                 "peers' clocks restart", static_cast<long>(ctx_.epoch()),
                 (now - last_watch_s_) * 1e3);
        std::fill(last_seen_.begin(), last_seen_.end(), now);
    }
    last_watch_s_ = now;
    if (now - last_heartbeat_s_ >= ctx_.settings.heartbeat_s) {
        last_heartbeat_s_ = now;
        ctx_.set(c.heartbeat, ctx_.mine(c.heartbeat) + 1);
        ctx_.fail_on(ctx_.push(c.heartbeat, put_purpose::heartbeat));
        audit_.look();
    }
    /* suspecting pushes, and a push that fails adds to the list: take it
     * first (iterating it while it grows read freed memory, found by ASan) */
    std::vector<int> failed;
    failed.swap(put_failed_rank_);
    for (int rank : failed) {
        const int row = ctx_.map.row_of_rank(rank);
        if (row >= 0) {
            suspect(row, "put failed");
        }
    }
    failed.clear();
    failed.swap(ctx_.blamed);
    for (int row : failed) {
        if (ctx_.map.survives(row, ctx_.suspected)) {
            suspect(row, "wrote an impossible value");
        }
    }
    for (int row : ctx_.map.rows()) {
        const int64_t hb = ctx_.raw(row, c.heartbeat);
        if (row != me && hb != seen_heartbeat_[row]) {
            seen_heartbeat_[row] = hb;
            last_seen_[row]      = now;
        }
    }
    for (int row : ctx_.map.rows()) {
        if (row == me || !ctx_.map.survives(row, ctx_.suspected)) {
            continue;
        }
        ctx_.read_mask(row, c.suspected, peer_mask_);
        if (peer_mask_.test(me) && audit_.credible(row)) {
            ctx_.state.enter(member_state::expelled);
            ucs_error("group: expelled from the group in epoch %ld: rank %d suspects this "
                      "member; it stops and its calls fail", static_cast<long>(ctx_.epoch()),
                      ctx_.map.rank_of_row(row));
            return 1;
        }
    }
    spread_.clear();
    for (int row : ctx_.map.rows()) {
        if (row == me || ctx_.raw(row, c.phase) >= 2) {
            continue; /* us, or left cleanly: silent on purpose */
        }
        if (now - last_seen_[row] > ctx_.settings.suspect_s) {
            char why[96];
            std::snprintf(why, sizeof(why), "no heartbeat for %.0f ms",
                          (now - last_seen_[row]) * 1e3);
            suspect(row, why);
        }
        if (ctx_.node.peer_failed(ctx_.map.rank_of_row(row))) {
            suspect(row, "endpoint error");
        }
        ctx_.read_mask(row, c.suspected, peer_mask_);
        if (!peer_mask_.subset_of(ctx_.suspected) && !audit_.credible(row)) {
            continue;   /* news from a row that holds the impossible */
        }
        spread_ |= peer_mask_;
    }
    spread_.reset(me);
    if (!spread_.subset_of(ctx_.suspected)) {
        ctx_.suspected |= spread_;
        publish_suspected();
        ++events;
    }
    return events;
}

} // namespace tc::membership
