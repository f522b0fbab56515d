/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The frame codec (see frame.h for the wire format): the encoder, which
 * lays out an element's frame once and stamps its header and trailer per
 * send, and the decoder, which validates what arrived. Pure functions of
 * their inputs: callable from any thread, and the libFuzzer target in
 * test/fuzz/ drives the decoder with arbitrary bytes.
 *
 * Invariants: the encoder writes only frames the decoder accepts (every
 * send path stamps through tc_frame_stamp); on TC_IFUNC_REJECT_NONE every
 * region the header names lies in [TC_FRAME_HDR_SIZE, frame_size - 1) of a
 * frame of at most slot_size bytes, so the dispatcher may read them without
 * further bounds checks.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc_int.h"

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

/* ---- decoder ---- */

static const char *tc_ifunc_reject_names[] = {
    [TC_IFUNC_REJECT_NONE]            = "none",
    [TC_IFUNC_REJECT_SIGNAL]          = "signal",
    [TC_IFUNC_REJECT_SEQUENCE]        = "sequence",
    [TC_IFUNC_REJECT_VERSION]         = "version",
    [TC_IFUNC_REJECT_TYPE]            = "type",
    [TC_IFUNC_REJECT_SIZE]            = "size",
    [TC_IFUNC_REJECT_OFFSET]          = "offset",
    [TC_IFUNC_REJECT_TRUNCATED]       = "truncated",
    [TC_IFUNC_REJECT_CHECKSUM]        = "checksum",
    [TC_IFUNC_REJECT_UNKNOWN_PKG]     = "unknown-package",
    [TC_IFUNC_REJECT_UNKNOWN_ELEMENT] = "unknown-element",
    [TC_IFUNC_REJECT_HASH]            = "hash",
    [TC_IFUNC_REJECT_DISABLED]        = "disabled",
    [TC_IFUNC_REJECT_CACHE_MISS]      = "cache-miss",
    [TC_IFUNC_REJECT_LINK]            = "link",
    [TC_IFUNC_REJECT_PLACEMENT]       = "placement",
    [TC_IFUNC_REJECT_RESOURCE]        = "resource",
    [TC_IFUNC_REJECT_BITCODE]         = "bitcode",
    [TC_IFUNC_REJECT_TRIPLE]          = "triple",
    [TC_IFUNC_REJECT_EXTERNAL]        = "external",
    [TC_IFUNC_REJECT_CONFINE]         = "confine"
};

_Static_assert(sizeof(tc_ifunc_reject_names) / sizeof(tc_ifunc_reject_names[0]) ==
               TC_IFUNC_REJECT_LAST, "a name for every reject reason");

const char *tc_ifunc_reject_name(tc_ifunc_reject_t reason)
{
    if ((unsigned)reason >= TC_IFUNC_REJECT_LAST) {
        return "invalid";
    }
    return tc_ifunc_reject_names[reason];
}

uint64_t tc_frame_pkg_id(const char *pkg_name)
{
    return tc_fnv1a64(pkg_name, strlen(pkg_name));
}

/* [off, off + size) inside [lo, hi), aligned to @a align; empty regions must
 * have offset 0. 64-bit arithmetic: no 32-bit wrap-around. */
static int tc_frame_region_ok(uint32_t off, uint32_t size, uint64_t lo,
                              uint64_t hi, uint32_t align)
{
    if (size == 0) {
        return off == 0;
    }
    return ((off % align) == 0) && (off >= lo) && ((uint64_t)off + size <= hi);
}

