/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * A receiver's rings: set up, torn down (the codes they name let go), and
 * the count and log of a frame a ring rejected.
 *
 * Threads: the thread that drives the receiver (mailbox poller or
 * ucp_poll_ifunc caller); one thread per ring.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/receiver/receiver.h"

#include <base/debug.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tc_ifunc_ring_init(tc_ifunc_ring_t *ring, uint8_t *base, int peer,
                        uint32_t depth)
{
    memset(ring, 0, sizeof(*ring));
    ring->base  = base;
    ring->head  = base;
    ring->peer  = peer;
    ring->depth = depth;
    kh_init_inplace(tc_cached, &ring->cached);
}

void tc_ifunc_ring_cleanup(tc_ifunc_ring_t *ring)
{
    tc_ifunc_link_t *link, *next;
    tc_code_entry_t *entry;

    /* the cache outlives the ring: its copies are no longer named here
     * (atomic: a compiled Portable module is the process's, named by rings
     * of any thread) */
    kh_foreach_value(&ring->cached, entry, {
        __atomic_fetch_sub(&entry->pins, 1, __ATOMIC_RELAXED);
    })

    for (link = ring->links; link != NULL; link = next) {
        next = link->next;
        free(link->got);
        free(link);
    }
    ring->links = NULL;
    kh_destroy_inplace(tc_cached, &ring->cached);
}

void tc_ifunc_reject(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                     tc_ifunc_reject_t reason, uint32_t seq, unsigned type,
                     uint32_t element_id, const char *detail)
{
    char from[32];

    ++rx->stats->rejects[reason];
    ++rx->stats->rejects_total;
    if (ring->peer >= 0) {
        snprintf(from, sizeof(from), "rank %d", ring->peer);
    } else {
        snprintf(from, sizeof(from), "buffer %p", ring->base);
    }

    if (!(ring->warned & UCS_BIT(reason))) {
        ring->warned |= UCS_BIT(reason);
        ucs_warn("ifunc rank %d: rejected frame seq %u type %u element %u from %s: "
                 "%s%s%s (further '%s' rejects from this peer are only counted)",
                 rx->rank, seq, type, element_id, from,
                 tc_ifunc_reject_name(reason), (detail[0] != '\0') ? ": " : "",
                 detail, tc_ifunc_reject_name(reason));
    } else {
        ucs_debug("ifunc rank %d: rejected frame seq %u from %s: %s%s%s", rx->rank,
                  seq, from, tc_ifunc_reject_name(reason),
                  (detail[0] != '\0') ? ": " : "", detail);
    }
}

