/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "smc/receiver.hpp"

#include "large/large.hpp"
#include "core/sequence.hpp"

#include <ucs/debug/log_def.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

namespace tc::smc {

using sst::put_purpose;

const char *check_slot_header(const slot_header &h, const slot_limits &l, int64_t &count)
{
    const bool is_null = h.flags & SLOT_FLAG_NULL;
    count              = is_null ? h.size : 1;
    if (h.index != l.expected) {
        return "a slot of another index";
    }
    /* a message (a jam or not, large or not), or a null run alone */
    constexpr uint32_t kKnown = SLOT_FLAG_NULL | SLOT_FLAG_RDMC | SLOT_FLAG_JAM;
    if ((h.flags & ~kKnown) != 0 || (is_null && h.flags != SLOT_FLAG_NULL)) {
        return "a slot with flags no sender writes";
    }
    if ((h.flags & SLOT_FLAG_RDMC) && !l.large) {
        return "an RDMC slot in a group without large messages";
    }
    if ((h.flags & SLOT_FLAG_RDMC) && h.size != sizeof(rdmc_descriptor)) {
        return "an RDMC slot of the wrong size";
    }
    if (!is_null && h.size > l.max_payload) {
        return "a slot larger than the window's";
    }
    if (is_null && (count < 1 || count > l.window || l.bound < l.expected ||
                    count > l.bound - l.expected)) {
        return "a null run past its counter";
    }
    return nullptr;
}

receiver::receiver(group_context &ctx, raw_delivery &deliver, large_messages &large)
    : ctx_(ctx), deliver_(deliver), large_(large),
      taken_(static_cast<size_t>(ctx.map.creation_sender_count()) * ctx.settings.window,
             taken_slot{0, 0})
{
    received_.assign(ctx_.map.sender_count(), 0);
    faulted_.assign(ctx_.map.sender_count(), false);
}

void receiver::start_epoch()
{
    ctx_.set(ctx_.cols.published, 0);
    for (int o = 0; o < ctx_.map.creation_sender_count(); ++o) {
        ctx_.set(ctx_.cols.received, 0, o);
    }
    received_.assign(ctx_.map.sender_count(), 0);
    faulted_.assign(ctx_.map.sender_count(), false);
    std::fill(taken_.begin(), taken_.end(), taken_slot{0, 0});
    report_due_ = delivery_report_due_ = false;
}

receiver::run receiver::consume(int sender, int64_t index, int64_t sent, unsigned max_items)
{
    const unsigned w    = ctx_.settings.window;
    const size_t stride = ctx_.settings.stride;
    const bool raw      = ctx_.params.mode == delivery_mode::raw;
    taken_slot *taken   = &taken_[ctx_.map.sender_column(sender) * w];
    std::byte *base     = ctx_.slot(sender, 0);
    unsigned slot       = static_cast<unsigned>(index % w);
    run r{index, 0, 0};
    while (r.next < sent && r.items < max_items) {
        /* the slots were just written by another core: ask for the ones
         * ahead while this one is checked */
        const unsigned ahead = slot + kPrefetchAhead;
        __builtin_prefetch(base + (ahead < w ? ahead : ahead % w) * stride);
        /* the header once, into our copy: its writer may rewrite the slot */
        slot_header h;
        std::memcpy(&h, base + slot * stride, sizeof(h));
        const bool is_null  = h.flags & SLOT_FLAG_NULL;
        const bool is_large = (h.flags & SLOT_FLAG_RDMC) && large_.enabled();
        /* a null run is bounded by the newest counter */
        const int64_t bound = is_null ? std::max(sent, ctx_.get(ctx_.map.sender_row(sender),
                                                                ctx_.cols.sent)) : sent;
        int64_t count    = 0;
        const char *fault = check_slot_header(
                h, {r.next, bound, ctx_.params.max_payload, w, large_.enabled()}, count);
        if (fault == nullptr && is_large) {
            const auto a = large_.arrived(sender, r.next);
            if (a == large_messages::arrival::pending) {
                r.stop = kNotYet;
                break;
            }
            if (a == large_messages::arrival::invalid) {
                fault = "an RDMC descriptor it could not have sent (size or transfer)";
            }
        }
        if (fault != nullptr) {
            char what[192];
            std::snprintf(what, sizeof(what), "%s: index %ld (expected %ld), size %u (max "
                          "%zu), flags %u", fault, static_cast<long>(h.index),
                          static_cast<long>(r.next), h.size, ctx_.params.max_payload, h.flags);
            ctx_.blame(ctx_.map.sender_row(sender), what);
            faulted_[sender] = true;
            r.stop           = kFaulted;
            break;
        }
        for (int64_t i = 0; i < count; ++i) {
            taken[slot] = {h.size, h.flags};
            slot        = (slot + 1 == w) ? 0 : slot + 1;
        }
        r.next += count;
        ++r.items;
        if (raw && !is_null) {
            publish(sender, r.next);
            deliver_.deliver_one(sender, r.next - 1,
                                 order::sequence_of(r.next - 1, sender, ctx_.map.sender_count()));
        }
    }
    if (r.items != 0) {
        publish(sender, r.next);
    }
    return r;
}

void receiver::publish(int sender, int64_t received)
{
    received_[sender] = received;
    ctx_.set(ctx_.cols.received, received, ctx_.map.sender_column(sender));
    ctx_.set(ctx_.cols.published, order::contiguous_received(received_) + 1);
}

bool receiver::new_messages() const
{
    for (int s = 0; s < ctx_.map.sender_count(); ++s) {
        if (s != ctx_.map.my_sender() &&
            received_[s] < ctx_.get(ctx_.map.sender_row(s), ctx_.cols.sent)) {
            return true;
        }
    }
    return false;
}

/* Batched: each sender's new slots in one run, one report after all of
 * them. Urgent: a report after every message. */
unsigned receiver::receive_new()
{
    const bool batched = ctx_.settings.batched;
    unsigned events    = 0;
    for (int s = 0; s < ctx_.map.sender_count() && !ctx_.failed; ++s) {
        if (s == ctx_.map.my_sender()) {
            continue;
        }
        const int64_t sent = ctx_.get(ctx_.map.sender_row(s), ctx_.cols.sent);
        while (received_[s] < sent && !ctx_.failed && !faulted_[s]) {
            const run r = consume(s, received_[s], sent, batched ? UINT_MAX : 1);
            events += r.items;
            if (r.stop != 0) {
                /* kNotYet: RDMC blocks still arriving, later passes retry;
                 * kFaulted: not read again until the view without it */
                break;
            }
            if (!batched) {
                ctx_.fail_on(push_report(put_purpose::receive_report));
            }
        }
    }
    if (batched && events != 0) {
        report_due_ = true; /* one report after consuming everything new */
    }
    return events;
}

ucs_status_t receiver::push_report(put_purpose purpose)
{
    report_due_          = false;
    delivery_report_due_ = false;
    last_report_s_       = now_s();
    return ctx_.push(ctx_.cols.received, ctx_.cols.delivered, purpose);
}

unsigned receiver::push_delivery_report_when_idle()
{
    if ((now_s() - last_report_s_) > kDeliveryReportIdleS) {
        ctx_.fail_on(push_report(put_purpose::delivery_report));
    }
    return 1; /* keep the engine from sleeping past the deadline */
}

} // namespace tc::smc