tc_ifunc_reject_t tc_frame_check_header(const tc_frame_hdr_t *hdr,
                                        uint32_t slot_size, uint64_t expect_seq,
                                        tc_frame_info_t *info)
{
    const uint64_t body_end = (uint64_t)hdr->frame_size - 1; /* trailer byte */
    uint64_t pos;

    /* the magic says which rule made the frame complete, and the flag
     * must say the same; the checksum word holds one of the two sums */
    if ((TC_FRAME_SIGNAL_MAGIC(hdr->signal) !=
         ((hdr->flags & TC_FRAME_F_CHECKED) ? TC_FRAME_MAGIC_CHECKED : TC_FRAME_MAGIC)) ||
        ((hdr->flags & TC_FRAME_F_CHECKED) && (hdr->flags & TC_FRAME_F_CHECKSUM))) {
        return TC_IFUNC_REJECT_SIGNAL;
    }
    if ((hdr->version != TC_FRAME_VERSION) ||
        (hdr->hdr_lines != TC_FRAME_HDR_SIZE / TC_FRAME_ALIGN)) {
        return TC_IFUNC_REJECT_VERSION;
    }
    if ((hdr->frame_size < TC_FRAME_MIN_SIZE) || (hdr->frame_size > slot_size) ||
        (hdr->frame_size % TC_FRAME_ALIGN)) {
        return TC_IFUNC_REJECT_SIZE;
    }
    if ((TC_FRAME_SIGNAL_SEQ(hdr->signal) != hdr->seq) ||
        ((expect_seq != TC_FRAME_SEQ_ANY) && (hdr->seq != (uint32_t)expect_seq))) {
        return TC_IFUNC_REJECT_SEQUENCE;
    }
    if ((hdr->type < TC_FRAME_LOCAL) || (hdr->type > TC_FRAME_PORTABLE) ||
        (hdr->flags & ~(uint32_t)TC_FRAME_F_ALL)) {
        return TC_IFUNC_REJECT_TYPE;
    }

    /* every region inside the body, aligned, in order */
    if (!tc_frame_region_ok(hdr->code_offset, hdr->code_size, TC_FRAME_HDR_SIZE,
                            body_end, TC_FRAME_ALIGN) ||
        !tc_frame_region_ok(hdr->symtab_offset, hdr->symtab_size,
                            TC_FRAME_HDR_SIZE, body_end, TC_FRAME_ALIGN) ||
        !tc_frame_region_ok(hdr->payload_offset, hdr->payload_size,
                            TC_FRAME_HDR_SIZE, body_end, TC_FRAME_ALIGN)) {
        return TC_IFUNC_REJECT_OFFSET;
    }
    pos = TC_FRAME_HDR_SIZE;
    if (hdr->code_size != 0) {
        pos = (uint64_t)hdr->code_offset + hdr->code_size;
    }
    if (hdr->symtab_size != 0) {
        if (hdr->symtab_offset < pos) {
            return TC_IFUNC_REJECT_OFFSET;
        }
        pos = (uint64_t)hdr->symtab_offset + hdr->symtab_size;
    }
    if ((hdr->payload_size != 0) && (hdr->payload_offset < pos)) {
        return TC_IFUNC_REJECT_OFFSET;
    }
    /* a payload of size 0 still names where it would start (offset 0 is
     * normalized by the sender); nothing more to check */

    /* symbols: both or neither, only with code-carrying types */
    if (((hdr->symtab_size != 0) != !!(hdr->flags & TC_FRAME_F_SYMBOLS)) ||
        ((hdr->symtab_size == 0) != (hdr->num_symbols == 0)) ||
        (hdr->num_symbols > TC_FRAME_MAX_SYMBOLS)) {
        return TC_IFUNC_REJECT_OFFSET;
    }

    if ((hdr->flags & TC_FRAME_F_HASHES) && (hdr->type != TC_FRAME_PORTABLE)) {
        return TC_IFUNC_REJECT_OFFSET;   /* a table of module hashes is Portable's */
    }
    switch (hdr->type) {
    case TC_FRAME_LOCAL:
        if (hdr->code_size || hdr->got_offset || hdr->got_size ||
            hdr->entry_offset || hdr->symtab_size || hdr->data_offset ||
            (hdr->flags & (TC_FRAME_F_CACHE | TC_FRAME_F_WDATA))) {
            return TC_IFUNC_REJECT_OFFSET;
        }
        break;
    case TC_FRAME_INJECTED:
        /* span: at least the preamble; GOT slot and entry inside it */
        if ((hdr->code_size < 16) || (hdr->code_size > TC_FRAME_CODE_MAX) ||
            (hdr->got_size != TC_FRAME_GOT_SIZE) || (hdr->got_offset % 8) ||
            (hdr->got_offset < hdr->code_offset) ||
            ((uint64_t)hdr->got_offset + TC_FRAME_GOT_SIZE >
             (uint64_t)hdr->code_offset + hdr->code_size) ||
            (hdr->entry_offset < hdr->code_offset) ||
            (hdr->entry_offset >= (uint64_t)hdr->code_offset + hdr->code_size) ||
            ((hdr->flags & TC_FRAME_F_WDATA) ?
             ((hdr->data_offset < 16) || (hdr->data_offset >= hdr->code_size) ||
              (hdr->data_offset % 8)) : (hdr->data_offset != 0))) {
            return TC_IFUNC_REJECT_OFFSET;
        }
        break;
    case TC_FRAME_PORTABLE:
        /* a module (at least its 4-byte magic) and one name, its entry */
        if ((hdr->code_size < 4) || (hdr->code_size > TC_FRAME_CODE_MAX) ||
            hdr->got_offset || hdr->got_size || hdr->entry_offset ||
            hdr->data_offset || (hdr->flags & TC_FRAME_F_WDATA) ||
            (hdr->num_symbols != 1) ||
            ((hdr->flags & TC_FRAME_F_HASHES) &&
             ((hdr->code_size != TC_FRAME_HASHES_SIZE) || (hdr->flags & TC_FRAME_F_CACHE)))) {
            return TC_IFUNC_REJECT_OFFSET;
        }
        if (hdr->code_hash == 0) {
            return TC_IFUNC_REJECT_HASH;
        }
        break;
    case TC_FRAME_CACHED:
        if (hdr->code_size || hdr->got_offset || hdr->got_size || hdr->entry_offset ||
            hdr->data_offset || (hdr->flags & TC_FRAME_F_WDATA)) {
            return TC_IFUNC_REJECT_OFFSET;
        }
        if (hdr->code_hash == 0) {
            return TC_IFUNC_REJECT_CACHE_MISS;
        }
        break;
    }

    if (info != NULL) {
        info->type       = (tc_frame_type_t)hdr->type;
        info->seq        = hdr->seq;
        info->frame_size = hdr->frame_size;
    }
    return TC_IFUNC_REJECT_NONE;
}

