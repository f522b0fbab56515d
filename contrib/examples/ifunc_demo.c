/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * ifunc_demo: Two-Chains between two processes, in C, with the tcbench
 * package. For each mode -- Local (element id), Injected (code in every
 * frame), Cached (code once, then its hash), Portable (LLVM bitcode in every
 * frame, compiled by the receiver once), Portable-Cached (the bitcode once,
 * then its hash); the Portable modes need a package built with
 * twochains-pkg --portable:
 *
 *  1. rank 1 ships indirect_put and server_side_sum frames to rank 0, which
 *     checks the effects exactly (every array element, the sum);
 *  2. a ping-pong of server_side_sum frames measures the one-way latency
 *     from "sender stamps the frame" to "the jam ran on the peer" (round
 *     trip / 2), with the mailbox's full receive path: header validation,
 *     package lookup, (for Injected) hash and byte check against the
 *     installed element and the RX code cache, then the call.
 *
 * Build (from a build tree; see contrib/quickstart.sh):
 *   cc ifunc_demo.c -I<src>/ucx_ext/api -I<build>/ucx_ext/api \
 *      -I<build>/test/twochains-pkgs/include -L<build>/ucx_ext/.libs -ltwochains \
 *      $(pkg-config --cflags --libs ucx)
 * Run:
 *   UCX_TLS=posix,self twochains-run -n 2 -- ./ifunc_demo -P <build>/test/twochains-pkgs
 */
#include <twochains/ifunc.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* tcbench's payload layout (test/packages/tcbench/tcbench.h) */
typedef struct {
    uint64_t index;
    int64_t  value;
} put_pair_t;

#define ARRAY_LEN   1024
#define CHECK_N     100

typedef struct {
    tc_ifunc_mailbox_h mbox;
    tc_ifunc_pkg_h     pkg;
    int                rank;
    uint32_t           put_id, sum_id;
    volatile int64_t   *array;
    volatile int64_t   *acc;
    volatile uint64_t  *sum_calls;
} demo_t;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static void die(const char *what, ucs_status_t status)
{
    fprintf(stderr, "ifunc_demo: %s: %s\n", what, ucs_status_string(status));
    exit(1);
}

static void send_to(demo_t *d, int dest, tc_ifunc_msg_h msg)
{
    ucs_status_t status;

    while ((status = tc_ifunc_send(d->mbox, dest, msg)) == UCS_ERR_NO_RESOURCE) {
        tc_progress(tc_ifunc_mailbox_engine(d->mbox));   /* wait for credits */
    }
    if ((status != UCS_OK) && (status != UCS_INPROGRESS)) {
        die("send", status);
    }
}

typedef struct {
    volatile uint64_t *counter;
    uint64_t          target;
} until_t;

static int reached(void *arg)
{
    until_t *u = arg;
    return *u->counter >= u->target;
}

static void wait_calls(demo_t *d, uint64_t target)
{
    until_t u = {d->sum_calls, target};

    if (tc_progress_until(tc_ifunc_mailbox_engine(d->mbox), reached, &u, 30.0) != UCS_OK) {
        fprintf(stderr, "ifunc_demo: rank %d: timed out waiting for frames\n", d->rank);
        exit(1);
    }
}

