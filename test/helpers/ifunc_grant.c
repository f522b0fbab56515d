/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * ifunc_grant: a hostile mailbox whose control messages name put targets
 * outside what it registered. Started by twochains-run with 2 ranks; rank 1
 * is hostile: it runs the real mailbox, but this program interposes
 * ucp_am_send_nbx and moves the address of its GRANT (case "grant": its
 * ring, to just past the ring) or of its REQUEST (case "request": its
 * credit line, a page past it) before the message goes out. Over shared
 * memory an honest rank that used such an address would store into its own
 * memory next to the peer's mapping. Rank 0 must refuse it: no ring (or no
 * credit line) with it, the reject counted once and logged once. Prints
 * "ifunc_grant rank R: case NAME: OK" and exits 0 only then.
 *
 * Usage: ifunc_grant grant|request
 */
#define _GNU_SOURCE
#include "ifunc_pair.h"

#include <twochains/am_ids.h>
#include <twochains/ifunc.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOT  1024
#define DEPTH 16

/* the control header's layout (ucx_ext/ifunc/mailbox/peer_rings.c) */
#define CONTROL_TYPE_OFFSET    4
#define CONTROL_ADDR_OFFSET    32
#define CONTROL_TYPE_REQUEST   1
#define CONTROL_TYPE_GRANT     2

static int      g_rank;
static uint16_t g_forge_type;   /* 0: honest */
static uint64_t g_forge_shift;

typedef ucs_status_ptr_t (*am_send_t)(ucp_ep_h, unsigned, const void*, size_t, const void*,
                                      size_t, const ucp_request_param_t*);

/* libtwochains' calls come here first: the executable defines the symbol */
ucs_status_ptr_t ucp_am_send_nbx(ucp_ep_h ep, unsigned id, const void *header,
                                 size_t header_length, const void *buffer, size_t count,
                                 const ucp_request_param_t *param)
{
    static am_send_t real;
    uint16_t type;
    uint64_t addr;

    if (real == NULL) {
        real = (am_send_t)dlsym(RTLD_NEXT, "ucp_am_send_nbx");
    }
    if ((g_forge_type != 0) && (id == TC_IFUNC_CONTROL_AM_ID) &&
        (header_length >= CONTROL_ADDR_OFFSET + sizeof(addr))) {
        memcpy(&type, (const char*)header + CONTROL_TYPE_OFFSET, sizeof(type));
        if (type == g_forge_type) {
            /* the mailbox's own buffer, alive until the send completes */
            memcpy(&addr, (const char*)header + CONTROL_ADDR_OFFSET, sizeof(addr));
            addr += g_forge_shift;
            memcpy((char*)header + CONTROL_ADDR_OFFSET, &addr, sizeof(addr));
            printf("ifunc_grant rank %d: forged the %s address\n", g_rank,
                   (type == CONTROL_TYPE_GRANT) ? "grant" : "request");
            fflush(stdout);
        }
    }
    return real(ep, id, header, header_length, buffer, count, param);
}

static void fail(const char *what)
{
    printf("ifunc_grant rank %d: FAIL: %s\n", g_rank, what);
    fflush(stdout);
    exit(1);
}

/* progress until @a done says so (or 10 s) */
static int progress_until(tc_ifunc_mailbox_h mbox, int (*done)(tc_ifunc_mailbox_h))
{
    double deadline = tc_ifunc_now() + 10;

    while (!done(mbox)) {
        tc_progress(tc_ifunc_mailbox_engine(mbox));
        if (tc_ifunc_now() > deadline) {
            return 0;
        }
    }
    return 1;
}

static int rejected_one(tc_ifunc_mailbox_h mbox)
{
    tc_ifunc_stats_t s;

    tc_ifunc_mailbox_stats(mbox, &s);
    return s.control_rejects >= 1;
}

static int answered(tc_ifunc_mailbox_h mbox)
{
    tc_ifunc_stats_t s;

    tc_ifunc_mailbox_stats(mbox, &s);
    return s.rings_granted >= 1 || s.control_rejects >= 1;
}

int main(int argc, char **argv)
{
    tc_ifunc_mailbox_params_t params = {0};
    tc_ifunc_mailbox_h mbox;
    tc_bootstrap_h boot;
    tc_ifunc_pkg_h pkg;
    tc_ifunc_ucp_t ucp;
    tc_ifunc_stats_t s;
    ucs_status_t status;
    int grant;

    if ((argc != 2) || (strcmp(argv[1], "grant") && strcmp(argv[1], "request"))) {
        fprintf(stderr, "usage: ifunc_grant grant|request\n");
        return 2;
    }
    grant = !strcmp(argv[1], "grant");
    if (ifunc_pair_start(&boot, &g_rank, &ucp, &pkg) != 0) {
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    params.field_mask = TC_IFUNC_MAILBOX_PARAM_FIELD_SLOT_SIZE |
                        TC_IFUNC_MAILBOX_PARAM_FIELD_RING_DEPTH |
                        TC_IFUNC_MAILBOX_PARAM_FIELD_FLAGS;
    params.slot_size  = SLOT;
    params.ring_depth = DEPTH;
    params.flags      = TC_IFUNC_MAILBOX_FLAG_NO_POLLER;
    if (tc_ifunc_mailbox_create(ucp.context, ucp.engine, boot, &params, &mbox) != UCS_OK) {
        return 2;
    }
    if (g_rank == 1) {
        g_forge_type  = grant ? CONTROL_TYPE_GRANT : CONTROL_TYPE_REQUEST;
        g_forge_shift = grant ? (uint64_t)SLOT * DEPTH : 4096;
    }
    tc_ifunc_mailbox_barrier(mbox);

    if (grant) {
        /* rank 0 asks rank 1 for a ring; rank 1 grants one past its end */
        if (g_rank == 0) {
            while ((status = tc_ifunc_mailbox_connect(mbox, 1)) == UCS_INPROGRESS) {
                tc_progress(tc_ifunc_mailbox_engine(mbox));
            }
            if (status == UCS_OK) {
                fail("a ring outside the peer's registration was taken");
            }
        } else if (!progress_until(mbox, answered)) {
            fail("no request came");
        }
    } else {
        /* rank 1 asks rank 0 for a ring, with a credit line a page off */
        if (g_rank == 1) {
            while ((status = tc_ifunc_mailbox_connect(mbox, 0)) == UCS_INPROGRESS) {
                tc_progress(tc_ifunc_mailbox_engine(mbox));
            }
            if (status == UCS_OK) {
                fail("rank 0 granted a ring for a credit line outside its registration");
            }
        } else if (!progress_until(mbox, rejected_one)) {
            fail("the request was not refused");
        }
    }
    tc_ifunc_mailbox_stats(mbox, &s);
    if (g_rank == 0) {
        if (s.control_rejects != 1) {
            fail("the reject was not counted once");
        }
        if (!grant && (s.rings_granted != 0)) {
            fail("a ring was granted");
        }
    }
    tc_ifunc_mailbox_barrier(mbox);
    g_forge_type = 0;
    tc_ifunc_mailbox_destroy(mbox);
    tc_ifunc_pkg_unload(pkg);
    tc_ifunc_ucp_cleanup(&ucp);
    tc_bootstrap_destroy(boot);
    printf("ifunc_grant rank %d: case %s: OK\n", g_rank, argv[1]);
    return 0;
}
