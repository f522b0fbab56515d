/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The group's counters (group_stats). Written by the engine's and the
 * senders' threads and read by anyone: relaxed atomics, no lock on the fast
 * path. A field with one writer at a time (delivered: the engine's thread;
 * sent: the sending thread, or threaded senders under their lock) is added
 * to without a locked instruction. A view that replaces another inherits
 * its counts.
 */
#pragma once

#include "core/group_types.hpp"

namespace tc {

class group_counters {
public:
    /* returns the count before this one */
    uint64_t count(uint64_t group_stats::*field, uint64_t n = 1)
    {
        return __atomic_fetch_add(&(s_.*field), n, __ATOMIC_RELAXED);
    }

    /* For a field only one thread writes: no read-modify-write. */
    void add(uint64_t group_stats::*field, uint64_t n)
    {
        __atomic_store_n(&(s_.*field), __atomic_load_n(&(s_.*field), __ATOMIC_RELAXED) + n,
                         __ATOMIC_RELAXED);
    }

    group_stats snapshot(const sst::put_counts &puts) const
    {
        group_stats s;
        for (auto field : kFields) {
            s.*field = __atomic_load_n(&(s_.*field), __ATOMIC_RELAXED);
        }
        s.puts = puts;
        return s;
    }

    void inherit(const group_counters &old)
    {
        for (auto field : kFields) {
            s_.*field = __atomic_load_n(&(old.s_.*field), __ATOMIC_RELAXED);
        }
    }

private:
    static constexpr uint64_t group_stats::*kFields[] = {
            &group_stats::sent,           &group_stats::nulls_sent,
            &group_stats::delivered,      &group_stats::callback_errors,
            &group_stats::window_stalls,  &group_stats::batches,
            &group_stats::batched_msgs,   &group_stats::flush_full,
            &group_stats::flush_deadline, &group_stats::flush_idle,
            &group_stats::flush_explicit, &group_stats::views,
            &group_stats::trimmed,        &group_stats::rdmc_sent,
            &group_stats::rdmc_delivered, &group_stats::joins,
            &group_stats::join_rejects,   &group_stats::jams_sent,
            &group_stats::jam_codes_sent, &group_stats::jams_run,
            &group_stats::jam_errors,     &group_stats::jam_rejects,
            &group_stats::peer_faults};

    group_stats s_;
};

} // namespace tc
