/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * ifunc_bad: a misbehaving sender, for the bad-input tests. Started by
 * twochains-run with 2 ranks. Rank 1 writes raw frames into rank 0's ring
 * with ucp_put_nbx, bypassing the sender's checks: two bad frames of one
 * kind, then a good server_side_sum frame. Rank 0 must reject both bad
 * frames with the expected reason (counted twice, logged once), free their
 * slots and run the good frame: its sum must be exactly what was sent.
 * Prints "ifunc_bad: case NAME: OK" and exits 0 only then.
 *
 * Usage: ifunc_bad CASE   (see cases[] below)
 */
#include "ifunc_pair.h"

#include <twochains/ifunc.h>
#include <twochains/lane.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef enum {
    BAD_SIZE_ZERO, BAD_SIZE_BIG, BAD_TRUNCATED, BAD_UNKNOWN_PKG, BAD_UNKNOWN_ELEMENT,
    BAD_HASH, BAD_LOCAL_ONLY, BAD_CACHE_MISS, BAD_OFFSET, BAD_CREDITS,
    BAD_CHECKSUM, BAD_SIGNAL, BAD_LINK, BAD_STALE_SIGNAL,
    BAD_COMPACT_PKG, BAD_COMPACT_SENDER, BAD_COMPACT_SIZE, BAD_COMPACT_TYPE,
    BAD_COMPACT_CACHE_MISS, BAD_CREDIT_PAST_SENT,
    BAD_PORTABLE_NOT_BITCODE, BAD_PORTABLE_TRIPLE, BAD_PORTABLE_HASH,
    BAD_PORTABLE_NOT_OURS, BAD_PORTABLE_FORBIDDEN, BAD_PORTABLE_UNRESOLVED,
    BAD_PORTABLE_TOO_BIG, BAD_PORTABLE_LOCAL_ONLY, BAD_PORTABLE_LLVM_ABORT,
    BAD_PORTABLE_LLVM_ABORT_CONFINE, BAD_LAST
} bad_case_t;

