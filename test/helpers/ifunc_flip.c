/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * ifunc_flip: a sender that rewrites its Injected code while the receiver
 * verifies it. Started by twochains-run with 2 ranks; rank 0 receives with
 * the defaults (security verify, placement copy). Rank 1 sends FRAMES
 * Injected server_side_sum frames (payload: the int64 1), and whenever
 * credits hold it back, and after every frame, it writes the first byte
 * of the code's entry point in every slot that may still hold an unread
 * frame: 0xc3 (x86 "ret", a jam that returns at once and counts nothing),
 * then the real byte back, with ucp_put_nbx through the rkey of its own
 * ring, the lane it really has. A receiver that compares the code in the
 * slot and then copies it from there again can run the "ret" it never
 * verified.
 *
 * Rank 0 must end with every frame either run or rejected as not the
 * installed code, and tcbench's call counter and accumulator each exactly
 * the number of frames that ran: a frame that ran flipped code would have
 * counted nothing. Prints "ifunc_flip rank R: OK" and exits 0 only then.
 *
 * Over a transport whose puts UCP emulates (tcp), the write lane stores
 * each write whole between polls, so flips never overlap a verification:
 * the race needs real RMA (posix, sysv, cma, InfiniBand).
 *
 *   ifunc_flip [-n FRAMES]     (default 1000000)
 */
#include "ifunc_pair.h"

#include <twochains/ifunc.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEPTH  8
#define RET    0xc3

static int g_rank;

static void fail(const char *what)
{
    printf("ifunc_flip rank %d: FAILED: %s\n", g_rank, what);
    fflush(stdout);
    exit(1);
}

typedef struct {
    tc_ifunc_mailbox_h mbox;
    tc_ifunc_peer_t    *ring;
    uint32_t           entry;       /* the entry point's offset in the frame */
    uint8_t            bytes[2];    /* "ret", then the real byte */
    uint64_t           flips;
} flipper_t;

static void put_byte(flipper_t *f, uint64_t frame, const uint8_t *byte)
{
    tc_ifunc_peer_t *p        = f->ring;
    uint64_t remote           = p->ring_addr + (frame % p->depth) * p->slot_size + f->entry;
    ucp_request_param_t param = {0};
    ucs_status_ptr_t req;

    req = ucp_put_nbx(p->ep, byte, 1, remote, p->rkey, &param);
    if (tc_ifunc_request_wait(tc_ifunc_mailbox_engine(f->mbox), req, 10.0) != UCS_OK) {
        fail("put");
    }
}

/* Each state held a while, 0-5 us in turn: a receiver's compare and a
 * later copy can be that far apart (a code cache install maps memory in
 * between), and a state that lasts one put would rarely be seen by both */
static void hold(flipper_t *f)
{
    double until = tc_ifunc_now() + (double)(f->flips % 11) * 500e-9;

    while (tc_ifunc_now() < until) {
    }
}

/* Every slot that may hold a frame the receiver has not read: "ret", then
 * the real byte, so that a slot is left as it was sent */
static void flip_pass(flipper_t *f)
{
    uint64_t sent = f->ring->sent;
    uint64_t j    = (sent > f->ring->depth) ? sent - f->ring->depth : 0;

    for (; j < sent; ++j) {
        put_byte(f, j, &f->bytes[0]);
        hold(f);
        put_byte(f, j, &f->bytes[1]);
        hold(f);
        ++f->flips;
    }
}

static void run_sender(tc_ifunc_mailbox_h mbox, tc_ifunc_pkg_h pkg, uint64_t frames)
{
    int64_t one = 1;
    const tc_frame_hdr_t *h;
    flipper_t f = {.mbox = mbox};
    tc_ifunc_msg_h msg;
    uint32_t sum_id;
    ucs_status_t status;
    uint64_t i;

    if ((tc_ifunc_pkg_element(pkg, "server_side_sum", &sum_id) != UCS_OK) ||
        (tc_ifunc_msg_create(mbox, pkg, sum_id, TC_IFUNC_MODE_INJECTED, &one, sizeof(one),
                             &msg) != UCS_OK)) {
        fail("no server_side_sum message");
    }
    f.ring = ifunc_pair_ring(mbox, 0);
    if (f.ring == NULL) {
        fail("no ring at rank 0");
    }
    for (i = 0; i < frames;) {
        status = tc_ifunc_send(mbox, 0, msg);
        if ((status != UCS_OK) && (status != UCS_INPROGRESS) &&
            (status != UCS_ERR_NO_RESOURCE)) {
            fail("send");
        }
        if (i == 0) {
            h          = (const tc_frame_hdr_t*)msg->frame;
            f.entry    = h->entry_offset;
            f.bytes[0] = RET;
            f.bytes[1] = msg->frame[f.entry];
            if (f.bytes[1] == RET) {
                fail("the entry point starts with ret already");
            }
        }
        if (status != UCS_ERR_NO_RESOURCE) {
            ++i;
        }
        if (i > 0) {
            flip_pass(&f);
        }
        if (status == UCS_ERR_NO_RESOURCE) {
            tc_progress(tc_ifunc_mailbox_engine(mbox));
        }
    }
    tc_ifunc_msg_wait(msg);
    tc_ifunc_msg_free(msg);
    printf("ifunc_flip rank 1: %" PRIu64 " frames sent, %" PRIu64 " flips of their code "
           "(%s)\n", frames, f.flips, f.ring->transport);
}

