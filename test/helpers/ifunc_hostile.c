/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * ifunc_hostile: one rank of a 4-rank mailbox turns hostile (the mailbox
 * half of the hostile-member harness). Started by twochains-run with 4
 * ranks and the mailbox's defaults.
 *
 * Ranks 1 and 2 are honest: each sends FRAMES server_side_sum frames
 * (Local, Injected and Cached in turn) to each of ranks 0, 1 and 2 but
 * itself, through the public API, polling between sends. Rank 3 sends good
 * ping frames to ranks 0-2 through the API, and from a frame SEED picks on
 * it writes, with ucp_put_nbx into the rings it was granted (the lane it
 * really has), frames it edited at random: header bytes, sizes, sequence
 * numbers, signals, offsets, symbol tables, code bytes (with or without a
 * matching hash), missing trailers, compact frames of any sender, plain
 * garbage, into any slot, ignoring credits. It never names server_side_sum:
 * a frame that runs a Local function in its sender's name is that sender's
 * right, and the honest sums must stay exact.
 *
 * Every honest receiver (0, 1, 2) must run exactly the honest frames sent
 * to it: tcbench_sum_calls and tcbench_accumulator exact; it prints
 * "ifunc_hostile rank R: ran N sum S (expected E) rejected J max rss K
 * KiB" and exits 0 only then. A hang is the launcher's timeout.
 *
 * Usage: ifunc_hostile SEED FRAMES
 */
#include "ifunc/mailbox/mailbox_int.h"

#include <twochains/bootstrap.h>
#include <twochains/ifunc.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define SUM_VALUES   4
#define HOSTILE      3
#define HONEST_LAST  2   /* ranks 1..HONEST_LAST send honest frames */
#define BAD_WRITES   400

static int g_rank;

static void fail(const char *what, ucs_status_t status)
{
    printf("ifunc_hostile rank %d: FAILED: %s (%s)\n", g_rank, what, ucs_status_string(status));
    fflush(stdout);
    exit(1);
}

/* xorshift64*: the harness's own generator, so that a seed replays */
static uint64_t g_rng;

static uint64_t rnd(void)
{
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return g_rng * 2685821657736338717ull;
}

static uint64_t pick(uint64_t n)
{
    return rnd() % n;
}

static int64_t sum_value(int sender, int dest, uint32_t k, unsigned j)
{
    return (int64_t)sender * 1000003 + dest * 10007 + (int64_t)k * 17 + j + 1;
}

typedef struct {
    tc_ifunc_mailbox_h mbox;
    tc_ifunc_pkg_h     pkg;
    uint32_t           sum_id, ping_id;
} job_t;

/* Send @a msg to @a dest, polling our own mailbox while refused */
static void send_polling(job_t *j, int dest, tc_ifunc_msg_h msg)
{
    double deadline = tc_ifunc_now() + 30;
    ucs_status_t status;

    while ((status = tc_ifunc_send(j->mbox, dest, msg)) == UCS_ERR_NO_RESOURCE) {
        tc_progress(tc_ifunc_mailbox_engine(j->mbox));
        tc_ifunc_poll(j->mbox, 0);
        if (tc_ifunc_now() > deadline) {
            fail("send: no credits for 30 s", status);
        }
    }
    if ((status != UCS_OK) && (status != UCS_INPROGRESS)) {
        fail("send", status);
    }
    status = tc_ifunc_msg_wait(msg);
    if (status != UCS_OK) {
        fail("send completion", status);
    }
}

static void run_honest(job_t *j, uint32_t frames)
{
    static const tc_ifunc_mode_t modes[] = {TC_IFUNC_MODE_LOCAL, TC_IFUNC_MODE_INJECTED,
                                            TC_IFUNC_MODE_CACHED};
    int64_t values[SUM_VALUES];
    tc_ifunc_msg_h msg;
    ucs_status_t status;
    uint32_t k;
    unsigned v;
    int dest;

    for (k = 0; k < frames; ++k) {
        for (dest = 0; dest <= HONEST_LAST; ++dest) {
            if (dest == g_rank) {
                continue;
            }
            for (v = 0; v < SUM_VALUES; ++v) {
                values[v] = sum_value(g_rank, dest, k, v);
            }
            status = tc_ifunc_msg_create(j->mbox, j->pkg, j->sum_id, modes[k % 3], values,
                                         sizeof(values), &msg);
            if (status != UCS_OK) {
                fail("msg_create", status);
            }
            send_polling(j, dest, msg);
            tc_ifunc_msg_free(msg);
        }
        tc_ifunc_poll(j->mbox, 0);
    }
}

