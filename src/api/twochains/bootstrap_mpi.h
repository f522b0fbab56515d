/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Bootstrap over an MPI communicator, for programs launched by mpirun/srun.
 * Header-only on purpose: it compiles with the program's own mpicc, so
 * libtwochains never links a particular MPI.
 *
 *   tc_bootstrap_h boot;
 *   tc_bootstrap_mpi_create(MPI_COMM_WORLD, &boot);
 */
#ifndef TWOCHAINS_BOOTSTRAP_MPI_H_
#define TWOCHAINS_BOOTSTRAP_MPI_H_

#include <twochains/bootstrap.h>

#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>

static ucs_status_t tc_bootstrap_mpi_allgatherv(void *ctx, const void *buf, size_t len,
                                                void **all_p, size_t *lens)
{
    MPI_Comm comm = *(MPI_Comm*)ctx;
    int size, r, mylen = (int)len, *ilens, *displs, total = 0;
    void *all;

    if (len > (size_t)INT32_MAX) {
        return UCS_ERR_INVALID_PARAM;
    }
    MPI_Comm_size(comm, &size);
    ilens  = (int*)malloc(2 * sizeof(int) * (size_t)size);
    if (ilens == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    displs = ilens + size;
    if (MPI_Allgather(&mylen, 1, MPI_INT, ilens, 1, MPI_INT, comm) != MPI_SUCCESS) {
        free(ilens);
        return UCS_ERR_IO_ERROR;
    }
    for (r = 0; r < size; ++r) {
        displs[r] = total;
        total    += ilens[r];
        lens[r]   = (size_t)ilens[r];
    }
    all = malloc(total ? (size_t)total : 1);
    if (all == NULL) {
        free(ilens);
        return UCS_ERR_NO_MEMORY;
    }
    if (MPI_Allgatherv(buf, mylen, MPI_BYTE, all, ilens, displs, MPI_BYTE, comm) !=
        MPI_SUCCESS) {
        free(all);
        free(ilens);
        return UCS_ERR_IO_ERROR;
    }
    free(ilens);
    *all_p = all;
    return UCS_OK;
}

static void tc_bootstrap_mpi_destroy(void *ctx)
{
    MPI_Comm_free((MPI_Comm*)ctx);
    free(ctx);
}

/** A bootstrap over a duplicate of @a comm (freed with the bootstrap). */
static inline ucs_status_t tc_bootstrap_mpi_create(MPI_Comm comm, tc_bootstrap_h *boot_p)
{
    static const tc_bootstrap_ops_t ops = {"mpi", tc_bootstrap_mpi_allgatherv,
                                           tc_bootstrap_mpi_destroy};
    MPI_Comm *dup = (MPI_Comm*)malloc(sizeof(*dup));
    int rank, size;
    ucs_status_t status;

    if (dup == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    MPI_Comm_dup(comm, dup);
    MPI_Comm_rank(*dup, &rank);
    MPI_Comm_size(*dup, &size);
    status = tc_bootstrap_create(&ops, dup, rank, size, boot_p);
    if (status != UCS_OK) {
        tc_bootstrap_mpi_destroy(dup);
    }
    return status;
}

#endif
