/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "core/wait.hpp"

#include <string>

namespace tc {

namespace {

/* A row's counters as this member sees them (the engine's thread writes
 * them; a sender thread's read of them is as racy as its window check) */
struct row_counters {
    int64_t              epoch, phase, sent, delivered;
    std::vector<int64_t> received;   /* by view sender */
};

row_counters counters_of(const group_context &ctx, int row)
{
    const auto &c = ctx.cols;
    row_counters rc{ctx.raw(row, c.epoch), ctx.raw(row, c.phase), ctx.get(row, c.sent),
                    ctx.get(row, c.delivered), {}};
    for (int s = 0; s < ctx.map.sender_count(); ++s) {
        rc.received.push_back(ctx.get(row, c.received, ctx.map.sender_column(s)));
    }
    return rc;
}

} // namespace

uint64_t waiter::progress_mark() const
{
    uint64_t mark = local_mark_() + static_cast<uint64_t>(ctx_.epoch());
    for (int row : ctx_.map.rows()) {
        const row_counters c = counters_of(ctx_, row);
        mark += static_cast<uint64_t>(c.phase + c.sent + c.delivered);
        for (int64_t r : c.received) {
            mark += static_cast<uint64_t>(r);
        }
    }
    return mark;
}

void waiter::log_counters(ucs_log_level_t level) const
{
    local_log_(level);
    for (int row : ctx_.map.rows()) {
        const row_counters c = counters_of(ctx_, row);
        std::string received;
        for (int64_t r : c.received) {
            received += (received.empty() ? "" : ",") + std::to_string(r);
        }
        ucs_log(level, "group:   rank %d%s: epoch %ld phase %ld sent %ld delivered %ld "
                "received [%s]", ctx_.map.rank_of_row(row), row == ctx_.me() ? " (us)" : "",
                static_cast<long>(c.epoch), static_cast<long>(c.phase),
                static_cast<long>(c.sent), static_cast<long>(c.delivered), received.c_str());
    }
}

} // namespace tc
