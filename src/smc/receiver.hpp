/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * SMC receive side: take new slots from every sender in its order, and
 * report what arrived (the receive report: received, published and
 * delivered, one put per peer).
 *
 * Invariants:
 *  - a slot is taken only if its header names the index we expect, its
 *    flags are a sender's (a null run carries no other), its size fits, and
 *    a null run stays inside what the sender says it sent; anything else is
 *    the sender's fault (check_slot_header), blamed and logged once;
 *  - received[s] only grows within an epoch, and published is 1 + the
 *    highest sequence below which nothing is missing;
 *  - urgent mode reports every message at once; batched mode takes each
 *    sender's new slots as one run (its counters published once per run)
 *    and sends one report after consuming everything new, and an idle member pushes its delivered
 *    counter alone after kDeliveryReportIdleS.
 */
#pragma once

#include "core/context.hpp"
#include "core/slot.hpp"

#include <vector>

namespace tc {

class large_messages;

namespace smc {

/* Where raw mode hands a message over the moment its slot is taken. The
 * total order (order/delivery) implements it; it sits above SMC, so SMC
 * knows it only by this interface. */
class raw_delivery {
public:
    virtual void deliver_one(int sender, int64_t index, int64_t seq) = 0;

protected:
    ~raw_delivery() = default;
};

/* What a slot header is checked against: where its sender stands. */
struct slot_limits {
    int64_t  expected;      /* the index taken next (>= 0) */
    int64_t  bound;         /* for a null run: how far the sender says it sent */
    size_t   max_payload;   /* the group's */
    unsigned window;        /* slots per sender */
    bool     large;         /* the group carries large messages (RDMC) */
};

/* A slot header read once into @a h: nullptr and the slots it takes (a null
 * run more than one) into @a count, or why no sender could have written it
 * (another index; flags of no message or null run: unknown bits, or a null
 * run that is also something else; an RDMC slot in a group without RDMC or
 * of another size; a payload past max_payload; a null run of no slots, of
 * more than the window, or past @a l.bound). */
const char *check_slot_header(const slot_header &h, const slot_limits &l, int64_t &count);

class receiver {
public:
    static constexpr int64_t kNotYet = -2;   /* consume(): RDMC data still on its way */
    static constexpr int64_t kFaulted = -3;  /* consume(): the sender wrote an impossible
                                                slot; it is blamed, not read again */

    receiver(group_context &ctx, raw_delivery &deliver, large_messages &large);

    /* Counters restart at an epoch (set here, pushed by the caller). */
    void start_epoch();

    /* What consume() took: the next index, the slots (a null run is one),
     * and why it stopped early: 0, kFaulted on a slot its sender could not
     * have written, kNotYet while a large message's data is on its way. */
    struct run {
        int64_t  next;
        unsigned items;
        int64_t  stop;
    };
    /* Take up to @a max_items slots of view sender @a sender from @a index,
     * of which @a sent are out, and publish once (raw mode: before each
     * delivery). */
    run consume(int sender, int64_t index, int64_t sent, unsigned max_items);

    bool new_messages() const;
    unsigned receive_new();

    ucs_status_t push_report(sst::put_purpose purpose);
    bool report_due() const { return report_due_; }
    void report_later() { report_due_ = true; }
    void note_delivered() { delivery_report_due_ = true; }
    bool delivery_report_due() const { return delivery_report_due_; }
    unsigned push_delivery_report_when_idle();

    int64_t received(int sender) const { return received_[sender]; }
    const std::vector<int64_t> &received() const { return received_; }
    /* What consume() found in each slot it took, so that delivery need not
     * read the slot header again: its size and flags (a null run's body
     * slots are marked null). */
    struct taken_slot {
        uint32_t size;
        uint32_t flags;
    };
    const taken_slot *taken_column(int sender) const
    {
        return &taken_[ctx_.map.sender_column(sender) * ctx_.settings.window];
    }
    const taken_slot &taken(int sender, int64_t index) const
    {
        return taken_column(sender)[index % ctx_.settings.window];
    }
    bool is_null(int sender, int64_t index) const
    {
        return taken(sender, index).flags & SLOT_FLAG_NULL;
    }

private:
    void publish(int sender, int64_t received);

    static constexpr unsigned kPrefetchAhead = 4;

    /* An idle member pushes its delivered counter alone after this long. */
    static constexpr double kDeliveryReportIdleS = 20e-6;

    group_context        &ctx_;
    raw_delivery         &deliver_;
    large_messages       &large_;
    std::vector<int64_t> received_;        /* by view sender: mirror of our row */
    std::vector<taken_slot> taken_;       /* [column][slot] */
    bool                 report_due_          = false;
    bool                 delivery_report_due_ = false;
    double               last_report_s_       = 0;
    std::vector<bool>    faulted_;    /* by view sender: blamed this epoch, not read */
};

} // namespace smc
} // namespace tc
