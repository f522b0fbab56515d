/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Generic bootstrap: a handle is a backend (ops + ctx) with a rank and size.
 * allgather and barrier are built on the backend's allgatherv, so a backend
 * implements exactly one collective. Also the single-member backend. The
 * choice of backend from UCX_TC_* variables is above the backends, in
 * bootstrap/select.c: this core names none of them.
 *
 * Threads: a handle is used by one thread at a time (collectives are called
 * by every member once, in the same order). Different handles are
 * independent. Invariants: 0 <= rank < size; a collective either returns
 * UCS_OK with every output written, or an error with no output written.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "bootstrap_int.h"

#include <base/debug.h>

#include <ucs/debug/log_def.h>
#include <stdlib.h>
#include <string.h>

ucs_status_t tc_bootstrap_create(const tc_bootstrap_ops_t *ops, void *ctx,
                                 int rank, int size, tc_bootstrap_h *boot_p)
{
    tc_bootstrap_h boot;

    if ((ops == NULL) || (ops->allgatherv == NULL) || (ops->destroy == NULL)) {
        ucs_error("bootstrap ops must provide allgatherv and destroy");
        return UCS_ERR_INVALID_PARAM;
    }
    if ((size < 1) || (rank < 0) || (rank >= size)) {
        ucs_error("invalid bootstrap rank %d for size %d", rank, size);
        return UCS_ERR_INVALID_PARAM;
    }

    boot = calloc(1, sizeof(*boot));
    if (boot == NULL) {
        ucs_error("failed to allocate bootstrap handle");
        return UCS_ERR_NO_MEMORY;
    }

    boot->ops  = ops;
    boot->ctx  = ctx;
    boot->rank = rank;
    boot->size = size;
    ucs_debug("bootstrap %p backend %s rank %d size %d", boot,
              ops->name ? ops->name : "?", rank, size);
    *boot_p = boot;
    return UCS_OK;
}

void tc_bootstrap_destroy(tc_bootstrap_h boot)
{
    if (boot == NULL) {
        return;
    }
    boot->ops->destroy(boot->ctx);
    free(boot);
}

int tc_bootstrap_rank(tc_bootstrap_h boot)
{
    return boot->rank;
}

int tc_bootstrap_size(tc_bootstrap_h boot)
{
    return boot->size;
}

const char *tc_bootstrap_name(tc_bootstrap_h boot)
{
    return boot->ops->name;
}

ucs_status_t tc_bootstrap_allgatherv(tc_bootstrap_h boot, const void *buf,
                                     size_t len, void **all_p, size_t *lens)
{
    if ((buf == NULL) && (len > 0)) {
        ucs_error("bootstrap allgatherv: NULL buffer with length %zu", len);
        return UCS_ERR_INVALID_PARAM;
    }
    return boot->ops->allgatherv(boot->ctx, buf, len, all_p, lens);
}

ucs_status_t tc_bootstrap_allgather(tc_bootstrap_h boot, const void *sendbuf,
                                    size_t len, void *recvbuf)
{
    ucs_status_t status;
    size_t *lens;
    void *all;
    int r;

    lens = calloc(boot->size, sizeof(*lens));
    if (lens == NULL) {
        ucs_error("failed to allocate %d lengths", boot->size);
        status = UCS_ERR_NO_MEMORY;
        goto err;
    }

    status = tc_bootstrap_allgatherv(boot, sendbuf, len, &all, lens);
    if (status != UCS_OK) {
        goto err_free_lens;       /* the backend logged */
    }

    for (r = 0; r < boot->size; ++r) {
        if (lens[r] != lens[0]) {
            break;
        }
    }
    if (r < boot->size) {
        /* Every rank sees the same lengths; rank 0 tells the story once, so
         * that N members in one process do not log N copies of it. */
        if (boot->rank == 0) {
            ucs_error("bootstrap allgather: rank %d contributed %zu bytes but "
                      "rank 0 contributed %zu (every rank must pass the same "
                      "length)", r, lens[r], lens[0]);
        } else {
            ucs_debug("bootstrap allgather: rank %d contributed %zu bytes, "
                      "rank 0 %zu", r, lens[r], lens[0]);
        }
        status = UCS_ERR_INVALID_PARAM;
        goto err_free_all;
    }

    if (len > 0) {
        memcpy(recvbuf, all, len * boot->size);
    }
    free(all);
    free(lens);
    return UCS_OK;

err_free_all:
    free(all);
err_free_lens:
    free(lens);
err:
    return status;
}

ucs_status_t tc_bootstrap_barrier(tc_bootstrap_h boot)
{
    ucs_status_t status;
    size_t *lens;
    void *all;

    lens = calloc(boot->size, sizeof(*lens));
    if (lens == NULL) {
        ucs_error("failed to allocate %d lengths", boot->size);
        return UCS_ERR_NO_MEMORY;
    }

    status = tc_bootstrap_allgatherv(boot, NULL, 0, &all, lens);
    if (status == UCS_OK) {
        free(all);
    }
    free(lens);
    return status;
}

/* --- single member ------------------------------------------------------ */

static ucs_status_t tc_bootstrap_single_allgatherv(void *ctx, const void *buf,
                                                   size_t len, void **all_p,
                                                   size_t *lens)
{
    void *all;

    all = malloc(len ? len : 1);
    if (all == NULL) {
        ucs_error("failed to allocate %zu bytes for allgatherv", len);
        return UCS_ERR_NO_MEMORY;
    }
    if (len > 0) {
        memcpy(all, buf, len);
    }
    lens[0] = len;
    *all_p  = all;
    return UCS_OK;
}

static void tc_bootstrap_single_destroy(void *ctx)
{
}

static const tc_bootstrap_ops_t tc_bootstrap_single_ops = {
    .name       = "single",
    .allgatherv = tc_bootstrap_single_allgatherv,
    .destroy    = tc_bootstrap_single_destroy
};

ucs_status_t tc_bootstrap_single_create(tc_bootstrap_h *boot_p)
{
    return tc_bootstrap_create(&tc_bootstrap_single_ops, NULL, 0, 1, boot_p);
}