/* One frame of ping edited at random, put at a random slot of our ring at
 * @a dest */
static void write_bad(job_t *j, tc_ifunc_peer_t *p, uint8_t *frame, uint32_t slot_size)
{
    /* mostly where the receiver looks next (the next sequence number, in
     * its slot), so that the checks see it; sometimes anywhere */
    const int in_turn = pick(5) != 0;
    const tc_ifunc_element_t *e = tc_ifunc_pkg_elem(j->pkg, j->ping_id);
    tc_frame_hdr_t *h           = (tc_frame_hdr_t*)frame;
    tc_frame_compact_t *c       = (tc_frame_compact_t*)frame;
    uint64_t ping[1]            = {rnd()};
    uint32_t seq                = in_turn ? (uint32_t)p->sent : (uint32_t)rnd();
    uint32_t size, n, i;
    tc_frame_desc_t desc;
    ucs_status_ptr_t req;
    uint64_t kind = pick(10);

    memset(frame, 0, slot_size);
    if (kind == 0) {
        /* garbage */
        for (i = 0; i < slot_size; i += 8) {
            *(uint64_t*)(frame + i) = rnd();
        }
        size = 8 + (uint32_t)pick(slot_size - 8);
    } else if (kind == 1) {
        /* compact, of any sender, size and type */
        tc_frame_prepare(NULL, j->pkg, e, 0, &desc);
        desc.code_hash = e->span_hash;
        memcpy(frame + TC_FRAME_COMPACT_LOCAL_HDR, ping, sizeof(ping));
        size = tc_frame_stamp_compact(frame, &desc, TC_FRAME_LOCAL, seq, 1, sizeof(ping));
        n    = 1 + (uint32_t)pick(4);
        for (i = 0; i < n; ++i) {
            frame[pick(TC_FRAME_COMPACT_LOCAL_HDR)] = (uint8_t)rnd();
        }
        if (c->element_id == j->sum_id) {
            c->element_id ^= 0x80;
        }
        if (pick(2)) {
            c->check = tc_frame_compact_check(frame, size);
        }
    } else {
        /* a full frame, Local or carrying code, edited */
        const int with_code = (int)pick(2);
        tc_frame_prepare(frame, j->pkg, e, with_code, &desc);
        memcpy(frame + desc.payload_offset, ping, sizeof(ping));
        size = tc_frame_stamp(frame, &desc,
                              with_code ? (pick(2) ? TC_FRAME_INJECTED : TC_FRAME_CACHED) :
                                          TC_FRAME_LOCAL,
                              with_code ? TC_FRAME_F_CACHE : 0, seq, 1, sizeof(ping));
        if (with_code && (h->code_size > 0) && pick(2)) {
            /* other code, consistent with its own hash */
            frame[h->code_offset + pick(h->code_size)] ^= 0x40;
            h->code_hash = tc_frame_span_hash(frame + h->code_offset, h->code_size,
                                              h->got_offset - h->code_offset);
        }
        n = pick(7);
        for (i = 0; i < n; ++i) {
            /* mostly the header, sometimes anywhere */
            uint32_t at = (uint32_t)(pick(4) ? pick(sizeof(*h)) : pick(size));
            frame[at]   = (uint8_t)rnd();
        }
        if (h->element_id == j->sum_id) {
            h->element_id ^= 0x80;
        }
        if (pick(3) == 0) {
            size = (uint32_t)pick(slot_size + 1);   /* a size of any kind */
        }
        if (pick(2) && (size >= 1) && (size <= slot_size)) {
            frame[size - 1] = TC_FRAME_TRAILER(h->seq);
        }
    }
    if (size > slot_size) {
        size = slot_size;
    }
    if (size == 0) {
        size = 8;
    }
    /* the whole ring is ours to write: any slot, credits or not */
    req = ucp_put_nbx(p->ep, frame, size,
                      p->ring_addr + (in_turn ? seq % p->depth : pick(p->depth)) *
                                             (uint64_t)p->slot_size,
                      p->rkey, &(ucp_request_param_t){0});
    if (in_turn) {
        ++p->sent;   /* as a sender would count it: the receiver's turn moves on */
    }
    if (tc_ifunc_request_wait(tc_ifunc_mailbox_engine(j->mbox), req, 10.0) != UCS_OK) {
        fail("put", UCS_ERR_IO_ERROR);
    }
    if (p->asleep) {
        tc_ifunc_ring_doorbell(j->mbox, p);
    }
}

