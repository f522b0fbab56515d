/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * mailbox_scale: a mailbox of a job of N ranks in which two real processes
 * talk, for the poll and memory tests and the N-sweep benchmark. Started by
 * twochains-run with 2 ranks; they take ranks 0 and N-1 of a job of N
 * (--job N) whose other N-2 ranks are phantoms.
 *
 * The model: a phantom rank published what rank 0 published (the real
 * bootstrap carries the two real blobs; the phantom job's allgatherv hands
 * every rank all N, as a real job's would) and never sends. So the
 * mailbox's creation handles N ranks' descriptors, its per-rank tables are
 * N long, and everything it does for peers that talk is real: rings,
 * registrations, endpoints, control messages and frames over UCX. What a
 * real N-rank job adds is the bootstrap's own cost and other ranks' load,
 * not modelled here.
 *
 * Phases, every effect checked (exits 1 on any mismatch):
 *  1. create the mailbox (timed);
 *  2. ping-pong of Local server_side_sum frames between ranks 0 and N-1
 *     (one-way latency from round trips): every frame runs once, the
 *     accumulator is the exact sum of the payloads;
 *  3. rank 0 polls until rank N-1's ring sleeps, then times empty polls
 *     and counts the ring slots they read (must be 0);
 *  4. --cycles C: rank N-1 sends C bursts, each after rank 0 let its ring
 *     sleep, and rings the doorbell with each: every frame runs, exact
 *     sum, and at least one burst found the ring asleep and woke it.
 * Prints one JSON object per rank with --json, then "mailbox_scale rank R: OK".
 */
#include "ifunc_pair.h"

#include <twochains/ifunc.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    tc_bootstrap_h real;
    int            job_size;
} phantom_job_t;

/* Real rank 0 is job rank 0, real rank 1 is job rank N-1; the others are
 * phantoms that published what rank 0 did */
static ucs_status_t phantom_allgatherv(void *ctx, const void *buf, size_t len,
                                       void **all_p, size_t *lens)
{
    phantom_job_t *job = ctx;
    size_t real_lens[2], total, off = 0;
    uint8_t *real_all, *all;
    ucs_status_t status;
    int r, from;

    status = tc_bootstrap_allgatherv(job->real, buf, len, (void**)&real_all, real_lens);
    if (status != UCS_OK) {
        return status;
    }
    total = real_lens[1] + (size_t)(job->job_size - 1) * real_lens[0];
    all   = malloc(total ? total : 1);
    if (all == NULL) {
        free(real_all);
        return UCS_ERR_NO_MEMORY;
    }
    for (r = 0; r < job->job_size; ++r) {
        from    = (r == job->job_size - 1) ? 1 : 0;
        lens[r] = real_lens[from];
        memcpy(all + off, real_all + (from ? real_lens[0] : 0), lens[r]);
        off += lens[r];
    }
    free(real_all);
    *all_p = all;
    return UCS_OK;
}

static void phantom_destroy(void *ctx)
{
    free(ctx);
}

static const tc_bootstrap_ops_t phantom_ops = {
    .name       = "phantom",
    .allgatherv = phantom_allgatherv,
    .destroy    = phantom_destroy,
};

static int g_rank = -1;

static void fail(const char *what)
{
    printf("mailbox_scale rank %d: FAILED: %s\n", g_rank, what);
    fflush(stdout);
    exit(1);
}

