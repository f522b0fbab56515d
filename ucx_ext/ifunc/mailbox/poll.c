/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The receive poll: control messages first (a ring granted, a doorbell),
 * then round robin over the active rings only, bounded work per call (as
 * UCX's mm_iface). Each slot is judged by the dispatcher (ifunc/rx/slot.c),
 * consumed slots are credited back (credits.c), and a ring read empty
 * UCX_TC_IFUNC_RING_IDLE times in a row asks its sender whether it may
 * sleep (peer_rings.c). An empty poll with no active ring is two loads.
 *
 * Invariants: a ring's head moves only past a frame that ran or was
 * rejected; a jam that polls from inside a jam does not re-enter; the
 * active list changes only in the control drain, before the rings are read.
 *
 * Threads: the thread that drives the mailbox's engine.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/mailbox/mailbox_int.h"
#include "ifunc/rx/slot.inl"

unsigned tc_ifunc_poll(tc_ifunc_mailbox_h mbox, unsigned max_frames)
{
    unsigned handled = 0, idle = 0, i;
    tc_ifunc_slot_result_t result;
    tc_ifunc_rx_ring_t *rx;
    tc_ifunc_ring_t *ring;

    if (ucs_unlikely(mbox->in_poll)) {
        return 0;      /* a jam polled from inside a jam: not re-entered */
    }
    if (max_frames == 0) {
        max_frames = mbox->poll_batch;
    }
    mbox->in_poll = 1;
    if (ucs_unlikely(mbox->ctrl_head != NULL)) {
        tc_ifunc_ctrl_drain(mbox);
    }

    i = mbox->next_active;
    while ((handled < max_frames) && (idle < mbox->num_active)) {
        if (i >= mbox->num_active) {
            i = 0;
        }
        rx   = mbox->active[i];
        ring = &rx->ring;
        ++mbox->stats.ring_reads;
        result = tc_ifunc_slot_process(&mbox->rx, ring, ring->head, mbox->slot_size,
                                       ring->expect);
        if ((result == TC_IFUNC_SLOT_RUN) || (result == TC_IFUNC_SLOT_REJECTED)) {
            ++ring->expect;
            ring->head = (ring->head + mbox->slot_size ==
                          ring->base + (size_t)mbox->depth * mbox->slot_size) ?
                         ring->base : ring->head + mbox->slot_size;
            ++handled;
            idle     = 0;
            rx->idle = 0;
            if (ring->expect - ring->published >= mbox->credit_batch) {
                tc_ifunc_mailbox_credit(mbox, rx, 0);
            }
        } else {
            ++idle;
            if (ucs_unlikely(ring->expect - ring->published >= mbox->credit_batch)) {
                tc_ifunc_mailbox_credit(mbox, rx, 0);  /* retry a deferred one */
            }
            if (ucs_unlikely(++rx->idle >= mbox->idle_reads) &&
                (result == TC_IFUNC_SLOT_EMPTY)) {
                tc_ifunc_ring_idle(mbox, rx);
            }
        }
        ++i;
    }
    mbox->next_active = i;
    mbox->in_poll     = 0;
    return handled;
}