static void run_hostile(job_t *j, uint32_t frames, uint32_t turn_at)
{
    tc_ifunc_peer_t *ring[HONEST_LAST + 1];
    tc_ifunc_msg_h msg;
    ucs_status_t status;
    uint8_t *frame;
    uint64_t ping[1];
    uint32_t k, slot_max = 0;
    int dest;

    /* good frames first: the rings are granted, the receivers used to us */
    for (k = 0; k < turn_at; ++k) {
        for (dest = 0; dest <= HONEST_LAST; ++dest) {
            ping[0] = k;
            status  = tc_ifunc_msg_create(j->mbox, j->pkg, j->ping_id, TC_IFUNC_MODE_LOCAL,
                                          ping, sizeof(ping), &msg);
            if (status != UCS_OK) {
                fail("msg_create", status);
            }
            send_polling(j, dest, msg);
            tc_ifunc_msg_free(msg);
        }
    }
    for (dest = 0; dest <= HONEST_LAST; ++dest) {
        status = UCS_INPROGRESS;
        while ((status = tc_ifunc_mailbox_connect(j->mbox, dest)) == UCS_INPROGRESS) {
            tc_progress(tc_ifunc_mailbox_engine(j->mbox));
        }
        if (status != UCS_OK) {
            fail("connect", status);
        }
        ring[dest] = j->mbox->peers[dest];
        slot_max   = (ring[dest]->slot_size > slot_max) ? ring[dest]->slot_size : slot_max;
    }
    printf("ifunc_hostile rank %d: hostile from frame %u of %u\n", g_rank, turn_at, frames);
    fflush(stdout);
    frame = aligned_alloc(64, slot_max);
    if (frame == NULL) {
        fail("alloc", UCS_ERR_NO_MEMORY);
    }
    for (k = 0; k < BAD_WRITES; ++k) {
        dest = (int)pick(HONEST_LAST + 1);
        write_bad(j, ring[dest], frame, ring[dest]->slot_size);
        tc_progress(tc_ifunc_mailbox_engine(j->mbox));
    }
    free(frame);
}

/* Every honest frame sent to us, then (after the hostile rank is done)
 * whatever it wrote; prints what ran and fails unless it is exact */
static void run_receiver(job_t *j, uint32_t frames, double deadline)
{
    const int64_t *acc    = tc_ifunc_pkg_symbol(j->pkg, "tcbench_accumulator");
    const uint64_t *calls = tc_ifunc_pkg_symbol(j->pkg, "tcbench_sum_calls");
    uint64_t expected_calls = 0;
    int64_t expected        = 0;
    tc_ifunc_stats_t st;
    struct rusage ru;
    int sender;
    uint32_t k;
    unsigned v;

    for (sender = 1; sender <= HONEST_LAST; ++sender) {
        if (sender == g_rank) {
            continue;
        }
        for (k = 0; k < frames; ++k) {
            for (v = 0; v < SUM_VALUES; ++v) {
                expected += sum_value(sender, g_rank, k, v);
            }
            ++expected_calls;
        }
    }
    double quiet_since;
    uint64_t seen = 0, now_seen;

    while ((*calls < expected_calls) && (tc_ifunc_now() < deadline)) {
        tc_progress(tc_ifunc_mailbox_engine(j->mbox));
        tc_ifunc_poll(j->mbox, 0);
    }
    /* every rank, the hostile one after its last write, flushed and met
     * here: all its writes are in our rings (however long a CPU hog held
     * it back). Read them until nothing new has happened for a second
     * (the trailer timeout is shorter). The barrier polls no ring: the
     * hostile rank's good frames (at most FRAMES = 60 a receiver) fit the
     * default ring depth (64) without a credit back. */
    tc_ifunc_mailbox_flush(j->mbox, 10.0);
    tc_ifunc_mailbox_barrier(j->mbox);
    quiet_since = tc_ifunc_now();
    while ((tc_ifunc_now() - quiet_since < 1.0) && (tc_ifunc_now() < deadline)) {
        tc_progress(tc_ifunc_mailbox_engine(j->mbox));
        tc_ifunc_poll(j->mbox, 0);
        tc_ifunc_mailbox_stats(j->mbox, &st);
        now_seen = st.frames[0] + st.frames[1] + st.frames[2] + st.rejects_total +
                   st.control_rejects;
        if (now_seen != seen) {
            seen        = now_seen;
            quiet_since = tc_ifunc_now();
        }
    }
    tc_ifunc_mailbox_stats(j->mbox, &st);
    getrusage(RUSAGE_SELF, &ru);
    printf("ifunc_hostile rank %d: ran %" PRIu64 " (expected %" PRIu64 ") sum %" PRId64
           " (expected %" PRId64 ") rejected %" PRIu64 " max rss %ld KiB\n",
           g_rank, *calls, expected_calls, *acc, expected, st.rejects_total, ru.ru_maxrss);
    fflush(stdout);
    if (getenv("TC_HOSTILE_VERBOSE") != NULL) {
        tc_ifunc_stats_print(&st, stdout, "ifunc_hostile stats: ");
    }
    if ((*calls != expected_calls) || (*acc != expected)) {
        fail("the honest frames did not all run exactly", UCS_ERR_IO_ERROR);
    }
}

