/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * In-process bootstrap: a domain of `size` members inside one process, each
 * member driven by its own thread. allgatherv is a rendezvous under one mutex
 * and condition variable: arriving members publish their contribution; the
 * last to arrive builds every member's result and advances the generation.
 *
 * Threads: any thread may create or destroy a domain; each member handle is
 * used by one thread at a time, different members by different threads.
 * Invariants (under domain->lock):
 *  - 0 <= arrived < size between collectives; arrived counts members that
 *    published a contribution to the current generation;
 *  - result[r] is written only by the last arrival of a generation and read
 *    by member r before it can arrive at the next one, so it never races;
 *  - once status != UCS_OK the domain is failed for good: every waiting and
 *    every later collective returns that status (a timed-out rendezvous
 *    cannot be resumed consistently); a member whose generation completed
 *    before the failure still gets its result;
 *  - the domain is freed when its creator and every member let go of it.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include <bootstrap/core/bootstrap_int.h>

#include <base/debug.h>

#include <ucs/debug/log_def.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct tc_boot_inproc_slot {
    int          joined;      /* a member handle holds this rank */
    const void   *buf;        /* contribution to the current generation */
    size_t       len;
    void         *result;     /* built by the last arrival, taken by owner */
    size_t       *result_lens;
} tc_boot_inproc_slot_t;

struct tc_bootstrap_inproc_domain {
    pthread_mutex_t       lock;
    pthread_cond_t        cond;       /* generation advanced or failure */
    int                   size;
    double                timeout_s;
    int                   refcount;   /* creator + members */
    int                   arrived;
    uint64_t              generation;
    ucs_status_t          status;     /* UCS_OK until the domain fails */
    tc_boot_inproc_slot_t *slots;
};

typedef struct tc_boot_inproc_member {
    tc_bootstrap_inproc_domain_h domain;
    int                          rank;
} tc_boot_inproc_member_t;

static void tc_boot_inproc_domain_put(tc_bootstrap_inproc_domain_h domain)
{
    int last, r;

    pthread_mutex_lock(&domain->lock);
    last = (--domain->refcount == 0);
    pthread_mutex_unlock(&domain->lock);
    if (!last) {
        return;
    }

    for (r = 0; r < domain->size; ++r) {
        free(domain->slots[r].result);
        free(domain->slots[r].result_lens);
    }
    pthread_cond_destroy(&domain->cond);
    pthread_mutex_destroy(&domain->lock);
    free(domain->slots);
    free(domain);
}

ucs_status_t tc_bootstrap_inproc_domain_create(int size, double timeout_s,
                                               tc_bootstrap_inproc_domain_h *domain_p)
{
    tc_bootstrap_inproc_domain_h domain;
    pthread_condattr_t cattr;
    ucs_status_t status;

    if (size < 1) {
        ucs_error("in-process bootstrap domain size %d must be >= 1", size);
        status = UCS_ERR_INVALID_PARAM;
        goto err;
    }
    if (!(timeout_s > 0)) {
        ucs_error("in-process bootstrap timeout %g s must be positive",
                  timeout_s);
        status = UCS_ERR_INVALID_PARAM;
        goto err;
    }

    domain = calloc(1, sizeof(*domain));
    if (domain == NULL) {
        ucs_error("failed to allocate in-process bootstrap domain");
        status = UCS_ERR_NO_MEMORY;
        goto err;
    }

    domain->slots = calloc(size, sizeof(*domain->slots));
    if (domain->slots == NULL) {
        ucs_error("failed to allocate %d in-process bootstrap slots", size);
        status = UCS_ERR_NO_MEMORY;
        goto err_free_domain;
    }

    pthread_condattr_init(&cattr);
    pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
    pthread_cond_init(&domain->cond, &cattr);
    pthread_condattr_destroy(&cattr);
    pthread_mutex_init(&domain->lock, NULL);

    domain->size      = size;
    domain->timeout_s = timeout_s;
    domain->refcount  = 1;
    domain->status    = UCS_OK;
    ucs_debug("in-process bootstrap domain %p size %d timeout %.3f s", domain,
              size, timeout_s);
    *domain_p = domain;
    return UCS_OK;

err_free_domain:
    free(domain);
err:
    return status;
}

void tc_bootstrap_inproc_domain_destroy(tc_bootstrap_inproc_domain_h domain)
{
    if (domain != NULL) {
        tc_boot_inproc_domain_put(domain);
    }
}

/* Called by the last arrival with the lock held: every member's result. */
static ucs_status_t tc_boot_inproc_build(tc_bootstrap_inproc_domain_h domain)
{
    size_t total = 0, offset;
    char *all;
    int r, p;

    for (r = 0; r < domain->size; ++r) {
        total += domain->slots[r].len;
    }

    for (r = 0; r < domain->size; ++r) {
        all = malloc(total ? total : 1);
        domain->slots[r].result_lens = malloc(domain->size * sizeof(size_t));
        if ((all == NULL) || (domain->slots[r].result_lens == NULL)) {
            free(all);
            ucs_error("failed to allocate %zu bytes of allgatherv results",
                      total);
            return UCS_ERR_NO_MEMORY;       /* the caller frees the rest */
        }
        for (p = 0, offset = 0; p < domain->size; ++p) {
            if (domain->slots[p].len > 0) {
                memcpy(all + offset, domain->slots[p].buf,
                       domain->slots[p].len);
            }
            offset                         += domain->slots[p].len;
            domain->slots[r].result_lens[p] = domain->slots[p].len;
        }
        domain->slots[r].result = all;
    }
    return UCS_OK;
}

