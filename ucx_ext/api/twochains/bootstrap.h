/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Bootstrap: rank, size, allgather of byte blobs (worker addresses, packed
 * rkeys) and barrier, before any UCX endpoint exists. Backends: in-process
 * (several members inside one process, for tests), TCP rendezvous with rank 0
 * (host:port, works across machines), and any other runtime through
 * @ref tc_bootstrap_create (MPI, PMIx).
 *
 * Every collective finishes or fails within the bootstrap timeout; a peer
 * that dies, a size mismatch, a duplicate rank or garbage on the wire gives a
 * clear error on the members that see it, never a hang.
 */
#ifndef TWOCHAINS_BOOTSTRAP_H_
#define TWOCHAINS_BOOTSTRAP_H_

#include <ucs/type/status.h>
#include <ucs/sys/compiler_def.h>
#include <stddef.h>

BEGIN_C_DECLS

typedef struct tc_bootstrap *tc_bootstrap_h;
typedef struct tc_bootstrap_inproc_domain *tc_bootstrap_inproc_domain_h;

/**
 * A backend. allgatherv gathers @a len bytes from every rank: on success
 * *@a all_p is a malloc()ed concatenation in rank order (the caller frees it)
 * and @a lens[r] holds rank r's length.
 */
typedef struct tc_bootstrap_ops {
    const char   *name;
    ucs_status_t (*allgatherv)(void *ctx, const void *buf, size_t len,
                               void **all_p, size_t *lens);
    void         (*destroy)(void *ctx);
} tc_bootstrap_ops_t;

/**
 * Wrap a backend (e.g. MPI_Allgatherv or PMIx fence). Takes @a ctx on
 * success (ops->destroy releases it); on error the caller still owns it.
 */
ucs_status_t tc_bootstrap_create(const tc_bootstrap_ops_t *ops, void *ctx,
                                 int rank, int size, tc_bootstrap_h *boot_p);

/**
 * From the environment that twochains-run (or a user) sets: UCX_TC_RANK,
 * UCX_TC_SIZE, UCX_TC_ROOT (host:port of rank 0), UCX_TC_LISTEN_FD (rank 0's
 * pre-bound socket), UCX_TC_BOOTSTRAP_TIMEOUT. Without UCX_TC_SIZE, a
 * single-member bootstrap.
 */
ucs_status_t tc_bootstrap_create_from_env(tc_bootstrap_h *boot_p);

/**
 * TCP rendezvous. Rank 0 listens on @a root ("host:port"; port 0 is not
 * allowed) or on @a listen_fd when >= 0; the others connect, retrying until
 * @a timeout_s. @a listen_fd stays the caller's (it is made non-blocking,
 * not closed); tc_bootstrap_create_from_env closes the inherited one.
 */
ucs_status_t tc_bootstrap_tcp_create(const char *root, int listen_fd,
                                     int rank, int size, double timeout_s,
                                     tc_bootstrap_h *boot_p);

/**
 * PMIx, for jobs started by a PMIx launcher (Open MPI's mpirun, prterun,
 * srun --mpi=pmix): rank and size from the PMIx server, allgatherv through
 * PMIx_Put, PMIx_Commit, PMIx_Fence and PMIx_Get, each collective bounded by
 * UCX_TC_BOOTSTRAP_TIMEOUT. tc_bootstrap_create_from_env uses it with
 * UCX_TC_BOOTSTRAP=pmix, or with auto when PMIX_RANK is set and UCX_TC_SIZE
 * is not. UCS_ERR_UNSUPPORTED when built without PMIx (libpmix-dev).
 */
ucs_status_t tc_bootstrap_pmix_create(tc_bootstrap_h *boot_p);

/** A rendezvous for @a size members inside one process. */
ucs_status_t tc_bootstrap_inproc_domain_create(int size, double timeout_s,
                                               tc_bootstrap_inproc_domain_h *domain_p);
void tc_bootstrap_inproc_domain_destroy(tc_bootstrap_inproc_domain_h domain);

/** Member @a rank of @a domain; each member is driven by its own thread. */
ucs_status_t tc_bootstrap_inproc_create(tc_bootstrap_inproc_domain_h domain,
                                        int rank, tc_bootstrap_h *boot_p);

int tc_bootstrap_rank(tc_bootstrap_h boot);
int tc_bootstrap_size(tc_bootstrap_h boot);
const char *tc_bootstrap_name(tc_bootstrap_h boot);

/**
 * Every rank contributes @a len bytes; @a recvbuf receives size * len bytes
 * in rank order. Ranks passing different @a len all get
 * UCS_ERR_INVALID_PARAM.
 */
ucs_status_t tc_bootstrap_allgather(tc_bootstrap_h boot, const void *sendbuf,
                                    size_t len, void *recvbuf);

/** Variable-size allgather; see tc_bootstrap_ops_t::allgatherv. */
ucs_status_t tc_bootstrap_allgatherv(tc_bootstrap_h boot, const void *buf,
                                     size_t len, void **all_p, size_t *lens);

ucs_status_t tc_bootstrap_barrier(tc_bootstrap_h boot);

void tc_bootstrap_destroy(tc_bootstrap_h boot);

END_C_DECLS

#endif
