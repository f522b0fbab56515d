/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The slot layer of the receive path: look at one slot, and when its frame
 * is complete, validate it and hand it to the run layer (run.c), or reject
 * it; a frame still arriving is pending until it times out.
 *
 * Threads: the thread that drives the receiver (mailbox poller or
 * ucp_poll_ifunc caller); one thread per ring.
 *
 * Invariants:
 *  - the header is copied once (a snapshot) after the signal, and only the
 *    snapshot is validated and used: tc_frame_check_header bounds every
 *    region before any code or payload byte is read;
 *  - package-level checks (package, element, hash, security mode, GOT)
 *    happen before the code is placed or called;
 *  - the GOT pointer that code sees is always the receiver's own table
 *    (installed package, or built here from names with dlsym), never a value
 *    from the wire;
 *  - every frame ends RUN or REJECTED exactly once; both free the slot. The
 *    receiver writes only what the sender is done with: of a complete
 *    frame (its signal, size, trailer and header agree) the header and
 *    trailer; of one that never completed, only the signal word, which a
 *    sender writes last. It never clears beyond the frame, so rejecting a
 *    frame cannot erase the next one;
 *  - a header that is not yet a valid frame (no magic, a size that does
 *    not fit, no trailer, a header of another signal) is "not a frame
 *    yet": PENDING, untouched, until the trailer timeout makes it a reject.
 *    In a caller-managed buffer (ucp_poll_ifunc) a signal without the frame
 *    magic is no message at all, as in the public API;
 *  - clearing is not final: a put may store the same bytes twice (glibc's
 *    memcpy writes an 8-byte signal with two overlapping 8-byte stores, and
 *    a preempted sender can do the second one after we ran the frame and
 *    cleared the slot). So the previous lap's signal in a slot means "not
 *    yet", never a bad frame: signals carry the sequence for this reason.
 *  - an incomplete frame never blocks the progress engine;
 *  - a compact frame (frame.h) is acted on only when its slot holds the
 *    expected seq and a check word matching every word read; its header is
 *    read after that match, and its slot is never written.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/rx/rx.h"
#include "ifunc/rx/run.inl"
#include "ifunc/rx/slot.inl"
#include "ifunc/code/package.h"

#include <base/debug.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int tc_ifunc_size_ok(uint32_t size, uint32_t slot_size)
{
    return (size >= TC_FRAME_MIN_SIZE) && (size <= slot_size) &&
           ((size % TC_FRAME_ALIGN) == 0);
}

int tc_ifunc_slot_timed_out(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring)
{
    double now = tc_ifunc_now();

    if (ring->pending_since == 0) {
        ring->pending_since = now;
        return 0;
    }
    if (now - ring->pending_since < rx->trailer_timeout) {
        return 0;
    }
    rx->stats->pending_wait_s += now - ring->pending_since;
    ring->pending_since = 0;
    return 1;
}

/* A frame is over: keep its signal as the slot's last, and clear what tells
 * the next poll that a frame is here. A complete frame is the receiver's
 * (the sender fenced or flushed everything before its signal): clear its
 * header and trailer. Of an incomplete one the sender may still be writing
 * anything but the signal word, which it writes last: clear only that. */
static void tc_ifunc_slot_release(tc_ifunc_ring_t *ring, uint8_t *slot,
                                  uint64_t sig, uint32_t complete_size)
{
    ring->last_signal = sig;
    if (complete_size != 0) {
        slot[complete_size - 1] = 0;
        memset(slot, 0, TC_FRAME_HDR_SIZE);
    } else {
        __atomic_store_n(&((tc_frame_hdr_t*)slot)->signal, 0, __ATOMIC_RELAXED);
    }
}

