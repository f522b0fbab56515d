/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * A view's poller on the node's progress engine, and its quiet mode. A
 * group with nothing under way goes quiet: the engine calls its poller
 * every TC_PROGRESS_QUIET_EVERY loops only (tc_progress_poller_set_quiet),
 * and the poller then looks at one flag (the application's poke) and one
 * word per peer (its 'sent' counter) before it runs anything, so the idle
 * shards of a node cost an active one next to nothing.
 *
 * Invariants: every kQuietLookEvery looks, or once a heartbeat interval
 * passed since it went quiet, a quiet group runs its whole protocol (the
 * failure detector included: heartbeats, suspicions, wedges and joins
 * tolerate that delay); only the engine's thread sets the quiet flag, any
 * thread may poke.
 */
#pragma once

#include "core/context.hpp"

#include <twochains/progress.h>

#include <atomic>
#include <vector>

namespace tc {

class quiet_poller {
public:
    explicit quiet_poller(group_context &ctx) : ctx_(ctx) {}
    ~quiet_poller() { remove(); }
    quiet_poller(const quiet_poller &)            = delete;
    quiet_poller &operator=(const quiet_poller &) = delete;

    ucs_status_t add(tc_poller_cb_t poll, void *arg)
    {
        return tc_progress_poller_add(ctx_.node.engine(), poll, arg, &poller_id_);
    }
    /* a view change or close takes the view off the engine */
    void remove();

    bool quiet() const { return quiet_.load(std::memory_order_relaxed); }
    void set_quiet(bool quiet);
    /* any thread: a quiet group looks at everything on the next pass */
    void poke();
    /* before going quiet: the peers' 'sent' words as they are now */
    void note_peers_sent();

    /* What a quiet group's look found: nothing, something to run, or the
     * time for a whole pass (the failure detector to look too). */
    enum class look { nothing, woken, everything };
    look woken()
    {
        if (poked_.load(std::memory_order_relaxed)) {
            poked_.store(false, std::memory_order_relaxed);
            return look::woken;
        }
        ++quiet_passes_;
        if (quiet_passes_ == kQuietLookEvery ||
            (quiet_passes_ % kQuietClockEvery == 0 && now_s() >= quiet_until_s_)) {
            return look::everything;
        }
        for (const auto &peer : peer_sent_) {
            if (__atomic_load_n(peer.word, __ATOMIC_RELAXED) != peer.seen) {
                return look::woken;
            }
        }
        return look::nothing;
    }

private:
    static constexpr unsigned kQuietLookEvery = 64;   /* looks: 256 loops */
    /* ... or sooner, once a heartbeat interval passed since it went quiet
     * (the clock read every kQuietClockEvery looks): when hundreds of
     * processes share a few cores, 256 loops can take seconds, and the
     * heartbeats must not wait for them */
    static constexpr unsigned kQuietClockEvery = 8;
    struct watched_word {
        const int64_t *word;
        int64_t       seen;
    };

    group_context             &ctx_;
    /* what a quiet look touches, side by side */
    std::atomic<bool>         quiet_{false};   /* the engine's thread writes it */
    std::atomic<bool>         poked_{false};
    unsigned                  quiet_passes_  = 0;
    double                    quiet_until_s_ = 0;   /* the next heartbeat's time */
    std::vector<watched_word> peer_sent_;   /* what woken() compares */
    int                       poller_id_ = -1;
};

} // namespace tc
