/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * ifunc_tear: compact frames torn on purpose, for the soundness test of
 * the single-put check word (frame.h). Started by twochains-run with 2
 * ranks. Rank 1 writes compact server_side_sum frames into rank 0's ring
 * with ucp_put_nbx in pieces, each piece flushed (it has landed), with
 * pauses between them (at most PAUSES_MAX a frame), in these orders, frame
 * by frame:
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
 * With the argument "buffer" the frames are the public API's checked frames
 * instead (ucp_ifunc_msg_create, stamped as ucp_ifunc_send_nbix stamps them,
 * Injected code and all), each into its own caller-managed buffer of rank
 * 0, which ucp_poll_ifunc polls -- every buffer so far, so that a late
 * store into one already run is seen; the buffers start filled with
 * garbage, as the public benchmark's do.
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
#include <twochains/ucp_ifunc.h>

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
static int g_buffers;   /* "buffer": public checked frames into caller-managed buffers */

/* rank 0's buffers, one per frame, and how rank 1 reaches them */
typedef struct {
    uint64_t addr;
    uint32_t rkey_size;
    uint8_t  rkey[1020];
} buffers_desc_t;

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
    tc_ifunc_ucp_t     *ucp;
    tc_ifunc_pkg_h     pkg;
    uint32_t           sum_id;
    uint8_t            frame[SLOT] __attribute__((aligned(64)));
    uint8_t            slots[FRAMES + 2][SLOT];  /* what each remote slot holds */
    double             before_last[FRAMES + 2];  /* the last piece that changed it */
    ucp_ifunc_h        ifunc;                    /* buffer mode */
    ucp_ifunc_msg_t    msg;
    uint64_t           buffers;
    ucp_rkey_h         rkey;
} sender_t;

/* Frame @a k as ucp_ifunc_send_nbix would send it, into s->frame */
static uint32_t build_checked(sender_t *s, uint32_t k)
{
    int64_t *payload;
    size_t size;
    unsigned j;

    if ((ucp_ifunc_msg_get_payload_ptr(&s->msg, (void**)&payload, &size) != UCS_OK) ||
        (size != VALUES * sizeof(int64_t))) {
        fail("payload of the message");
    }
    for (j = 0; j < VALUES; ++j) {
        payload[j] = value(k, j);
    }
    tc_ucp_ifunc_settle(&s->msg);
    if (tc_ucp_ifunc_stamp(&s->msg, ifunc_pair_ring(s->mbox, 0)->ep) !=
        TC_UCP_IFUNC_FORM_CHECKED) {
        fail("a small message is not sent as a checked frame (UCX_TC_IFUNC_CHECKED_MAX)");
    }
    if (s->msg.frame_size > SLOT) {
        fail("frame larger than a buffer");
    }
    memset(s->frame, 0, sizeof(s->frame));
    memcpy(s->frame, s->msg.frame, s->msg.frame_size);
    return (uint32_t)s->msg.frame_size;
}

static uint32_t build(sender_t *s, uint32_t seq)
{
    const tc_ifunc_element_t *e = tc_ifunc_pkg_elem(s->pkg, s->sum_id);
    tc_frame_desc_t desc;
    int64_t *payload = (int64_t*)(s->frame + TC_FRAME_COMPACT_LOCAL_HDR);
    unsigned j;

    if (g_buffers) {
        return build_checked(s, seq);
    }
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
    uint64_t remote           = g_buffers ? s->buffers + (uint64_t)seq * SLOT :
                                p->ring_addr + (uint64_t)(seq % DEPTH) * p->slot_size;
    ucp_rkey_h rkey           = g_buffers ? s->rkey : p->rkey;
    ucp_request_param_t param = {0};
    uint8_t *held             = s->slots[g_buffers ? seq : seq % DEPTH];
    ucs_status_ptr_t req;

    /* a piece whose bytes the slot already holds changes nothing: the frame
     * is complete at the last piece that stores a new byte */
    if (memcmp(held + off, s->frame + off, len) != 0) {
        s->before_last[seq] = tc_ifunc_now();
        memcpy(held + off, s->frame + off, len);
    }
    if (!g_buffers) {
        ifunc_pair_sending(p, (uint64_t)seq + 1);
    }
    req = ucp_put_nbx(p->ep, s->frame + off, len, remote + off, rkey, &param);
    if (tc_ifunc_request_wait(tc_ifunc_mailbox_engine(s->mbox), req, 10.0) != UCS_OK) {
        fail("put");
    }
    if (tc_ifunc_mailbox_flush(s->mbox, 10.0) != UCS_OK) {
        fail("flush");
    }
    if (!g_buffers) {
        ifunc_pair_stored(s->mbox, p);
    }
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

    if (g_buffers) {
        return;   /* a buffer per frame */
    }
    while ((seq - *credit >= DEPTH) && (tc_ifunc_now() < deadline)) {
        tc_progress(tc_ifunc_mailbox_engine(s->mbox));
    }
    if (seq - *credit >= DEPTH) {
        fail("no credits");
    }
}

