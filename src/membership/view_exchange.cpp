/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "membership/view_exchange.hpp"

#include <ucs/debug/log_def.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace tc::membership {

using sst::put_purpose;

int check_round_lengths(std::span<const int64_t> words, size_t slot_bytes, size_t *lens,
                        size_t &total)
{
    size_t sum = 0;
    for (size_t r = 0; r < words.size(); ++r) {
        if (words[r] < 0 || static_cast<uint64_t>(words[r]) > slot_bytes ||
            __builtin_add_overflow(sum, static_cast<size_t>(words[r]), &sum)) {
            return static_cast<int>(r);
        }
        lens[r] = static_cast<size_t>(words[r]);
    }
    total = sum;
    return -1;
}

view_exchange::link::link(group_context &ctx, std::unique_ptr<sst::mirrored_region> r)
    : node(ctx.node), me(ctx.me()), timeout_s(ctx.settings.boot_timeout_s), region(std::move(r)),
      pusher(ctx.node), blame_to(&ctx)
{
}

view_exchange::~view_exchange()
{
    if (link_) {
        link_->blame_to = nullptr;
    }
}

void view_exchange::adopt(std::unique_ptr<sst::mirrored_region> region)
{
    link_ = region ? std::make_shared<link>(ctx_, std::move(region)) : nullptr;
}

ucs_status_t view_exchange::allgatherv(void *arg, const void *buf, size_t len, void **all_p,
                                       size_t *lens)
{
    return round(*static_cast<round_ctx*>(arg), buf, len, all_p, lens);
}

ucs_status_t view_exchange::round(round_ctx &x, const void *buf, size_t len, void **all_p,
                                  size_t *lens)
{
    if (len > kSlotBytes) {
        ucs_error("group: %zu bytes do not fit the view change exchange (%zu)", len, kSlotBytes);
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    link &l              = *x.via;
    const int me         = l.me;
    const uint64_t round = ++x.round;
    const size_t slot    = (round % 2) * kSlotSize;
    auto at = [&](int row) { return l.region->part(row) + slot; };
    std::byte *mine = at(me);
    if (len > 0) {
        std::memcpy(mine + 16, buf, len);   /* a barrier passes no buffer */
    }
    sst::store_word(mine + 8, static_cast<int64_t>(len));
    const size_t off    = slot;   /* in our row, a part of its own */
    ucs_status_t status = UCS_OK;
    for (int row : x.rows) {
        if (row != me && status == UCS_OK) {
            status = l.region->push(l.pusher, row, me, off + 8, 8 + len, put_purpose::other);
        }
    }
    status = (status != UCS_OK) ? status : l.pusher.fence();
    sst::store_word(mine, static_cast<int64_t>(round));   /* the round last */
    for (int row : x.rows) {
        if (row != me && status == UCS_OK) {
            status = l.region->push(l.pusher, row, me, off, 8, put_purpose::other);
        }
    }
    if (status != UCS_OK) {
        return status;
    }
    const double deadline = now_s() + l.timeout_s;
    for (;;) {
        bool all = true;
        for (int row : x.rows) {
            all = all && sst::load_word(at(row)) >= static_cast<int64_t>(round);
        }
        if (all) {
            break;
        }
        if (now_s() > deadline) {
            return UCS_ERR_TIMED_OUT;
        }
        l.pusher.reap();
        if (ucp_worker_progress(l.node.worker()) == 0) {
            std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
    }
    /* each length read once and bounded by the slot: a peer's word, not a
     * size to trust (a huge one read past the region, or overflowed the
     * sum into a small malloc and a large memcpy) */
    x.len_words.resize(x.rows.size());
    for (size_t r = 0; r < x.rows.size(); ++r) {
        x.len_words[r] = sst::load_word(at(x.rows[r]) + 8);
    }
    size_t total  = 0;
    const int bad = check_round_lengths(x.len_words, kSlotBytes, lens, total);
    if (bad >= 0) {
        char what[96];
        std::snprintf(what, sizeof(what), "a view exchange length of %lld bytes (at most %zu)",
                      static_cast<long long>(x.len_words[bad]), kSlotBytes);
        if (l.blame_to != nullptr) {
            l.blame_to->blame(x.rows[bad], what);
        } else {
            ucs_error("group: row %d wrote %s after its view was gone", x.rows[bad], what);
        }
        return UCS_ERR_IO_ERROR;
    }
    /* the bootstrap frees it (tc_bootstrap's contract: malloc'd) */
    auto *out = static_cast<std::byte*>(std::malloc(std::max<size_t>(total, 1)));
    if (out == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }
    size_t pos = 0;
    for (size_t r = 0; r < x.rows.size(); ++r) {
        std::memcpy(out + pos, at(x.rows[r]) + 16, lens[r]);
        pos += lens[r];
    }
    *all_p = out;
    return UCS_OK;
}

ucs_status_t view_exchange::bootstrap_over(const std::vector<int> &rows, tc_bootstrap_h &out)
{
    static const tc_bootstrap_ops_t ops = {
            "view exchange", &view_exchange::allgatherv,
            [](void *arg) { std::unique_ptr<round_ctx> owned(static_cast<round_ctx*>(arg)); }};
    if (!link_) {
        return UCS_ERR_NO_ELEM;
    }
    auto x        = std::make_unique<round_ctx>();
    x->via        = link_;
    x->rows       = rows;
    const int rank = static_cast<int>(std::find(rows.begin(), rows.end(), link_->me) -
                                      rows.begin());
    ucs_status_t status = tc_bootstrap_create(&ops, x.get(), rank, static_cast<int>(rows.size()),
                                              &out);
    if (status == UCS_OK) {
        x.release();   /* the bootstrap owns it now */
    }
    return status;
}

} // namespace tc::membership
