/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * A member's part of one RDMC transfer, from the schedule: the blocks it
 * sends in step order, and per source the blocks it receives.
 *
 * Threads: any; a pure function of its arguments.
 */
#include "rdmc/transfer_state.hpp"

#include <algorithm>

namespace tc::rdmc {

/* Our part of a transfer, from the schedule. */
std::unique_ptr<transfer> plan_transfer(schedule_kind kind, int n, int me, size_t block, int root,
                                        int64_t index, size_t size)
{
    auto t    = std::make_unique<transfer>();
    t->root   = root;
    t->index  = index;
    t->size   = size;
    t->blocks = std::max<int64_t>(1, static_cast<int64_t>((size + block - 1) / block));
    auto s    = schedule::create(kind, n, root, t->blocks);
    if (!s) {
        invariant_broken("schedule for a valid transfer");
    }
    t->have.assign(static_cast<size_t>(t->blocks), root == me ? 1 : 0);
    std::vector<int> source_of(n, -1);
    for (int64_t step = 0; step < s->steps(); ++step) {
        const auto a = s->at(me, step);
        if (a.send.valid()) {
            t->sends.push_back(a.send);
        }
        if (a.recv.valid()) {
            int &i = source_of[a.recv.peer];
            if (i < 0) {
                i = static_cast<int>(t->sources.size());
                t->sources.push_back({a.recv.peer, {}, 0});
            }
            t->sources[i].blocks.push_back(a.recv.block);
            ++t->expect;
        }
    }
    return t;
}

} // namespace tc::rdmc
