/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "order/delivery.hpp"

#include "common/contained_call.hpp"
#include "group/large.hpp"
#include "order/sequence.hpp"
#include "smc/receiver.hpp"

#include <cstdlib>

namespace tc {

void delivery::deliver_one(int sender, int64_t index, int64_t seq)
{
    if (received_.is_null(sender, index)) {
        return;
    }
    const auto *h = ctx_.header(sender, index);
    ctx_.count(&group_stats::delivered);
    std::span<const std::byte> data{reinterpret_cast<const std::byte*>(h + 1), h->size};
    int64_t transfer = -1;
    if ((h->flags & smc::SLOT_FLAG_RDMC) && large_.enabled()) {
        data = large_.data(sender, index, transfer);
        ctx_.count(&group_stats::rdmc_delivered);
    }
    /* the large message's buffer goes back once the callback is done with
     * it, whatever the callback did */
    struct release_after {
        large_messages &large;
        int            sender;
        int64_t        transfer;
        ~release_after()
        {
            if (transfer >= 0) {
                large.release(sender, transfer);
            }
        }
    } releaser{large_, sender, transfer};
    if (!ctx_.params.on_deliver) {
        return;
    }
    const message m{ctx_.map.current().senders[sender], index, seq, data};
    call_contained("group: delivery callback", "delivery goes on",
                   [&] { ctx_.params.on_deliver(m); },
                   [&] { return ctx_.count(&group_stats::callback_errors); });
}

unsigned delivery::deliver_stable()
{
    const int S             = ctx_.map.sender_count();
    const int64_t stable    = ctx_.min_over_members(ctx_.cols.published) - 1;
    int64_t       delivered = ctx_.mine(ctx_.cols.delivered) - 1;
    unsigned      count     = 0;
    while (delivered < stable) {
        ++delivered;
        if (ctx_.params.mode == delivery_mode::ordered) {
            deliver_one(order::sender_of(delivered, S), order::index_of(delivered, S), delivered);
        }
        ++count;
    }
    if (count != 0) {
        /* invariant: we deliver only what we have ourselves received */
        if (delivered > ctx_.mine(ctx_.cols.published) - 1) {
            ucs_error("group: invariant broken: delivered %ld beyond published %ld",
                      static_cast<long>(delivered),
                      static_cast<long>(ctx_.mine(ctx_.cols.published)));
            std::abort();
        }
        ctx_.set(ctx_.cols.delivered, delivered + 1);
        received_.note_delivered();
    }
    return count;
}

void delivery::deliver_up_to_trim()
{
    const int S       = ctx_.map.sender_count();
    auto kept         = [&](int s) { return ctx_.mine(ctx_.cols.trim, ctx_.map.sender_column(s)); };
    int64_t delivered = ctx_.get(ctx_.me(), ctx_.cols.delivered) - 1;
    int64_t last      = -1;
    for (int s = 0; s < S; ++s) {
        if (kept(s) > 0) {
            last = std::max(last, order::sequence_of(kept(s) - 1, s, S));
        }
    }
    uint64_t trimmed = 0;
    for (int s = 0; s < S; ++s) {
        trimmed += static_cast<uint64_t>(received_.received(s) - kept(s));
    }
    for (int64_t seq = delivered + 1; seq <= last; ++seq) {
        const int s       = order::sender_of(seq, S);
        const int64_t idx = order::index_of(seq, S);
        if (idx < kept(s) && ctx_.params.mode == delivery_mode::ordered) {
            deliver_one(s, idx, seq);
        }
    }
    ctx_.count(&group_stats::trimmed, trimmed);
    ucs_diag("group: epoch %ld: delivered up to the trim, %lu received messages beyond it "
             "discarded", static_cast<long>(ctx_.epoch()), static_cast<unsigned long>(trimmed));
}

} // namespace tc
