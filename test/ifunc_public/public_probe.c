/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * A program in the style of the public Two-Chains ifunc API: it includes
 * <ucp/api/ucp.h>, is built with -include twochains/ucp_ifunc.h, and uses
 * only ucp_register_ifunc, ucp_ifunc_msg_create, ucp_ifunc_send_nbix,
 * ucp_poll_ifunc, ucp_ifunc_msg_free and ucp_deregister_ifunc on heaps the
 * program maps and manages itself, as the public benchmark does. Two
 * processes (twochains-run -n 2; the bootstrap only exchanges addresses):
 *
 *  1. greet, once, into a heap prefilled with garbage that the receiver
 *     never registered: it registers on arrival (UCX_IFUNC_LIB_DIR), runs
 *     from the code cache, and must see its writable global fresh; then
 *     again, from the cache;
 *  2. the sweep: tally frames with payloads of 1 B to 1 MiB, doubling,
 *     sent back to back into a ring of slots of the receiver's heap (refilled
 *     with garbage before every size), the receiver polling slot by slot
 *     and handing the ring back with a one-byte put after each lap; every
 *     payload byte is checked by the ifunc, every count by the program.
 *
 * -d both: rank 1 sends, then rank 0 (both directions); -d one: rank 1
 * only (for a receiver without the ifuncs installed, in trust mode).
 * -g: skip greet (it has an external symbol). Prints one summary line per
 * direction and exits non-zero on any mismatch.
 */
#include <ucp/api/ucp.h>

#include "public_api_peer.h"   /* contrib/examples: addresses, barrier, flush */
#include "sweep_pattern.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HEAP_SIZE  (8ul << 20)
#define RING_BYTES (HEAP_SIZE / 2)          /* the first half holds the slots */
#define GARBAGE    42
#define HANDBACK   0x3c

static ucp_context_h     ctx;
static ucp_worker_h      worker;
static uint8_t           *heap;
static public_api_peer_t peer;

static void check(ucs_status_t status, const char *what)
{
    if (status != UCS_OK) {
        fprintf(stderr, "public_probe rank %d: %s: %s\n", peer.rank, what,
                ucs_status_string(status));
        exit(1);
    }
}

static void flush(void)
{
    public_api_flush(&peer);
}

static void barrier(void)
{
    public_api_barrier(&peer);
}

/* As the public benchmark's server loop: nothing but ucp_poll_ifunc, which
 * must progress the worker itself where puts are emulated (tcp) */
static void poll_until_run(void *buffer, size_t size, sweep_target_t *t)
{
    ucs_status_t status;

    while ((status = ucp_poll_ifunc(ctx, buffer, size, t)) != UCS_OK) {
        if (status != UCS_ERR_NO_MESSAGE) {
            check(status, "ucp_poll_ifunc");
        }
    }
}

static size_t slot_size_of(size_t payload)
{
    size_t s = 4096;

    while (s < payload + 4096) {
        s *= 2;
    }
    return s;
}

static int greet(int sender)
{
    static const char hello[] = "hello from the public API";
    sweep_target_t t;
    ucp_ifunc_msg_t msg;
    ucp_ifunc_h ih;
    int i, bad = 0;

    memset(&t, 0, sizeof(t));
    memset(heap, GARBAGE, RING_BYTES);
    barrier();
    if (sender) {
        check(ucp_register_ifunc(ctx, "greet", &ih), "ucp_register_ifunc greet");
        check(ucp_ifunc_msg_create(ih, (void*)hello, sizeof(hello), &msg),
              "ucp_ifunc_msg_create greet");
        for (i = 0; i < 2; ++i) {
            check(ucp_ifunc_send_nbix(peer.ep, msg, peer.peer_heap + (uint64_t)i * 8192,
                                      peer.rkey),
                  "ucp_ifunc_send_nbix");
            flush();
        }
        ucp_ifunc_msg_free(msg);
        ucp_deregister_ifunc(ctx, ih);
    } else {
        /* never registered here: the first frame registers it */
        for (i = 0; i < 2; ++i) {
            poll_until_run(heap + i * 8192, 8192, &t);
        }
        /* the payload is not the sweep pattern: greet counted its bytes
         * as mismatches; only the global's check counts here */
        bad = (t.runs != 2) || (t.bad != 2 * sweep_mismatches(hello, sizeof(hello))) ||
              (strncmp(t.text, "greet 68 ", 9) != 0);
        printf("public_probe: greet registered on arrival, ran %" PRIu64 " times "
               "(code cache), writable global fresh each time: \"%s\" %s\n", t.runs,
               t.text, bad ? "WRONG" : "verified");
    }
    barrier();
    return bad;
}