tc_ifunc_slot_result_t tc_ifunc_slot_process_frame(tc_ifunc_rx_t *rx,
                                                   tc_ifunc_ring_t *ring,
                                                   uint8_t *slot,
                                                   uint32_t slot_size,
                                                   uint64_t expect_seq,
                                                   uint64_t sig)
{
    tc_frame_hdr_t *live = (tc_frame_hdr_t*)slot;
    uint32_t complete_size = 0;
    tc_ifunc_reject_t reason;
    char detail[192];
    tc_frame_hdr_t h;
    uint32_t size;
    int complete;

    detail[0] = '\0';
    if (ring->depth != 0) {
        if (ucs_unlikely(sig == TC_FRAME_SIGNAL(expect_seq - ring->depth))) {
            ++rx->stats->stale_signals;   /* a late second store of a run frame */
            return TC_IFUNC_SLOT_EMPTY;
        }
    } else {
        /* a caller-managed buffer: anything but a frame magic is no message
         * (the public API's rule); the last frame's signal stored again is
         * a late store, as above (each send has its own signal) */
        if (TC_FRAME_SIGNAL_MAGIC(sig) == TC_FRAME_MAGIC_CHECKED) {
            return tc_ifunc_slot_process_checked(rx, ring, slot, slot_size, sig);
        }
        if (TC_FRAME_SIGNAL_MAGIC(sig) != TC_FRAME_MAGIC) {
            return TC_IFUNC_SLOT_EMPTY;
        }
        if (ucs_unlikely(sig == ring->last_signal)) {
            ++rx->stats->stale_signals;
            return TC_IFUNC_SLOT_EMPTY;
        }
    }

    /* Complete: magic, a size that fits, the trailer of this signal, and a
     * header that says the same (a header of another frame, or none yet,
     * is a frame still arriving). Until then it is not a frame yet, and
     * nothing of it is touched: only the trailer timeout makes it a reject. */
    size     = __atomic_load_n(&live->frame_size, __ATOMIC_ACQUIRE);
    complete = (TC_FRAME_SIGNAL_MAGIC(sig) == TC_FRAME_MAGIC) &&
               tc_ifunc_size_ok(size, slot_size) &&
               (__atomic_load_n(&slot[size - 1], __ATOMIC_ACQUIRE) ==
                TC_FRAME_TRAILER(TC_FRAME_SIGNAL_SEQ(sig)));
    if (complete) {
        /* one snapshot; only it is validated and used from here on */
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        memcpy(&h, slot, sizeof(h));
        complete = (h.signal == sig) && (h.frame_size == size) &&
                   (h.seq == TC_FRAME_SIGNAL_SEQ(sig));
    }
    if (ucs_unlikely(!complete)) {
        if (!tc_ifunc_slot_timed_out(rx, ring)) {
            return TC_IFUNC_SLOT_PENDING;
        }
        memcpy(&h, slot, sizeof(h));
        if (TC_FRAME_SIGNAL_MAGIC(sig) != TC_FRAME_MAGIC) {
            reason = TC_IFUNC_REJECT_SIGNAL;
        } else if (!tc_ifunc_size_ok(size, slot_size)) {
            reason = TC_IFUNC_REJECT_SIZE;
            snprintf(detail, sizeof(detail), "frame size %u, slot %u", size,
                     slot_size);
        } else if ((h.signal != sig) || (h.frame_size != size) ||
                   (h.seq != TC_FRAME_SIGNAL_SEQ(sig))) {
            reason = TC_IFUNC_REJECT_SEQUENCE;
            snprintf(detail, sizeof(detail), "header of seq %u under the signal of "
                     "seq %u after %.3f s", h.seq, TC_FRAME_SIGNAL_SEQ(sig),
                     rx->trailer_timeout);
        } else {
            reason = TC_IFUNC_REJECT_TRUNCATED;
            snprintf(detail, sizeof(detail), "no trailer at byte %u after %.3f s",
                     size - 1, rx->trailer_timeout);
        }
        goto reject;
    }
    tc_ifunc_slot_arrived(rx, ring);

    complete_size = size;
    reason = tc_frame_check_header(&h, slot_size, expect_seq, NULL);
    if (reason != TC_IFUNC_REJECT_NONE) {
        if (reason == TC_IFUNC_REJECT_OFFSET) {
            snprintf(detail, sizeof(detail), "code %u+%u, got %u+%u, entry %u, "
                     "symbols %u+%u, payload %u+%u in %u bytes", h.code_offset,
                     h.code_size, h.got_offset, h.got_size, h.entry_offset,
                     h.symtab_offset, h.symtab_size, h.payload_offset,
                     h.payload_size, h.frame_size);
        } else if (reason == TC_IFUNC_REJECT_SEQUENCE) {
            snprintf(detail, sizeof(detail), "seq %u in the slot of seq %u",
                     h.seq, (uint32_t)expect_seq);
        }
        goto reject;
    }
    if ((ring->peer >= 0) && (h.sender != (uint32_t)ring->peer)) {
        reason = TC_IFUNC_REJECT_SEQUENCE;
        snprintf(detail, sizeof(detail), "sender %u in the ring of rank %d",
                 h.sender, ring->peer);
        goto reject;
    }
    if ((h.flags & TC_FRAME_F_CHECKSUM) && (tc_frame_checksum(&h, slot) != h.checksum)) {
        reason = TC_IFUNC_REJECT_CHECKSUM;
        goto reject;
    }

    reason = tc_ifunc_run_frame(rx, ring, &h, slot, detail, sizeof(detail));
    if (ucs_unlikely(reason == TC_IFUNC_PORTABLE_WAIT)) {
        /* its module compiles off this thread: the frame stays, untouched,
         * and waiting for the compiler is not waiting for a trailer */
        ring->pending_since = 0;
        return TC_IFUNC_SLOT_PENDING;
    }
    if (reason != TC_IFUNC_REJECT_NONE) {
        goto reject;
    }

    ++rx->stats->frames[h.type - TC_FRAME_LOCAL];
    rx->stats->bytes += h.frame_size;
    ucs_trace_data("ifunc rank %d: ran frame seq %u type %u element %u from %d",
                   rx->rank, h.seq, h.type, h.element_id, ring->peer);
    tc_ifunc_slot_release(ring, slot, sig, complete_size);
    return TC_IFUNC_SLOT_RUN;

reject:
    tc_ifunc_reject(rx, ring, reason, h.seq, h.type, h.element_id, detail);
    tc_ifunc_slot_release(ring, slot, sig, complete_size);
    return TC_IFUNC_SLOT_REJECTED;
}

