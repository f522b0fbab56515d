/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * See quiet_poller.hpp: a view's poller and its quiet mode.
 */
#include "group/quiet_poller.hpp"

namespace tc {

void quiet_poller::remove()
{
    if (poller_id_ >= 0) {
        tc_progress_poller_remove(ctx_.node.engine(), poller_id_);
        poller_id_ = -1;
    }
}

/* The engine calls a quiet poller every TC_PROGRESS_QUIET_EVERY loops. */
void quiet_poller::set_quiet(bool quiet)
{
    quiet_.store(quiet, std::memory_order_relaxed);
    quiet_passes_ = 0;
    if (quiet) {
        quiet_until_s_ = now_s() + ctx_.settings.heartbeat_s;
    }
    if (poller_id_ >= 0) {   /* none once a view change or close removed it */
        tc_progress_poller_set_quiet(ctx_.node.engine(), poller_id_, quiet);
    }
}

void quiet_poller::poke()
{
    if (!poked_.load(std::memory_order_relaxed)) {
        poked_.store(true, std::memory_order_relaxed);
    }
    /* from another thread this may miss a group going quiet right now: the
     * engine then calls it TC_PROGRESS_QUIET_EVERY loops later, and it sees
     * the poke */
    if (quiet_.load(std::memory_order_relaxed) && poller_id_ >= 0) {
        tc_progress_poller_set_quiet(ctx_.node.engine(), poller_id_, 0);
    }
}

void quiet_poller::note_peers_sent()
{
    peer_sent_.clear();
    for (int s = 0; s < ctx_.map.sender_count(); ++s) {
        if (s != ctx_.map.my_sender()) {
            const int64_t *word = ctx_.table->address(ctx_.map.sender_row(s), ctx_.cols.sent);
            peer_sent_.push_back({word, __atomic_load_n(word, __ATOMIC_RELAXED)});
        }
    }
}

} // namespace tc
