/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Stable delivery in round-robin total order: sequence k*S + s is sender s's
 * k-th message; a sequence is stable once every member of the view
 * published (received contiguously) past it, and is delivered here in
 * sequence order, nulls skipped. Raw mode delivers on receipt instead
 * (smc/receiver calls deliver_one).
 *
 * Invariants (asserted): delivered <= published here; at a view change,
 * every survivor delivers exactly the sequences below the agreed trim, so
 * survivors' delivered sequences are identical. A callback that throws is
 * contained and counted; delivery goes on.
 */
#pragma once

#include "group/context.hpp"

namespace tc {

class large_messages;
namespace smc {
class receiver;
}

class delivery {
public:
    delivery(group_context &ctx, smc::receiver &received, large_messages &large)
        : ctx_(ctx), received_(received), large_(large)
    {
    }

    void start_epoch() { ctx_.set(ctx_.cols.delivered, 0); }

    bool stable_beyond_delivered() const
    {
        return ctx_.min_over_members(ctx_.cols.published) > ctx_.mine(ctx_.cols.delivered);
    }
    unsigned deliver_stable();

    /* At a view change: deliver in sequence order what the trim keeps
     * (ctx.cols.trim, per original sender), and count what it discards. */
    void deliver_up_to_trim();

    /* one message to the application (nulls are not delivered) */
    void deliver_one(int sender, int64_t index, int64_t seq);

private:
    group_context  &ctx_;
    smc::receiver  &received_;
    large_messages &large_;
};

} // namespace tc