static const struct {
    const char          *name;
    tc_ifunc_reject_t   reason;
    tc_ifunc_security_t security;
    int                 bad_frames;
} cases[BAD_LAST] = {
    [BAD_SIZE_ZERO]       = {"size_zero", TC_IFUNC_REJECT_SIZE, TC_IFUNC_SECURITY_VERIFY, 2},
    [BAD_SIZE_BIG]        = {"size_big", TC_IFUNC_REJECT_SIZE, TC_IFUNC_SECURITY_VERIFY, 2},
    [BAD_TRUNCATED]       = {"truncated", TC_IFUNC_REJECT_TRUNCATED, TC_IFUNC_SECURITY_VERIFY, 2},
    [BAD_UNKNOWN_PKG]     = {"unknown_pkg", TC_IFUNC_REJECT_UNKNOWN_PKG, TC_IFUNC_SECURITY_VERIFY, 2},
    [BAD_UNKNOWN_ELEMENT] = {"unknown_element", TC_IFUNC_REJECT_UNKNOWN_ELEMENT,
                             TC_IFUNC_SECURITY_VERIFY, 2},
    [BAD_HASH]            = {"hash_mismatch", TC_IFUNC_REJECT_HASH, TC_IFUNC_SECURITY_VERIFY, 2},
    [BAD_LOCAL_ONLY]      = {"injected_local_only", TC_IFUNC_REJECT_DISABLED,
                             TC_IFUNC_SECURITY_LOCAL_ONLY, 2},
    [BAD_CACHE_MISS]      = {"cached_never_sent", TC_IFUNC_REJECT_CACHE_MISS,
                             TC_IFUNC_SECURITY_VERIFY, 2},
    [BAD_OFFSET]          = {"bad_offset", TC_IFUNC_REJECT_OFFSET, TC_IFUNC_SECURITY_VERIFY, 2},
    [BAD_CREDITS]         = {"ignore_credits", TC_IFUNC_REJECT_SEQUENCE, TC_IFUNC_SECURITY_VERIFY, 1},
    [BAD_CHECKSUM]        = {"checksum", TC_IFUNC_REJECT_CHECKSUM, TC_IFUNC_SECURITY_VERIFY, 2},
    [BAD_SIGNAL]          = {"bad_signal", TC_IFUNC_REJECT_SIGNAL, TC_IFUNC_SECURITY_VERIFY, 2},
    [BAD_LINK]            = {"unresolved_symbol", TC_IFUNC_REJECT_LINK, TC_IFUNC_SECURITY_TRUST, 2},
    /* not bad at all: a put's late second store of the previous lap's
     * signal, which must be waited out, never rejected */
    [BAD_STALE_SIGNAL]    = {"stale_signal", TC_IFUNC_REJECT_NONE, TC_IFUNC_SECURITY_VERIFY, 0},
    /* compact frames (check signal), each with a check word that matches */
    [BAD_COMPACT_PKG]     = {"compact_unknown_pkg", TC_IFUNC_REJECT_UNKNOWN_PKG,
                             TC_IFUNC_SECURITY_VERIFY, 2},
    [BAD_COMPACT_SENDER]  = {"compact_wrong_sender", TC_IFUNC_REJECT_SEQUENCE,
                             TC_IFUNC_SECURITY_VERIFY, 2},
    [BAD_COMPACT_SIZE]    = {"compact_size_big", TC_IFUNC_REJECT_SIZE,
                             TC_IFUNC_SECURITY_VERIFY, 2},
    [BAD_COMPACT_TYPE]    = {"compact_injected", TC_IFUNC_REJECT_TYPE,
                             TC_IFUNC_SECURITY_VERIFY, 2},
    [BAD_COMPACT_CACHE_MISS] = {"compact_cached_never_sent", TC_IFUNC_REJECT_CACHE_MISS,
                                TC_IFUNC_SECURITY_VERIFY, 2},
    /* the other way round: the receiver is the bad one */
    [BAD_CREDIT_PAST_SENT]   = {"credit_past_sent", TC_IFUNC_REJECT_NONE,
                                TC_IFUNC_SECURITY_VERIFY, 0},
    /* Portable frames: modules a trusting receiver compiles must parse, be
     * for its architecture, hash to the frame's hash and link only to what
     * it allows; a verifying one compiles only its own package's modules */
    [BAD_PORTABLE_NOT_BITCODE] = {"portable_not_bitcode", TC_IFUNC_REJECT_BITCODE,
                                  TC_IFUNC_SECURITY_TRUST, 2},
    [BAD_PORTABLE_TRIPLE]      = {"portable_wrong_triple", TC_IFUNC_REJECT_TRIPLE,
                                  TC_IFUNC_SECURITY_TRUST, 2},
    [BAD_PORTABLE_HASH]        = {"portable_hash_mismatch", TC_IFUNC_REJECT_HASH,
                                  TC_IFUNC_SECURITY_TRUST, 2},
    [BAD_PORTABLE_NOT_OURS]    = {"portable_not_installed", TC_IFUNC_REJECT_HASH,
                                  TC_IFUNC_SECURITY_VERIFY, 2},
    [BAD_PORTABLE_FORBIDDEN]   = {"portable_forbidden_external", TC_IFUNC_REJECT_EXTERNAL,
                                  TC_IFUNC_SECURITY_TRUST, 2},
    [BAD_PORTABLE_UNRESOLVED]  = {"portable_unresolved_external", TC_IFUNC_REJECT_EXTERNAL,
                                  TC_IFUNC_SECURITY_TRUST, 2},
    [BAD_PORTABLE_TOO_BIG]     = {"portable_module_past_frame", TC_IFUNC_REJECT_OFFSET,
                                  TC_IFUNC_SECURITY_TRUST, 2},
    [BAD_PORTABLE_LOCAL_ONLY]  = {"portable_local_only", TC_IFUNC_REJECT_DISABLED,
                                  TC_IFUNC_SECURITY_LOCAL_ONLY, 2},
    /* a module on which LLVM's bitcode reader gives up by ending the process
     * (report_fatal_error): a trusting or confining receiver goes on */
    [BAD_PORTABLE_LLVM_ABORT]  = {"portable_llvm_abort", TC_IFUNC_REJECT_BITCODE,
                                  TC_IFUNC_SECURITY_TRUST, 2},
    [BAD_PORTABLE_LLVM_ABORT_CONFINE] = {"portable_llvm_abort_confine",
                                         TC_IFUNC_REJECT_BITCODE,
                                         TC_IFUNC_SECURITY_CONFINE, 2},
};

#define DEPTH        8
#define SLOT         8192    /* a Portable frame carries a module of ~3 KiB */
#define SUM_VALUES   5

static int g_rank;

static void fail(const char *what)
{
    printf("ifunc_bad rank %d: FAILED: %s\n", g_rank, what);
    fflush(stdout);
    exit(1);
}

/* ---- the bad sender ---- */

typedef struct {
    tc_ifunc_mailbox_h mbox;
    tc_ifunc_pkg_h     pkg;
    uint32_t           sum_id;
    uint8_t            frame[SLOT + 128] __attribute__((aligned(64)));
} sender_t;

