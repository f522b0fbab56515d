/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * What every sender of a jam shares: the payload a message of an element
 * may need, and its filling in place (the jam's payload_init, else a copy
 * of the source arguments).
 *
 * Threads: the sender's; no state.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/tx/message.h"

#include <base/debug.h>

#include <string.h>


size_t tc_ifunc_payload_capacity(const tc_ifunc_element_t *elem, void *source_args,
                                 size_t source_args_size)
{
    return (elem->local->payload_get_max_size != NULL) ?
           elem->local->payload_get_max_size(source_args, source_args_size) :
           source_args_size;
}

ucs_status_t tc_ifunc_payload_fill(const tc_ifunc_element_t *elem, void *source_args,
                                   size_t source_args_size, uint8_t *payload,
                                   uint32_t capacity, uint32_t *size_p)
{
    const tc_jam_element_t *local = elem->local;
    size_t size                   = capacity;
    int ret;

    if (local->payload_init != NULL) {
        ret = local->payload_init(source_args, source_args_size, payload, &size);
        if (ret != 0) {
            ucs_diag("ifunc: %s_payload_init failed with %d", elem->name, ret);
            return UCS_ERR_CANCELED;
        }
        if (size > capacity) {
            ucs_error("ifunc: %s_payload_init wrote %zu bytes into %u", elem->name, size,
                      capacity);
            return UCS_ERR_EXCEEDS_LIMIT;
        }
    } else {
        if (source_args_size > capacity) {
            return UCS_ERR_EXCEEDS_LIMIT;
        }
        if (source_args_size != 0) {
            memcpy(payload, source_args, source_args_size);
        }
        size = source_args_size;
    }
    *size_p = (uint32_t)size;
    return UCS_OK;
}

