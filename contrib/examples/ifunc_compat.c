/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * A program in the style of the public Two-Chains ifunc API
 * (openucx/ucx-two-chains, branch ifunc_put): it includes only
 * <ucp/api/ucp.h> and calls ucp_register_ifunc, ucp_ifunc_msg_create,
 * ucp_ifunc_send_nbix, ucp_poll_ifunc, ucp_ifunc_msg_free and
 * ucp_deregister_ifunc. A stock UCX does not declare those; build it
 * unchanged with Two-Chains' header pulled in first:
 *
 *   cc -include twochains/ucp_ifunc.h ifunc_compat.c -ltwochains -lucp -lucs
 *
 * The API leaves address exchange to the program; this one uses the
 * Two-Chains bootstrap (twochains-run -n 2). Rank 1 ships server_side_sum
 * frames into rank 0's heap; rank 0 answers each with a ping frame into
 * rank 1's heap. ifuncs are found in UCX_TC_IFUNC_PKG_PATH.
 */
#include <ucp/api/ucp.h>

#include "public_api_peer.h"   /* addresses through the bootstrap, barrier, flush */

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEAP_SIZE 65536
#define ROUNDS    200

static ucp_context_h     ctx;
static ucp_worker_h      worker;
static public_api_peer_t peer;

static void check(ucs_status_t status, const char *what)
{
    if (status != UCS_OK) {
        fprintf(stderr, "ifunc_compat: %s: %s\n", what, ucs_status_string(status));
        exit(1);
    }
}

/* Poll until a frame ran (progressing the worker: puts over tcp are emulated) */
static void poll_one(void *heap, void *target_args)
{
    ucs_status_t status;

    while ((status = ucp_poll_ifunc(ctx, heap, HEAP_SIZE, target_args)) ==
           UCS_ERR_NO_MESSAGE) {
        ucp_worker_progress(worker);
    }
    check(status, "ucp_poll_ifunc");
}

int main(void)
{
    ucp_params_t params           = {0};
    ucp_worker_params_t wparams   = {0};
    ucp_mem_map_params_t mp       = {0};
    const char *pkg_path          = getenv("UCX_TC_IFUNC_PKG_PATH");
    uint64_t replies = 0;
    int64_t values[4], expect = 0;
    ucp_ifunc_msg_t msg;
    ucp_ifunc_h ih;
    ucp_mem_attr_t attr;
    ucp_mem_h memh;
    char path[2048];
    void *ried;
    int rank, i, j;

    check(tc_bootstrap_create_from_env(&peer.boot), "bootstrap");
    rank = peer.rank = tc_bootstrap_rank(peer.boot);
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features   = UCP_FEATURE_RMA;
    check(ucp_init(&params, NULL, &ctx), "ucp_init");
    wparams.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = UCS_THREAD_MODE_SINGLE;
    check(ucp_worker_create(ctx, &wparams, &worker), "ucp_worker_create");

    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                    UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    mp.length     = HEAP_SIZE;
    mp.flags      = UCP_MEM_MAP_ALLOCATE;
    check(ucp_mem_map(ctx, &mp, &memh), "ucp_mem_map");
    attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
    check(ucp_mem_query(memh, &attr), "ucp_mem_query");
    memset(attr.address, 0, HEAP_SIZE);

    public_api_connect(&peer, ctx, worker, memh, attr.address);

    check(ucp_register_ifunc(ctx, (rank == 1) ? "server_side_sum" : "ping", &ih),
          "ucp_register_ifunc");
    for (i = 0; i < ROUNDS; ++i) {
        for (j = 0; j < 4; ++j) {
            values[j] = i * 4 + j - 7;
            expect   += values[j];
        }
        if (rank == 1) {
            check(ucp_ifunc_msg_create(ih, values, sizeof(values), &msg), "msg_create");
            ucp_ifunc_send_nbix(peer.ep, msg, peer.peer_heap, peer.rkey);
            public_api_flush(&peer);
            ucp_ifunc_msg_free(msg);
            poll_one(attr.address, &replies);          /* the ping back */
        } else {
            poll_one(attr.address, NULL);
            check(ucp_ifunc_msg_create(ih, &values[0], sizeof(uint64_t), &msg),
                  "msg_create");
            ucp_ifunc_send_nbix(peer.ep, msg, peer.peer_heap, peer.rkey);
            public_api_flush(&peer);
            ucp_ifunc_msg_free(msg);
        }
    }

    if (rank == 0) {
        /* the server-side sum lives in the package's ried, loaded by register */
        snprintf(path, sizeof(path), "%.*s/lib/libtcbench_ried_tcbench_state.so",
                 (int)strcspn(pkg_path ? pkg_path : "", ":"), pkg_path ? pkg_path : "");
        ried = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
        if ((ried == NULL) || (*(int64_t*)dlsym(ried, "tcbench_accumulator") != expect)) {
            fprintf(stderr, "ifunc_compat: server-side sum wrong (%s)\n", path);
            return 1;
        }
        printf("ifunc_compat: %d server_side_sum frames ran, sum %" PRId64 " verified\n",
               ROUNDS, expect);
        dlclose(ried);
    } else if (replies != ROUNDS) {
        fprintf(stderr, "ifunc_compat: %" PRIu64 " ping replies, expected %d\n", replies,
                ROUNDS);
        return 1;
    } else {
        printf("ifunc_compat: %d ping frames ran\n", ROUNDS);
    }

    ucp_deregister_ifunc(ctx, ih);
    public_api_disconnect(&peer);
    ucp_mem_unmap(ctx, memh);
    ucp_worker_destroy(worker);
    ucp_cleanup(ctx);
    tc_bootstrap_destroy(peer.boot);
    return 0;
}
