/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Bootstrap over OpenSHMEM (1.4 API), for programs launched by oshrun.
 * Header-only: it compiles with the program's own oshcc.
 *
 * allgatherv is two fcollects over symmetric memory: the lengths, then the
 * blobs padded to the longest.
 *
 * Invariant: every PE takes part in every collective call, in the same
 * order, whatever happened locally. An allocation that fails on one PE is
 * told to all through a reduction over static (symmetric) variables, and
 * then every PE fails the allgatherv together (UCS_ERR_NO_MEMORY); none is
 * left waiting in an fcollect the failed PE never enters.
 * TC_BOOTSTRAP_SHMEM_MALLOC (default malloc) is the local allocation, which
 * a test may define to fail.
 */
#ifndef TWOCHAINS_BOOTSTRAP_SHMEM_H_
#define TWOCHAINS_BOOTSTRAP_SHMEM_H_

#include <twochains/bootstrap.h>

#include <shmem.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef TC_BOOTSTRAP_SHMEM_MALLOC
#  define TC_BOOTSTRAP_SHMEM_MALLOC malloc
#endif

static long tc_bootstrap_shmem_psync[SHMEM_COLLECT_SYNC_SIZE];
static long tc_bootstrap_shmem_reduce_psync[SHMEM_REDUCE_SYNC_SIZE];
static long tc_bootstrap_shmem_reduce_work[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long tc_bootstrap_shmem_failed, tc_bootstrap_shmem_any_failed;

/* Whether every PE is @a ok; called by all PEs at the same point. Static
 * variables are symmetric, so this works when shmem_malloc did not. */
static int tc_bootstrap_shmem_all_ok(int ok)
{
    int i;

    tc_bootstrap_shmem_failed = !ok;
    for (i = 0; i < SHMEM_REDUCE_SYNC_SIZE; ++i) {
        tc_bootstrap_shmem_reduce_psync[i] = SHMEM_SYNC_VALUE;
    }
    shmem_barrier_all(); /* pSync may be reused only after everyone left */
    shmem_long_max_to_all(&tc_bootstrap_shmem_any_failed, &tc_bootstrap_shmem_failed, 1, 0, 0,
                          shmem_n_pes(), tc_bootstrap_shmem_reduce_work,
                          tc_bootstrap_shmem_reduce_psync);
    return tc_bootstrap_shmem_any_failed == 0;
}

static ucs_status_t tc_bootstrap_shmem_allgatherv(void *ctx, const void *buf, size_t len,
                                                  void **all_p, size_t *lens)
{
    int npes = shmem_n_pes(), r, i;
    size_t max = 0, total = 0, words;
    long *mylen, *alllens;
    uint64_t *src = NULL, *dst = NULL;
    char *all     = NULL;
    ucs_status_t status = UCS_ERR_NO_MEMORY;

    (void)ctx;
    mylen   = (long*)shmem_malloc(sizeof(long));
    alllens = (long*)shmem_malloc(sizeof(long) * (size_t)npes);
    if (!tc_bootstrap_shmem_all_ok((mylen != NULL) && (alllens != NULL))) {
        goto out;
    }
    *mylen = (long)len;
    for (i = 0; i < SHMEM_COLLECT_SYNC_SIZE; ++i) {
        tc_bootstrap_shmem_psync[i] = SHMEM_SYNC_VALUE;
    }
    shmem_barrier_all();
    shmem_fcollect64(alllens, mylen, 1, 0, 0, npes, tc_bootstrap_shmem_psync);
    for (r = 0; r < npes; ++r) {
        lens[r] = (size_t)alllens[r];
        max     = (lens[r] > max) ? lens[r] : max;
        total  += lens[r];
    }
    words = (max + 7) / 8;
    src   = (uint64_t*)shmem_malloc(words ? words * 8 : 8);
    dst   = (uint64_t*)shmem_malloc(words ? words * 8 * (size_t)npes : 8);
    all   = (char*)TC_BOOTSTRAP_SHMEM_MALLOC(total ? total : 1);
    /* one PE without memory: all fail here, none waits in the fcollect */
    if (!tc_bootstrap_shmem_all_ok((src != NULL) && (dst != NULL) && (all != NULL))) {
        goto out;
    }
    memset(src, 0, words * 8);
    memcpy(src, buf, len);
    shmem_barrier_all(); /* pSync may be reused only after everyone left */
    shmem_fcollect64(dst, src, words, 0, 0, npes, tc_bootstrap_shmem_psync);
    total = 0;
    for (r = 0; r < npes; ++r) {
        memcpy(all + total, (char*)dst + (size_t)r * words * 8, lens[r]);
        total += lens[r];
    }
    *all_p = all;
    all    = NULL;
    status = UCS_OK;

out:
    /* shmem_free is collective: every PE frees, a NULL as well */
    shmem_barrier_all();
    shmem_free(dst);
    shmem_free(src);
    shmem_free(alllens);
    shmem_free(mylen);
    free(all);
    return status;
}

static void tc_bootstrap_shmem_destroy(void *ctx)
{
    (void)ctx;
}

static inline ucs_status_t tc_bootstrap_shmem_create(tc_bootstrap_h *boot_p)
{
    static const tc_bootstrap_ops_t ops = {"shmem", tc_bootstrap_shmem_allgatherv,
                                           tc_bootstrap_shmem_destroy};
    return tc_bootstrap_create(&ops, NULL, shmem_my_pe(), shmem_n_pes(), boot_p);
}

#endif