static int64_t sum_value(uint32_t seq, unsigned j)
{
    return (int64_t)seq * 100 + j + 1;
}

/* A correct frame of server_side_sum: Local, or Injected with its code */
static uint32_t build_sum(sender_t *s, tc_frame_type_t type, uint32_t seq)
{
    const tc_ifunc_element_t *e = tc_ifunc_pkg_elem(s->pkg, s->sum_id);
    tc_frame_desc_t desc;
    int64_t *payload;
    unsigned j;

    memset(s->frame, 0, sizeof(s->frame));
    tc_frame_prepare(s->frame, s->pkg, e, type != TC_FRAME_LOCAL, &desc);
    payload = (int64_t*)(s->frame + desc.payload_offset);
    for (j = 0; j < SUM_VALUES; ++j) {
        payload[j] = sum_value(seq, j);
    }
    return tc_frame_stamp(s->frame, &desc, type,
                                (type == TC_FRAME_INJECTED) ? TC_FRAME_F_CACHE : 0,
                                seq, 1, SUM_VALUES * sizeof(int64_t));
}

/* A module file: the package's, or one the build made for these cases */
static uint8_t *read_module(const char *path, size_t *size_p)
{
    uint8_t *bytes = NULL;
    long size;
    FILE *f;

    f = fopen(path, "rb");
    if ((f != NULL) && (fseek(f, 0, SEEK_END) == 0) && ((size = ftell(f)) > 0) &&
        (fseek(f, 0, SEEK_SET) == 0) && ((bytes = malloc(size)) != NULL) &&
        (fread(bytes, 1, size, f) == (size_t)size)) {
        *size_p = (size_t)size;
    } else {
        free(bytes);
        bytes = NULL;
    }
    if (f != NULL) {
        fclose(f);
    }
    if (bytes == NULL) {
        fail(path);
    }
    return bytes;
}

/* server_side_sum's module for @a triple in the test package */
static uint8_t *sum_module(sender_t *s, const char *triple, size_t *size_p)
{
    const tc_ifunc_portable_bc_t *bc;

    bc = tc_ifunc_elem_portable(tc_ifunc_pkg_elem(s->pkg, s->sum_id), triple);
    if (bc == NULL) {
        fail("the test package has no module of server_side_sum");
    }
    return read_module(bc->path, size_p);
}

/* A Portable frame of server_side_sum carrying @a module, named by @a hash */
static uint32_t build_portable(sender_t *s, const uint8_t *module, size_t module_size,
                               uint64_t hash, uint32_t seq)
{
    const tc_ifunc_element_t *e = tc_ifunc_pkg_elem(s->pkg, s->sum_id);
    tc_frame_desc_t desc;
    int64_t *payload;
    unsigned j;

    memset(s->frame, 0, sizeof(s->frame));
    tc_frame_prepare_portable(s->frame, s->pkg, e, module, (uint32_t)module_size,
                              (uint32_t)module_size, hash, &desc);
    payload = (int64_t*)(s->frame + desc.payload_offset);
    for (j = 0; j < SUM_VALUES; ++j) {
        payload[j] = sum_value(seq, j);
    }
    return tc_frame_stamp(s->frame, &desc, TC_FRAME_PORTABLE, 0, seq, 1,
                          SUM_VALUES * sizeof(int64_t));
}

static uint32_t send_bad_portable(sender_t *s, bad_case_t c, uint32_t seq)
{
    tc_frame_hdr_t *h = (tc_frame_hdr_t*)s->frame;
    uint8_t *module, junk[512];
    size_t size;
    uint32_t frame_size;
    unsigned k;

    switch (c) {
    case BAD_PORTABLE_NOT_BITCODE:
        for (k = 0; k < sizeof(junk); ++k) {
            junk[k] = (uint8_t)(k * 37 + 11);
        }
        return build_portable(s, junk, sizeof(junk), tc_fnv1a64(junk, sizeof(junk)), seq);
    case BAD_PORTABLE_FORBIDDEN:
    case BAD_PORTABLE_UNRESOLVED:
        module = read_module((c == BAD_PORTABLE_FORBIDDEN) ?
                             TC_BUILDDIR "/test/helpers/portable_forbidden.bc" :
                             TC_BUILDDIR "/test/helpers/portable_unresolved.bc", &size);
        break;
    case BAD_PORTABLE_TRIPLE:
    case BAD_PORTABLE_NOT_OURS:
        /* a real module of this jam, for the other architecture */
        module = sum_module(s, (strcmp(tc_portable_host_triple(), "x86_64-linux-gnu") == 0) ?
                                "aarch64-linux-gnu" : "x86_64-linux-gnu", &size);
        break;
    default:
        module = sum_module(s, tc_portable_host_triple(), &size);
        break;
    }
    if ((c == BAD_PORTABLE_LLVM_ABORT) || (c == BAD_PORTABLE_LLVM_ABORT_CONFINE)) {
        /* the first block's abbreviation width inverted: LLVM 14's reader
         * calls report_fatal_error ("Invalid abbrev number") and aborts */
        module[4] ^= 0xff;
    }
    frame_size = build_portable(s, module, size, tc_fnv1a64(module, size), seq);
    if (c == BAD_PORTABLE_HASH) {
        h->code_hash ^= 1;                    /* the bytes hash to something else */
    } else if (c == BAD_PORTABLE_TOO_BIG) {
        h->code_size = frame_size;            /* the module would run past the frame */
    }
    free(module);
    return frame_size;
}