static void tc_boot_inproc_fail(tc_bootstrap_inproc_domain_h domain,
                                ucs_status_t status)
{
    /* Results of a completed generation stay: their owners take them. Partial
     * results of a failed build are freed with the domain. */
    domain->status = status;
    pthread_cond_broadcast(&domain->cond);
}

static ucs_status_t tc_boot_inproc_allgatherv(void *ctx, const void *buf,
                                              size_t len, void **all_p,
                                              size_t *lens)
{
    tc_boot_inproc_member_t *member      = ctx;
    tc_bootstrap_inproc_domain_h domain  = member->domain;
    tc_boot_inproc_slot_t *slot          = &domain->slots[member->rank];
    struct timespec deadline;
    ucs_status_t status;
    uint64_t generation;
    int64_t ns;
    int ret;

    clock_gettime(CLOCK_MONOTONIC, &deadline);
    ns                = deadline.tv_nsec + (int64_t)(domain->timeout_s * 1e9);
    deadline.tv_sec  += (time_t)(ns / 1000000000);
    deadline.tv_nsec  = (long)(ns % 1000000000);

    pthread_mutex_lock(&domain->lock);
    if (domain->status != UCS_OK) {
        status = domain->status;
        ucs_debug("in-process bootstrap rank %d: domain already failed: %s",
                  member->rank, ucs_status_string(status));
        goto out_unlock;
    }

    tc_assert((slot->result == NULL) && (slot->result_lens == NULL));
    slot->buf  = buf;
    slot->len  = len;
    generation = domain->generation;

    if (++domain->arrived == domain->size) {
        status = tc_boot_inproc_build(domain);
        if (status != UCS_OK) {
            tc_boot_inproc_fail(domain, status);
            goto out_unlock;
        }
        domain->arrived = 0;
        ++domain->generation;
        pthread_cond_broadcast(&domain->cond);
    }

    while ((domain->generation == generation) && (domain->status == UCS_OK)) {
        ret = pthread_cond_timedwait(&domain->cond, &domain->lock, &deadline);
        if ((ret == ETIMEDOUT) && (domain->generation == generation) &&
            (domain->status == UCS_OK)) {
            /* the first member to give up tells why; the others follow */
            ucs_error("in-process bootstrap rank %d: timed out after %.3f s "
                      "with %d of %d members arrived", member->rank,
                      domain->timeout_s, domain->arrived, domain->size);
            tc_boot_inproc_fail(domain, UCS_ERR_TIMED_OUT);
        }
    }

    if (domain->generation == generation) {
        status = domain->status;
        ucs_debug("in-process bootstrap rank %d: collective failed: %s",
                  member->rank, ucs_status_string(status));
        goto out_unlock;
    }

    /* A failure after our generation completed does not take back our
     * result: it is complete and correct. */
    memcpy(lens, slot->result_lens, domain->size * sizeof(*lens));
    free(slot->result_lens);
    *all_p            = slot->result;
    slot->result      = NULL;
    slot->result_lens = NULL;
    status            = UCS_OK;

out_unlock:
    slot->buf = NULL;
    pthread_mutex_unlock(&domain->lock);
    return status;
}

static void tc_boot_inproc_destroy(void *ctx)
{
    tc_boot_inproc_member_t *member     = ctx;
    tc_bootstrap_inproc_domain_h domain = member->domain;

    pthread_mutex_lock(&domain->lock);
    domain->slots[member->rank].joined = 0;
    pthread_mutex_unlock(&domain->lock);
    tc_boot_inproc_domain_put(domain);
    free(member);
}

static const tc_bootstrap_ops_t tc_boot_inproc_ops = {
    .name       = "inproc",
    .allgatherv = tc_boot_inproc_allgatherv,
    .destroy    = tc_boot_inproc_destroy
};

ucs_status_t tc_bootstrap_inproc_create(tc_bootstrap_inproc_domain_h domain,
                                        int rank, tc_bootstrap_h *boot_p)
{
    tc_boot_inproc_member_t *member;
    ucs_status_t status;

    if ((rank < 0) || (rank >= domain->size)) {
        ucs_error("in-process bootstrap rank %d is out of range [0, %d)",
                  rank, domain->size);
        status = UCS_ERR_INVALID_PARAM;
        goto err;
    }

    member = calloc(1, sizeof(*member));
    if (member == NULL) {
        ucs_error("failed to allocate in-process bootstrap member");
        status = UCS_ERR_NO_MEMORY;
        goto err;
    }
    member->domain = domain;
    member->rank   = rank;

    pthread_mutex_lock(&domain->lock);
    if (domain->slots[rank].joined) {
        pthread_mutex_unlock(&domain->lock);
        ucs_error("in-process bootstrap rank %d has already joined domain %p",
                  rank, domain);
        status = UCS_ERR_ALREADY_EXISTS;
        goto err_free_member;
    }
    domain->slots[rank].joined = 1;
    ++domain->refcount;
    pthread_mutex_unlock(&domain->lock);

    status = tc_bootstrap_create(&tc_boot_inproc_ops, member, rank,
                                 domain->size, boot_p);
    if (status != UCS_OK) {
        goto err_leave;
    }
    return UCS_OK;

err_leave:
    pthread_mutex_lock(&domain->lock);
    domain->slots[rank].joined = 0;
    pthread_mutex_unlock(&domain->lock);
    tc_boot_inproc_domain_put(domain);
err_free_member:
    free(member);
err:
    return status;
}