static int tc_frame_symbol_char(uint8_t c, int first)
{
    return ((c >= 'a') && (c <= 'z')) || ((c >= 'A') && (c <= 'Z')) ||
           (c == '_') || (!first && (c >= '0') && (c <= '9'));
}

int tc_frame_name_ok(const tc_frame_hdr_t *hdr)
{
    size_t len;

    for (len = 0; (len < TC_FRAME_PKG_NAME_MAX) && (hdr->pkg_name[len] != '\0'); ++len) {
        if (!tc_frame_symbol_char((uint8_t)hdr->pkg_name[len], len == 0)) {
            return 0;
        }
    }
    return (len > 0) && (len < TC_FRAME_PKG_NAME_MAX) &&
           (tc_frame_pkg_id(hdr->pkg_name) == hdr->pkg_id);
}

tc_ifunc_reject_t tc_frame_check_symtab(const tc_frame_hdr_t *hdr,
                                        const uint8_t *frame)
{
    const uint8_t *p   = frame + hdr->symtab_offset;
    const uint8_t *end = p + hdr->symtab_size;
    uint32_t n, len;

    for (n = 0; n < hdr->num_symbols; ++n) {
        for (len = 0; (p + len < end) && (p[len] != '\0'); ++len) {
            if ((len + 1 >= TC_FRAME_SYMBOL_MAX) ||
                !tc_frame_symbol_char(p[len], len == 0)) {
                return TC_IFUNC_REJECT_LINK;
            }
        }
        if ((len == 0) || (p + len >= end)) {
            return TC_IFUNC_REJECT_LINK;   /* empty or not terminated */
        }
        p += len + 1;
    }
    return TC_IFUNC_REJECT_NONE;
}

uint64_t tc_frame_checksum(const tc_frame_hdr_t *hdr, const uint8_t *frame)
{
    uint64_t h = tc_fnv1a64((const uint8_t*)hdr + TC_FRAME_CSUM_HDR_BEGIN,
                            TC_FRAME_CSUM_HDR_END - TC_FRAME_CSUM_HDR_BEGIN);

    return tc_fnv1a64_update(h, frame + hdr->payload_offset, hdr->payload_size);
}

uint64_t tc_frame_span_hash(const uint8_t *span, uint32_t size, uint32_t got_rel)
{
    static const uint8_t zero[TC_FRAME_GOT_SIZE];
    uint64_t h = tc_fnv1a64(span, got_rel);

    h = tc_fnv1a64_update(h, zero, sizeof(zero));
    return tc_fnv1a64_update(h, span + got_rel + TC_FRAME_GOT_SIZE,
                             size - got_rel - TC_FRAME_GOT_SIZE);
}
