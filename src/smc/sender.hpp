/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * SMC send side: a window of W slots per sender in every member's slot
 * region, at the sender's original column.
 *
 * A sender reserves and fills slots (reserved >= committed >= pushed) and
 * pushes the committed run [pushed, committed) as one put per peer of the
 * contiguous slots (two on wrap-around; a null run ships only its header
 * slot, whose size says how many turns it fills), a fence, and one counter
 * put (the sent column). Urgent mode pushes each message at once; batched
 * mode when smc/flush_policy.hpp says so.
 *
 * Per message in urgent mode, for N members and one sender: the slot and,
 * after a fence, the counter to each peer (2(N-1)); every member, the sender
 * included, pushes one receive report per received message to each peer
 * (N(N-1)): N^2+N-2 puts.
 *
 * Invariants:
 *  - a slot is rewritten only when every member has delivered the message it
 *    held (reserve waits for that);
 *  - no slot is reserved in a wedged view: a send that returned success for
 *    it would be lost at the view change; it goes into the next view;
 *  - a quiet sender that holds up the order fills its turns with nulls.
 *
 * Threads (threaded_senders): application threads reserve under mutex_,
 * fill, and mark the slot committed; only the engine's thread issues puts,
 * and never with mutex_ held.
 */
#pragma once

#include "core/context.hpp"
#include "smc/flush_policy.hpp"
#include "smc/held_buffer.hpp"

#include <functional>
#include <mutex>

namespace tc {

class waiter;

namespace smc {

class receiver;

class sender {
public:
    sender(group_context &ctx, receiver &received, waiter &wait);

    /* Counters and window restart at an epoch (set here, pushed by the
     * caller); callers hold lock(). */
    void start_epoch();

    /* Messages above max_payload are accepted (RDMC carries them). */
    void allow_large(size_t limit) { max_message_ = limit; }

    ucs_status_t check_send(size_t size) const;

    /* reserve, @a fill in place, commit; urgent pushes at once */
    ucs_status_t send_slot(size_t size, uint32_t flags, bool block,
                           fill_ref fill,
                           bool urgent = false);

    ucs_status_t get_buffer(size_t size, std::span<std::byte> &buffer, bool block);
    ucs_status_t commit();
    /* a get_buffer() slot is held (never with threaded senders) */
    bool holds_buffer() const { return held_.index >= 0; }
    /* close(): give an uncommitted get_buffer() slot back */
    void drop_held_buffer();

    /* Push what is committed now (the engine's thread). */
    ucs_status_t push_now(flush_cause cause);
    /* threaded: ask the engine's thread to push */
    void request_push() { flush_requested_.store(true, std::memory_order_release); }

    /* The engine's pass: a batched or threaded sender pushes by size, age,
     * idleness or request. */
    bool push_may_be_due() const
    {
        return ctx_.settings.batched || ctx_.settings.threaded;
    }
    unsigned push_pending();

    int64_t nulls_needed() const;
    unsigned send_nulls();

    int64_t pushed() const { return pushed_.load(std::memory_order_acquire); }
    int64_t reserved() const { return reserved_.load(); }
    int64_t free_until() const { return free_until_; }

    /* Only threaded senders share the sender state; one thread needs no lock. */
    std::unique_lock<std::mutex> lock() const
    {
        return ctx_.settings.threaded ? std::unique_lock<std::mutex>(mutex_) :
                                        std::unique_lock<std::mutex>();
    }

private:
    ucs_status_t reserve(size_t size, bool block, int64_t &index);
    ucs_status_t wait_for_slot();
    bool slot_free(int64_t index) const;   /* callers hold lock() */
    ucs_status_t commit_index(int64_t index, size_t size, uint32_t flags, bool urgent);
    void commit_null_run(int64_t first, int64_t count);
    void advance_committed();
    ucs_status_t push_batch(flush_cause cause);

    group_context                           &ctx_;
    receiver                                &received_;
    waiter                                  &wait_;
    size_t                                  max_message_;
    mutable std::mutex                      mutex_;          /* guards reserved_ */
    std::atomic<int64_t>                    reserved_{0};    /* written under mutex_ */
    /* the first index whose slot may still hold a message not delivered
     * everywhere; the SST is read again only when a sender reaches it */
    mutable int64_t                         free_until_ = 0; /* under mutex_ */
    int64_t                                 committed_  = 0; /* engine's thread */
    std::atomic<int64_t>                    pushed_{0};
    std::unique_ptr<std::atomic<int64_t>[]> committed_flag_; /* per slot: index + 1 */
    std::atomic<bool>                       committed_since_poll_{false};
    std::atomic<bool>                       flush_requested_{false};
    double                                  oldest_pending_s_ = 0;
    held_buffer                             held_;   /* get_buffer() */
};

} // namespace smc
} // namespace tc