int main(int argc, char **argv)
{
    tc_ifunc_mailbox_params_t params = {0};
    tc_bootstrap_h boot;
    tc_ifunc_ucp_t ucp;
    char prefix[1024];
    uint32_t frames, turn_at;
    job_t j = {0};
    long seed;

    if (argc != 3) {
        fprintf(stderr, "usage: ifunc_hostile SEED FRAMES\n");
        return 2;
    }
    seed   = atol(argv[1]);
    frames = (uint32_t)atoi(argv[2]);
    if ((tc_bootstrap_create_from_env(&boot) != UCS_OK) || (tc_bootstrap_size(boot) != 4)) {
        fprintf(stderr, "ifunc_hostile: needs 4 ranks\n");
        return 2;
    }
    g_rank = tc_bootstrap_rank(boot);
    g_rng  = ((uint64_t)seed * 0x9e3779b97f4a7c15ull) | 1;
    turn_at = (uint32_t)pick(frames + 1);
    g_rng ^= (uint64_t)g_rank << 32;
    if (tc_ifunc_ucp_init(&ucp) != UCS_OK) {
        return 2;
    }
    snprintf(prefix, sizeof(prefix), "%s/test/twochains-pkgs", TC_BUILDDIR);
    if (tc_ifunc_pkg_load(prefix, "tcbench", &j.pkg) != UCS_OK) {
        return 2;
    }
    if ((tc_ifunc_pkg_element(j.pkg, "server_side_sum", &j.sum_id) != UCS_OK) ||
        (tc_ifunc_pkg_element(j.pkg, "ping", &j.ping_id) != UCS_OK)) {
        return 2;
    }
    params.field_mask = TC_IFUNC_MAILBOX_PARAM_FIELD_FLAGS;
    params.flags      = TC_IFUNC_MAILBOX_FLAG_NO_POLLER;
    if (tc_ifunc_mailbox_create(ucp.context, ucp.engine, boot, &params, &j.mbox) != UCS_OK) {
        return 2;
    }
    tc_ifunc_mailbox_barrier(j.mbox);

    if (g_rank == HOSTILE) {
        run_hostile(&j, frames, turn_at);
        /* its writes are all out: the receivers read them after this */
        tc_ifunc_mailbox_flush(j.mbox, 10.0);
        tc_ifunc_mailbox_barrier(j.mbox);
    } else {
        if (g_rank != 0) {
            run_honest(&j, frames);
        }
        run_receiver(&j, frames, tc_ifunc_now() + 60);
    }
    /* everyone done before anyone leaves: a receiver may still need our
     * credits, and we theirs */
    tc_ifunc_mailbox_flush(j.mbox, 10.0);
    tc_ifunc_mailbox_barrier(j.mbox);
    printf("ifunc_hostile rank %d: OK\n", g_rank);
    fflush(stdout);
    tc_ifunc_mailbox_destroy(j.mbox);
    tc_ifunc_pkg_unload(j.pkg);
    tc_ifunc_ucp_cleanup(&ucp);
    tc_bootstrap_destroy(boot);
    return 0;
}
