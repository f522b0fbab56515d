/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Private calls of the public ucp_*ifunc* API (ucp_ifunc.c) and of the
 * record of a context's workers (context_workers.c).
 */
#ifndef TC_IFUNC_UCP_IFUNC_INT_H_
#define TC_IFUNC_UCP_IFUNC_INT_H_

#include <twochains/ifunc.h>
#include <twochains/ucp_ifunc.h>

#include <ucp/api/ucp.h>
#include <ucs/sys/compiler_def.h>

BEGIN_C_DECLS

/* (ucp_ifunc.c) How ucp_ifunc_send_nbix sends a frame */
typedef enum {
    TC_UCP_IFUNC_FORM_CHECKED,   /* one put, TC_FRAME_MAGIC_CHECKED */
    TC_UCP_IFUNC_FORM_TRAILER,   /* one put, trailer rule */
    TC_UCP_IFUNC_FORM_FENCED     /* body, flush, signal */
} tc_ucp_ifunc_form_t;

/* Stamp the next send of a ucp_ifunc message to @a ep (seq, signal, trailer, and
 * check) without sending it; the frame must not be read by a put still:
 * tc_ucp_ifunc_settle waits for the message's last put while UCX reads
 * its frame. Tests tear what this stamps. */
struct ucp_ifunc_msg;
tc_ucp_ifunc_form_t tc_ucp_ifunc_stamp(struct ucp_ifunc_msg *msg, ucp_ep_h ep);
void tc_ucp_ifunc_settle(struct ucp_ifunc_msg *msg);

/* (context_workers.c) The one worker this program created on @a context,
 * or NULL if it created none or several, or its calls bypassed ours */
ucp_worker_h tc_context_only_worker(ucp_context_h context);

/* What ucp_poll_ifunc counted in this process */
const tc_ifunc_stats_t *tc_ucp_ifunc_stats_get(void);

END_C_DECLS

#endif