static void run_receiver(tc_ifunc_mailbox_h mbox, tc_ifunc_pkg_h pkg, uint64_t frames)
{
    volatile int64_t *calls = tc_ifunc_pkg_symbol(pkg, "tcbench_sum_calls");
    volatile int64_t *acc   = tc_ifunc_pkg_symbol(pkg, "tcbench_accumulator");
    int64_t calls0, acc0;
    uint64_t ran = 0, handled = 0;
    double deadline;
    tc_ifunc_stats_t st;

    if ((calls == NULL) || (acc == NULL)) {
        fail("tcbench state");
    }
    calls0   = *calls;
    acc0     = *acc;
    deadline = tc_ifunc_now() + 600;
    while (handled < frames) {
        if (tc_ifunc_poll(mbox, 0) == 0) {
            tc_progress(tc_ifunc_mailbox_engine(mbox));
        }
        tc_ifunc_mailbox_stats(mbox, &st);
        ran     = st.frames[TC_IFUNC_FRAME_INJECTED];
        handled = ran + st.rejects_total;
        if (tc_ifunc_now() > deadline) {
            fail("frames lost");
        }
    }
    printf("ifunc_flip rank 0: %" PRIu64 " frames ran, %" PRIu64 " rejected as not the "
           "installed code, %" PRIu64 " rejected otherwise; %" PRId64 " calls, sum %" PRId64
           "\n", ran, st.rejects[TC_IFUNC_REJECT_HASH],
           st.rejects_total - st.rejects[TC_IFUNC_REJECT_HASH], *calls - calls0,
           *acc - acc0);
    if (st.rejects_total != st.rejects[TC_IFUNC_REJECT_HASH]) {
        fail("a frame was rejected for another reason than its code");
    }
    if ((*calls - calls0 != (int64_t)ran) || (*acc - acc0 != (int64_t)ran)) {
        fail("code that was not verified ran (a frame ran and counted nothing)");
    }
}

int main(int argc, char **argv)
{
    tc_ifunc_mailbox_params_t params = {0};
    uint64_t frames = 1000000;
    tc_ifunc_mailbox_h mbox;
    tc_bootstrap_h boot;
    tc_ifunc_pkg_h pkg;
    tc_ifunc_ucp_t ucp;
    int opt;

    while ((opt = getopt(argc, argv, "n:")) != -1) {
        if (opt != 'n') {
            fprintf(stderr, "usage: ifunc_flip [-n FRAMES]\n");
            return 2;
        }
        frames = strtoull(optarg, NULL, 0);
    }
    if (ifunc_pair_start(&boot, &g_rank, &ucp, &pkg) != 0) {
        return 2;
    }
    /* the default security (verify) and placement (copy): what users run */
    params.field_mask = TC_IFUNC_MAILBOX_PARAM_FIELD_RING_DEPTH |
                        TC_IFUNC_MAILBOX_PARAM_FIELD_FLAGS;
    params.ring_depth = DEPTH;
    params.flags      = TC_IFUNC_MAILBOX_FLAG_NO_POLLER;
    if (tc_ifunc_mailbox_create(ucp.context, ucp.engine, boot, &params, &mbox) != UCS_OK) {
        return 2;
    }
    if ((tc_ifunc_mailbox_security(mbox) != TC_IFUNC_SECURITY_VERIFY) ||
        (tc_ifunc_mailbox_placement(mbox) != TC_IFUNC_PLACEMENT_COPY)) {
        fail("the defaults are not verify and copy");
    }
    tc_ifunc_mailbox_barrier(mbox);
    if (g_rank == 1) {
        run_sender(mbox, pkg, frames);
    } else {
        run_receiver(mbox, pkg, frames);
    }
    tc_ifunc_mailbox_barrier(mbox);
    tc_ifunc_mailbox_destroy(mbox);
    tc_ifunc_pkg_unload(pkg);
    tc_ifunc_ucp_cleanup(&ucp);
    tc_bootstrap_destroy(boot);
    printf("ifunc_flip rank %d: OK\n", g_rank);
    return 0;
}
