/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The receive path's calls for a frame another protocol carried (exec.c):
 * the run layer's own calls, which the mailbox's path keeps inline where it
 * is hot.
 *
 * Threads: the carrier's delivery thread, one per executor.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/carried/carried.h"
#include "ifunc/rx/rx.h"
#include "ifunc/rx/run.inl"

tc_ifunc_reject_t tc_ifunc_call_local(tc_ifunc_rx_t *rx, tc_ifunc_pkg_h pkg,
                                      uint32_t element_id, void *payload,
                                      uint32_t payload_size, char *detail,
                                      size_t detail_len)
{
    return tc_ifunc_run_local(rx, pkg, element_id, payload, payload_size, detail,
                              detail_len);
}

tc_ifunc_reject_t tc_ifunc_call_cached(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                                       uint64_t code_hash, uint64_t pkg_id,
                                       uint32_t element_id, void *payload,
                                       uint32_t payload_size, char *detail,
                                       size_t detail_len)
{
    return tc_ifunc_run_cached(rx, ring, code_hash, pkg_id, element_id, payload,
                               payload_size, detail, detail_len);
}

tc_ifunc_reject_t tc_ifunc_call_frame(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                                      const tc_frame_hdr_t *h, uint8_t *frame,
                                      char *detail, size_t detail_len)
{
    return tc_ifunc_run_frame(rx, ring, h, frame, detail, detail_len);
}
