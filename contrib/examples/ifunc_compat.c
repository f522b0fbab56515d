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
#include <twochains/bootstrap.h>

#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEAP_SIZE 65536
#define ROUNDS    200

static ucp_context_h ctx;
static ucp_worker_h  worker;

static void check(ucs_status_t status, const char *what)
{
    if (status != UCS_OK) {
        fprintf(stderr, "ifunc_compat: %s: %s\n", what, ucs_status_string(status));
        exit(1);
    }
}

static void flush(void)
{
    ucp_request_param_t param = {0};
    ucs_status_ptr_t req      = ucp_worker_flush_nbx(worker, &param);

    if (UCS_PTR_IS_ERR(req)) {
        check(UCS_PTR_STATUS(req), "flush");
    }
    if (req != NULL) {
        while (ucp_request_check_status(req) == UCS_INPROGRESS) {
            ucp_worker_progress(worker);
        }
        ucp_request_free(req);
    }
}

/* A bootstrap barrier that keeps our worker progressing meanwhile: over
 * emulated RMA (tcp) the peer's last flush needs our progress to finish */
static volatile int barrier_done;

static void *barrier_thread(void *boot)
{
    tc_bootstrap_barrier((tc_bootstrap_h)boot);
    __atomic_store_n(&barrier_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void barrier(tc_bootstrap_h boot)
{
    pthread_t thread;

    barrier_done = 0;
    pthread_create(&thread, NULL, barrier_thread, boot);
    while (!__atomic_load_n(&barrier_done, __ATOMIC_ACQUIRE)) {
        ucp_worker_progress(worker);
    }
    pthread_join(thread, NULL);
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
    ucp_ep_params_t ep_params     = {0};
    ucp_request_param_t close_param = {0};
    const char *pkg_path          = getenv("UCX_TC_IFUNC_PKG_PATH");
    size_t rkey_len, addr_len, lens[2], off;
    uint64_t replies = 0, peer_heap;
    int64_t values[4], expect = 0;
    void *rkey_buf, *all, *ried;
    ucp_address_t *addr;
    tc_bootstrap_h boot;
    ucp_ifunc_msg_t msg;
    ucp_ifunc_h ih;
    ucp_mem_attr_t attr;
    ucp_rkey_h rkey;
    ucp_mem_h memh;
    ucp_ep_h ep;
    uint8_t *blob, *p;
    char path[2048];
    int rank, i, j;

    check(tc_bootstrap_create_from_env(&boot), "bootstrap");
    rank = tc_bootstrap_rank(boot);
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

    /* exchange heap address, rkey and worker address */
    check(ucp_rkey_pack(ctx, memh, &rkey_buf, &rkey_len), "ucp_rkey_pack");
    check(ucp_worker_get_address(worker, &addr, &addr_len), "ucp_worker_get_address");
    blob = malloc(24 + rkey_len + addr_len);
    peer_heap = (uintptr_t)attr.address;
    memcpy(blob, &peer_heap, 8);
    memcpy(blob + 8, &rkey_len, 8);
    memcpy(blob + 16, &addr_len, 8);
    memcpy(blob + 24, rkey_buf, rkey_len);
    memcpy(blob + 24 + rkey_len, addr, addr_len);
    check(tc_bootstrap_allgatherv(boot, blob, 24 + rkey_len + addr_len, &all, lens),
          "allgatherv");
    off = (rank == 0) ? lens[0] : 0;
    p   = (uint8_t*)all + off;
    memcpy(&peer_heap, p, 8);
    memcpy(&rkey_len, p + 8, 8);
    memcpy(&addr_len, p + 16, 8);
    ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep_params.address    = (const ucp_address_t*)(p + 24 + rkey_len);
    check(ucp_ep_create(worker, &ep_params, &ep), "ucp_ep_create");
    check(ucp_ep_rkey_unpack(ep, p + 24, &rkey), "ucp_ep_rkey_unpack");
    free(all);
    free(blob);
    ucp_rkey_buffer_release(rkey_buf);
    ucp_worker_release_address(worker, addr);

    check(ucp_register_ifunc(ctx, (rank == 1) ? "server_side_sum" : "ping", &ih),
          "ucp_register_ifunc");
    for (i = 0; i < ROUNDS; ++i) {
        for (j = 0; j < 4; ++j) {
            values[j] = i * 4 + j - 7;
            expect   += values[j];
        }
        if (rank == 1) {
            check(ucp_ifunc_msg_create(ih, values, sizeof(values), &msg), "msg_create");
            ucp_ifunc_send_nbix(ep, msg, peer_heap, rkey);
            flush();
            ucp_ifunc_msg_free(msg);
            poll_one(attr.address, &replies);          /* the ping back */
        } else {
            poll_one(attr.address, NULL);
            check(ucp_ifunc_msg_create(ih, &values[0], sizeof(uint64_t), &msg),
                  "msg_create");
            ucp_ifunc_send_nbix(ep, msg, peer_heap, rkey);
            flush();
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
    barrier(boot);
    ucp_rkey_destroy(rkey);
    close_param.op_attr_mask = 0;      /* flush mode: nothing in flight */
    {
        ucs_status_ptr_t req = ucp_ep_close_nbx(ep, &close_param);
        while (UCS_PTR_IS_PTR(req) && (ucp_request_check_status(req) == UCS_INPROGRESS)) {
            ucp_worker_progress(worker);
        }
        if (UCS_PTR_IS_PTR(req)) {
            ucp_request_free(req);
        }
    }
    barrier(boot);     /* the peer's close may need our progress */
    ucp_mem_unmap(ctx, memh);
    ucp_worker_destroy(worker);
    ucp_cleanup(ctx);
    tc_bootstrap_destroy(boot);
    return 0;
}
