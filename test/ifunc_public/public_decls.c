/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Compile-time check of <twochains/ucp_ifunc.h> and <twochains/jam.h>
 * against the public Two-Chains ifunc API (openucx/ucx-two-chains, branch
 * ifunc_put: src/ucp/api/ucp.h, ucp_def.h and the user-provided function
 * types of src/ucp/ifunc/ifunc.h), restated below as its declarations
 * read. C accepts a redeclaration only with a compatible type, so any
 * difference in names, argument order or types fails this compile; the
 * static asserts pin the message container's layout.
 */
#include <twochains/ucp_ifunc.h>
#define TC_IFUNC_PUBLIC_NAME probe
#include <twochains/jam.h>

#include <stddef.h>

ucs_status_t ucp_register_ifunc(ucp_context_h context, const char *ifunc_name,
                                ucp_ifunc_h *ifunc_p);
void ucp_deregister_ifunc(ucp_context_h context, ucp_ifunc_h ifunc_h);
ucs_status_t ucp_ifunc_msg_create(ucp_ifunc_h ifunc_h, void *source_args,
                                  size_t source_args_size, ucp_ifunc_msg_t *msg_p);
void ucp_ifunc_msg_free(ucp_ifunc_msg_t msg);
ucs_status_t ucp_ifunc_send_nbix(ucp_ep_h ep, ucp_ifunc_msg_t msg, uint64_t remote_addr,
                                 ucp_rkey_h rkey);
ucs_status_t ucp_poll_ifunc(ucp_context_h context, void *buffer, size_t buffer_size,
                            void *target_args);

/* the user-provided functions of an ifunc library <name>.so */
typedef void (*ifunc_main_f)(void *payload, size_t payload_size, void *target_args);
typedef size_t (*ifunc_payload_get_max_size_f)(void *source_args,
                                               size_t source_args_size);
typedef int (*ifunc_payload_init_f)(void *payload, size_t payload_size,
                                    void *source_args, size_t source_args_size);

/* what twochains-pkg ifunc compiles a source against */
void probe_main(void *payload, size_t payload_size, void *target_args);
size_t probe_payload_get_max_size(void *source_args, size_t source_args_size);
int probe_payload_init(void *payload, size_t payload_size, void *source_args,
                       size_t source_args_size);

_Static_assert(__builtin_types_compatible_p(ifunc_main_f, tc_jam_main_fn_t),
               "main: the public type");
_Static_assert(__builtin_types_compatible_p(ifunc_payload_get_max_size_f,
                                            tc_jam_max_size_fn_t),
               "payload_get_max_size: the public type");
_Static_assert(__builtin_types_compatible_p(ifunc_payload_init_f,
                                            tc_ifunc_public_init_fn_t),
               "payload_init: the public type (our own jams use tc_jam_init_fn_t)");
_Static_assert(__builtin_types_compatible_p(__typeof__(&probe_payload_init),
                                            ifunc_payload_init_f),
               "a public ifunc source is compiled against the public payload_init");

typedef struct {
    ucp_ifunc_h ifunc_h;
    void        *frame;
    size_t      frame_size;
} public_ifunc_msg_t;

_Static_assert(sizeof(ucp_ifunc_msg_t) == sizeof(public_ifunc_msg_t), "msg size");
_Static_assert(offsetof(ucp_ifunc_msg_t, ifunc_h) == offsetof(public_ifunc_msg_t, ifunc_h),
               "msg.ifunc_h");
_Static_assert(offsetof(ucp_ifunc_msg_t, frame) == offsetof(public_ifunc_msg_t, frame),
               "msg.frame");
_Static_assert(offsetof(ucp_ifunc_msg_t, frame_size) ==
               offsetof(public_ifunc_msg_t, frame_size), "msg.frame_size");
_Static_assert(__builtin_types_compatible_p(__typeof__(((ucp_ifunc_msg_t*)0)->frame_size),
                                            size_t), "msg.frame_size is a size_t");