/* Re-sign a frame whose header we edited: the trailer follows frame_size */
static void resign(sender_t *s, uint32_t size)
{
    tc_frame_hdr_t *h = (tc_frame_hdr_t*)s->frame;

    h->frame_size = size;
    if ((size >= 1) && (size <= sizeof(s->frame))) {
        s->frame[size - 1] = TC_FRAME_TRAILER(h->seq);
    }
}

static void wait_req(sender_t *s, ucs_status_ptr_t req)
{
    if (tc_ifunc_request_wait(tc_ifunc_mailbox_engine(s->mbox), req, 10.0) != UCS_OK) {
        fail("put");
    }
}

/* Data, fence, signal -- like a real sender, but of whatever we built;
 * with @a trailer 0 the last byte is left out */
static void raw_put(sender_t *s, uint32_t slot, uint32_t len, int trailer)
{
    tc_ifunc_peer_t *p = ifunc_pair_ring(s->mbox, 0);
    uint64_t remote    = p->ring_addr + (uint64_t)slot * p->slot_size;
    ucp_request_param_t param = {0};
    uint32_t body      = trailer ? len : len - 1;

    if (len > sizeof(s->frame)) {
        len = body = sizeof(s->frame);
    }
    ifunc_pair_sending(p, p->sent + 1);   /* rewrites count too: harmless */
    if (body > 8) {
        wait_req(s, ucp_put_nbx(p->ep, s->frame + 8, body - 8, remote + 8, p->rkey,
                                &param));
    }
    ucp_worker_fence(s->mbox->worker);
    wait_req(s, ucp_put_nbx(p->ep, s->frame, 8, remote, p->rkey, &param));
    ifunc_pair_stored(s->mbox, p);
}

/* A compact server_side_sum frame, edited by @a c, its check word matching */
static void send_bad_compact(sender_t *s, bad_case_t c, uint32_t seq)
{
    const tc_ifunc_element_t *e = tc_ifunc_pkg_elem(s->pkg, s->sum_id);
    tc_frame_compact_t *h       = (tc_frame_compact_t*)s->frame;
    tc_frame_type_t type        = (c == BAD_COMPACT_CACHE_MISS) ? TC_FRAME_CACHED :
                                                                  TC_FRAME_LOCAL;
    uint32_t hdr  = (type == TC_FRAME_CACHED) ? TC_FRAME_COMPACT_CACHED_HDR :
                                                TC_FRAME_COMPACT_LOCAL_HDR;
    uint32_t size = tc_frame_compact_size(hdr, SUM_VALUES * sizeof(int64_t));
    tc_ifunc_peer_t *p = ifunc_pair_ring(s->mbox, 0);
    tc_frame_desc_t desc;
    int64_t *payload;
    unsigned j;

    memset(s->frame, 0, sizeof(s->frame));
    tc_frame_prepare(NULL, s->pkg, e, 0, &desc);
    desc.code_hash = e->span_hash;
    payload = (int64_t*)(s->frame + hdr);
    for (j = 0; j < SUM_VALUES; ++j) {
        payload[j] = sum_value(seq, j);
    }
    tc_frame_stamp_compact(s->frame, &desc, type, seq, 1, SUM_VALUES * sizeof(int64_t));
    switch (c) {
    case BAD_COMPACT_PKG:
        h->pkg_id = tc_frame_pkg_id("no_such_package");
        break;
    case BAD_COMPACT_SENDER:
        h->sender = 0;
        break;
    case BAD_COMPACT_SIZE:
        h->payload_size = SLOT;           /* past the slot's end */
        break;
    case BAD_COMPACT_TYPE:
        h->type = TC_FRAME_INJECTED;      /* code never travels compact */
        break;
    default:
        break;
    }
    h->check = tc_frame_compact_check(s->frame, size);
    ifunc_pair_sending(p, p->sent + 1);
    wait_req(s, ucp_put_nbx(p->ep, s->frame, size,
                            p->ring_addr + (uint64_t)seq * p->slot_size, p->rkey,
                            &(ucp_request_param_t){0}));
    ifunc_pair_stored(s->mbox, p);
}