/* 1. indirect_put and server_side_sum from rank 1, checked at rank 0 */
static int check_mode(demo_t *d, tc_ifunc_mode_t mode)
{
    put_pair_t pairs[4];
    int64_t values[8], expect_sum = 0, expect[ARRAY_LEN];
    uint64_t calls0;
    int64_t acc0;
    tc_ifunc_msg_h put_msg, sum_msg;
    ucs_status_t status;
    int i, j, bad = 0;

    memset(expect, 0, sizeof(expect));
    for (i = 0; i < CHECK_N; ++i) {
        for (j = 0; j < 4; ++j) {
            pairs[j].index = (uint64_t)(i * 4 + j) % ARRAY_LEN;
            pairs[j].value = (int64_t)mode * 1000000 + i * 10 + j;
            expect[pairs[j].index] = pairs[j].value;
        }
        for (j = 0; j < 8; ++j) {
            expect_sum += (int64_t)mode * 7 + i - j;
        }
    }

    /* The baseline is taken before a barrier that the sender must pass
     * before its first frame: the barrier runs the poller, so a sample
     * taken after it may already include frames of this mode. */
    calls0 = *d->sum_calls;
    acc0   = *d->acc;
    tc_ifunc_mailbox_barrier(d->mbox);

    if (d->rank == 1) {
        memset(pairs, 0, sizeof(pairs));
        memset(values, 0, sizeof(values));
        status = tc_ifunc_msg_create(d->mbox, d->pkg, d->put_id, mode, pairs,
                                     sizeof(pairs), &put_msg);
        if (status == UCS_OK) {
            status = tc_ifunc_msg_create(d->mbox, d->pkg, d->sum_id, mode, values,
                                         sizeof(values), &sum_msg);
        }
        if (status != UCS_OK) {
            die("tc_ifunc_msg_create", status);
        }
        for (i = 0; i < CHECK_N; ++i) {
            for (j = 0; j < 4; ++j) {
                pairs[j].index = (uint64_t)(i * 4 + j) % ARRAY_LEN;
                pairs[j].value = (int64_t)mode * 1000000 + i * 10 + j;
            }
            tc_ifunc_msg_reinit(put_msg, pairs, sizeof(pairs));  /* payload_init */
            send_to(d, 0, put_msg);
            for (j = 0; j < 8; ++j) {
                values[j] = (int64_t)mode * 7 + i - j;
            }
            tc_ifunc_msg_reinit(sum_msg, values, sizeof(values));
            send_to(d, 0, sum_msg);
        }
        tc_ifunc_msg_free(put_msg);
        tc_ifunc_msg_free(sum_msg);
    } else {
        wait_calls(d, calls0 + CHECK_N);
        for (i = 0; i < ARRAY_LEN; ++i) {
            if ((i < CHECK_N * 4) && (d->array[i] != expect[i])) {
                ++bad;
            }
        }
        printf("ifunc_demo: %-8s indirect_put: %d frames, %s; server_side_sum: %d frames, "
               "sum %" PRId64 " %s\n", tc_ifunc_mode_names[mode], CHECK_N,
               bad ? "ARRAY WRONG" : "array verified", CHECK_N, *d->acc - acc0,
               (*d->acc - acc0 == expect_sum) ? "verified" : "WRONG");
        bad += (*d->acc - acc0 != expect_sum);
    }
    tc_ifunc_mailbox_barrier(d->mbox);
    return bad;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

/* 2. ping-pong of server_side_sum frames: one-way latency */
static void latency(demo_t *d, tc_ifunc_mode_t mode, int iters, int warmup)
{
    int peer = 1 - d->rank;
    int64_t one = 1;
    double *rtt = calloc((size_t)iters, sizeof(double)), t0, sum = 0;
    uint64_t calls = *d->sum_calls;
    tc_ifunc_msg_h msg;
    ucs_status_t status;
    int i;

    status = tc_ifunc_msg_create(d->mbox, d->pkg, d->sum_id, mode, &one, sizeof(one), &msg);
    if ((status != UCS_OK) || (rtt == NULL)) {
        die("tc_ifunc_msg_create", status);
    }
    tc_ifunc_mailbox_barrier(d->mbox);
    for (i = -warmup; i < iters; ++i) {
        t0 = now_us();
        if (d->rank == 0) {
            send_to(d, peer, msg);
            wait_calls(d, ++calls);
        } else {
            wait_calls(d, ++calls);
            send_to(d, peer, msg);
        }
        if (i >= 0) {
            rtt[i] = now_us() - t0;
        }
    }
    if (d->rank == 0) {
        for (i = 0; i < iters; ++i) {
            sum += rtt[i];
        }
        qsort(rtt, (size_t)iters, sizeof(double), cmp_double);
        printf("ifunc_demo: %-8s latency over %s: avg %.2f us, p50 %.2f us, p99 %.2f us "
               "(one way = round trip / 2, %d round trips, %zu-byte frames)\n",
               tc_ifunc_mode_names[mode], tc_ifunc_mailbox_transport(d->mbox, peer),
               sum / iters / 2, rtt[iters / 2] / 2, rtt[(int)(iters * 0.99)] / 2, iters,
               tc_ifunc_msg_frame_size(msg));
        fflush(stdout);
    }
    tc_ifunc_msg_free(msg);
    free(rtt);
    tc_ifunc_mailbox_barrier(d->mbox);
}

int main(int argc, char **argv)
{
    const char *prefix = "build/test/twochains-pkgs";
    int iters = 2000, opt, bad = 0, mode;
    tc_ifunc_stats_t st;
    tc_bootstrap_h boot;
    tc_ifunc_ucp_t ucp;
    ucs_status_t status;
    demo_t d;

    while ((opt = getopt(argc, argv, "P:n:")) != -1) {
        switch (opt) {
        case 'P': prefix = optarg; break;
        case 'n': iters = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: ifunc_demo [-P PACKAGE_PREFIX] [-n ITERATIONS]\n");
            return 2;
        }
    }
    memset(&d, 0, sizeof(d));
    if ((status = tc_bootstrap_create_from_env(&boot)) != UCS_OK) {
        die("bootstrap", status);
    }
    d.rank = tc_bootstrap_rank(boot);
    if (tc_bootstrap_size(boot) != 2) {
        fprintf(stderr, "ifunc_demo: run with 2 processes (twochains-run -n 2)\n");
        return 2;
    }
    if ((status = tc_ifunc_ucp_init(&ucp)) != UCS_OK) {
        die("ucp", status);
    }
    if ((status = tc_ifunc_pkg_load(prefix, "tcbench", &d.pkg)) != UCS_OK) {
        die("tc_ifunc_pkg_load (is -P the package prefix?)", status);
    }
    tc_ifunc_pkg_element(d.pkg, "indirect_put", &d.put_id);
    tc_ifunc_pkg_element(d.pkg, "server_side_sum", &d.sum_id);
    d.array     = tc_ifunc_pkg_symbol(d.pkg, "tcbench_array");
    d.acc       = tc_ifunc_pkg_symbol(d.pkg, "tcbench_accumulator");
    d.sum_calls = tc_ifunc_pkg_symbol(d.pkg, "tcbench_sum_calls");

    status = tc_ifunc_mailbox_create(ucp.context, ucp.engine, boot, NULL, &d.mbox);
    if (status != UCS_OK) {
        die("tc_ifunc_mailbox_create", status);
    }
    if (d.rank == 0) {
        printf("ifunc_demo: 2 processes over %s, write lane %s, security %s, placement %s, "
               "signal %s\n", tc_ifunc_mailbox_transport(d.mbox, 1),
               tc_ifunc_mailbox_write_lane(d.mbox, 1),
               tc_ifunc_security_names[tc_ifunc_mailbox_security(d.mbox)],
               tc_ifunc_placement_names[tc_ifunc_mailbox_placement(d.mbox)],
               tc_ifunc_signal_names[tc_ifunc_mailbox_signal(d.mbox)]);
    }
    tc_ifunc_mailbox_barrier(d.mbox);

    for (mode = 0; mode < TC_IFUNC_MODE_LAST; ++mode) {
        bad += check_mode(&d, (tc_ifunc_mode_t)mode);
    }
    for (mode = 0; mode < TC_IFUNC_MODE_LAST; ++mode) {
        latency(&d, (tc_ifunc_mode_t)mode, iters, iters / 10);
    }

    tc_ifunc_mailbox_stats(d.mbox, &st);
    if ((d.rank == 0) && (st.rejects_total != 0)) {
        printf("ifunc_demo: %" PRIu64 " frames rejected\n", st.rejects_total);
        ++bad;
    }
    tc_ifunc_mailbox_destroy(d.mbox);
    tc_ifunc_pkg_unload(d.pkg);
    tc_ifunc_ucp_cleanup(&ucp);
    tc_bootstrap_destroy(boot);
    if (d.rank == 0) {
        printf("ifunc_demo: %s\n", bad ? "FAILED" : "all effects verified");
    }
    return bad ? 1 : 0;
}
