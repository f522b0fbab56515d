/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The hot part of the slot layer, inline in every poll loop (the mailbox's
 * and ucp_poll_ifunc's): an empty slot costs one or two loads of one line.
 */
#ifndef TC_IFUNC_SLOT_INL_
#define TC_IFUNC_SLOT_INL_

#include "ifunc/rx/rx.h"

#include <ucs/sys/compiler_def.h>

/* The frame is complete: the time it was pending counts as trailer wait */
static UCS_F_ALWAYS_INLINE void tc_ifunc_slot_arrived(tc_ifunc_rx_t *rx,
                                                      tc_ifunc_ring_t *ring)
{
    if (ucs_unlikely(ring->pending_since != 0)) {
        rx->stats->pending_wait_s += tc_ifunc_now() - ring->pending_since;
        ring->pending_since = 0;
    }
}

/*
 * Look at the frame at @a slot and, if complete, validate and run or reject
 * it, then free the slot. Never blocks: an incomplete frame is PENDING until
 * rx->trailer_timeout, then rejected as truncated.
 *
 * Inline up to the first loads: an empty slot is what most polls find, and
 * it should cost one or two loads of one line, not the validator's setup.
 */
static UCS_F_ALWAYS_INLINE tc_ifunc_slot_result_t
tc_ifunc_slot_process(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring, uint8_t *slot,
                      uint32_t slot_size, uint64_t expect_seq)
{
    const tc_frame_compact_t *compact = (const tc_frame_compact_t*)slot;
    uint64_t sig;

    /* a compact frame, of this lap or an earlier one (never cleared): an
     * empty slot costs two loads from one line */
    if ((ring->depth != 0) &&
        (__atomic_load_n(&compact->format, __ATOMIC_RELAXED) == TC_FRAME_COMPACT_FORMAT)) {
        if (__atomic_load_n(&compact->seq, __ATOMIC_RELAXED) != (uint32_t)expect_seq) {
            return TC_IFUNC_SLOT_EMPTY;
        }
        return tc_ifunc_slot_process_compact(rx, ring, slot, slot_size, expect_seq);
    }

    sig = __atomic_load_n(&((const tc_frame_hdr_t*)slot)->signal, __ATOMIC_ACQUIRE);
    if (ucs_likely(sig == 0)) {
        return TC_IFUNC_SLOT_EMPTY;
    }
    return tc_ifunc_slot_process_frame(rx, ring, slot, slot_size, expect_seq,
                                       sig);
}

#endif
