/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "membership/row_audit.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace tc::membership {

row_audit::row_audit(group_context &ctx)
    : ctx_(ctx), last_look_(ctx.map.creation_member_count(), nullptr),
      copy_(ctx.cols.rdv_addr.end() / sizeof(int64_t))
{
}

void row_audit::look()
{
    const auto &rows = ctx_.map.rows();
    const size_t n   = std::min<size_t>(ctx_.settings.audit_rows, rows.size());
    for (size_t k = 0; k < n; ++k) {
        if (next_ >= rows.size()) {
            next_ = 0;
        }
        const int row = rows[next_++];
        if (row != ctx_.me() && ctx_.map.survives(row, ctx_.suspected)) {
            look_at(row);
        }
    }
}

bool row_audit::credible(int row)
{
    return row == ctx_.me() || look_at(row) == nullptr;
}

const char *row_audit::look_at(int row)
{
    std::memcpy(copy_.data(), ctx_.table->address(row, ctx_.cols.sent),
                copy_.size() * sizeof(int64_t));
    const char *verdict = impossible(row, copy_);
    if (verdict != nullptr && last_look_[row] != nullptr) {
        ctx_.blame(row, verdict);
    }
    last_look_[row] = verdict;
    return verdict;
}

const char *row_audit::impossible(int row, const std::vector<int64_t> &words)
{
    const auto &c = ctx_.cols;
    auto at       = [&](row_columns::column col, size_t i = 0) {
        return words[col.offset / sizeof(int64_t) + i];
    };
    auto outside = [&](const char *name, int64_t v, int64_t lo, int64_t hi) {
        if (v >= lo && v <= hi) {
            return false;
        }
        std::snprintf(why_, sizeof(why_), "%s %lld into its row (possible: %lld..%lld)", name,
                      static_cast<long long>(v), static_cast<long long>(lo),
                      static_cast<long long>(hi));
        return true;
    };
    const int64_t e = ctx_.epoch();
    const int M     = ctx_.map.creation_member_count();
    const int S     = ctx_.map.creation_sender_count();
    const int64_t w = ctx_.settings.window;
    if (outside("epoch", at(c.epoch), 0, e + 1) || outside("wedged", at(c.wedged), 0, e + 1) ||
        outside("trim_epoch", at(c.trim_epoch), 0, e + 1) ||
        outside("done", at(c.done), 0, e + 1) || outside("join_req", at(c.join_req), 0, e + 1) ||
        outside("phase", at(c.phase), 0, 2) ||
        outside("heartbeat", at(c.heartbeat), 0, INT64_MAX) ||
        outside("admit", at(c.admit), 0, M) ||
        outside("rdv_addr", at(c.rdv_addr), 0, (int64_t{1} << 48) - 1)) {
        return why_;
    }
    for (auto mask : {c.suspected, c.leaving}) {
        for (size_t i = 0; i < mask.count; ++i) {
            const uint64_t word  = static_cast<uint64_t>(at(mask, i));
            const int first      = static_cast<int>(i * 64);
            const uint64_t valid = (M - first >= 64) ? ~uint64_t{0} :
                                   (M <= first)      ? 0 :
                                                       (uint64_t{1} << (M - first)) - 1;
            const bool self      = (mask.offset == c.suspected.offset) && (row / 64 == int(i)) &&
                                   (word >> (row % 64) & 1);
            if ((word & ~valid) != 0 || self) {
                std::snprintf(why_, sizeof(why_), "%s word %zu = %#llx into its row (%d members%s)",
                              mask.offset == c.suspected.offset ? "suspected" : "leaving", i,
                              static_cast<unsigned long long>(word), M,
                              self ? ", and it suspects itself" : "");
                return why_;
            }
        }
    }
    /* the counters and the trim count messages we can bound by our own */
    int64_t max_received = 0;
    for (int o = 0; o < S; ++o) {
        max_received = std::max(max_received, ctx_.mine(c.received, o));
    }
    /* a sender's own count is bounded by what we received from it */
    int64_t sent_bound = max_received + w;
    for (int s = 0; s < ctx_.map.sender_count(); ++s) {
        if (ctx_.map.sender_row(s) == row) {
            sent_bound = ctx_.mine(c.received, ctx_.map.sender_column(s)) + w;
            break;
        }
    }
    if (at(c.epoch) == e) {
        const int64_t seq_bound = (max_received + w + 1) * S;
        if (outside("published", at(c.published), 0, seq_bound) ||
            outside("delivered", at(c.delivered), 0, seq_bound) ||
            outside("sent", at(c.sent), 0, sent_bound)) {
            return why_;
        }
        for (int o = 0; o < S; ++o) {
            if (outside("received", at(c.received, o), 0, ctx_.mine(c.received, o) + w)) {
                return why_;
            }
        }
    }
    if (at(c.trim_epoch) == e) {
        for (int o = 0; o < S; ++o) {
            if (outside("trim", at(c.trim, o), 0, ctx_.mine(c.received, o) + w)) {
                return why_;
            }
        }
    }
    return nullptr;
}

} // namespace tc::membership