static void send_bad(sender_t *s, bad_case_t c, uint32_t seq)
{
    tc_frame_hdr_t *h = (tc_frame_hdr_t*)s->frame;
    uint32_t size;

    switch (c) {
    case BAD_SIZE_ZERO:
        size = build_sum(s, TC_FRAME_LOCAL, seq);
        h->frame_size = 0;
        raw_put(s, seq, size, 1);
        return;
    case BAD_SIZE_BIG:
        size = build_sum(s, TC_FRAME_LOCAL, seq);
        h->frame_size = SLOT + 64;
        raw_put(s, seq, size, 1);
        return;
    case BAD_TRUNCATED:
        size = build_sum(s, TC_FRAME_LOCAL, seq);
        raw_put(s, seq, size, 0);          /* the trailer never comes */
        return;
    case BAD_UNKNOWN_PKG:
        size = build_sum(s, TC_FRAME_LOCAL, seq);
        h->pkg_id = tc_frame_pkg_id("no_such_package");
        break;
    case BAD_UNKNOWN_ELEMENT:
        size = build_sum(s, TC_FRAME_LOCAL, seq);
        h->element_id = 99;
        break;
    case BAD_HASH:
        /* other code, consistent with its own hash: not the installed element */
        size = build_sum(s, TC_FRAME_INJECTED, seq);
        s->frame[h->entry_offset + 1] ^= 0x40;
        h->code_hash = tc_frame_span_hash(s->frame + h->code_offset, h->code_size,
                                          h->got_offset - h->code_offset);
        break;
    case BAD_LOCAL_ONLY:
        size = build_sum(s, TC_FRAME_INJECTED, seq);
        break;
    case BAD_CACHE_MISS:
        size = build_sum(s, TC_FRAME_CACHED, seq);
        break;
    case BAD_OFFSET:
        size = build_sum(s, TC_FRAME_LOCAL, seq);
        h->payload_offset = size + 4096;   /* points outside the frame */
        break;
    case BAD_CHECKSUM:
        size = build_sum(s, TC_FRAME_LOCAL, seq);
        h->flags   |= TC_FRAME_F_CHECKSUM;
        h->checksum = tc_frame_checksum(h, s->frame) + 1;
        break;
    case BAD_SIGNAL:
        size = build_sum(s, TC_FRAME_LOCAL, seq);
        h->signal = 0xdeadbeef00000000ull | seq;
        break;
    case BAD_PORTABLE_NOT_BITCODE:
    case BAD_PORTABLE_TRIPLE:
    case BAD_PORTABLE_HASH:
    case BAD_PORTABLE_NOT_OURS:
    case BAD_PORTABLE_FORBIDDEN:
    case BAD_PORTABLE_UNRESOLVED:
    case BAD_PORTABLE_TOO_BIG:
    case BAD_PORTABLE_LOCAL_ONLY:
    case BAD_PORTABLE_LLVM_ABORT:
    case BAD_PORTABLE_LLVM_ABORT_CONFINE:
        size = send_bad_portable(s, c, seq);
        break;
    case BAD_COMPACT_PKG:
    case BAD_COMPACT_SENDER:
    case BAD_COMPACT_SIZE:
    case BAD_COMPACT_TYPE:
    case BAD_COMPACT_CACHE_MISS:
        send_bad_compact(s, c, seq);
        return;
    case BAD_LINK: {
        /* trust mode, code unlike the installed one: linked from its names,
         * one of which does not exist here */
        char *names;
        size = build_sum(s, TC_FRAME_INJECTED, seq);
        names = (char*)s->frame + h->symtab_offset;
        memcpy(names, "no_such_symbol_", 15);
        s->frame[h->entry_offset + 1] ^= 0x40;
        h->code_hash = tc_frame_span_hash(s->frame + h->code_offset, h->code_size,
                                          h->got_offset - h->code_offset);
        break;
    }
    default:
        fail("case");
        return;
    }
    resign(s, size);
    raw_put(s, seq, size, 1);
}

