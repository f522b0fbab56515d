/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * libFuzzer target for the frame header validator (ucx_ext/ifunc/wire/frame.c).
 *
 * The input is applied to one of three valid frames (Local, Injected,
 * Cached) as a list of byte patches, or, when its first byte is odd, used
 * as the raw frame -- so the fuzzer starts inside the valid space and also
 * sees arbitrary bytes. Whenever the validator accepts a header, the target
 * checks the validator's promise: every region lies inside the frame, and
 * the symbol-table check, checksum and span hash (which the dispatcher runs
 * next) read only inside a heap copy of exactly frame_size bytes, so
 * AddressSanitizer catches any read beyond it.
 */
#include "ifunc/wire/frame.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SLOT_MAX 8192u

static void require(int cond)
{
    if (!cond) {
        abort();
    }
}

static void base_frame(uint8_t *frame, unsigned kind, uint32_t *size_p)
{
    tc_frame_hdr_t *h = (tc_frame_hdr_t*)frame;
    static const char names[] = "memcpy\0tcbench_array\0";

    memset(frame, 0, SLOT_MAX);
    h->version    = TC_FRAME_VERSION;
    h->hdr_lines  = TC_FRAME_HDR_SIZE / TC_FRAME_ALIGN;
    h->seq        = 7;
    h->signal     = TC_FRAME_SIGNAL(7);
    h->pkg_id     = tc_frame_pkg_id("tcbench");
    h->element_id = 3;
    h->sender     = 1;
    h->type       = TC_FRAME_LOCAL + kind % 4;
    switch (h->type) {
    case TC_FRAME_LOCAL:
        h->payload_offset = 128;
        h->payload_size   = 40;
        h->frame_size     = 256;
        break;
    case TC_FRAME_INJECTED:
        h->code_offset    = 128;
        h->code_size      = 96;
        h->got_offset     = 128;
        h->got_size       = 8;
        h->entry_offset   = 144;
        h->symtab_offset  = 256;
        h->symtab_size    = sizeof(names);
        h->num_symbols    = 2;
        h->flags          = TC_FRAME_F_SYMBOLS | TC_FRAME_F_CACHE;
        memcpy(frame + 256, names, sizeof(names));
        h->payload_offset = 320;
        h->payload_size   = 24;
        h->frame_size     = 384;
        h->code_hash      = tc_frame_span_hash(frame + 128, 96, 0);
        break;
    case TC_FRAME_PORTABLE:
        /* a module's magic and some bytes, and the one entry name */
        memcpy(frame + 128, "BC\xc0\xde", 4);
        h->code_offset    = 128;
        h->code_size      = 100;
        h->symtab_offset  = 256;
        h->symtab_size    = sizeof("server_side_sum_main");
        h->num_symbols    = 1;
        h->flags          = TC_FRAME_F_SYMBOLS | TC_FRAME_F_CACHE;
        memcpy(frame + 256, "server_side_sum_main", sizeof("server_side_sum_main"));
        h->payload_offset = 320;
        h->payload_size   = 40;
        h->frame_size     = 384;
        h->code_hash      = tc_fnv1a64(frame + 128, 100);
        break;
    default:
        h->code_hash      = 0x398e69ea1089d52eull;
        h->payload_offset = 192;
        h->payload_size   = 16;
        h->frame_size     = 256;
        break;
    }
    frame[h->frame_size - 1] = TC_FRAME_TRAILER(7);
    *size_p = h->frame_size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t frame[SLOT_MAX] __attribute__((aligned(64)));
    uint32_t slot, base_size, hdr_size;
    tc_frame_compact_t compact;
    tc_frame_info_t info;
    tc_frame_hdr_t h;
    uint64_t expect;
    uint8_t *copy;
    size_t i;

    if (size < 4) {
        return 0;
    }
    slot   = (uint32_t)TC_FRAME_ALIGN * (1 + data[1] % (SLOT_MAX / TC_FRAME_ALIGN));
    expect = (data[2] & 1) ? TC_FRAME_SEQ_ANY : 7;
    if (data[0] & 1) {
        memset(frame, 0, sizeof(frame));
        memcpy(frame, data + 4, (size - 4 < sizeof(frame)) ? size - 4 : sizeof(frame));
    } else {
        base_frame(frame, data[3], &base_size);
        if (data[3] & 0x80) {
            /* a compact Local frame to patch instead */
            tc_frame_compact_t *c = (tc_frame_compact_t*)frame;
            memset(frame, 0, 128);
            c->format       = TC_FRAME_COMPACT_FORMAT;
            c->type         = TC_FRAME_LOCAL;
            c->hdr_words    = TC_FRAME_COMPACT_LOCAL_HDR / 8;
            c->seq          = 7;
            c->payload_size = data[3] & 0x3f;
            c->check        = tc_frame_compact_check(frame, tc_frame_compact_size(
                                  TC_FRAME_COMPACT_LOCAL_HDR, c->payload_size));
        }
        if ((data[3] & 0xc0) == 0x40) {
            /* a checked frame (ucp_ifunc_send_nbix's default) to patch */
            tc_frame_hdr_t *c = (tc_frame_hdr_t*)frame;
            c->signal   = TC_FRAME_SIGNAL_CHECKED(7);
            c->flags   |= TC_FRAME_F_CHECKED;
            c->checksum = 0;
            c->checksum = tc_frame_checked_check(c, frame, base_size);
        }
        /* patches: (offset lo, offset hi, xor value) */
        for (i = 4; i + 3 <= size; i += 3) {
            frame[(data[i] | ((unsigned)data[i + 1] << 8)) % 512] ^= data[i + 2];
        }
    }

    /* a compact header (what a ring's receiver reads when byte 8 says so):
     * accepted only inside the slot and the compact limit, Local or Cached */
    memcpy(&compact, frame, sizeof(compact));
    if (tc_frame_check_compact(&compact, slot, expect) == TC_IFUNC_REJECT_NONE) {
        hdr_size = compact.hdr_words * 8u;
        require(compact.format == TC_FRAME_COMPACT_FORMAT);
        require((compact.type == TC_FRAME_LOCAL) || (compact.type == TC_FRAME_CACHED));
        require(hdr_size == ((compact.type == TC_FRAME_LOCAL) ? TC_FRAME_COMPACT_LOCAL_HDR :
                                                                TC_FRAME_COMPACT_CACHED_HDR));
        require((uint64_t)hdr_size + compact.payload_size <= slot);
        require(tc_frame_compact_size(hdr_size, compact.payload_size) <= sizeof(frame));
        (void)tc_frame_compact_check(frame, tc_frame_compact_size(hdr_size,
                                                                  compact.payload_size));
    }

    /* a checked frame, as ucp_poll_ifunc takes it: its bounds on the
     * snapshot's size let the check read only inside the buffer, a heap
     * copy of exactly the slot */
    memcpy(&h, frame, sizeof(h));
    if ((TC_FRAME_SIGNAL_MAGIC(h.signal) == TC_FRAME_MAGIC_CHECKED) &&
        (h.frame_size >= TC_FRAME_MIN_SIZE) && (h.frame_size <= slot) &&
        ((h.frame_size % TC_FRAME_ALIGN) == 0)) {
        copy = malloc(slot);
        require(copy != NULL);
        memcpy(copy, frame, slot);
        (void)tc_frame_checked_check(&h, copy, h.frame_size);
        free(copy);
    }

    if (tc_frame_check_header(&h, slot, expect, &info) != TC_IFUNC_REJECT_NONE) {
        return 0;
    }

    /* the validator's promise */
    require(h.frame_size == info.frame_size);
    require((h.frame_size <= slot) && (h.frame_size >= TC_FRAME_MIN_SIZE));
    require((h.frame_size % TC_FRAME_ALIGN) == 0);
    require((uint64_t)h.payload_offset + h.payload_size <= h.frame_size - 1);
    require((uint64_t)h.code_offset + h.code_size <= h.frame_size - 1);
    require((uint64_t)h.symtab_offset + h.symtab_size <= h.frame_size - 1);
    require((h.payload_size == 0) || (h.payload_offset >= TC_FRAME_HDR_SIZE));
    require(TC_FRAME_SIGNAL_MAGIC(h.signal) ==
            ((h.flags & TC_FRAME_F_CHECKED) ? TC_FRAME_MAGIC_CHECKED : TC_FRAME_MAGIC));
    require(!((h.flags & TC_FRAME_F_CHECKED) && (h.flags & TC_FRAME_F_CHECKSUM)));
    if (h.type == TC_FRAME_INJECTED) {
        require((h.got_offset >= h.code_offset) &&
                (h.got_offset + 8ull <= (uint64_t)h.code_offset + h.code_size));
        require((h.entry_offset >= h.code_offset) &&
                (h.entry_offset < (uint64_t)h.code_offset + h.code_size));
    } else if (h.type == TC_FRAME_PORTABLE) {
        /* a module and its entry's name; nothing of a span */
        require((h.code_size >= 4) && (h.code_size <= TC_FRAME_CODE_MAX));
        require((h.num_symbols == 1) && (h.flags & TC_FRAME_F_SYMBOLS));
        require((h.got_offset == 0) && (h.got_size == 0) && (h.entry_offset == 0));
        require(h.code_hash != 0);
    } else {
        require(h.code_size == 0);
    }

    /* what the dispatcher reads next, from exactly frame_size bytes */
    copy = malloc(h.frame_size);
    require(copy != NULL);
    memcpy(copy, frame, h.frame_size);
    if (h.flags & TC_FRAME_F_SYMBOLS) {
        (void)tc_frame_check_symtab(&h, copy);
    }
    if (h.type == TC_FRAME_INJECTED) {
        (void)tc_frame_span_hash(copy + h.code_offset, h.code_size,
                                 h.got_offset - h.code_offset);
    } else if (h.type == TC_FRAME_PORTABLE) {
        (void)tc_fnv1a64(copy + h.code_offset, h.code_size);   /* trust's copy check */
    }
    (void)tc_frame_checksum(&h, copy);
    free(copy);
    return 0;
}
