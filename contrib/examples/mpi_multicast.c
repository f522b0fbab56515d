/*
 * A twochains group inside an MPI program: MPI (Open MPI, pml ucx) and the
 * group share the process and the UCX library. The bootstrap is
 * MPI_Allgatherv; MPI then checks that every rank delivered the same
 * sequence.
 *
 *   mpicc mpi_multicast.c $(pkg-config --cflags --libs twochains)
 *   mpirun --oversubscribe -np 3 ./mpi_multicast
 */
#include <twochains/bootstrap_mpi.h>
#include "multicast_common.h"

int main(int argc, char **argv)
{
    unsigned long long chains[256];
    example_state_t st;
    tc_bootstrap_h boot;
    int rank, size, r, ok, all_ok;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 256 || tc_bootstrap_mpi_create(MPI_COMM_WORLD, &boot) != UCS_OK) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    ok = (example_multicast(boot, &st) == 0);
    MPI_Allgather(&st.chain, 1, MPI_UNSIGNED_LONG_LONG, chains, 1, MPI_UNSIGNED_LONG_LONG,
                  MPI_COMM_WORLD);
    for (r = 0; r < size; ++r) {
        ok = ok && (chains[r] == chains[0]);
    }
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("mpi_multicast: %d ranks delivered %llu messages each, %s (chain %016llx)\n",
               size, st.delivered, all_ok ? "identical order" : "MISMATCH", chains[0]);
    }
    tc_bootstrap_destroy(boot);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