/* Until the receiver has given back the credits of a whole lap */
static void wait_first_lap_credits(sender_t *s, const char *failure)
{
    volatile uint64_t *credit = ifunc_pair_ring(s->mbox, 0)->credit;
    double deadline           = tc_ifunc_now() + 20;

    while ((*credit < DEPTH) && (tc_ifunc_now() < deadline)) {
        tc_progress(tc_ifunc_mailbox_engine(s->mbox));
    }
    if (*credit < DEPTH) {
        fail(failure);
    }
}

static void run_sender(sender_t *s, bad_case_t c)
{
    uint32_t seq, size;
    double deadline;

    if (tc_ifunc_pkg_element(s->pkg, "server_side_sum", &s->sum_id) != UCS_OK) {
        fail("no server_side_sum");
    }
    if (c == BAD_STALE_SIGNAL) {
        /* one correct lap, run and freed by the receiver ... */
        for (seq = 0; seq < DEPTH; ++seq) {
            size = build_sum(s, TC_FRAME_LOCAL, seq);
            raw_put(s, seq, size, 1);
        }
        tc_ifunc_mailbox_flush(s->mbox, 10.0);
        tc_ifunc_mailbox_barrier(s->mbox);
        wait_first_lap_credits(s, "no credits for the first lap");
        /* ... then frame 0's signal stored again into its cleared slot, as
         * a sender preempted between memcpy's two overlapping stores does;
         * it sits there longer than the trailer timeout ... */
        build_sum(s, TC_FRAME_LOCAL, 0);
        ifunc_pair_sending(ifunc_pair_ring(s->mbox, 0), ifunc_pair_ring(s->mbox, 0)->sent + 1);
        wait_req(s, ucp_put_nbx(ifunc_pair_ring(s->mbox, 0)->ep, s->frame, 8,
                                ifunc_pair_ring(s->mbox, 0)->ring_addr, ifunc_pair_ring(s->mbox, 0)->rkey,
                                &(ucp_request_param_t){0}));
        tc_ifunc_mailbox_flush(s->mbox, 10.0);
        ifunc_pair_stored(s->mbox, ifunc_pair_ring(s->mbox, 0));  /* the ring may sleep */
        deadline = tc_ifunc_now() + 0.2;
        while (tc_ifunc_now() < deadline) {
            tc_progress(tc_ifunc_mailbox_engine(s->mbox));
        }
        /* ... and the next lap's frame 0 must run as if nothing happened */
        size = build_sum(s, TC_FRAME_LOCAL, DEPTH);
        raw_put(s, 0, size, 1);
        tc_ifunc_mailbox_flush(s->mbox, 10.0);
        return;
    }
    if (c == BAD_CREDITS) {
        /* fill the ring, then write frame DEPTH over the unconsumed frame 0 */
        for (seq = 0; seq <= DEPTH; ++seq) {
            size = build_sum(s, TC_FRAME_LOCAL, seq);
            raw_put(s, seq % DEPTH, size, 1);
        }
        /* landed (emulated puts need the flush), then the receiver starts */
        tc_ifunc_mailbox_flush(s->mbox, 10.0);
        tc_ifunc_mailbox_barrier(s->mbox);
        /* behave again: wait for the credits of the first lap, then resend */
        wait_first_lap_credits(s, "no credits after the overwrite");
        size = build_sum(s, TC_FRAME_LOCAL, DEPTH);
        raw_put(s, 0, size, 1);
        return;
    }
    send_bad(s, c, 0);
    send_bad(s, c, 1);
    size = build_sum(s, TC_FRAME_LOCAL, 2);
    raw_put(s, 2, size, 1);
    tc_ifunc_mailbox_flush(s->mbox, 10.0);
    tc_ifunc_mailbox_barrier(s->mbox);
}

/* ---- a bad receiver: credit_past_sent ---- */

/* Rank 0 receives 2 good frames, then writes 2^40 into rank 1's credit word
 * for its ring (the line only it may write), as a receiver that counts
 * wrong would. Rank 1's next send must fail with UCS_ERR_REJECTED, counted
 * once in credit_faults, and never write the ring again. */
