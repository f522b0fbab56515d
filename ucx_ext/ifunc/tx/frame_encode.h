/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The frame encoder (frame_encode.c): an element's frame laid out once, its
 * header and trailer stamped per send. Writes only frames the decoder
 * (ifunc/wire/frame.c) accepts.
 */
#ifndef TC_IFUNC_FRAME_ENCODE_H_
#define TC_IFUNC_FRAME_ENCODE_H_

#include "ifunc/code/package.h"
#include "ifunc/wire/frame.h"

#include <ucs/sys/compiler_def.h>
#include <stdint.h>

BEGIN_C_DECLS

/* Everything a frame header says that does not change per send */
typedef struct tc_frame_desc {
    uint64_t pkg_id;
    uint64_t build_id;
    uint64_t code_hash;
    uint32_t element_id;
    uint32_t code_offset;    /* 0: no code in this layout */
    uint32_t code_size;
    uint32_t got_offset;     /* absolute */
    uint32_t entry_offset;   /* absolute */
    uint32_t symtab_offset;
    uint32_t symtab_size;
    uint32_t num_symbols;
    uint32_t payload_offset;
    uint32_t wdata;          /* TC_FRAME_F_WDATA or 0 */
    uint32_t data_offset;    /* span-relative, with wdata */
} tc_frame_desc_t;

/* Lay out a frame of @a elem (with or without its code) and copy the code
 * and symbol names into @a frame when it is not NULL */
void tc_frame_prepare(uint8_t *frame, tc_ifunc_pkg_h pkg,
                            const tc_ifunc_element_t *elem, int with_code,
                            tc_frame_desc_t *desc);

/* The same for a Portable frame: @a bitcode (its FNV-1a 64 @a hash; NULL:
 * not copied) in a code region of @a capacity bytes (the largest module
 * the message may carry, so that the payload never moves), and the one
 * name its symbol table carries, <name>_main */
void tc_frame_prepare_portable(uint8_t *frame, tc_ifunc_pkg_h pkg,
                               const tc_ifunc_element_t *elem, const uint8_t *bitcode,
                               uint32_t size, uint32_t capacity, uint64_t hash,
                               tc_frame_desc_t *desc);

/* Bytes a frame of @a desc needs for @a payload_size bytes of payload */
static inline uint32_t tc_frame_size(const tc_frame_desc_t *desc,
                                           uint32_t payload_size)
{
    return tc_frame_align(desc->payload_offset + payload_size + 1);
}

/* Write the header and trailer of one send; returns the frame size. Type
 * TC_FRAME_CACHED leaves the code out (hash only). */
uint32_t tc_frame_stamp(uint8_t *frame, const tc_frame_desc_t *desc,
                              tc_frame_type_t type, uint32_t flags, uint32_t seq,
                              uint32_t sender, uint32_t payload_size);

/* Write a compact frame's header, padding and check word (the payload is in
 * place after the header); returns the frame size. Type Local or Cached. */
uint32_t tc_frame_stamp_compact(uint8_t *frame, const tc_frame_desc_t *desc,
                                tc_frame_type_t type, uint32_t seq, uint32_t sender,
                                uint32_t payload_size);

/* The same without the check word (left 0), for a carrier that delivers
 * frames whole (tc_ifunc_frame_run never looks at it) */
uint32_t tc_frame_stamp_compact_header(uint8_t *frame, const tc_frame_desc_t *desc,
                                       tc_frame_type_t type, uint32_t seq,
                                       uint32_t sender, uint32_t payload_size);

END_C_DECLS

#endif