static long rss_kb(void)
{
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");

    while ((f != NULL) && fgets(line, sizeof(line), f)) {
        if (sscanf(line, "VmRSS: %ld", &kb) == 1) {
            break;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    return kb;
}

/* Bytes this mailbox registered: rings granted here and our credit lines */
static uint64_t registered_bytes(tc_ifunc_mailbox_h mbox)
{
    uint64_t bytes = 0;
    int r;

    for (r = 0; r < mbox->size; ++r) {
        if (mbox->peers[r] == NULL) {
            continue;
        }
        if (mbox->peers[r]->rx != NULL) {
            bytes += mbox->peers[r]->rx->region_len;
        }
        if (mbox->peers[r]->credit_memh != NULL) {
            bytes += 64;
        }
    }
    return bytes;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

typedef struct {
    tc_ifunc_mailbox_h mbox;
    tc_ifunc_msg_h     msg;
    volatile int64_t   *calls;
    int64_t            *acc;
    int                peer;
} scale_t;

static void send_value(scale_t *s, int64_t v)
{
    double deadline = tc_ifunc_now() + 30;
    ucs_status_t status;

    if (tc_ifunc_msg_reinit(s->msg, &v, sizeof(v)) != UCS_OK) {
        fail("msg_reinit");
    }
    while ((status = tc_ifunc_send(s->mbox, s->peer, s->msg)) == UCS_ERR_NO_RESOURCE) {
        tc_progress(tc_ifunc_mailbox_engine(s->mbox));
        if (tc_ifunc_now() > deadline) {
            fail("no ring or credits within 30 s");
        }
    }
    if ((status != UCS_OK) && (status != UCS_INPROGRESS)) {
        fail("send");
    }
}

/* What the receiver knows about the talking peer's ring, when a frame is
 * missing: enough to tell a sleeping ring from a lost frame */
static void dump_ring(const scale_t *s, int64_t target)
{
    const tc_ifunc_peer_t *peer  = s->mbox->peers[s->peer];
    const tc_ifunc_rx_ring_t *rx = (peer != NULL) ? peer->rx : NULL;
    tc_ifunc_stats_t st;

    tc_ifunc_mailbox_stats(s->mbox, &st);
    printf("mailbox_scale rank %d: %" PRId64 " of %" PRId64 " calls; ring of rank %d: "
           "state %d, consumed %" PRIu64 ", published %" PRIu64 ", sleep asks %" PRIu64
           " (at %" PRIu64 "), idle %u, head word %#" PRIx64 "; %u active; sleeps %" PRIu64
           ", wakes %" PRIu64 ", control rejects %" PRIu64 ", sent to it %" PRIu64
           ", asleep %d\n", g_rank, (int64_t)*s->calls, target, s->peer,
           (rx != NULL) ? (int)rx->state : -1, (rx != NULL) ? rx->ring.expect : 0,
           (rx != NULL) ? rx->ring.published : 0, (rx != NULL) ? rx->sleep_asks : 0,
           (rx != NULL) ? rx->sleep_seq : 0, (rx != NULL) ? rx->idle : 0,
           (rx != NULL) ? *(const volatile uint64_t*)rx->ring.head : 0, s->mbox->num_active,
           st.ring_sleeps, st.ring_wakes, st.control_rejects,
           (peer != NULL) ? peer->sent : 0, (peer != NULL) ? peer->asleep : -1);
}

static void wait_calls(scale_t *s, int64_t target)
{
    double deadline = tc_ifunc_now() + 30;
    unsigned spins  = 0;

    while (*s->calls < target) {
        tc_progress(tc_ifunc_mailbox_engine(s->mbox));
        if ((++spins % 1024 == 0) && (tc_ifunc_now() > deadline)) {
            dump_ring(s, target);
            fail("a frame never ran");
        }
    }
}

int main(int argc, char **argv)
{
    int job = 2, iters = 2000, warmup = 200, polls = 200000, cycles = 0, json = 0;
    tc_ifunc_stats_t st0, st1;
    tc_ifunc_pkg_h pkg;
    tc_bootstrap_h real, boot;
    tc_ifunc_ucp_t ucp;
    phantom_job_t *pj;
    uint32_t sum_id;
    scale_t s;
    double t0, create_ms, *lat, empty_ns, sleep_wait_s;
    int64_t calls0, acc0, expect_sum = 0, i, c, k;
    int real_rank, jrank, a, no_idle = 0;

    for (a = 1; a < argc; ++a) {
        if ((strcmp(argv[a], "--job") == 0) && (a + 1 < argc)) {
            job = atoi(argv[++a]);
        } else if ((strcmp(argv[a], "--iters") == 0) && (a + 1 < argc)) {
            iters = atoi(argv[++a]);
        } else if ((strcmp(argv[a], "--polls") == 0) && (a + 1 < argc)) {
            polls = atoi(argv[++a]);
        } else if ((strcmp(argv[a], "--cycles") == 0) && (a + 1 < argc)) {
            cycles = atoi(argv[++a]);
        } else if (strcmp(argv[a], "--no-idle") == 0) {
            no_idle = 1;      /* phases 1 and 2 only (rings that never sleep) */
        } else if (strcmp(argv[a], "--json") == 0) {
            json = 1;
        } else {
            fprintf(stderr, "usage: mailbox_scale [--job N] [--iters I] [--polls P] "
                    "[--cycles C] [--no-idle] [--json]\n");
            return 2;
        }
    }
    if ((job < 2) || (iters < 1)) {
        return 2;
    }
    if (ifunc_pair_start(&real, &real_rank, &ucp, &pkg) != 0) {
        return 2;
    }
    pj = calloc(1, sizeof(*pj));
    pj->real     = real;
    pj->job_size = job;
    jrank        = (real_rank == 0) ? 0 : job - 1;
    g_rank       = jrank;
    if (tc_bootstrap_create(&phantom_ops, pj, jrank, job, &boot) != UCS_OK) {
        fail("phantom bootstrap");
    }
    if (tc_ifunc_pkg_element(pkg, "server_side_sum", &sum_id) != UCS_OK) {
        fail("no server_side_sum");
    }
    s.calls = tc_ifunc_pkg_symbol(pkg, "tcbench_sum_calls");
    s.acc   = tc_ifunc_pkg_symbol(pkg, "tcbench_accumulator");
    s.peer  = (jrank == 0) ? job - 1 : 0;
    if ((s.calls == NULL) || (s.acc == NULL)) {
        fail("tcbench state");
    }

    /* 1. creation */
    t0 = tc_ifunc_now();
    if (tc_ifunc_mailbox_create(ucp.context, ucp.engine, boot, NULL, &s.mbox) != UCS_OK) {
        fail("mailbox_create");
    }
    create_ms = (tc_ifunc_now() - t0) * 1e3;
    i = 0;
    if (tc_ifunc_msg_create(s.mbox, pkg, sum_id, TC_IFUNC_MODE_LOCAL, &i, sizeof(i),
                            &s.msg) != UCS_OK) {
        fail("msg_create");
    }

    /* 2. ping-pong: rank 0 sends i, rank N-1 answers with i */
    lat    = calloc(iters, sizeof(*lat));
    calls0 = *s.calls;
    acc0   = *s.acc;
    for (i = 0; i < warmup + iters; ++i) {
        t0 = tc_ifunc_now();
        if (jrank == 0) {
            send_value(&s, i);
            wait_calls(&s, calls0 + i + 1);
        } else {
            wait_calls(&s, calls0 + i + 1);
            send_value(&s, i);
        }
        if (i >= warmup) {
            lat[i - warmup] = (tc_ifunc_now() - t0) * 1e6 / 2;
        }
        expect_sum += i;
    }
    wait_calls(&s, calls0 + warmup + iters);
    if ((*s.acc - acc0 != expect_sum) || (*s.calls - calls0 != warmup + iters)) {
        fail("ping-pong sum");
    }
    tc_ifunc_msg_wait(s.msg);
    tc_ifunc_mailbox_barrier(s.mbox);

    /* 3. the empty poll, once the talking peer's ring sleeps */
    empty_ns = sleep_wait_s = 0;
    tc_ifunc_mailbox_stats(s.mbox, &st1);
    if (no_idle) {
        goto report;
    }
    /* (it may have slept already, in the barrier) */
    t0 = tc_ifunc_now();
    while ((s.mbox->peers[s.peer]->rx->state != TC_IFUNC_RX_ASLEEP) &&
           (tc_ifunc_now() < t0 + 10)) {
        tc_progress(tc_ifunc_mailbox_engine(s.mbox));
    }
    sleep_wait_s = tc_ifunc_now() - t0;
    tc_ifunc_mailbox_stats(s.mbox, &st1);
    if (s.mbox->peers[s.peer]->rx->state != TC_IFUNC_RX_ASLEEP) {
        const tc_ifunc_rx_ring_t *rx = s.mbox->peers[s.peer]->rx;
        printf("mailbox_scale rank %d: ring of rank %d: state %d, consumed %" PRIu64
               ", asked at %" PRIu64 ", %u idle reads; control rejects %" PRIu64 "\n",
               jrank, s.peer, (rx != NULL) ? (int)rx->state : -1,
               (rx != NULL) ? rx->ring.expect : 0, (rx != NULL) ? rx->sleep_seq : 0,
               (rx != NULL) ? rx->idle : 0, st1.control_rejects);
        fail("the idle ring never slept");
    }
    tc_ifunc_mailbox_stats(s.mbox, &st0);
    t0 = tc_ifunc_now();
    for (k = 0; k < polls; ++k) {
        if (tc_ifunc_poll(s.mbox, 0) != 0) {
            fail("an empty poll ran a frame");
        }
    }
    empty_ns = (tc_ifunc_now() - t0) * 1e9 / polls;
    tc_ifunc_mailbox_stats(s.mbox, &st1);
    if (st1.ring_reads != st0.ring_reads) {
        fail("an empty poll read a ring that had no work");
    }
    if ((st1.rings_granted != 1) || (st1.rings_requested != 1)) {
        fail("rings were made for peers that never talked");
    }
    /* before the barrier: its progress may run the first burst already */
    calls0 = *s.calls;
    acc0   = *s.acc;
    tc_ifunc_mailbox_barrier(s.mbox);

    /* 4. bursts into a sleeping ring: the doorbell wakes it */
    expect_sum = 0;
    for (c = 0; c < cycles; ++c) {
        for (k = 0; k < 3; ++k) {
            if (jrank != 0) {
                send_value(&s, 1000 * c + k);
            }
            expect_sum += 1000 * c + k;
        }
        if (jrank == 0) {
            wait_calls(&s, calls0 + 3 * (c + 1));
        } else {
            /* until rank 0 let our ring sleep again (we agreed) */
            t0 = tc_ifunc_now();
            while (!s.mbox->peers[0]->asleep && (tc_ifunc_now() < t0 + 20)) {
                tc_progress(tc_ifunc_mailbox_engine(s.mbox));
            }
            if (!s.mbox->peers[0]->asleep) {
                fail("the receiver never let the ring sleep");
            }
            /* a ring that sleeps owes its sender no credit: a sender
             * stalled on a full ring would otherwise wait forever */
            t0 = tc_ifunc_now();
            while ((*s.mbox->peers[0]->credit != s.mbox->peers[0]->sent) &&
                   (tc_ifunc_now() < t0 + 20)) {
                tc_progress(tc_ifunc_mailbox_engine(s.mbox));
            }
            if (*s.mbox->peers[0]->credit != s.mbox->peers[0]->sent) {
                fail("the ring sleeps with credits it never returned");
            }
            /* give our agreement time to arrive, so that the next burst
             * mostly finds the ring asleep (if it does not, the receiver
             * still reads it: the frames run either way) */
            t0 = tc_ifunc_now();
            while (tc_ifunc_now() < t0 + 0.005) {
                tc_progress(tc_ifunc_mailbox_engine(s.mbox));
            }
        }
    }
    if ((jrank == 0) && ((*s.calls - calls0 != 3 * cycles) || (*s.acc - acc0 != expect_sum))) {
        fail("burst sum");
    }
    tc_ifunc_mailbox_stats(s.mbox, &st1);
    if ((jrank == 0) && (cycles > 0) && (st1.ring_wakes == 0)) {
        fail("no burst found the ring asleep and woke it");
    }
    if ((jrank != 0) && (st1.doorbells < (uint64_t)cycles)) {
        fail("a burst after the ring was let sleep rang no doorbell");
    }

report:
    qsort(lat, iters, sizeof(*lat), cmp_double);
    if (json) {
        double avg = 0;
        for (i = 0; i < iters; ++i) {
            avg += lat[i] / iters;
        }
        printf("{\"shape\":\"mailbox_scale\",\"job\":%d,\"rank\":%d,\"transport\":\"%s\","
               "\"lat_p50_us\":%.3f,\"lat_avg_us\":%.3f,\"empty_poll_ns\":%.2f,"
               "\"empty_poll_ring_reads\":0,\"registered_bytes\":%" PRIu64 ","
               "\"rss_kb\":%ld,\"create_ms\":%.3f,\"rings\":%" PRIu64 ","
               "\"sleep_wait_ms\":%.2f,\"wakes\":%" PRIu64 ",\"doorbells\":%" PRIu64 "}\n",
               job, jrank, tc_ifunc_mailbox_transport(s.mbox, s.peer), lat[iters / 2], avg,
               empty_ns, registered_bytes(s.mbox), rss_kb(), create_ms, st1.rings_granted,
               sleep_wait_s * 1e3, st1.ring_wakes, st1.doorbells);
    }
    tc_ifunc_msg_free(s.msg);
    tc_ifunc_mailbox_destroy(s.mbox);
    tc_bootstrap_destroy(boot);
    tc_bootstrap_destroy(real);
    tc_ifunc_pkg_unload(pkg);
    tc_ifunc_ucp_cleanup(&ucp);
    free(lat);
    printf("mailbox_scale rank %d: OK\n", jrank);
    return 0;
}
