/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "smc/receiver.hpp"

#include "group/large.hpp"
#include "order/delivery.hpp"
#include "order/sequence.hpp"

#include <ucs/debug/log_def.h>

namespace tc::smc {

using sst::put_purpose;

receiver::receiver(group_context &ctx, delivery &deliver, large_messages &large)
    : ctx_(ctx), deliver_(deliver), large_(large),
      null_slot_(static_cast<size_t>(ctx.map.creation_sender_count()) * ctx.settings.window, 0)
{
    received_.assign(ctx_.map.sender_count(), 0);
}

void receiver::start_epoch()
{
    ctx_.set(ctx_.cols.published, 0);
    for (int o = 0; o < ctx_.map.creation_sender_count(); ++o) {
        ctx_.set(ctx_.cols.received, 0, o);
    }
    received_.assign(ctx_.map.sender_count(), 0);
    std::fill(null_slot_.begin(), null_slot_.end(), 0);
    report_due_ = delivery_report_due_ = false;
}

int64_t receiver::consume(int sender, int64_t index, int64_t sent)
{
    const auto *h       = ctx_.header(sender, index);
    const bool is_null  = h->flags & SLOT_FLAG_NULL;
    const int64_t count = is_null ? h->size : 1;
    const bool is_large = (h->flags & SLOT_FLAG_RDMC) && large_.enabled();
    const unsigned w    = ctx_.settings.window;
    if (is_large && h->index == index && h->size == sizeof(rdmc_descriptor) &&
        !large_.arrived(sender, index)) {
        return kNotYet;
    }
    if ((h->index != index) || (!is_null && h->size > ctx_.params.max_payload) ||
        (is_null && (count < 1 || count > w || index + count > sent))) {
        if (!malformed_logged_) {
            malformed_logged_ = true;
            ucs_error("group: malformed slot from rank %d: index %ld (expected %ld), "
                      "size %u (max %zu), flags %u", ctx_.map.current().senders[sender],
                      static_cast<long>(h->index), static_cast<long>(index), h->size,
                      ctx_.params.max_payload, h->flags);
        }
        return -1;
    }
    const int column = ctx_.map.sender_column(sender);
    for (int64_t i = index; i < index + count; ++i) {
        null_slot_[column * w + i % w] = is_null;
    }
    received_[sender] = index + count;
    ctx_.set(ctx_.cols.received, received_[sender], column);
    ctx_.set(ctx_.cols.published, order::contiguous_received(received_) + 1);
    if (ctx_.params.mode == delivery_mode::raw && !is_null) {
        deliver_.deliver_one(sender, index,
                             order::sequence_of(index, sender, ctx_.map.sender_count()));
    }
    return index + count;
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

unsigned receiver::receive_new()
{
    unsigned events = 0;
    for (int s = 0; s < ctx_.map.sender_count() && !ctx_.failed; ++s) {
        if (s == ctx_.map.my_sender()) {
            continue;
        }
        const int64_t sent = ctx_.get(ctx_.map.sender_row(s), ctx_.cols.sent);
        while (received_[s] < sent && !ctx_.failed) {
            /* the counter read again: a null run is bounded by the newest */
            const int64_t next =
                    consume(s, received_[s], ctx_.get(ctx_.map.sender_row(s), ctx_.cols.sent));
            if (next == kNotYet) {
                break; /* RDMC blocks still arriving: later passes retry */
            }
            if (next < 0) {
                ctx_.fail_on(UCS_ERR_IO_ERROR);
                break;
            }
            ++events;
            if (!ctx_.settings.batched) {
                ctx_.fail_on(push_report(put_purpose::receive_report));
            }
        }
    }
    if (ctx_.settings.batched && events != 0) {
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
