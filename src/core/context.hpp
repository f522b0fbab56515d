/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * What every component of one view of a group shares: the node, the
 * parameters and settings, the pusher, the SST and the slot region, the
 * view's maps, the member's state and the counters. The composition root
 * (group_impl) owns it; each component holds a reference and writes only
 * its own columns (core/row.hpp).
 *
 * Threads: the engine's thread; threaded senders read the state, the
 * counters and their own slots only.
 */
#pragma once

#include "core/group_types.hpp"
#include "core/row.hpp"
#include "core/state.hpp"
#include "core/stats.hpp"
#include "core/view_map.hpp"
#include "core/slot.hpp"
#include "sst/region.hpp"
#include "sst/table.hpp"

#include <ucs/debug/log_def.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <vector>

namespace tc {

class replicated_jams;

inline double now_s()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
}

/* The parameters and UCX_TC_* knobs resolved once per view. */
struct group_settings {
    unsigned window        = 0;
    unsigned batch         = 1;
    size_t   stride        = 0;    /* bytes per slot */
    double   flush_s       = 0;
    bool     batched       = false;
    bool     threaded      = false;
    double   heartbeat_s   = 0.01;
    double   suspect_s     = 1.0;
    double   wait_timeout_s = 30.0;
    double   boot_timeout_s = 30.0;
    unsigned max_members    = 256;   /* UCX_TC_GROUP_MAX_MEMBERS */
    unsigned audit_rows     = 16;    /* UCX_TC_GROUP_AUDIT_ROWS, >= 1 */

    /* UCX_TC_* read here; parse errors are logged by UCX's parser */
    static ucs_status_t resolve(const group_params &p, group_settings &out);

    /* nullptr when @a members fit UCX_TC_GROUP_MAX_MEMBERS; otherwise why
     * not, with the parameter and its value, written into @a why */
    const char *member_count_refusal(size_t members, char *why, size_t len) const;
    /* the same before a group's settings exist (creation validates first) */
    static const char *refuse_member_count(size_t members, char *why, size_t len);
};

class group_context {
public:
    using column = sst::column<int64_t>;

    group_context(ucp_node &n, const group_params &p, const group_settings &s, view creation,
                  replicated_jams &j)
        : node(n), params(p), settings(s), jams(j), pusher(n), map(std::move(creation), n.rank()),
          suspected(map.creation_member_count())
    {
        cols = row_columns::lay_out(layout, map.creation_sender_count(),
                                    map.creation_member_count());
    }

    ucp_node                             &node;
    const group_params                   params;
    const group_settings                 settings;
    replicated_jams                      &jams;   /* the group's, shared by its views */
    sst::pusher                          pusher;
    sst::layout                          layout;
    row_columns                          cols;
    std::unique_ptr<sst::table>          table;
    std::unique_ptr<sst::mirrored_region> slots;
    view_map                             map;
    group_state                          state;
    group_counters                       stats;
    /* our suspected column as we wrote it: the failure detector changes
     * both together (write_mask), everyone else reads this copy */
    member_mask                          suspected;
    bool                                 failed = false;   /* protocol error: see state.hpp */
    /* rows that wrote what they could not have (blame), for the failure
     * detector to suspect at its next look */
    std::vector<int>                     blamed;
    std::atomic<bool>                    closed{false};    /* close() was called */

    int64_t epoch() const { return map.epoch(); }
    int me() const { return map.my_row(); }

    /* Member @a row wrote @a what into memory we read (read once, into a
     * private copy, and checked), a value it cannot legally have written.
     * It is that writer's fault, not ours: counted, logged once per
     * member, and the member suspected, so that it leaves the view by the
     * normal protocol while the others go on. Never throws. */
    void blame(int row, const char *what)
    {
        count_peer_fault();
        if (row < 0 || row == me()) {
            return;
        }
        if (blame_logged_.size() <= static_cast<size_t>(row)) {
            blame_logged_.resize(static_cast<size_t>(row) + 1, false);
        }
        if (!blame_logged_[row]) {
            blame_logged_[row] = true;
            ucs_error("group: epoch %ld: rank %d wrote %s; it is suspected (further faults "
                      "of this member are only counted)", static_cast<long>(epoch()),
                      map.rank_of_row(row), what);
        }
        blamed.push_back(row);
    }

    /* @a row is an original member index. Counters of a row still in an
     * older (or newer) epoch read as zero: they belong to another view. The
     * epoch is read first; a member resets its counters, fences, then
     * publishes its new epoch. A counter never is negative: one that reads
     * so (a peer wrote it: row_audit blames it) reads as zero, "nothing",
     * so that no minimum over the members wraps when the protocol steps
     * past it. */
    int64_t get(int row, column c, size_t i = 0) const
    {
        if (!cols.is_counter(c)) {
            return table->get(row, c, i);
        }
        if (row != me() && table->get(row, cols.epoch) != epoch()) {
            return 0;
        }
        return std::max<int64_t>(0, table->get(row, c, i));
    }
    int64_t raw(int row, column c, size_t i = 0) const { return table->get(row, c, i); }
    int64_t mine(column c, size_t i = 0) const { return table->get(me(), c, i); }
    void set(column c, int64_t v, size_t i = 0) { table->set(c, i, v); }
    ucs_status_t push(column c, sst::put_purpose purpose)
    {
        return table->push(pusher, c, purpose);
    }
    ucs_status_t push(column first, column last, sst::put_purpose purpose)
    {
        return table->push(pusher, first, last, purpose);
    }
    /* over the members of the current view */
    int64_t min_over_members(column c) const
    {
        int64_t m = INT64_MAX;
        for (int row : map.rows()) {
            m = std::min(m, get(row, c));
        }
        return m;
    }
    void count_peer_fault() { stats.count(&group_stats::peer_faults); }

    /* A mask column of @a row, read once into @a into (sized for the
     * creation view: bits past it are dropped). */
    void read_mask(int row, column c, member_mask &into) const
    {
        into.load([&](size_t i) { return table->get(row, c, i); });
    }
    /* our row's words of mask column @a c (pushed by the caller, all at once) */
    void write_mask(column c, const member_mask &m)
    {
        for (size_t i = 0; i < c.count; ++i) {
            set(c, static_cast<int64_t>(i < m.word_count() ? m.word(i) : 0), i);
        }
    }

    /* view sender @a sender's slot @a index, at its original position */
    std::byte *slot(int sender, int64_t index) const
    {
        return slots->part(map.sender_column(sender)) +
               (index % settings.window) * settings.stride;
    }
    smc::slot_header *header(int sender, int64_t index) const
    {
        return reinterpret_cast<smc::slot_header*>(slot(sender, index));
    }

    /* The first error stops the ordinary protocol here; logged once. */
    void fail_on(ucs_status_t status);

    uint64_t count(uint64_t group_stats::*field, uint64_t n = 1) { return stats.count(field, n); }

private:
    std::vector<bool> blame_logged_;   /* by row */
};

} // namespace tc
