/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Waiting inside a group call: by driving the engine, or (threaded senders)
 * by leaving it to the engine's own thread.
 *
 * Invariants: the limit is on waiting without progress (UCX_TC_GROUP_TIMEOUT),
 * not on waiting: an overloaded machine moves slowly, but it moves; a group
 * that stands still that long has peers that do not respond. Every wait also
 * ends when this member leaves the group (UCS_ERR_REJECTED) or a view with a
 * joiner replaces this one (UCS_ERR_CANCELED: the group retries the call on
 * the new view).
 */
#pragma once

#include "core/context.hpp"

#include <ucs/debug/log_def.h>

#include <functional>
#include <thread>

namespace tc {

class waiter {
public:
    /* @a local_mark: what moves on this member's side (sent, pushed);
     * @a local_log: what a stuck member logs about itself. Both run only on
     * the slow path. */
    waiter(group_context &ctx, std::function<uint64_t()> local_mark,
           std::function<void(ucs_log_level_t)> local_log)
        : ctx_(ctx), local_mark_(std::move(local_mark)), local_log_(std::move(local_log))
    {
    }

    template<class Pred> ucs_status_t until(Pred pred_in)
    {
        auto pred = [&] {
            return ctx_.state.out_of_group() || ctx_.state.is(member_state::superseded) ||
                   pred_in();
        };
        ucs_status_t status = without_progress_limit(pred);
        if (status == UCS_OK && ctx_.state.is(member_state::superseded)) {
            return UCS_ERR_CANCELED;
        }
        return (status == UCS_OK && ctx_.state.out_of_group()) ? UCS_ERR_REJECTED : status;
    }

    /* Changes whenever the group moves: anything sent, received or
     * delivered anywhere, as this member sees it */
    uint64_t progress_mark() const;

    /* this member's state and every row's counters as it sees them */
    void log_counters(ucs_log_level_t level) const;

private:
    template<class Pred> ucs_status_t without_progress_limit(Pred &pred)
    {
        const double timeout = ctx_.settings.wait_timeout_s;
        const double look    = std::min(kSlowWaitS, timeout / 4);
        uint64_t mark        = progress_mark();
        double still_since   = now_s();
        bool reported        = false;
        for (;;) {
            ucs_status_t status = within(pred, look);
            if (status != UCS_ERR_TIMED_OUT) {
                return status;
            }
            const uint64_t now_mark = progress_mark();
            if (now_mark != mark) {
                mark        = now_mark;
                still_since = now_s();
            } else if (now_s() - still_since >= timeout) {
                ucs_error("group: no progress for %.1f s: peers did not respond", timeout);
                log_counters(UCS_LOG_LEVEL_ERROR);
                return UCS_ERR_TIMED_OUT;
            }
            if (!reported && ucs_log_is_enabled(UCS_LOG_LEVEL_DIAG)) {
                reported = true;
                ucs_diag("group: still waiting after %.1f s", look);
                log_counters(UCS_LOG_LEVEL_DIAG);
            }
        }
    }

    /* @a pred within @a seconds, else UCS_ERR_TIMED_OUT */
    template<class Pred> ucs_status_t within(Pred &pred, double seconds)
    {
        if (!ctx_.settings.threaded) {
            auto done = [](void *arg) -> int { return (*static_cast<Pred*>(arg))(); };
            return tc_progress_until(ctx_.node.engine(), done, &pred, seconds);
        }
        const double deadline = now_s() + seconds;
        while (!pred()) {
            if (now_s() > deadline) {
                return UCS_ERR_TIMED_OUT;
            }
            /* sleep, not yield: many sender threads spinning on yield
             * starve the engine's thread that has to free their slots */
            std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
        return UCS_OK;
    }

    /* A wait longer than this (or a quarter of UCX_TC_GROUP_TIMEOUT) logs
     * its state at the diag level and looks for progress. */
    static constexpr double kSlowWaitS = 5.0;

    group_context                        &ctx_;
    std::function<uint64_t()>            local_mark_;
    std::function<void(ucs_log_level_t)> local_log_;
};

} // namespace tc
