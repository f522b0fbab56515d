/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * ifunc_tear: compact frames torn on purpose, for the soundness test of
 * the single-put check word (frame.h). Started by twochains-run with 2
 * ranks. Rank 1 writes compact server_side_sum frames into rank 0's ring
 * with ucp_put_nbx in pieces, each piece flushed (it has landed) and
 * followed by a pause, in these orders, frame by frame:
 *   whole      one put (the control)
 *   seq_first  the word holding the expected seq, then the check word, then
 *              the rest: the receiver sees "this lap" long before the frame
 *   reverse    8-byte words from the last to the first
 *   halves     the first half, a long pause, the second half
 *   bytes      every byte alone, in a shuffled order
 * and after each one the whole frame once more, later (a put's duplicated
 * late store). Then a frame whose last piece never comes, and one more good
 * frame.
 *
 * Rank 0 polls all the while. It must run every frame exactly once, never
 * before the last piece that stores a byte the slot did not hold was issued (CLOCK_MONOTONIC is one clock for both
 * processes on this host), with the accumulator after each frame exactly
 * the sum of the payloads sent so far; reject the incomplete frame as
 * truncated, once; and run the frame after it. Prints
 * "ifunc_tear rank R: OK" and exits 0 only then.
 */
#include "ifunc_pair.h"

#include <twochains/ifunc.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEPTH      8
#define SLOT       1024
#define VALUES     5                  /* int64 payload: an 80-byte frame */
#define PER_ORDER  8
#define ORDERS     5
#define FRAMES     (ORDERS * PER_ORDER)
#define PAUSE_US   1000

static const char *order_names[ORDERS] = {"whole", "seq_first", "reverse", "halves",
                                          "bytes"};

static int g_rank;

static void fail(const char *what)
{
    printf("ifunc_tear rank %d: FAILED: %s\n", g_rank, what);
    fflush(stdout);
    exit(1);
}

static int64_t value(uint32_t seq, unsigned j)
{
    return (int64_t)seq * 1000 + j + 1;
}

static int64_t frame_sum(uint32_t seq)
{
    int64_t sum = 0;
    unsigned j;

    for (j = 0; j < VALUES; ++j) {
        sum += value(seq, j);
    }
    return sum;
}

/* ---- the tearing sender ---- */

typedef struct {
    tc_ifunc_mailbox_h mbox;
    tc_ifunc_pkg_h     pkg;
    uint32_t           sum_id;
    uint8_t            frame[SLOT] __attribute__((aligned(64)));
    uint8_t            slots[DEPTH][SLOT];       /* what each remote slot holds */
    double             before_last[FRAMES + 2];  /* the last piece that changed it */
} sender_t;

static uint32_t build(sender_t *s, uint32_t seq)
{
    const tc_ifunc_element_t *e = tc_ifunc_pkg_elem(s->pkg, s->sum_id);
    tc_frame_desc_t desc;
    int64_t *payload = (int64_t*)(s->frame + TC_FRAME_COMPACT_LOCAL_HDR);
    unsigned j;

    memset(s->frame, 0, sizeof(s->frame));
    tc_frame_prepare(NULL, s->pkg, e, 0, &desc);
    for (j = 0; j < VALUES; ++j) {
        payload[j] = value(seq, j);
    }
    return tc_frame_stamp_compact(s->frame, &desc, TC_FRAME_LOCAL, seq, 1,
                                  VALUES * sizeof(int64_t));
}

/* Bytes [off, off + len) of the frame into slot seq % DEPTH, landed */
static void piece(sender_t *s, uint32_t seq, uint32_t off, uint32_t len)
{
    tc_ifunc_peer_t *p        = ifunc_pair_ring(s->mbox, 0);
    uint64_t remote           = p->ring_addr + (uint64_t)(seq % DEPTH) * p->slot_size;
    ucp_request_param_t param = {0};
    uint8_t *held             = s->slots[seq % DEPTH];
    ucs_status_ptr_t req;

    /* a piece whose bytes the slot already holds changes nothing: the frame
     * is complete at the last piece that stores a new byte */
    if (memcmp(held + off, s->frame + off, len) != 0) {
        s->before_last[seq] = tc_ifunc_now();
        memcpy(held + off, s->frame + off, len);
    }
    ifunc_pair_sending(p, (uint64_t)seq + 1);
    req = ucp_put_nbx(p->ep, s->frame + off, len, remote + off, p->rkey, &param);
    if (tc_ifunc_request_wait(tc_ifunc_mailbox_engine(s->mbox), req, 10.0) != UCS_OK) {
        fail("put");
    }
    if (tc_ifunc_mailbox_flush(s->mbox, 10.0) != UCS_OK) {
        fail("flush");
    }
    ifunc_pair_stored(s->mbox, p);
}