tc_ifunc_slot_result_t tc_ifunc_slot_process_compact(tc_ifunc_rx_t *rx,
                                                     tc_ifunc_ring_t *ring,
                                                     uint8_t *slot,
                                                     uint32_t slot_size,
                                                     uint64_t expect_seq)
{
    tc_frame_compact_t *live = (tc_frame_compact_t*)slot;
    uint32_t hdr_size, payload_size, size = 0;
    tc_ifunc_reject_t reason;
    tc_frame_compact_t h;
    char detail[160];
    uint64_t check;
    void *payload;

    /* the check word and the size it covers, then every covered word: a
     * match means each word read was the sent one, and words only ever
     * change from old to sent, so the header read after it is the sent one */
    check        = __atomic_load_n(&live->check, __ATOMIC_RELAXED);
    hdr_size     = __atomic_load_n(&live->hdr_words, __ATOMIC_RELAXED) * 8u;
    payload_size = __atomic_load_n(&live->payload_size, __ATOMIC_RELAXED);
    if (((hdr_size == TC_FRAME_COMPACT_LOCAL_HDR) ||
         (hdr_size == TC_FRAME_COMPACT_CACHED_HDR)) &&
        ((uint64_t)hdr_size + payload_size <= slot_size) &&
        (hdr_size + (uint64_t)payload_size <= TC_FRAME_COMPACT_MAX)) {
        size = tc_frame_compact_size(hdr_size, payload_size);
        if (tc_frame_compact_check(slot, size) != check) {
            size = 0;
        }
    }
    if (ucs_unlikely(size == 0)) {
        /* the expected seq is here, the rest not yet */
        if (!tc_ifunc_slot_timed_out(rx, ring)) {
            return TC_IFUNC_SLOT_PENDING;
        }
        memcpy(&h, slot, sizeof(h));
        if ((hdr_size != TC_FRAME_COMPACT_LOCAL_HDR) &&
            (hdr_size != TC_FRAME_COMPACT_CACHED_HDR)) {
            reason = TC_IFUNC_REJECT_VERSION;
            snprintf(detail, sizeof(detail), "compact header of %u bytes", hdr_size);
        } else if ((uint64_t)hdr_size + payload_size > slot_size) {
            reason = TC_IFUNC_REJECT_SIZE;
            snprintf(detail, sizeof(detail), "compact frame of %u + %u bytes, slot %u",
                     hdr_size, payload_size, slot_size);
        } else {
            reason = TC_IFUNC_REJECT_TRUNCATED;
            snprintf(detail, sizeof(detail), "compact frame whose check word does not "
                     "match its %u-byte header and %u bytes of payload after %.3f s",
                     hdr_size, payload_size, rx->trailer_timeout);
        }
        goto reject;
    }
    tc_ifunc_slot_arrived(rx, ring);

    /* the whole Cached size, a constant copy; a Local frame's code_hash
     * is payload bytes here, never read (slots are at least 64 bytes) */
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    memcpy(&h, slot, sizeof(h));
    detail[0] = '\0';
    reason    = tc_frame_check_compact(&h, slot_size, expect_seq);
    if (ucs_unlikely(reason != TC_IFUNC_REJECT_NONE)) {
        goto reject;
    }
    if (ucs_unlikely(h.sender != (uint32_t)ring->peer)) {
        reason = TC_IFUNC_REJECT_SEQUENCE;
        snprintf(detail, sizeof(detail), "sender %u in the ring of rank %d",
                 h.sender, ring->peer);
        goto reject;
    }

    /* from the checked copy alone: a peer may rewrite the header after the
     * check word matched, and the live size read before it need not agree */
    payload = (h.payload_size != 0) ? slot + h.hdr_words * 8u : NULL;
    if (h.type == TC_FRAME_LOCAL) {
        reason = tc_ifunc_run_local(rx, tc_ifunc_pkg_find(h.pkg_id), h.element_id,
                                    payload, h.payload_size, detail, sizeof(detail));
        if (reason == TC_IFUNC_REJECT_UNKNOWN_PKG) {
            snprintf(detail, sizeof(detail), "package %016" PRIx64, h.pkg_id);
        }
    } else {
        reason = tc_ifunc_run_cached(rx, ring, h.code_hash, h.pkg_id, h.element_id,
                                     payload, h.payload_size, detail, sizeof(detail));
    }
    if (ucs_unlikely(reason != TC_IFUNC_REJECT_NONE)) {
        goto reject;
    }
    ++rx->stats->frames[h.type - TC_FRAME_LOCAL];
    rx->stats->bytes += size;
    return TC_IFUNC_SLOT_RUN;

reject:
    /* nothing to clear: the next lap's seq makes this slot "not yet" */
    tc_ifunc_reject(rx, ring, reason, h.seq, h.type, h.element_id, detail);
    return TC_IFUNC_SLOT_REJECTED;
}
