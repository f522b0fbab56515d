/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Checked frames in caller-managed buffers (ucp_poll_ifunc): a full frame
 * that arrived in one put, in any byte order, perhaps with bytes stored
 * twice (frame.h, "Checked frames").
 *
 * Threads: the thread that calls ucp_poll_ifunc, as the public API is
 * single-threaded; the table of recent frames is process-wide.
 *
 * Invariants:
 *  - the header is read once into a snapshot; frame_size is bounded by the
 *    buffer before any other byte is read, and only the snapshot is used;
 *  - a frame is acted on only when the snapshot's signal, seq and
 *    TC_FRAME_F_CHECKED agree, its trailer byte is there (a cheap gate, not
 *    a proof), and tc_frame_checked_check() over the snapshot
 *    and the live body equals the snapshot's checksum: every word read was
 *    the sent one. Until then it is PENDING and untouched; only the trailer
 *    timeout makes it a reject (truncated);
 *  - the receiver writes one word: the signal of a frame it is done with, so
 *    that the next poll of an empty buffer is one load. A frame that
 *    completed was stored whole, so clearing it races only a second store
 *    of the same bytes, which the buffer's last (signal, check) and the
 *    recent table recognise; a frame rejected incomplete keeps its signal
 *    as the buffer's last, so if it completes later it is not run;
 *  - a frame runs at most once while its seq is among the last 1,024 this
 *    process ran, or its buffer is among the last ones polled.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/rx/rx.h"
#include "ifunc/rx/slot.inl"

#include <stdio.h>
#include <string.h>

#define TC_CHECKED_RECENT 1024u   /* a power of 2: seqs of one sender are consecutive */

typedef struct {
    uint64_t signal;
    uint64_t check;
} tc_checked_seen_t;

/* The last frames run here, by seq: a second store of one of them that
 * arrives after its buffer's state was recycled is still recognised */
static tc_checked_seen_t tc_checked_recent[TC_CHECKED_RECENT];

int tc_checked_recently_run(uint64_t sig, uint64_t check)
{
    const tc_checked_seen_t *seen =
            &tc_checked_recent[TC_FRAME_SIGNAL_SEQ(sig) & (TC_CHECKED_RECENT - 1)];

    return (sig == seen->signal) && (check == seen->check);
}

static int tc_checked_seen(const tc_ifunc_ring_t *ring, uint64_t sig, uint64_t check)
{

    /* the buffer's last frame: run (its check), or rejected incomplete
     * (check 0: whatever it completes to later) */
    return ((sig == ring->last_signal) &&
            ((ring->last_check == 0) || (check == ring->last_check))) ||
           tc_checked_recently_run(sig, check);
}

/* Done with the frame whose signal is @a sig: forget it in the buffer, and
 * remember it here. @a check is 0 for a frame that never completed. */
static void tc_checked_release(tc_ifunc_ring_t *ring, uint8_t *buffer, uint64_t sig,
                               uint64_t check)
{
    tc_checked_seen_t *seen =
            &tc_checked_recent[TC_FRAME_SIGNAL_SEQ(sig) & (TC_CHECKED_RECENT - 1)];

    ring->last_signal = sig;
    ring->last_check  = check;
    if (check != 0) {
        seen->signal = sig;
        seen->check  = check;
    }
    __atomic_store_n(&((tc_frame_hdr_t*)buffer)->signal, 0, __ATOMIC_RELAXED);
}

