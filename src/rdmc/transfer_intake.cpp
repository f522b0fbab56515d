/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Starting RDMC transfers (transfer_intake.hpp): queueing our sends,
 * offering them, reading peers' offers and accepting them.
 *
 * Threads: the engine's (the thread that drives the node's progress);
 * keeps the send and accept queues and what it saw of each root's offers.
 */
#include "rdmc/transfer_intake.hpp"

#include <ucs/debug/log_def.h>

namespace tc::rdmc {

using sst::store_word;

ucs_status_t transfer_intake::queue_send(std::span<const std::byte> data, int64_t *index_p)
{
    if (data.size() > p_.max_message) {
        ucs_error("rdmc: message of %zu bytes exceeds the maximum of %zu", data.size(),
                  p_.max_message);
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    if (data.size() > kOfferSizeMask) {
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    pending_send ps{data, -1, next_send_index_++};
    /* from a pool buffer we handed out? then it is zero-copy with the memh */
    const std::byte *base = buffers_.region().base();
    if (data.data() >= base && data.data() < base + buffers_.region().size()) {
        ps.slot = static_cast<int>((data.data() - base) / p_.max_message);
        slot &s = buffers_[ps.slot];
        if (s.state != slot_state::handed_out) {
            ucs_error("rdmc: send from pool buffer %d, which was not handed out", ps.slot);
            --next_send_index_;
            return UCS_ERR_INVALID_PARAM;
        }
        s.state = slot_state::busy;
        s.root  = me_;
        s.index = ps.index;
        s.held  = true;
    }
    if (index_p != nullptr) {
        *index_p = ps.index;
    }
    send_queue_.push_back(ps);
    return UCS_INPROGRESS;
}

ucs_status_t transfer_intake::start_send()
{
    root_state &rs = roots_[me_];
    if (rs.current || send_queue_.empty()) {
        return UCS_OK;
    }
    const pending_send ps = send_queue_.front();  /* a copy: popped below */
    /* every member accepted our previous transfer, so it has read its offer */
    for (int m = 0; m < n_; ++m) {
        if (m != me_ && !faults_.faulty(m) &&
            (words_.word(layout_.ready(me_, m)) >> 16) < ps.index) {
            return UCS_OK;
        }
    }
    auto t  = plan_transfer(p_.kind, n_, me_, block_, me_, ps.index, ps.data.size());
    t->slot = ps.slot;
    t->src  = ps.data.data();
    t->dst  = nullptr;
    t->complete = true;
    send_queue_.pop_front();
    rs.current = std::move(t);
    const uint64_t offer = (((static_cast<uint64_t>(ps.index) + 1) & kOfferSeqMask)
                            << kOfferSizeBits) | ps.data.size();
    store_word(words_.own_word(layout_.ready(me_, me_)),
               static_cast<int64_t>(((ps.index + 1) << 16) | kSlotRoot));
    return words_.put_word_to_all(layout_.offer(me_), static_cast<int64_t>(offer));
}

/* New offers: a root offers i+1 only after we accepted i, so at most one. */
unsigned transfer_intake::read_offers()
{
    unsigned events = 0;
    for (int r = 0; r < n_; ++r) {
        if (r == me_ || faults_.faulty(r)) {
            continue;
        }
        const auto w        = static_cast<uint64_t>(words_.word(layout_.offer(r)));
        const uint64_t next = (static_cast<uint64_t>(offers_seen_[r]) + 1) & kOfferSeqMask;
        if ((w >> kOfferSizeBits) != next) {
            offer_looked_[r] = 0;
            continue;
        }
        /* the word stays until we accept it: take it only when two
         * looks agree, so that a put still landing is never taken */
        if (offer_looked_[r] != w) {
            offer_looked_[r] = w;
            continue;
        }
        const size_t size = static_cast<size_t>(w & kOfferSizeMask);
        if (size > p_.max_message) {
            faults_.bad_look(r, word_kind::offer, "an RDMC offer larger than the group's buffers");
            continue;
        }
        faults_.good_look(r, word_kind::offer);
        offer_looked_[r]    = 0;
        const int64_t index = offers_seen_[r]++;
        roots_[r].offers.emplace_back(index, size);
        if (!p_.manual_accept) {
            accept_queue_.push_back(r);
        }
        if (p_.on_offer) {
            p_.on_offer(r, index, size);
        }
        ++events;
    }
    return events;
}

/* Accept in queue order: each needs the root's offer, the root's previous
 * transfer finished here, and a free buffer. */
ucs_status_t transfer_intake::accept_next(unsigned &events)
{
    while (!accept_queue_.empty()) {
        const int r    = accept_queue_.front();
        root_state &rs = roots_[r];
        if (rs.current || rs.offers.empty()) {
            return UCS_OK;
        }
        const auto [index, size] = rs.offers.front();   /* checked when read */
        const int s = buffers_.free_slot();
        if (s < 0) {
            return UCS_OK;
        }
        accept_queue_.pop_front();
        rs.offers.pop_front();
        if (index != rs.accepted) {
            invariant_broken("transfers of one root accepted out of order");
        }
        ++rs.accepted;
        buffers_[s] = {slot_state::busy, true, false, r, index};
        auto t    = plan_transfer(p_.kind, n_, me_, block_, r, index, size);
        t->slot   = s;
        t->src    = buffers_.slot_base(s);
        t->dst    = buffers_.slot_base(s);
        rs.current = std::move(t);
        ++events;
        ucs_status_t status = words_.put_word_to_all(layout_.ready(r, me_),
                                              static_cast<int64_t>(((index + 1) << 16) | s));
        if (status != UCS_OK) {
            return status;
        }
    }
    return UCS_OK;
}

} // namespace tc::rdmc
