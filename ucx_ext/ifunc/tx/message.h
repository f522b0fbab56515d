/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * What every sender of a jam shares (message.c): the payload's capacity and
 * its filling in place, and which modes ship code once or as bitcode.
 */
#ifndef TC_IFUNC_MESSAGE_H_
#define TC_IFUNC_MESSAGE_H_

#include "ifunc/code/package.h"

#include <twochains/ifunc.h>

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stddef.h>
#include <stdint.h>

BEGIN_C_DECLS

/* ---- payloads (message.c) ---- */

/* Payload bytes a message of @a elem may need: its payload_get_max_size,
 * else the source arguments' size */
size_t tc_ifunc_payload_capacity(const tc_ifunc_element_t *elem, void *source_args,
                                 size_t source_args_size);

/* The payload in place: the jam's payload_init, else a copy of the source
 * arguments; at most @a capacity bytes, *@a size_p those written */
ucs_status_t tc_ifunc_payload_fill(const tc_ifunc_element_t *elem, void *source_args,
                                   size_t source_args_size, uint8_t *payload,
                                   uint32_t capacity, uint32_t *size_p);

/* Modes whose code goes once per peer, then by hash */
static inline int tc_ifunc_mode_cached(tc_ifunc_mode_t mode)
{
    return (mode == TC_IFUNC_MODE_CACHED) || (mode == TC_IFUNC_MODE_PORTABLE_CACHED);
}

static inline int tc_ifunc_mode_portable(tc_ifunc_mode_t mode)
{
    return (mode == TC_IFUNC_MODE_PORTABLE) || (mode == TC_IFUNC_MODE_PORTABLE_CACHED);
}

END_C_DECLS

#endif
