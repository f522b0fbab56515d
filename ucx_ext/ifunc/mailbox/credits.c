/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * One-sided credits. A sender may have at most depth frames a receiver has
 * not consumed: it sends frame k only if k - credits[dest] < depth, and
 * otherwise returns UCS_ERR_NO_RESOURCE (a credit stall). The receiver puts
 * its consumed count back every depth/4 frames (and retries until it went
 * out), so a sender waiting for credits always gets them.
 *
 * The credit word of a sender's frames to us is a line of the sender's own,
 * which only we may write (peer_rings.c).
 *
 * Invariants: the source word of a credit put is never rewritten while the
 * put is in flight; the zeroes of freed slots are ordered before the credit
 * that lets the sender reuse them.
 *
 * Threads: the thread that drives the mailbox's engine.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/mailbox/mailbox_int.h"

#include <ucs/debug/log_def.h>

void tc_ifunc_mailbox_credit(tc_ifunc_mailbox_h mbox, tc_ifunc_rx_ring_t *rx, int force)
{
    tc_ifunc_ring_t *ring = &rx->ring;
    tc_ifunc_peer_t *peer = mbox->peers[ring->peer];
    ucp_request_param_t param;
    ucs_status_ptr_t req;

    if ((ring->expect == ring->published) ||
        (!force && (ring->expect - ring->published < mbox->credit_batch))) {
        return;
    }
    if (ring->credit_req != NULL) {
        if (ucp_request_check_status(ring->credit_req) == UCS_INPROGRESS) {
            return;           /* the source word is still being read */
        }
        ucp_request_free(ring->credit_req);
        ring->credit_req = NULL;
    }

    /* the freed slots' zeroes before the credit that lets them be reused */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    rx->credit_src     = ring->expect;
    param.op_attr_mask = 0;
    req = tc_write_lane_write(mbox->lane, peer->lane, peer->ep, (uint32_t)mbox->rank,
                              &rx->credit_src, sizeof(rx->credit_src), rx->credit_addr,
                              rx->credit_rkey, rx->credit_key, &param,
                              &ring->credit_header);
    if (UCS_PTR_IS_ERR(req)) {
        /* a dead sender: retried by later polls, logged once */
        if (mbox->stats.credit_failures++ == 0) {
            ucs_warn("ifunc rank %d: credit put to rank %d failed: %s (counted; logged "
                     "once)", mbox->rank, ring->peer, ucs_status_string(UCS_PTR_STATUS(req)));
        }
        return;
    }
    ring->credit_req = req;
    ring->published  = ring->expect;
    ++mbox->stats.credit_updates;
}