static void pause_between(sender_t *s, unsigned us)
{
    double until = tc_ifunc_now() + us * 1e-6;

    while (tc_ifunc_now() < until) {
        tc_progress(tc_ifunc_mailbox_engine(s->mbox));
        usleep(100);
    }
}

static void wait_credits(sender_t *s, uint32_t seq)
{
    volatile uint64_t *credit = ifunc_pair_ring(s->mbox, 0)->credit;
    double deadline           = tc_ifunc_now() + 20;

    while ((seq - *credit >= DEPTH) && (tc_ifunc_now() < deadline)) {
        tc_progress(tc_ifunc_mailbox_engine(s->mbox));
    }
    if (seq - *credit >= DEPTH) {
        fail("no credits");
    }
}

/* The pieces of one frame in @a order; the last one is timed */
static void send_torn(sender_t *s, uint32_t seq, unsigned order)
{
    uint32_t size = build(s, seq), words = size / 8, w, i, k, t;
    uint32_t perm[SLOT];

    switch (order) {
    case 0:
        piece(s, seq, 0, size);
        break;
    case 1:
        piece(s, seq, 8, 8);          /* format and the expected seq */
        pause_between(s, PAUSE_US);
        piece(s, seq, 0, 8);          /* the check word */
        for (w = 2; w < words; ++w) {
            pause_between(s, PAUSE_US);
            piece(s, seq, w * 8, 8);
        }
        break;
    case 2:
        for (w = words; w-- > 0;) {
            piece(s, seq, w * 8, 8);
            pause_between(s, PAUSE_US);
        }
        break;
    case 3:
        piece(s, seq, 0, size / 2);
        pause_between(s, 10 * PAUSE_US);
        piece(s, seq, size / 2, size - size / 2);
        break;
    default:
        for (i = 0; i < size; ++i) {
            perm[i] = i;
        }
        for (i = size - 1; i > 0; --i) {   /* Fisher-Yates, fixed seed per frame */
            k       = (uint32_t)(((uint64_t)rand() * (i + 1)) / ((uint64_t)RAND_MAX + 1));
            t       = perm[i];
            perm[i] = perm[k];
            perm[k] = t;
        }
        for (i = 0; i < size; ++i) {
            piece(s, seq, perm[i], 1);
            if (i % 4 == 3) {
                pause_between(s, PAUSE_US / 5);
            }
        }
        break;
    }
    /* a duplicated late store of every byte, after the frame may have run:
     * it stores nothing new, so before_last stays */
    pause_between(s, 2 * PAUSE_US);
    piece(s, seq, 0, size);
}

static void run_sender(sender_t *s)
{
    uint32_t seq, size;

    if (tc_ifunc_pkg_element(s->pkg, "server_side_sum", &s->sum_id) != UCS_OK) {
        fail("no server_side_sum");
    }
    srand(12345);
    for (seq = 0; seq < FRAMES; ++seq) {
        wait_credits(s, seq);
        send_torn(s, seq, seq / PER_ORDER);
    }
    /* all but its last word: rejected as truncated, the next frame runs */
    wait_credits(s, FRAMES + 1);
    size = build(s, FRAMES);
    piece(s, FRAMES, 0, size - 8);
    size = build(s, FRAMES + 1);
    piece(s, FRAMES + 1, 0, size);
}

/* ---- the receiver ---- */

