/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The OpenSHMEM bootstrap when one PE is out of memory: PE 1's first local
 * allocation in an allgatherv fails. Every PE must fail that allgatherv
 * together (none waits in an fcollect PE 1 never enters), and the next one
 * must work. Prints "shmem_alloc_fail: PE N ok" per PE; exit 0 on success.
 */
#include <stdio.h>
#include <stdlib.h>

#include <shmem.h>

static int tc_test_fail_next;

static void *tc_test_malloc(size_t size)
{
    if (tc_test_fail_next) {
        tc_test_fail_next = 0;
        return NULL;
    }
    return malloc(size);
}

#define TC_BOOTSTRAP_SHMEM_MALLOC tc_test_malloc
#include <twochains/bootstrap_shmem.h>

int main(void)
{
    tc_bootstrap_h boot;
    ucs_status_t first, second;
    size_t lens[64];
    void *all = NULL;
    int me, n;

    shmem_init();
    me = shmem_my_pe();
    n  = shmem_n_pes();
    if ((n > 64) || (tc_bootstrap_shmem_create(&boot) != UCS_OK)) {
        return 1;
    }
    tc_test_fail_next = (me == 1);
    first = tc_bootstrap_allgatherv(boot, &me, sizeof(me), &all, lens);
    if (first == UCS_OK) {
        free(all);
    }
    second = tc_bootstrap_allgatherv(boot, &me, sizeof(me), &all, lens);
    if (second == UCS_OK) {
        second = ((lens[n - 1] == sizeof(int)) && (((int*)all)[n - 1] == n - 1)) ?
                 UCS_OK : UCS_ERR_IO_ERROR;
        free(all);
    }
    printf("shmem_alloc_fail: PE %d %s (first %s, second %s)\n", me,
           ((first == UCS_ERR_NO_MEMORY) && (second == UCS_OK)) ? "ok" : "FAILED",
           ucs_status_string(first), ucs_status_string(second));
    tc_bootstrap_destroy(boot);
    shmem_finalize();
    return ((first == UCS_ERR_NO_MEMORY) && (second == UCS_OK)) ? 0 : 1;
}
