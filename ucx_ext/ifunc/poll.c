/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The receive poll: round robin over the senders' rings, bounded work per
 * call (as UCX's mm_iface), each slot judged by the dispatcher
 * (dispatch.c), consumed slots credited back (credits.c).
 *
 * Invariants: a ring's head moves only past a frame that ran or was
 * rejected; a jam that polls from inside a jam does not re-enter.
 *
 * Threads: the thread that drives the mailbox's engine.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc_int.h"

unsigned tc_ifunc_poll(tc_ifunc_mailbox_h mbox, unsigned max_frames)
{
    unsigned handled = 0, idle = 0, r;
    tc_ifunc_slot_result_t result;
    tc_ifunc_ring_t *ring;
    uint8_t *slot;

    if (ucs_unlikely(mbox->in_poll)) {
        return 0;      /* a jam polled from inside a jam: not re-entered */
    }
    if (max_frames == 0) {
        max_frames = mbox->poll_batch;
    }
    mbox->in_poll = 1;

    /* round robin over the rings, bounded work per call (as mm_iface) */
    r = mbox->next_ring;
    while ((handled < max_frames) && (idle < (unsigned)mbox->size)) {
        ring   = &mbox->rx_rings[r];
        slot   = ring->head;
        result = tc_ifunc_slot_process(&mbox->rx, ring, slot, mbox->slot_size,
                                       ring->expect);
        if ((result == TC_IFUNC_SLOT_RUN) || (result == TC_IFUNC_SLOT_REJECTED)) {
            ++ring->expect;
            ring->head = (ring->head + mbox->slot_size ==
                          ring->base + (size_t)mbox->depth * mbox->slot_size) ?
                         ring->base : ring->head + mbox->slot_size;
            ++handled;
            idle = 0;
            if (ring->expect - ring->published >= mbox->credit_batch) {
                tc_ifunc_mailbox_credit(mbox, r, 0);
            }
        } else {
            ++idle;
            if (ucs_unlikely(ring->expect - ring->published >= mbox->credit_batch)) {
                tc_ifunc_mailbox_credit(mbox, r, 0);  /* retry a deferred one */
            }
        }
        r = (r + 1 == (unsigned)mbox->size) ? 0 : r + 1;
    }
    mbox->next_ring = r;
    mbox->in_poll   = 0;
    return handled;
}