static void run_credit_liar(tc_ifunc_mailbox_h mbox, tc_ifunc_pkg_h pkg)
{
    static uint64_t lie = (uint64_t)1 << 40;
    static tc_write_header_t header;   /* lives until the write completes */
    tc_ifunc_rx_ring_t *rx;
    tc_ifunc_stats_t st;
    double deadline = tc_ifunc_now() + 20;

    do {
        tc_progress(tc_ifunc_mailbox_engine(mbox));
        tc_ifunc_poll(mbox, 0);
        tc_ifunc_mailbox_stats(mbox, &st);
    } while ((st.frames[0] < 2) && (tc_ifunc_now() < deadline));
    if (st.frames[0] != 2) {
        fail("the good frames did not run");
    }
    rx = mbox->peers[1]->rx;
    if (tc_ifunc_request_wait(tc_ifunc_mailbox_engine(mbox),
                              tc_write_lane_write(mbox->lane, mbox->peers[1]->lane,
                                                  mbox->peers[1]->ep, 0, &lie, sizeof(lie),
                                                  rx->credit_addr, rx->credit_rkey,
                                                  rx->credit_key,
                                                  &(ucp_request_param_t){0}, &header),
                              10.0) != UCS_OK) {
        fail("credit put");
    }
    tc_ifunc_mailbox_flush(mbox, 10.0);
    tc_ifunc_mailbox_barrier(mbox);   /* the lie landed */
    tc_ifunc_mailbox_barrier(mbox);   /* the sender tried */
    tc_ifunc_mailbox_stats(mbox, &st);
    printf("ifunc_bad rank 0: case credit_past_sent: frames run %" PRIu64 "\n",
           st.frames[0] + st.frames[1] + st.frames[2]);
    (void)pkg;
}

static void run_credit_victim(sender_t *s)
{
    tc_ifunc_msg_h msg;
    int64_t values[SUM_VALUES] = {1, 2, 3, 4, 5};
    tc_ifunc_stats_t st;
    ucs_status_t status = UCS_OK;
    double deadline;
    unsigned k, tries = 0;

    if ((tc_ifunc_pkg_element(s->pkg, "server_side_sum", &s->sum_id) != UCS_OK) ||
        (tc_ifunc_msg_create(s->mbox, s->pkg, s->sum_id, TC_IFUNC_MODE_LOCAL, values,
                             sizeof(values), &msg) != UCS_OK)) {
        fail("msg_create");
    }
    for (k = 0; k < 2; ++k) {
        deadline = tc_ifunc_now() + 20;
        while (((status = tc_ifunc_send(s->mbox, 0, msg)) == UCS_ERR_NO_RESOURCE) &&
               (tc_ifunc_now() < deadline)) {
            tc_progress(tc_ifunc_mailbox_engine(s->mbox));
        }
        if ((tc_ifunc_msg_wait(msg) != UCS_OK) || (status == UCS_ERR_NO_RESOURCE)) {
            fail("good send");
        }
    }
    tc_ifunc_mailbox_barrier(s->mbox);   /* the lie was written */
    /* landed: over the active-message lane it is stored by our progress */
    deadline = tc_ifunc_now() + 10;
    while ((*(volatile uint64_t*)s->mbox->peers[0]->credit <= 2) &&
           (tc_ifunc_now() < deadline)) {
        tc_progress(tc_ifunc_mailbox_engine(s->mbox));
    }
    /* once is a word maybe half stored (a stall), twice is the receiver's fault */
    deadline = tc_ifunc_now() + 5;
    while (((status = tc_ifunc_send(s->mbox, 0, msg)) == UCS_ERR_NO_RESOURCE) &&
           (tc_ifunc_now() < deadline)) {
        ++tries;
        tc_progress(tc_ifunc_mailbox_engine(s->mbox));
    }
    tc_ifunc_mailbox_stats(s->mbox, &st);
    printf("ifunc_bad rank 1: case credit_past_sent: send %s after %u stalls, credit faults "
           "%" PRIu64 "\n", ucs_status_string(status), tries, st.credit_faults);
    if ((status != UCS_ERR_REJECTED) || (st.credit_faults != 1) ||
        (tc_ifunc_send(s->mbox, 0, msg) != UCS_ERR_REJECTED) ||
        (st.sent[0] != 2)) {
        fail("the lie was not refused");
    }
    tc_ifunc_msg_free(msg);
    tc_ifunc_mailbox_barrier(s->mbox);   /* the sender tried */
}

/* ---- the receiver ---- */

