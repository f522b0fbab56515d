/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * See close_phases.hpp: close() as the phase column.
 */
#include "group/close_phases.hpp"

#include "core/sequence.hpp"
#include "smc/receiver.hpp"
#include "smc/sender.hpp"

#include <algorithm>

namespace tc {

using sst::put_purpose;

ucs_status_t close_phases::set(int64_t phase)
{
    if (ctx_.settings.threaded) {
        request_.store(phase, std::memory_order_release);
        return wait_.until([this, phase] { return ctx_.mine(ctx_.cols.phase) >= phase; });
    }
    return push(phase);
}

ucs_status_t close_phases::push(int64_t phase)
{
    /* our final counters must reach everyone before we fall silent */
    ucs_status_t status = (phase >= 2) ? receive_.push_report(put_purpose::delivery_report) :
                                         UCS_OK;
    status = (status != UCS_OK) ? status : ctx_.pusher.fence();
    ctx_.set(ctx_.cols.phase, phase);
    status = (status != UCS_OK) ? status : ctx_.push(ctx_.cols.phase, put_purpose::other);
    if (phase >= 2) {
        /* our last put: a peer that sees every member drained frees its
         * regions, so nothing may follow it (not even heartbeats) */
        ctx_.state.enter(member_state::drained);
    }
    return status;
}

bool close_phases::drained() const
{
    if (ctx_.min_over_members(ctx_.cols.phase) < 1) {
        return false;
    }
    const int S  = ctx_.map.sender_count();
    int64_t last = -1;
    for (int s = 0; s < S; ++s) {
        const int64_t sent = ctx_.get(ctx_.map.sender_row(s), ctx_.cols.sent);
        if (sent > 0) {
            last = std::max(last, order::sequence_of(sent - 1, s, S));
        }
    }
    if (ctx_.map.my_sender() >= 0 && send_.pushed() < send_.reserved()) {
        return false; /* our own tail has not gone out yet */
    }
    return ctx_.min_over_members(ctx_.cols.delivered) - 1 >= last;
}

} // namespace tc
