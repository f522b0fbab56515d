/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Stable delivery in round-robin total order: sequence k*S + s is sender s's
 * k-th message; a sequence is stable once every member of the view
 * published (received contiguously) past it, and is delivered here in
 * sequence order, nulls skipped. Raw mode delivers on receipt instead
 * (smc/receiver calls deliver_one, through smc::raw_delivery).
 *
 * The application gets messages one per on_deliver call, or as spans of
 * consecutive ones through on_deliver_span: then the messages of one engine
 * pass go out in chunks of up to kSpan descriptors built on the stack, each
 * pointing into its slot (zero copy), one call per chunk; a large message
 * (RDMC) ends a chunk and goes alone, its buffer released after the call.
 * A replicated jam (SLOT_FLAG_JAM) ends a chunk too and runs in its place
 * (jam/replicated_jams.hpp); a member that cannot run it delivers nothing
 * after it.
 * Per message the walk does no division, no allocation and no atomic
 * read-modify-write; the delivered count moves once per pass.
 *
 * Invariants (asserted): delivered <= published here; at a view change,
 * every survivor delivers exactly the sequences below the agreed trim, so
 * survivors' delivered sequences are identical. A callback that throws is
 * contained and counted; delivery goes on with the next chunk.
 */
#pragma once

#include "core/context.hpp"
#include "smc/receiver.hpp"

#include <vector>

namespace tc {

class large_messages;
namespace smc {
class receiver;
}

class delivery final : public smc::raw_delivery {
public:
    delivery(group_context &ctx, smc::receiver &received, large_messages &large);

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
    void deliver_one(int sender, int64_t index, int64_t seq) override;

    static constexpr unsigned kSpan = 64;

private:
    class chunk;

    struct cursor {
        const std::byte               *base;   /* the sender's first slot */
        const smc::receiver::taken_slot *taken; /* what its slots hold */
        unsigned                      slot;    /* where its next message in the walk is */
    };

    /* sequences first..last in order, those for which keep(sender, index);
     * the first sequence not delivered: last + 1, or a jam whose module
     * still compiles here (delivery holds there, the engine goes on) */
    template<class Keep> int64_t deliver_range(int64_t first, int64_t last, Keep &&keep);
    void hand_out(const message *msgs, unsigned count);
    /* a jam frame: run it here, or leave the group if this member cannot;
     * false: its module still compiles, run it again later */
    bool run_jam(int sender, int64_t index, int64_t seq, std::span<const std::byte> frame);

    group_context       &ctx_;
    smc::receiver       &received_;
    large_messages      &large_;
    std::vector<cursor> cursors_;   /* by view sender, reused by every walk */
};

} // namespace tc