static void run_receiver(tc_ifunc_mailbox_h mbox, tc_ifunc_pkg_h pkg, bad_case_t c)
{
    int64_t *acc      = tc_ifunc_pkg_symbol(pkg, "tcbench_accumulator");
    int good          = (c == BAD_CREDITS)      ? DEPTH :
                        (c == BAD_STALE_SIGNAL) ? DEPTH + 1 : 1; /* frames that must run */
    uint64_t expected = (uint64_t)cases[c].bad_frames + good;
    int64_t sum       = 0;
    double deadline   = tc_ifunc_now() + 20;
    tc_ifunc_stats_t st;
    uint32_t seq;
    unsigned j;

    tc_ifunc_mailbox_barrier(mbox);                  /* the sender wrote */
    do {
        tc_progress(tc_ifunc_mailbox_engine(mbox));
        tc_ifunc_poll(mbox, 0);
        tc_ifunc_mailbox_stats(mbox, &st);
    } while ((st.frames[0] + st.frames[1] + st.frames[2] + st.frames[3] +
              st.rejects_total < expected) &&
             (tc_ifunc_now() < deadline));

    if (c == BAD_STALE_SIGNAL) {
        for (seq = 0; seq <= DEPTH; ++seq) {
            for (j = 0; j < SUM_VALUES; ++j) {
                sum += sum_value(seq, j);
            }
        }
    } else if (c == BAD_CREDITS) {
        for (seq = 1; seq <= DEPTH; ++seq) {     /* frame 0 was overwritten */
            for (j = 0; j < SUM_VALUES; ++j) {
                sum += sum_value(seq, j);
            }
        }
    } else {
        for (j = 0; j < SUM_VALUES; ++j) {
            sum += sum_value(2, j);
        }
    }
    printf("ifunc_bad rank 0: case %s: rejected %" PRIu64 " (%s %" PRIu64 "), ran %" PRIu64
           ", sum %" PRId64 " (expected %" PRId64 ")\n", cases[c].name, st.rejects_total,
           tc_ifunc_reject_name(cases[c].reason), st.rejects[cases[c].reason],
           st.frames[0] + st.frames[1] + st.frames[2], *acc, sum);
    if ((st.rejects[cases[c].reason] != (uint64_t)cases[c].bad_frames) ||
        (st.rejects_total != (uint64_t)cases[c].bad_frames)) {
        fail("wrong rejects");
    }
    if ((st.frames[0] + st.frames[1] + st.frames[2] != (uint64_t)good) || (*acc != sum)) {
        fail("the good frames did not all run correctly");
    }
    if ((c == BAD_STALE_SIGNAL) && (st.stale_signals == 0)) {
        fail("the stale signal was never seen");
    }
}

int main(int argc, char **argv)
{
    tc_ifunc_mailbox_params_t params = {0};
    tc_ifunc_mailbox_h mbox;
    static sender_t sender;
    tc_bootstrap_h boot;
    tc_ifunc_pkg_h pkg;
    tc_ifunc_ucp_t ucp;
    bad_case_t c;

    for (c = 0; c < BAD_LAST; ++c) {
        if ((argc == 2) && (strcmp(argv[1], cases[c].name) == 0)) {
            break;
        }
    }
    if (c == BAD_LAST) {
        fprintf(stderr, "usage: ifunc_bad CASE\n");
        return 2;
    }
    if (ifunc_pair_start(&boot, &g_rank, &ucp, &pkg) != 0) {
        return 2;
    }

    params.field_mask      = TC_IFUNC_MAILBOX_PARAM_FIELD_SLOT_SIZE |
                             TC_IFUNC_MAILBOX_PARAM_FIELD_RING_DEPTH |
                             TC_IFUNC_MAILBOX_PARAM_FIELD_SECURITY |
                             TC_IFUNC_MAILBOX_PARAM_FIELD_FLAGS |
                             TC_IFUNC_MAILBOX_PARAM_FIELD_TRAILER_TIMEOUT;
    params.slot_size       = SLOT;
    params.ring_depth      = DEPTH;
    params.security        = cases[c].security;
    params.flags           = TC_IFUNC_MAILBOX_FLAG_NO_POLLER;
    params.trailer_timeout = 0.05;
    if (tc_ifunc_mailbox_create(ucp.context, ucp.engine, boot, &params, &mbox) != UCS_OK) {
        return 2;
    }
    tc_ifunc_mailbox_barrier(mbox);

    if (c == BAD_CREDIT_PAST_SENT) {
        sender.mbox = mbox;
        sender.pkg  = pkg;
        if (g_rank == 1) {
            run_credit_victim(&sender);
        } else {
            run_credit_liar(mbox, pkg);
        }
    } else if (g_rank == 1) {
        sender.mbox = mbox;
        sender.pkg  = pkg;
        run_sender(&sender, c);
    } else {
        run_receiver(mbox, pkg, c);
    }
    tc_ifunc_mailbox_destroy(mbox);
    tc_ifunc_pkg_unload(pkg);
    tc_ifunc_ucp_cleanup(&ucp);
    tc_bootstrap_destroy(boot);
    printf("ifunc_bad rank %d: case %s: OK\n", g_rank, cases[c].name);
    return 0;
}
