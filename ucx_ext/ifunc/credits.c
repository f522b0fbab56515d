/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * One-sided credits. A sender may have at most depth frames a receiver has
 * not consumed: it sends frame k only if k - credits[dest] < depth, and
 * otherwise returns UCS_ERR_NO_RESOURCE (a credit stall). The receiver puts
 * its consumed count back every depth/4 frames (and retries until it went
 * out), so a sender waiting for credits always gets them.
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

#include "ifunc_int.h"

#include <ucs/debug/log_def.h>

void tc_ifunc_mailbox_credit(tc_ifunc_mailbox_h mbox, int sender, int force)
{
    tc_ifunc_ring_t *ring = &mbox->rx_rings[sender];
    tc_ifunc_peer_t *peer = &mbox->peers[sender];
    uint64_t *src         = &mbox->credit_src[sender * TC_IFUNC_CREDIT_STRIDE];
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
    *src                = ring->expect;
    param.op_attr_mask  = UCP_OP_ATTR_FIELD_MEMH;
    param.memh          = mbox->memh;
    req = tc_write_lane_write(mbox->lane, peer->lane, peer->ep, (uint32_t)mbox->rank, src,
                              sizeof(*src), peer->credit_addr, peer->rkey,
                              peer->region_key, &param,
                              &ring->credit_header);
    if (UCS_PTR_IS_ERR(req)) {
        ucs_warn("ifunc rank %d: credit put to rank %d failed: %s", mbox->rank,
                 sender, ucs_status_string(UCS_PTR_STATUS(req)));
        return;
    }
    ring->credit_req = req;
    ring->published  = ring->expect;
    ++mbox->stats.credit_updates;
}
