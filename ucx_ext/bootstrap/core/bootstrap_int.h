/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Bootstrap internals: the generic handle, which every backend fills
 * (tc_bootstrap_create), and the single-member backend. A backend's own
 * formats are in its room (tcp/tcp_wire.h).
 */
#ifndef TC_BOOTSTRAP_INT_H_
#define TC_BOOTSTRAP_INT_H_

#include <twochains/bootstrap.h>

#include <ucs/sys/compiler_def.h>

BEGIN_C_DECLS

/* What every backend accepts at most: the TCP wire format and PMIx
 * enforce the same limits, so that a job behaves alike over either. */
#define TC_BOOTSTRAP_MAX_LEN       (64ul << 20) /* one member's contribution */
#define TC_BOOTSTRAP_MAX_TOTAL     (1ul << 30)  /* all contributions together */
#define TC_BOOTSTRAP_MAX_SIZE      65536        /* members */

/* A bootstrap member: a backend plus its rank and size. */
struct tc_bootstrap {
    const tc_bootstrap_ops_t *ops;
    void                     *ctx;
    int                      rank;
    int                      size;
};

/* Single-member bootstrap: allgatherv copies. */
ucs_status_t tc_bootstrap_single_create(tc_bootstrap_h *boot_p);

END_C_DECLS

#endif
