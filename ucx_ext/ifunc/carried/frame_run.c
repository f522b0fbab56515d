/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * A complete frame, compact or full, that another protocol delivered whole
 * (tc_ifunc_frame_run): validated as a mailbox frame is, minus the ring's
 * sequence, signal, trailer and compact check word, then run through the
 * receive path's calls (carrier.c).
 *
 * Threads: the carrier's delivery thread, one per executor.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/carried/carried.h"
#include "ifunc/code/package.h"
#include "ifunc/portable/portable.h"
#include "ifunc/receiver/receiver.h"
#include "ifunc/wire/frame.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* A compact frame's header snapshot, checked field by field (its carrier
 * delivered it whole: no check word) */
static tc_ifunc_reject_t tc_exec_frame_run_compact(tc_ifunc_rx_t *rx,
                                                    tc_ifunc_ring_t *ring,
                                                    uint8_t *frame, uint32_t size,
                                                    tc_ifunc_frame_view_t *view,
                                                    char *detail, size_t detail_len)
{
    tc_frame_compact_t h;
    uint32_t hdr_size, frame_size;
    tc_ifunc_reject_t reason;
    void *payload;

    if (size < TC_FRAME_COMPACT_CACHED_HDR) {
        snprintf(detail, detail_len, "compact frame in %u bytes", size);
        return TC_IFUNC_REJECT_SIZE;
    }
    memcpy(&h, frame, sizeof(h));
    view->type       = h.type;
    view->element_id = h.element_id;
    view->pkg_id     = h.pkg_id;
    reason           = tc_frame_check_compact(&h, size, TC_FRAME_SEQ_ANY);
    if (reason != TC_IFUNC_REJECT_NONE) {
        return reason;
    }
    hdr_size   = h.hdr_words * 8u;
    frame_size = tc_frame_compact_size(hdr_size, h.payload_size);
    if (frame_size > size) {
        snprintf(detail, detail_len, "compact frame of %u bytes in %u", frame_size, size);
        return TC_IFUNC_REJECT_SIZE;
    }
    payload            = (h.payload_size != 0) ? frame + hdr_size : NULL;
    view->payload      = payload;
    view->payload_size = h.payload_size;
    view->code_hash    = (h.type == TC_FRAME_CACHED) ? h.code_hash : 0;
    if (h.type == TC_FRAME_LOCAL) {
        reason = tc_ifunc_call_local(rx, tc_ifunc_pkg_find(h.pkg_id), h.element_id,
                                    payload, h.payload_size, detail, detail_len);
        if (reason == TC_IFUNC_REJECT_UNKNOWN_PKG) {
            snprintf(detail, detail_len, "package %016" PRIx64, h.pkg_id);
        }
        return reason;
    }
    return tc_ifunc_call_cached(rx, ring, h.code_hash, h.pkg_id, h.element_id, payload,
                               h.payload_size, detail, detail_len);
}

/* tc_ifunc_frame_run, of a full frame whose header the caller read once
 * into @a hdr (NULL: read it here, once) */
tc_ifunc_reject_t tc_exec_frame_run(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                                    uint8_t *frame, uint32_t size,
                                    const tc_frame_hdr_t *hdr,
                                    tc_ifunc_frame_view_t *view, char *detail,
                                    size_t detail_len)
{
    tc_ifunc_reject_t reason;
    tc_frame_hdr_t h;
    uint16_t format;

    memset(view, 0, sizeof(*view));
    detail[0] = '\0';
    if (size < sizeof(uint64_t) + sizeof(format)) {
        snprintf(detail, detail_len, "%u bytes", size);
        reason = TC_IFUNC_REJECT_SIZE;
        goto out;
    }
    if (hdr == NULL) {
        memcpy(&format, frame + offsetof(tc_frame_compact_t, format), sizeof(format));
        if (format == TC_FRAME_COMPACT_FORMAT) {
            reason = tc_exec_frame_run_compact(rx, ring, frame, size, view, detail,
                                                detail_len);
            goto out;
        }
    }
    if (size < TC_FRAME_HDR_SIZE) {
        snprintf(detail, detail_len, "full frame in %u bytes", size);
        reason = TC_IFUNC_REJECT_SIZE;
        goto out;
    }
    if (hdr != NULL) {
        h = *hdr;
    } else {
        memcpy(&h, frame, sizeof(h));
    }
    view->type       = h.type;
    view->element_id = h.element_id;
    view->pkg_id     = h.pkg_id;
    view->code_hash  = h.code_hash;
    reason = tc_frame_check_header(&h, size, TC_FRAME_SEQ_ANY, NULL);
    if (reason != TC_IFUNC_REJECT_NONE) {
        goto out;
    }
    if ((h.flags & TC_FRAME_F_CHECKSUM) && (tc_frame_checksum(&h, frame) != h.checksum)) {
        reason = TC_IFUNC_REJECT_CHECKSUM;
        goto out;
    }
    view->payload      = (h.payload_size != 0) ? frame + h.payload_offset : NULL;
    view->payload_size = h.payload_size;
    /* validated regions: code, then names, both before the payload */
    view->shipment_size = (h.symtab_size != 0) ? h.symtab_offset + h.symtab_size :
                          (h.code_size != 0)   ? h.code_offset + h.code_size :
                                                 TC_FRAME_HDR_SIZE;
    reason = tc_ifunc_call_frame(rx, ring, &h, frame, detail, detail_len);

out:
    if (reason == TC_IFUNC_REJECT_NONE) {
        ++rx->stats->frames[view->type - TC_FRAME_LOCAL];
        rx->stats->bytes += size;
    } else if (reason != TC_IFUNC_PORTABLE_WAIT) {   /* pending: neither */
        ++rx->stats->rejects[reason];
        ++rx->stats->rejects_total;
    }
    return reason;
}

tc_ifunc_reject_t tc_ifunc_frame_run(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                                     uint8_t *frame, uint32_t size,
                                     tc_ifunc_frame_view_t *view, char *detail,
                                     size_t detail_len)
{
    return tc_exec_frame_run(rx, ring, frame, size, NULL, view, detail, detail_len);
}