tc_ifunc_slot_result_t tc_ifunc_slot_process_checked(tc_ifunc_rx_t *rx,
                                                     tc_ifunc_ring_t *ring,
                                                     uint8_t *buffer,
                                                     uint32_t buffer_size,
                                                     uint64_t sig)
{
    tc_portable_code_t *portable = NULL;
    tc_ifunc_reject_t reason;
    uint64_t check = 0;
    char detail[192];
    tc_frame_hdr_t h;
    int complete;

    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    memcpy(&h, buffer, sizeof(h));
    if (ucs_unlikely(tc_checked_seen(ring, sig, h.checksum))) {
        ++rx->stats->stale_signals;   /* a late second store of a frame we ran */
        return TC_IFUNC_SLOT_EMPTY;
    }
    complete = (h.signal == sig) && (h.seq == TC_FRAME_SIGNAL_SEQ(sig)) &&
               (h.flags & TC_FRAME_F_CHECKED) && (h.frame_size >= TC_FRAME_MIN_SIZE) &&
               (h.frame_size <= buffer_size) && ((h.frame_size % TC_FRAME_ALIGN) == 0);
    /* the trailer first: it proves nothing (the put lands in any order) but
     * it is usually stored last, and reading the whole frame while it is
     * still landing takes its lines from the sender store by store (a 16 KiB
     * frame took 5x longer to arrive so). The check covers it, so a
     * complete frame always has it. */
    if (complete && (__atomic_load_n(&buffer[h.frame_size - 1], __ATOMIC_RELAXED) ==
                     TC_FRAME_TRAILER(h.seq))) {
        check    = tc_frame_checked_check(&h, buffer, h.frame_size);
        complete = (check == h.checksum);
    } else {
        complete = 0;
    }

    detail[0] = '\0';
    if (ucs_unlikely(!complete)) {
        if (!tc_ifunc_slot_timed_out(rx, ring)) {
            return TC_IFUNC_SLOT_PENDING;
        }
        if ((h.frame_size < TC_FRAME_MIN_SIZE) || (h.frame_size > buffer_size) ||
            (h.frame_size % TC_FRAME_ALIGN)) {
            reason = TC_IFUNC_REJECT_SIZE;
            snprintf(detail, sizeof(detail), "frame size %u, buffer %u", h.frame_size,
                     buffer_size);
        } else {
            reason = TC_IFUNC_REJECT_TRUNCATED;
            snprintf(detail, sizeof(detail), "checked frame of %u bytes whose check "
                     "does not match after %.3f s", h.frame_size, rx->trailer_timeout);
        }
        tc_ifunc_reject(rx, ring, reason, h.seq, h.type, h.element_id, detail);
        tc_checked_release(ring, buffer, sig, 0);
        return TC_IFUNC_SLOT_REJECTED;
    }
    reason = tc_frame_check_header(&h, buffer_size, TC_FRAME_SEQ_ANY, NULL);
    if ((reason == TC_IFUNC_REJECT_NONE) && (h.type == TC_FRAME_PORTABLE) &&
        rx->portable_wait) {
        /* its module (read now, while the frame is the checked one), then
         * release, then the call; while the module compiles the frame stays */
        reason = tc_ifunc_portable_stage(rx, ring, &h, buffer, &portable, detail,
                                         sizeof(detail));
        if (reason == TC_IFUNC_PORTABLE_WAIT) {
            ring->pending_since = 0;
            return TC_IFUNC_SLOT_PENDING;
        }
    }
    tc_ifunc_slot_arrived(rx, ring);

    /* released before it runs: a jam may make its sender send the next
     * frame into this buffer, which a clear after the run could erase */
    tc_checked_release(ring, buffer, sig, check);
    if ((reason == TC_IFUNC_REJECT_NONE) && (portable != NULL)) {
        tc_ifunc_portable_run(rx, portable,
                              (h.payload_size != 0) ? buffer + h.payload_offset : NULL,
                              h.payload_size);
    } else if (reason == TC_IFUNC_REJECT_NONE) {
        reason = tc_ifunc_run_frame(rx, ring, &h, buffer, detail, sizeof(detail));
    }
    if (reason != TC_IFUNC_REJECT_NONE) {
        tc_ifunc_reject(rx, ring, reason, h.seq, h.type, h.element_id, detail);
        return TC_IFUNC_SLOT_REJECTED;
    }
    ++rx->stats->frames[h.type - TC_FRAME_LOCAL];
    rx->stats->bytes += h.frame_size;
    return TC_IFUNC_SLOT_RUN;
}
