/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Frames another protocol carried (carrier.c, frame_run.c): a group's slot
 * delivered whole, run through the receive path's validator and calls.
 */
#ifndef TC_IFUNC_CARRIED_H_
#define TC_IFUNC_CARRIED_H_

#include "ifunc/code/package.h"
#include "ifunc/receiver/receiver.h"
#include "ifunc/wire/frame.h"

#include <twochains/ifunc.h>

#include <ucs/sys/compiler_def.h>
#include <stdint.h>

BEGIN_C_DECLS

/* What tc_ifunc_frame_run learned of a frame, also of one it rejected */
typedef struct tc_ifunc_frame_view {
    uint8_t  type;           /* tc_frame_type_t; 0 if the header was not read */
    uint32_t element_id;
    uint64_t pkg_id;
    uint64_t code_hash;
    void     *payload;
    uint32_t payload_size;
    uint32_t shipment_size;  /* full frames: the bytes up to the end of the
                                code and symbol names (header included) */
} tc_ifunc_frame_view_t;

/*
 * (exec.c) A complete frame, compact or full, in memory that nothing else writes
 * while it runs (a replicated slot already delivered): validate it and run
 * it, or say why not. No ring sequence, signal, trailer or compact check
 * word (whoever delivered it delivered the bytes the sender wrote, whole);
 * the frame is never written (rx->placement must be copy). @a ring keeps the codes Cached frames name and trust-mode links.
 * Counts the frame or its reject in rx->stats; logs nothing.
 */
tc_ifunc_reject_t tc_ifunc_frame_run(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                                     uint8_t *frame, uint32_t size,
                                     tc_ifunc_frame_view_t *view, char *detail,
                                     size_t detail_len);

/* The receive path's calls, for a carried frame (carrier.c): a Local
 * element, a Cached code of @a ring, and a full frame whose header passed
 * tc_frame_check_header. Detail on a reject in @a detail. */
tc_ifunc_reject_t tc_ifunc_call_local(tc_ifunc_rx_t *rx, tc_ifunc_pkg_h pkg,
                                      uint32_t element_id, void *payload,
                                      uint32_t payload_size, char *detail,
                                      size_t detail_len);
tc_ifunc_reject_t tc_ifunc_call_cached(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                                       uint64_t code_hash, uint64_t pkg_id,
                                       uint32_t element_id, void *payload,
                                       uint32_t payload_size, char *detail,
                                       size_t detail_len);
tc_ifunc_reject_t tc_ifunc_call_frame(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                                      const tc_frame_hdr_t *h, uint8_t *frame,
                                      char *detail, size_t detail_len);

/* tc_ifunc_frame_run, of a full frame whose header the caller read once
 * into @a hdr (NULL: read it here, once): the executor's run (exec.c) */
tc_ifunc_reject_t tc_exec_frame_run(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                                    uint8_t *frame, uint32_t size,
                                    const tc_frame_hdr_t *hdr,
                                    tc_ifunc_frame_view_t *view, char *detail,
                                    size_t detail_len);

END_C_DECLS

#endif
