/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The frame encoder (see ifunc/wire/frame.h for the wire format), which lays
 * out an element's frame once and stamps its header and trailer per send.
 * Pure functions of their inputs and of the package they are given:
 * callable from any thread (the sender's).
 *
 * Invariants: the encoder writes only frames the decoder accepts (every
 * send path stamps through tc_frame_stamp).
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/tx/frame_encode.h"

#include <string.h>

/* ---- encoder ---- */

void tc_frame_prepare(uint8_t *frame, tc_ifunc_pkg_h pkg,
                            const tc_ifunc_element_t *elem, int with_code,
                            tc_frame_desc_t *desc)
{
    uint32_t pos = TC_FRAME_HDR_SIZE;

    memset(desc, 0, sizeof(*desc));
    desc->pkg_id     = pkg->id;
    desc->build_id   = pkg->build_id;
    desc->element_id = elem->id;
    desc->code_hash  = elem->span_hash;
    desc->wdata      = (elem->flags & TC_JAM_F_WRITABLE_DATA) ? TC_FRAME_F_WDATA : 0;
    desc->data_offset = desc->wdata ? elem->data_offset : 0;
    if (with_code) {
        desc->code_offset  = pos;
        desc->code_size    = elem->span_size;
        desc->got_offset   = pos + elem->got_slot_offset;
        desc->entry_offset = pos + elem->entry_offset;
        pos = tc_frame_align(pos + elem->span_size);
        if (elem->num_externals != 0) {
            desc->symtab_offset = pos;
            desc->symtab_size   = elem->symtab_size;
            desc->num_symbols   = elem->num_externals;
            pos = tc_frame_align(pos + elem->symtab_size);
        }
    }
    desc->payload_offset = pos;

    if ((frame != NULL) && with_code) {
        memcpy(frame + desc->code_offset, elem->span, elem->span_size);
        if (desc->symtab_size != 0) {
            memcpy(frame + desc->symtab_offset, elem->symtab, elem->symtab_size);
        }
    }
}

void tc_frame_prepare_portable(uint8_t *frame, tc_ifunc_pkg_h pkg,
                               const tc_ifunc_element_t *elem, const uint8_t *bitcode,
                               uint32_t size, uint32_t capacity, uint64_t hash,
                               tc_frame_desc_t *desc)
{
    char entry[TC_JAM_NAME_MAX + 8];
    uint32_t pos = TC_FRAME_HDR_SIZE;
    int len      = snprintf(entry, sizeof(entry), "%s_main", elem->name);

    memset(desc, 0, sizeof(*desc));
    desc->pkg_id        = pkg->id;
    desc->build_id      = pkg->build_id;
    desc->element_id    = elem->id;
    desc->code_hash     = hash;
    desc->code_offset   = pos;
    desc->code_size     = size;
    pos                 = tc_frame_align(pos + ((capacity > size) ? capacity : size));
    desc->symtab_offset = pos;
    desc->symtab_size   = (uint32_t)len + 1;
    desc->num_symbols   = 1;
    pos                 = tc_frame_align(pos + desc->symtab_size);
    desc->payload_offset = pos;
    if (frame != NULL) {
        if (bitcode != NULL) {
            memcpy(frame + desc->code_offset, bitcode, size);
        }
        memcpy(frame + desc->symtab_offset, entry, desc->symtab_size);
    }
}

uint32_t tc_frame_stamp(uint8_t *frame, const tc_frame_desc_t *desc,
                              tc_frame_type_t type, uint32_t flags, uint32_t seq,
                              uint32_t sender, uint32_t payload_size)
{
    tc_frame_hdr_t *h = (tc_frame_hdr_t*)frame;
    uint32_t size     = tc_frame_size(desc, payload_size);

    memset(h, 0, sizeof(*h));
    h->signal         = TC_FRAME_SIGNAL(seq);
    h->version        = TC_FRAME_VERSION;
    h->type           = type;
    h->hdr_lines      = TC_FRAME_HDR_SIZE / TC_FRAME_ALIGN;
    h->frame_size     = size;
    h->seq            = seq;
    h->pkg_id         = desc->pkg_id;
    h->element_id     = desc->element_id;
    h->sender         = sender;
    h->build_id       = desc->build_id;
    h->payload_offset = (payload_size != 0) ? desc->payload_offset : 0;
    h->payload_size   = payload_size;
    if (type != TC_FRAME_LOCAL) {
        h->code_hash = desc->code_hash;
    }
    if ((type == TC_FRAME_INJECTED) || (type == TC_FRAME_PORTABLE)) {
        h->code_offset   = desc->code_offset;
        h->code_size     = desc->code_size;
        h->got_offset    = desc->got_offset;   /* 0 for a module */
        h->got_size      = (type == TC_FRAME_INJECTED) ? TC_FRAME_GOT_SIZE : 0;
        h->entry_offset  = desc->entry_offset;
        h->symtab_offset = desc->symtab_offset;
        h->symtab_size   = desc->symtab_size;
        h->num_symbols   = desc->num_symbols;
        flags           |= desc->wdata;
        h->data_offset   = desc->data_offset;
        if (desc->symtab_size != 0) {
            flags |= TC_FRAME_F_SYMBOLS;
        }
    } else {
        flags &= ~(uint32_t)TC_FRAME_F_CACHE;
    }
    h->flags = flags;
    if (flags & TC_FRAME_F_CHECKSUM) {
        h->checksum = tc_frame_checksum(h, frame);
    }
    frame[size - 1] = TC_FRAME_TRAILER(seq);
    return size;
}

uint32_t tc_frame_stamp_compact(uint8_t *frame, const tc_frame_desc_t *desc,
                                tc_frame_type_t type, uint32_t seq, uint32_t sender,
                                uint32_t payload_size)
{
    uint32_t size = tc_frame_stamp_compact_header(frame, desc, type, seq, sender,
                                                  payload_size);

    ((tc_frame_compact_t*)frame)->check = tc_frame_compact_check(frame, size);
    return size;
}

uint32_t tc_frame_stamp_compact_header(uint8_t *frame, const tc_frame_desc_t *desc,
                                       tc_frame_type_t type, uint32_t seq,
                                       uint32_t sender, uint32_t payload_size)
{
    tc_frame_compact_t *h = (tc_frame_compact_t*)frame;
    uint32_t hdr_size     = (type == TC_FRAME_CACHED) ? TC_FRAME_COMPACT_CACHED_HDR :
                                                        TC_FRAME_COMPACT_LOCAL_HDR;
    uint32_t size         = tc_frame_compact_size(hdr_size, payload_size);
    uint32_t pad;

    h->format       = TC_FRAME_COMPACT_FORMAT;
    h->type         = (uint8_t)type;
    h->hdr_words    = (uint8_t)(hdr_size / 8);
    h->seq          = seq;
    h->pkg_id       = desc->pkg_id;
    h->element_id   = desc->element_id;
    h->sender       = sender;
    h->payload_size = payload_size;
    h->reserved     = 0;
    if (type == TC_FRAME_CACHED) {
        h->code_hash = desc->code_hash;
    }
    /* the padding is covered: zero it, whatever the payload writer left
     * (under 8 bytes: no memset call on the fast path) */
    for (pad = hdr_size + payload_size; pad < size; ++pad) {
        frame[pad] = 0;
    }
    h->check = 0;
    return size;
}

