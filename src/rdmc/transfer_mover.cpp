/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Moving RDMC blocks (transfer_mover.hpp): puts to ready peers, fenced
 * before their arrived counts, and counts read from peers' words.
 *
 * Threads: the engine's (the thread that drives the node's progress);
 * keeps nothing of its own: the engine's state it works on is referenced.
 */
#include "rdmc/transfer_mover.hpp"

#include <ucs/debug/log_def.h>

#include <algorithm>

namespace tc::rdmc {

ucs_status_t transfer_mover::put_block(transfer &t, const block_transfer &op, uint64_t ready)
{
    const int     peer   = op.peer;
    const size_t  offset = static_cast<size_t>(op.block) * block_;
    const size_t  len    = std::min(block_, t.size - std::min(t.size, offset));
    const uint64_t buffer = ready & 0xffff;
    const auto   &remote = buffers_.region().remote(peer);
    if (len > 0) {
        ucp_request_param_t param{};
        const std::byte *pool_base = buffers_.region().base();
        if (t.src >= pool_base && t.src < pool_base + buffers_.region().size()) {
            param.op_attr_mask = UCP_OP_ATTR_FIELD_MEMH;
            param.memh         = buffers_.region().memh();
        }
        ucs_status_ptr_t req = node_.write(p_.members[peer], t.src + offset, len,
                                           remote.address + buffer * p_.max_message + offset,
                                           remote, param, puts_.by_peer[peer].header);
        if (UCS_PTR_IS_ERR(req)) {
            ucs_error("rdmc: put of block %ld (%zu bytes) to member %d failed: %s",
                      static_cast<long>(op.block), len, peer,
                      ucs_status_string(UCS_PTR_STATUS(req)));
            return UCS_PTR_STATUS(req);
        }
        if (req != nullptr) {
            puts_.by_peer[peer].request = req;   /* the header stays until it completes */
            puts_.by_peer[peer].owner   = &t;
            ++t.puts_in_flight;
            ++puts_.in_flight;
        }
        stats_.bytes_sent += len;
    }
    ++stats_.blocks_sent;
    /* data, fence, signal: the counter is visible only after the block */
    ucs_status_t status = words_.pusher().fence();
    if (status != UCS_OK) {
        return status;
    }
    const int64_t count = ++roots_[t.root].sent_to[peer];
    return words_.put_word(peer, layout_.arrived(t.root, me_), count);
}

ucs_status_t transfer_mover::progress_sends(transfer &t, unsigned &events)
{
    while (t.next_send < t.sends.size()) {
        const auto &op = t.sends[t.next_send];
        if (!t.have[static_cast<size_t>(op.block)]) {
            return UCS_OK;
        }
        if (faults_.faulty(op.peer)) {
            ++t.next_send;   /* we owe a member we blamed nothing */
            continue;
        }
        if (puts_.by_peer[op.peer].request != nullptr) {
            ++stats_.peer_busy_waits;
            return UCS_OK;
        }
        if (puts_.in_flight >= std::max(1u, p_.max_sends_in_flight)) {
            return UCS_OK;
        }
        const auto ready = static_cast<uint64_t>(words_.word(layout_.ready(t.root, op.peer)));
        const auto ready_for = static_cast<int64_t>(ready >> 16);
        /* a peer we owe blocks of transfer i has not finished it, so it
         * cannot be ready for a later one; and its buffer is one it has */
        if (ready_for > t.index + 1 || (ready_for == t.index + 1 &&
                                        (ready & 0xffff) >= p_.buffers)) {
            faults_.bad_look(op.peer, word_kind::ready,
                     "an RDMC ready word naming a transfer or buffer it cannot have");
            return UCS_OK;
        }
        faults_.good_look(op.peer, word_kind::ready);
        if (ready_for != t.index + 1) {
            ++stats_.not_ready_waits;
            return UCS_OK;
        }
        ucs_status_t status = put_block(t, op, ready);
        if (status != UCS_OK) {
            return status;
        }
        ++t.next_send;
        ++events;
    }
    return UCS_OK;
}

ucs_status_t transfer_mover::progress_receives(transfer &t, root_state &rs, unsigned &events)
{
    for (auto &src : t.sources) {
        if (faults_.faulty(src.peer)) {
            continue;   /* its blocks wait for the view change */
        }
        const int64_t arrived = words_.word(layout_.arrived(t.root, src.peer));
        /* base >= 0, so past the first test the differences do not overflow */
        if (arrived < rs.base[src.peer] ||
            arrived - rs.base[src.peer] > static_cast<int64_t>(src.blocks.size()) ||
            arrived - rs.base[src.peer] < static_cast<int64_t>(src.seen)) {
            faults_.bad_look(src.peer, word_kind::arrived,
                     "an RDMC arrived count the schedule does not allow");
            continue;
        }
        faults_.good_look(src.peer, word_kind::arrived);
        const int64_t count = arrived - rs.base[src.peer];
        while (static_cast<int64_t>(src.seen) < count) {
            const int64_t b = src.blocks[src.seen++];
            if (t.have[static_cast<size_t>(b)]) {
                invariant_broken("a block arrived twice");
            }
            t.have[static_cast<size_t>(b)] = 1;
            ++t.have_count;
            ++stats_.blocks_received;
            ++events;
        }
    }
    return UCS_OK;
}

ucs_status_t transfer_mover::progress_transfer(int r, unsigned &events)
{
    root_state &rs = roots_[r];
    transfer   &t  = *rs.current;
    ucs_status_t status = progress_receives(t, rs, events);
    if (status == UCS_OK) {
        status = progress_sends(t, events);
    }
    if (status != UCS_OK) {
        return status;
    }
    if (!t.complete && t.have_count == t.expect) {
        t.complete = true;
        ++stats_.transfers_received;
        stats_.bytes_received += t.size;
        const transfer_info ti = info(t);
        if (p_.auto_release) {
            buffers_[t.slot].held = false;
        }
        run_callback(p_.on_receive, ti);
        ++events;
    }
    if (!t.complete || t.next_send < t.sends.size() || t.puts_in_flight != 0) {
        return UCS_OK;
    }
    /* done here: the next transfer of this root may start */
    std::unique_ptr<transfer> done = std::move(rs.current);
    for (const auto &src : done->sources) {
        rs.base[src.peer] += static_cast<int64_t>(src.blocks.size());
    }
    if (done->slot >= 0) {
        buffers_[done->slot].done = true;
        if (r == me_ && p_.auto_release) {
            buffers_[done->slot].held = false;
        }
    }
    if (r == me_) {
        ++stats_.transfers_sent;
        run_callback(p_.on_sent, info(*done));
    }
    if (done->slot >= 0) {
        buffers_.maybe_free(done->slot);
    }
    ++events;
    return UCS_OK;
}

} // namespace tc::rdmc
