/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The start every two-rank ifunc helper makes (ifunc_bad, ifunc_tear): the
 * bootstrap from the launcher's environment, exactly two ranks, UCP with
 * the ifunc worker, and the test package tcbench from the build tree.
 */
#ifndef TC_TEST_IFUNC_PAIR_H_
#define TC_TEST_IFUNC_PAIR_H_

#include "ifunc/compat/ucp_ifunc_int.h"
#include "ifunc/mailbox/mailbox_int.h"

#include <twochains/bootstrap.h>
#include <twochains/ifunc.h>

#include <stdio.h>

/* 0 on success; the caller exits 2 otherwise */
static inline int ifunc_pair_start(tc_bootstrap_h *boot_p, int *rank_p, tc_ifunc_ucp_t *ucp,
                                   tc_ifunc_pkg_h *pkg_p)
{
    char prefix[1024];

    if (tc_bootstrap_create_from_env(boot_p) != UCS_OK) {
        return -1;
    }
    *rank_p = tc_bootstrap_rank(*boot_p);
    if ((tc_bootstrap_size(*boot_p) != 2) || (tc_ifunc_ucp_init(ucp) != UCS_OK)) {
        return -1;
    }
    snprintf(prefix, sizeof(prefix), "%s/test/twochains-pkgs", TC_BUILDDIR);
    return (tc_ifunc_pkg_load(prefix, "tcbench", pkg_p) == UCS_OK) ? 0 : -1;
}

/* Our ring at @a rank, asked for and granted (the raw senders write it
 * themselves); NULL if that fails within 20 s */
static inline tc_ifunc_peer_t *ifunc_pair_ring(tc_ifunc_mailbox_h mbox, int rank)
{
    double deadline = tc_ifunc_now() + 20;
    ucs_status_t status;

    while ((status = tc_ifunc_mailbox_connect(mbox, rank)) == UCS_INPROGRESS) {
        tc_progress(tc_ifunc_mailbox_engine(mbox));
        if (tc_ifunc_now() > deadline) {
            return NULL;
        }
    }
    return (status == UCS_OK) ? mbox->peers[rank] : NULL;
}

/* A raw sender keeps the ring protocol (peer_rings.c): frames up to
 * @a frames count as sent from their first store, so we never agree to let
 * the ring sleep while one is being written; call before the store */
static inline void ifunc_pair_sending(tc_ifunc_peer_t *peer, uint64_t frames)
{
    if (peer->sent < frames) {
        peer->sent = frames;
    }
}

/* ... and after it: a store into a ring its receiver let sleep rings the
 * doorbell */
static inline void ifunc_pair_stored(tc_ifunc_mailbox_h mbox, tc_ifunc_peer_t *peer)
{
    if (peer->asleep) {
        tc_ifunc_ring_doorbell(mbox, peer);
    }
}

#endif
