/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The frame decoder (see frame.h for the wire format), which validates what
 * arrived. Pure functions of their inputs: callable from any thread, and
 * the libFuzzer target in test/fuzz/ drives the decoder with arbitrary bytes.
 *
 * Invariants: on TC_IFUNC_REJECT_NONE every region the header names lies in
 * [TC_FRAME_HDR_SIZE, frame_size - 1) of a frame of at most slot_size bytes,
 * so the dispatcher may read them without further bounds checks.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/wire/frame.h"

#include <string.h>

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
