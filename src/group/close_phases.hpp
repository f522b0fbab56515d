/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * close(), collective over a view's members, as the phase column: phase 1
 * once a member sends nothing more, phase 2 once everything any sender
 * sent is delivered at every member (drained()); a member that saw every
 * member at phase 2 frees its regions.
 *
 * Invariants: a member's phase-2 push is its last put (its final delivery
 * report goes before it, fenced), so no put reaches a peer that freed its
 * regions; with threaded senders the engine's thread pushes the phase the
 * closing thread asked for (requested()).
 */
#pragma once

#include "core/context.hpp"
#include "core/wait.hpp"

#include <atomic>

namespace tc {

namespace smc {
class receiver;
class sender;
}

class close_phases {
public:
    close_phases(group_context &ctx, smc::receiver &receive, const smc::sender &send,
                 waiter &wait)
        : ctx_(ctx), receive_(receive), send_(send), wait_(wait)
    {
    }

    /* our row's phase := @a phase, at every member; threaded, by the
     * engine's thread, waited for here */
    ucs_status_t set(int64_t phase);
    ucs_status_t push(int64_t phase);
    /* Everything any sender sent is delivered at every member. */
    bool drained() const;

    /* threaded: a phase asked for that the engine's thread has not pushed */
    bool requested() const
    {
        return request_.load(std::memory_order_acquire) > ctx_.mine(ctx_.cols.phase);
    }
    unsigned push_requested()
    {
        ctx_.fail_on(push(request_.load(std::memory_order_acquire)));
        return 1;
    }

private:
    group_context        &ctx_;
    smc::receiver        &receive_;
    const smc::sender    &send_;
    waiter               &wait_;
    std::atomic<int64_t> request_{0};   /* threaded close() -> engine's thread */
};

} // namespace tc