static void run_receiver(tc_ifunc_mailbox_h mbox, tc_ifunc_pkg_h pkg,
                         double *ran_at, int64_t *acc_after)
{
    int64_t *acc    = tc_ifunc_pkg_symbol(pkg, "tcbench_accumulator");
    int64_t acc0    = *acc;
    double deadline = tc_ifunc_now() + 60;
    uint64_t handled = 0, ran;
    tc_ifunc_stats_t st;

    while ((handled < FRAMES + 2) && (tc_ifunc_now() < deadline)) {
        tc_progress(tc_ifunc_mailbox_engine(mbox));
        tc_ifunc_poll(mbox, 1);
        tc_ifunc_mailbox_stats(mbox, &st);
        ran = st.frames[0] + st.frames[1] + st.frames[2];
        if (ran + st.rejects_total > handled) {
            ran_at[handled]    = tc_ifunc_now();
            acc_after[handled] = *acc - acc0;
            ++handled;
        }
    }
    tc_ifunc_mailbox_stats(mbox, &st);
    printf("ifunc_tear rank 0: ran %" PRIu64 ", rejected %" PRIu64 " (truncated %" PRIu64
           "), trailer wait %.3f s\n", st.frames[0] + st.frames[1] + st.frames[2],
           st.rejects_total, st.rejects[TC_IFUNC_REJECT_TRUNCATED], st.pending_wait_s);
    if (handled != FRAMES + 2) {
        fail("frames lost");
    }
    if ((st.frames[0] != FRAMES + 1) || (st.rejects_total != 1) ||
        (st.rejects[TC_IFUNC_REJECT_TRUNCATED] != 1)) {
        fail("not every whole frame ran once and the incomplete one was rejected");
    }
}

static void check(const double *before_last, const double *ran_at,
                  const int64_t *acc_after)
{
    int64_t sum = 0;
    uint32_t seq;

    for (seq = 0; seq < FRAMES + 2; ++seq) {
        if (seq != FRAMES) {
            sum += frame_sum(seq);
        }
        if (ran_at[seq] < before_last[seq]) {
            printf("ifunc_tear rank 0: frame %u (%s) ran %.6f s before its last piece\n",
                   seq, (seq < FRAMES) ? order_names[seq / PER_ORDER] : "tail",
                   before_last[seq] - ran_at[seq]);
            fail("a torn frame ran");
        }
        if (acc_after[seq] != sum) {
            printf("ifunc_tear rank 0: after frame %u the sum is %" PRId64 ", sent %" PRId64
                   "\n", seq, acc_after[seq], sum);
            fail("wrong bytes ran");
        }
    }
}

int main(void)
{
    tc_ifunc_mailbox_params_t params = {0};
    static double all_before[2][FRAMES + 2];
    static double ran_at[FRAMES + 2];
    static int64_t acc_after[FRAMES + 2];
    static sender_t sender;
    tc_ifunc_mailbox_h mbox;
    tc_bootstrap_h boot;
    tc_ifunc_pkg_h pkg;
    tc_ifunc_ucp_t ucp;

    if (ifunc_pair_start(&boot, &g_rank, &ucp, &pkg) != 0) {
        return 2;
    }

    /* the default signal (check) and trailer timeout: what users run */
    params.field_mask = TC_IFUNC_MAILBOX_PARAM_FIELD_SLOT_SIZE |
                        TC_IFUNC_MAILBOX_PARAM_FIELD_RING_DEPTH |
                        TC_IFUNC_MAILBOX_PARAM_FIELD_FLAGS;
    params.slot_size  = SLOT;
    params.ring_depth = DEPTH;
    params.flags      = TC_IFUNC_MAILBOX_FLAG_NO_POLLER;
    if (tc_ifunc_mailbox_create(ucp.context, ucp.engine, boot, &params, &mbox) != UCS_OK) {
        return 2;
    }
    if (tc_ifunc_mailbox_signal(mbox) != TC_IFUNC_SIGNAL_CHECK) {
        fail("the default signal is not check");
    }
    tc_ifunc_mailbox_barrier(mbox);

    if (g_rank == 1) {
        sender.mbox = mbox;
        sender.pkg  = pkg;
        run_sender(&sender);
    } else {
        run_receiver(mbox, pkg, ran_at, acc_after);
    }
    if (tc_bootstrap_allgather(boot, sender.before_last, sizeof(sender.before_last),
                               all_before) != UCS_OK) {
        fail("allgather");
    }
    if (g_rank == 0) {
        check(all_before[1], ran_at, acc_after);
    }
    tc_ifunc_mailbox_barrier(mbox);
    tc_ifunc_mailbox_destroy(mbox);
    tc_ifunc_pkg_unload(pkg);
    tc_ifunc_ucp_cleanup(&ucp);
    tc_bootstrap_destroy(boot);
    printf("ifunc_tear rank %d: OK\n", g_rank);
    return 0;
}
