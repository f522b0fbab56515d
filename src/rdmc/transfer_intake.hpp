/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * RDMC transfers before they move (protocol in engine.hpp): our sends
 * queued until every member accepted the previous one, peers' offers read
 * from their words, and accepts queued until a buffer is free. Internal to
 * the engine.
 */
#pragma once

#include "rdmc/buffer_pool.hpp"
#include "rdmc/control_words.hpp"
#include "rdmc/peer_faults.hpp"
#include "rdmc/transfer_state.hpp"

#include <deque>
#include <span>
#include <vector>

namespace tc::rdmc {

class transfer_intake {
public:
    transfer_intake(const engine_params &p, size_t block, int n, int me,
                    const control_layout &layout, peer_faults &faults, control_words &words,
                    buffer_pool &buffers, std::vector<root_state> &roots)
        : p_(p), block_(block), n_(n), me_(me), layout_(layout), faults_(faults),
          words_(words), buffers_(buffers), roots_(roots),
          offers_seen_(static_cast<size_t>(n), 0), offer_looked_(static_cast<size_t>(n), 0)
    {
    }

    /* engine::send once open: from a pool buffer it is zero-copy */
    ucs_status_t queue_send(std::span<const std::byte> data, int64_t *index_p);
    void queue_accept(int root) { accept_queue_.push_back(root); }
    bool empty() const { return send_queue_.empty() && accept_queue_.empty(); }
    size_t sends_queued() const { return send_queue_.size(); }
    size_t accepts_queued() const { return accept_queue_.size(); }
    int64_t offers_seen(int root) const { return offers_seen_[root]; }

    ucs_status_t start_send();
    unsigned read_offers();
    ucs_status_t accept_next(unsigned &events);

private:
    const engine_params      &p_;
    size_t                   block_;
    int                      n_;
    int                      me_;
    const control_layout     &layout_;
    peer_faults              &faults_;
    control_words            &words_;
    buffer_pool              &buffers_;
    std::vector<root_state>  &roots_;
    std::vector<int64_t>     offers_seen_;
    std::vector<uint64_t>    offer_looked_;  /* by root: the word of our last look */
    std::deque<int>          accept_queue_;
    std::deque<pending_send> send_queue_;
    int64_t                  next_send_index_ = 0;
};

} // namespace tc::rdmc
