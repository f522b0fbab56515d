/*
 * A twochains group inside an OpenSHMEM program (Open MPI's oshmem, spml
 * ucx): both over the same UCX in one process. The bootstrap is two
 * fcollects; a final fcollect checks that every PE delivered the same
 * sequence.
 *
 *   oshcc shmem_multicast.c $(pkg-config --cflags --libs twochains)
 *   oshrun --oversubscribe -np 3 --mca osc ucx ./shmem_multicast
 */
#include <twochains/bootstrap_shmem.h>
#include "multicast_common.h"

static long check_psync[SHMEM_COLLECT_SYNC_SIZE];

int main(void)
{
    example_state_t st;
    tc_bootstrap_h boot;
    int me, npes, r, i, ok;
    long long *mine, *chains;

    shmem_init();
    me   = shmem_my_pe();
    npes = shmem_n_pes();
    if (tc_bootstrap_shmem_create(&boot) != UCS_OK) {
        shmem_global_exit(2);
    }
    ok = (example_multicast(boot, &st) == 0);

    mine   = (long long*)shmem_malloc(sizeof(*mine));
    chains = (long long*)shmem_malloc(sizeof(*chains) * (size_t)npes);
    *mine  = ok ? (long long)st.chain : -1;
    for (i = 0; i < SHMEM_COLLECT_SYNC_SIZE; ++i) {
        check_psync[i] = SHMEM_SYNC_VALUE;
    }
    shmem_barrier_all();
    shmem_fcollect64(chains, mine, 1, 0, 0, npes, check_psync);
    for (r = 0; r < npes; ++r) {
        ok = ok && (chains[r] == chains[0]);
    }
    if (me == 0) {
        printf("shmem_multicast: %d PEs delivered %llu messages each, %s (chain %016llx)\n",
               npes, st.delivered, ok ? "identical order" : "MISMATCH",
               (unsigned long long)chains[0]);
    }
    shmem_barrier_all();
    tc_bootstrap_destroy(boot);
    shmem_free(chains);
    shmem_free(mine);
    shmem_finalize();
    return ok ? 0 : 1;
}