/* At most this many pauses inside one torn frame. A real put's pieces land
 * within one put's time; each pause here may cost a scheduling delay beside a
 * CPU hog, and a frame torn over a hundred of them took past the receiver's
 * 1 s trailer wait (UCX_TC_IFUNC_TRAILER_TIMEOUT), which is what a sender dead
 * in the middle of its put gets, not what tearing is about */
#define PAUSES_MAX 16

/* pause after piece @a i of @a n so that the frame has at most PAUSES_MAX */
static void pause_after(sender_t *s, uint32_t i, uint32_t n, unsigned us)
{
    uint32_t every = (n + PAUSES_MAX - 1) / PAUSES_MAX;

    if ((i % every) == (every - 1)) {
        pause_between(s, us);
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
        /* compact: format and the expected seq, then the check word; checked:
         * the signal word, then the header's flags word */
        piece(s, seq, g_buffers ? 0 : 8, 8);
        pause_between(s, PAUSE_US);
        piece(s, seq, g_buffers ? 8 : 0, 8);
        pause_between(s, PAUSE_US);
        for (w = 2; w < words; ++w) {
            piece(s, seq, w * 8, 8);
            pause_after(s, w - 2, words - 2, PAUSE_US);
        }
        break;
    case 2:
        for (w = words; w-- > 0;) {
            piece(s, seq, w * 8, 8);
            pause_after(s, words - 1 - w, words, PAUSE_US);
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
            pause_after(s, i, size, PAUSE_US / 5);
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

    static const int64_t zero[VALUES];

    if (tc_ifunc_pkg_element(s->pkg, "server_side_sum", &s->sum_id) != UCS_OK) {
        fail("no server_side_sum");
    }
    if (g_buffers &&
        ((ucp_register_ifunc(s->ucp->context, "server_side_sum", &s->ifunc) != UCS_OK) ||
         (ucp_ifunc_msg_create(s->ifunc, (void*)zero, sizeof(zero), &s->msg) != UCS_OK))) {
        fail("a public message of server_side_sum");
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
    if (g_buffers) {
        ucp_ifunc_msg_free(s->msg);
        ucp_deregister_ifunc(s->ucp->context, s->ifunc);
    }
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

/* Every buffer so far, each poll: frames in order, late stores anywhere */
static void run_receiver_buffers(tc_ifunc_ucp_t *ucp, tc_ifunc_pkg_h pkg,
                                 uint8_t *buffers, double *ran_at, int64_t *acc_after)
{
    int64_t *acc     = tc_ifunc_pkg_symbol(pkg, "tcbench_accumulator");
    int64_t acc0     = *acc;
    double deadline  = tc_ifunc_now() + 60;
    uint64_t handled = 0, ran = 0, rejected = 0;
    const tc_ifunc_stats_t *st;
    ucs_status_t status;
    unsigned b;

    while ((handled < FRAMES + 2) && (tc_ifunc_now() < deadline)) {
        tc_progress(ucp->engine);
        for (b = 0; (b <= handled) && (b < FRAMES + 2); ++b) {
            status = ucp_poll_ifunc(ucp->context, buffers + (size_t)b * SLOT, SLOT, NULL);
            if (status == UCS_ERR_NO_MESSAGE) {
                continue;
            }
            if ((status != UCS_OK) && (status != UCS_ERR_CANCELED)) {
                fail("ucp_poll_ifunc");
            }
            ran      += (status == UCS_OK);
            rejected += (status == UCS_ERR_CANCELED);
            if (b != handled) {
                printf("ifunc_tear rank 0: buffer %u yielded a frame while frame %" PRIu64
                       " was awaited\n", b, handled);
                fail("a frame ran twice, or out of its buffer");
            }
            ran_at[handled]    = tc_ifunc_now();
            acc_after[handled] = *acc - acc0;
            ++handled;
            break;
        }
    }
    /* late stores of the last frames may still come: poll a while more */
    deadline = tc_ifunc_now() + 0.2;
    while (tc_ifunc_now() < deadline) {
        tc_progress(ucp->engine);
        for (b = 0; b < FRAMES + 2; ++b) {
            if (ucp_poll_ifunc(ucp->context, buffers + (size_t)b * SLOT, SLOT, NULL) !=
                UCS_ERR_NO_MESSAGE) {
                fail("a buffer yielded a frame after all had run");
            }
        }
    }
    st = tc_ucp_ifunc_stats_get();
    printf("ifunc_tear rank 0: ran %" PRIu64 ", rejected %" PRIu64 " (truncated %" PRIu64
           "), trailer wait %.3f s, %" PRIu64 " polls found a late store\n", ran, rejected,
           st->rejects[TC_IFUNC_REJECT_TRUNCATED], st->pending_wait_s, st->stale_signals);
    if (handled != FRAMES + 2) {
        fail("frames lost");
    }
    if ((ran != FRAMES + 1) || (rejected != 1) ||
        (st->rejects[TC_IFUNC_REJECT_TRUNCATED] != 1) ||
        (st->frames[TC_FRAME_INJECTED - TC_FRAME_LOCAL] != FRAMES + 1)) {
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

/* Rank 0's buffers, garbage-filled, described to rank 1 */
static uint8_t *map_buffers(tc_ifunc_ucp_t *ucp, ucp_mem_h *memh_p, buffers_desc_t *desc)
{
    ucp_mem_map_params_t mp = {0};
    ucp_mem_attr_t attr;
    void *rkey;
    size_t size;

    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    mp.length     = (size_t)(FRAMES + 2) * SLOT;
    mp.flags      = UCP_MEM_MAP_ALLOCATE;
    attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
    if ((ucp_mem_map(ucp->context, &mp, memh_p) != UCS_OK) ||
        (ucp_mem_query(*memh_p, &attr) != UCS_OK) ||
        (ucp_rkey_pack(ucp->context, *memh_p, &rkey, &size) != UCS_OK)) {
        fail("buffers");
    }
    if (size > sizeof(desc->rkey)) {
        fail("rkey too large");
    }
    memset(attr.address, 42, mp.length);
    desc->addr      = (uintptr_t)attr.address;
    desc->rkey_size = (uint32_t)size;
    memcpy(desc->rkey, rkey, size);
    ucp_rkey_buffer_release(rkey);
    return attr.address;
}

int main(int argc, char **argv)
{
    tc_ifunc_mailbox_params_t params = {0};
    static double all_before[2][FRAMES + 2];
    static double ran_at[FRAMES + 2];
    static int64_t acc_after[FRAMES + 2];
    static sender_t sender;
    tc_ifunc_mailbox_h mbox;
    tc_bootstrap_h boot;
    tc_ifunc_pkg_h pkg;
    static buffers_desc_t descs[2];
    buffers_desc_t desc = {0};
    ucp_mem_h memh      = NULL;
    uint8_t *buffers    = NULL;
    tc_ifunc_ucp_t ucp;

    g_buffers = (argc > 1) && (strcmp(argv[1], "buffer") == 0);
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
    if (g_buffers) {
        if (g_rank == 0) {
            buffers = map_buffers(&ucp, &memh, &desc);
        }
        if (tc_bootstrap_allgather(boot, &desc, sizeof(desc), descs) != UCS_OK) {
            fail("allgather");
        }
        if ((g_rank == 1) &&
            (ucp_ep_rkey_unpack(ifunc_pair_ring(mbox, 0)->ep, descs[0].rkey,
                                &sender.rkey) != UCS_OK)) {
            fail("rkey");
        }
        sender.buffers = descs[0].addr;
    }
    tc_ifunc_mailbox_barrier(mbox);

    if (g_rank == 1) {
        sender.mbox = mbox;
        sender.ucp  = &ucp;
        sender.pkg  = pkg;
        run_sender(&sender);
    } else if (g_buffers) {
        run_receiver_buffers(&ucp, pkg, buffers, ran_at, acc_after);
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
    if (sender.rkey != NULL) {
        ucp_rkey_destroy(sender.rkey);
    }
    if (memh != NULL) {
        ucp_mem_unmap(ucp.context, memh);
    }
    tc_ifunc_mailbox_destroy(mbox);
    tc_ifunc_pkg_unload(pkg);
    tc_ifunc_ucp_cleanup(&ucp);
    tc_bootstrap_destroy(boot);
    printf("ifunc_tear rank %d: OK\n", g_rank);
    return 0;
}
