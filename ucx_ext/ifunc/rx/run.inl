/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The run layer's calls of a Local element and of a Cached code, inline in
 * the compact path of every poll (slot.c) and in a carrier's calls
 * (carried/carrier.c).
 */
#ifndef TC_IFUNC_RUN_INL_
#define TC_IFUNC_RUN_INL_

#include "ifunc/code/package.h"
#include "ifunc/confine/confine.h"
#include "ifunc/receiver/receiver.h"

#include <inttypes.h>
#include <stdio.h>

/* A Local call: the receiver's own copy of element @a element_id of @a pkg
 * (NULL: not registered, said in @a detail by the caller) */
static inline tc_ifunc_reject_t tc_ifunc_run_local(tc_ifunc_rx_t *rx, tc_ifunc_pkg_h pkg,
                                                   uint32_t element_id, void *payload,
                                                   uint32_t payload_size, char *detail,
                                                   size_t detail_len)
{
    const tc_ifunc_element_t *e;
    tc_ifunc_reject_t reason;

    reason = tc_ifunc_pkg_elem_find(pkg, element_id, &e, detail, detail_len);
    if (reason != TC_IFUNC_REJECT_NONE) {
        return reason;
    }
    e->local->main(payload, payload_size, rx->target_args);
    return TC_IFUNC_REJECT_NONE;
}

/* A Cached call: the copy this ring's sender shipped earlier */
static inline tc_ifunc_reject_t tc_ifunc_run_cached(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                                                    uint64_t code_hash, uint64_t pkg_id,
                                                    uint32_t element_id, void *payload,
                                                    uint32_t payload_size, char *detail,
                                                    size_t detail_len)
{
    tc_code_entry_t *entry;
    khiter_t it;

    if (rx->security == TC_IFUNC_SECURITY_LOCAL_ONLY) {
        snprintf(detail, detail_len, "cached code in local-only mode");
        return TC_IFUNC_REJECT_DISABLED;
    }
    it = kh_get(tc_cached, &ring->cached, code_hash);
    if (it == kh_end(&ring->cached)) {
        snprintf(detail, detail_len, "code %016" PRIx64 " was never sent here",
                 code_hash);
        return TC_IFUNC_REJECT_CACHE_MISS;
    }
    entry = kh_val(&ring->cached, it);
    if ((entry->pkg_id != pkg_id) || (entry->element_id != element_id)) {
        snprintf(detail, detail_len, "code %016" PRIx64 " is another element",
                 code_hash);
        return TC_IFUNC_REJECT_CACHE_MISS;
    }
    ++rx->stats->cache_hits;
    if (entry->confined) {
        (void)tc_confine_run(rx, entry->code, payload, payload_size);
    } else {
        tc_code_entry_run(entry, payload, payload_size, rx->target_args);
    }
    return TC_IFUNC_REJECT_NONE;
}

#endif