/* One direction of the sweep: rank @a sender sends, the other receives */
static int sweep(int sender, int min_log, int max_log)
{
    volatile uint8_t *handback = heap + HEAP_SIZE - 1;
    uint64_t frames = 0, expect_bytes = 0;
    sweep_target_t t;
    ucp_ifunc_msg_t msg;
    ucp_ifunc_h ih = NULL;
    size_t payload, slot, n_slots, iters, i;
    int lg, bad = 0;

    memset(&t, 0, sizeof(t));
    if (sender) {
        check(ucp_register_ifunc(ctx, "tally", &ih), "ucp_register_ifunc tally");
    }
    for (lg = min_log; lg <= max_log; ++lg) {
        payload = (size_t)1 << lg;
        slot    = slot_size_of(payload);
        n_slots = RING_BYTES / slot;
        iters   = (n_slots * 2 < 16) ? 16 : n_slots * 2;
        if (!sender) {
            memset(heap, GARBAGE, RING_BYTES);     /* garbage, not zeros */
        }
        *handback = 0;
        if (sender) {
            check(ucp_ifunc_msg_create(ih, NULL, payload, &msg), "ucp_ifunc_msg_create");
        }
        barrier();
        for (i = 0; i < iters; ++i) {
            if (sender) {
                check(ucp_ifunc_send_nbix(peer.ep, msg, peer.peer_heap + (i % n_slots) * slot,
                                          peer.rkey),
                      "ucp_ifunc_send_nbix");
                if ((i + 1) % n_slots == 0) {      /* the ring is full: wait for it */
                    flush();
                    while (*handback != HANDBACK) {
                        ucp_worker_progress(worker);
                    }
                    *handback = 0;
                }
            } else {
                poll_until_run(heap + (i % n_slots) * slot, slot, &t);
                if ((i + 1) % n_slots == 0) {
                    static uint8_t give = HANDBACK;
                    ucs_status_t s = ucp_put_nbi(peer.ep, &give, 1,
                                                 peer.peer_heap + HEAP_SIZE - 1, peer.rkey);
                    if ((s != UCS_OK) && (s != UCS_INPROGRESS)) {
                        check(s, "ucp_put_nbi");
                    }
                    flush();
                }
            }
        }
        frames       += iters;
        expect_bytes += iters * payload;
        if (sender) {
            flush();
            ucp_ifunc_msg_free(msg);
        }
        barrier();
    }
    if (sender) {
        ucp_deregister_ifunc(ctx, ih);
    } else {
        bad = (t.runs != frames) || (t.bytes != expect_bytes) || (t.bad != 0);
        printf("public_probe: sweep %d B to %d B from rank %d, back to back: %" PRIu64
               " of %" PRIu64 " frames ran, %" PRIu64 " bytes, %" PRIu64
               " bytes off the pattern: %s\n", 1 << min_log, 1 << max_log, 1 - peer.rank,
               t.runs, frames, t.bytes, t.bad, bad ? "WRONG" : "every byte verified");
    }
    fflush(stdout);
    return bad;
}

int main(int argc, char **argv)
{
    ucp_params_t params         = {0};
    ucp_worker_params_t wparams = {0};
    ucp_mem_map_params_t mp     = {0};
    ucp_mem_attr_t attr;
    int both = 1, with_greet = 1, max_log = 20, opt, bad = 0;
    ucp_mem_h memh;

    while ((opt = getopt(argc, argv, "d:gm:")) != -1) {
        switch (opt) {
        case 'd': both = (strcmp(optarg, "both") == 0); break;
        case 'g': with_greet = 0; break;
        case 'm': max_log = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: public_probe [-d both|one] [-g] [-m MAX_LOG2]\n");
            return 2;
        }
    }
    check(tc_bootstrap_create_from_env(&peer.boot), "bootstrap");
    peer.rank = tc_bootstrap_rank(peer.boot);
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features   = UCP_FEATURE_RMA;
    check(ucp_init(&params, NULL, &ctx), "ucp_init");
    wparams.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = UCS_THREAD_MODE_SINGLE;
    check(ucp_worker_create(ctx, &wparams, &worker), "ucp_worker_create");
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    mp.length     = HEAP_SIZE;
    mp.flags      = UCP_MEM_MAP_ALLOCATE;
    check(ucp_mem_map(ctx, &mp, &memh), "ucp_mem_map");
    attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
    check(ucp_mem_query(memh, &attr), "ucp_mem_query");
    heap = attr.address;
    memset(heap, 17, HEAP_SIZE);         /* anything but a frame */

    public_api_connect(&peer, ctx, worker, memh, heap);
    flush();
    barrier();

    if (with_greet) {
        bad += greet(peer.rank == 1);
    }
    bad += sweep(peer.rank == 1, 0, max_log);
    if (both) {
        bad += sweep(peer.rank == 0, 0, max_log);
    }

    public_api_disconnect(&peer);
    ucp_mem_unmap(ctx, memh);
    ucp_worker_destroy(worker);
    ucp_cleanup(ctx);
    tc_bootstrap_destroy(peer.boot);
    return bad ? 1 : 0;
}
