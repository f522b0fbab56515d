/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * What a program in the style of the public Two-Chains ifunc API needs
 * around it and the API leaves to the program: a pair of processes started
 * by twochains-run exchanging a heap's address, its rkey and their worker
 * addresses through the Two-Chains bootstrap, a blocking worker flush, a
 * barrier that keeps the worker progressing (over tcp the peer's emulated
 * puts need our progress), and closing the endpoint. Header-only, so that
 * the programs stay single files built as users build them.
 */
#ifndef PUBLIC_API_PEER_H_
#define PUBLIC_API_PEER_H_

#include <ucp/api/ucp.h>
#include <twochains/bootstrap.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    tc_bootstrap_h boot;
    int            rank;
    ucp_worker_h   worker;
    ucp_ep_h       ep;           /* to the other rank */
    ucp_rkey_h     rkey;         /* its heap */
    uint64_t       peer_heap;    /* its heap's address */
    volatile int   barrier_done;
} public_api_peer_t;

static void public_api_check(ucs_status_t status, const char *what)
{
    if (status != UCS_OK) {
        fprintf(stderr, "%s: %s\n", what, ucs_status_string(status));
        exit(1);
    }
}

static void public_api_flush(public_api_peer_t *p)
{
    ucp_request_param_t param = {0};
    ucs_status_ptr_t req      = ucp_worker_flush_nbx(p->worker, &param);

    if (UCS_PTR_IS_ERR(req)) {
        public_api_check(UCS_PTR_STATUS(req), "flush");
    }
    if (req != NULL) {
        while (ucp_request_check_status(req) == UCS_INPROGRESS) {
            ucp_worker_progress(p->worker);
        }
        ucp_request_free(req);
    }
}

static void *public_api_barrier_thread(void *arg)
{
    public_api_peer_t *p = arg;

    tc_bootstrap_barrier(p->boot);
    __atomic_store_n(&p->barrier_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void public_api_barrier(public_api_peer_t *p)
{
    pthread_t thread;

    p->barrier_done = 0;
    pthread_create(&thread, NULL, public_api_barrier_thread, p);
    while (!__atomic_load_n(&p->barrier_done, __ATOMIC_ACQUIRE)) {
        ucp_worker_progress(p->worker);
    }
    pthread_join(thread, NULL);
}

/* Bootstrap from the environment; exchange @a heap (mapped by @a memh) and
 * the worker addresses with the other rank; connect to it */
static void public_api_connect(public_api_peer_t *p, ucp_context_h ctx,
                               ucp_worker_h worker, ucp_mem_h memh, void *heap)
{
    ucp_ep_params_t ep_params = {0};
    size_t rkey_len, addr_len, lens[2];
    void *rkey_buf, *all;
    ucp_address_t *addr;
    uint8_t *blob, *q;
    uint64_t heap_addr = (uintptr_t)heap;

    p->worker = worker;
    public_api_check(ucp_rkey_pack(ctx, memh, &rkey_buf, &rkey_len), "ucp_rkey_pack");
    public_api_check(ucp_worker_get_address(worker, &addr, &addr_len),
                     "ucp_worker_get_address");
    blob = malloc(24 + rkey_len + addr_len);
    memcpy(blob, &heap_addr, 8);
    memcpy(blob + 8, &rkey_len, 8);
    memcpy(blob + 16, &addr_len, 8);
    memcpy(blob + 24, rkey_buf, rkey_len);
    memcpy(blob + 24 + rkey_len, addr, addr_len);
    public_api_check(tc_bootstrap_allgatherv(p->boot, blob, 24 + rkey_len + addr_len,
                                             &all, lens), "allgatherv");
    q = (uint8_t*)all + ((p->rank == 0) ? lens[0] : 0);
    memcpy(&p->peer_heap, q, 8);
    memcpy(&rkey_len, q + 8, 8);
    memcpy(&addr_len, q + 16, 8);
    ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep_params.address    = (const ucp_address_t*)(q + 24 + rkey_len);
    public_api_check(ucp_ep_create(worker, &ep_params, &p->ep), "ucp_ep_create");
    public_api_check(ucp_ep_rkey_unpack(p->ep, q + 24, &p->rkey), "ucp_ep_rkey_unpack");
    free(all);
    free(blob);
    ucp_rkey_buffer_release(rkey_buf);
    ucp_worker_release_address(worker, addr);
}

/* Close the endpoint (flush mode) between two barriers: the peer's close
 * may need our progress */
static void public_api_disconnect(public_api_peer_t *p)
{
    ucp_request_param_t param = {0};
    ucs_status_ptr_t req;

    public_api_barrier(p);
    ucp_rkey_destroy(p->rkey);
    req = ucp_ep_close_nbx(p->ep, &param);
    while (UCS_PTR_IS_PTR(req) && (ucp_request_check_status(req) == UCS_INPROGRESS)) {
        ucp_worker_progress(p->worker);
    }
    if (UCS_PTR_IS_PTR(req)) {
        ucp_request_free(req);
    }
    public_api_barrier(p);
}

#endif
