/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The public Two-Chains ifunc API (openucx/ucx-two-chains, branch ifunc_put,
 * src/ucp/api/ucp.h), with the same meaning, on a stock UCX.
 *
 * Programs written for that API include <ucp/api/ucp.h>, which in a stock
 * UCX does not declare these calls. Build them unchanged by pulling this
 * header in first:
 *
 *     cc -include twochains/ucp_ifunc.h prog.c \
 *        $(pkg-config --cflags --libs twochains)
 *
 * (with -I<prefix>/include when Two-Chains is not in the default path).
 *
 * How the calls map onto Two-Chains:
 *  - an "ifunc" is a jam of a twochains-pkg package; ucp_register_ifunc finds
 *    the jam by name in the loaded packages, else in UCX_TC_IFUNC_PKG_PATH
 *    (manifests, package directories or install prefixes), and loads it;
 *  - ucp_ifunc_msg_create builds an Injected frame (see
 *    ucx_ext/ifunc/wire/frame.h) in memory mapped with ucp_mem_map on the
 *    ifunc's context: header, span, symbol names, payload from the jam's
 *    payload_init (else a copy of the source args), trailer;
 *  - ucp_ifunc_send_nbix puts it at remote_addr. With UCX_TC_IFUNC_SIGNAL=fence
 *    (default) it puts the frame, flushes the endpoint (the public signature
 *    names no worker to fence), then puts the signal word; with "trailer" it
 *    is one put. Each send stamps the frame with a sequence number of its
 *    own (a per-process counter), so that a receiver tells a new frame from
 *    a late second store of the last one in the same buffer. It returns
 *    once its puts are complete at the origin (UCS_OK), so a message may be
 *    re-sent, changed or freed at once -- more than the public API promises,
 *    never less;
 *  - ucp_poll_ifunc validates the frame at @a buffer exactly like a mailbox
 *    does (UCX_TC_IFUNC_SECURITY, verify by default), runs it with
 *    @a target_args and clears its header and trailer (nothing beyond the
 *    frame). It returns UCS_OK when a frame ran, UCS_ERR_NO_MESSAGE when
 *    nothing has arrived -- a buffer whose first word is not a frame magic
 *    (zeroes, garbage) is no message and is not written -- or not all of a
 *    frame yet, and UCS_ERR_CANCELED when it rejected a frame (counted and
 *    logged as warn once per cause); a frame that stays incomplete for
 *    UCX_TC_IFUNC_TRAILER_TIMEOUT is rejected, and only its signal word is
 *    cleared. It does not progress any worker: over
 *    emulated RMA (tcp) call ucp_worker_progress between polls, as the
 *    public API's programs do. Code runs from the RX code cache unless
 *    UCX_TC_IFUNC_PLACEMENT=inplace, which requires an executable buffer.
 *
 * Threads: like the public API, single-threaded; calls may come from one
 * thread at a time.
 */
#ifndef TWOCHAINS_UCP_IFUNC_H_
#define TWOCHAINS_UCP_IFUNC_H_

#include <ucp/api/ucp.h>
#include <stddef.h>
#include <stdint.h>

BEGIN_C_DECLS

/** A registered ifunc (a jam of a loaded package). */
typedef struct ucp_ifunc *ucp_ifunc_h;

/** An ifunc message: the frame and its size, passed by value. */
typedef struct ucp_ifunc_msg {
    ucp_ifunc_h ifunc_h;
    void        *frame;
    size_t      frame_size;
} ucp_ifunc_msg_t;

/** Find and load the jam @a ifunc_name. UCS_ERR_NO_ELEM if no package has it. */
ucs_status_t ucp_register_ifunc(ucp_context_h context, const char *ifunc_name,
                                ucp_ifunc_h *ifunc_p);

/** Release a handle from ucp_register_ifunc. */
void ucp_deregister_ifunc(ucp_context_h context, ucp_ifunc_h ifunc_h);

/** Build a frame; UCS_ERR_CANCELED if the jam's payload_init failed. */
ucs_status_t ucp_ifunc_msg_create(ucp_ifunc_h ifunc_h, void *source_args,
                                  size_t source_args_size, ucp_ifunc_msg_t *msg_p);

/** Where the payload of @a msg is, and its size (either output may be NULL). */
ucs_status_t ucp_ifunc_msg_get_payload_ptr(ucp_ifunc_msg_t *msg, void **payload,
                                           size_t *payload_size);

void ucp_ifunc_msg_free(ucp_ifunc_msg_t msg);

/** Put @a msg at @a remote_addr; UCS_OK or UCS_INPROGRESS (flush to complete). */
ucs_status_t ucp_ifunc_send_nbix(ucp_ep_h ep, ucp_ifunc_msg_t msg,
                                 uint64_t remote_addr, ucp_rkey_h rkey);

/** Run the frame at @a buffer if one arrived; see above for the results. */
ucs_status_t ucp_poll_ifunc(ucp_context_h context, void *buffer,
                            size_t buffer_size, void *target_args);

END_C_DECLS

#endif
