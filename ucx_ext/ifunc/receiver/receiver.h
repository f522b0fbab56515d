/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * What every receiver keeps (ring.c): its policy, code cache and statistics
 * (tc_ifunc_rx_t), and per sender a ring of frames with the codes its Cached
 * frames name and the GOT tables of trust-mode links (tc_ifunc_ring_t).
 */
#ifndef TC_IFUNC_RECEIVER_H_
#define TC_IFUNC_RECEIVER_H_

#include "ifunc/code/code_cache.h"
#include "ifunc/wire/frame.h"

#include <twochains/ifunc.h>
#include <twochains/lane.h>

#include <ucs/datastruct/khash.h>
#include <ucs/sys/compiler_def.h>
#include <stdint.h>
#include <time.h>

BEGIN_C_DECLS

/* ---- receive side (ring.c) ---- */

/* A GOT table built from the symbol names in a peer's frame (trust mode) */
typedef struct tc_ifunc_link {
    uint64_t              pkg_id;
    uint32_t              element_id;
    uint64_t              code_hash;
    void                  **got;
    struct tc_ifunc_link  *next;
} tc_ifunc_link_t;

KHASH_MAP_INIT_INT64(tc_cached, tc_code_entry_t*)

/* Frames from one sender: a ring of a mailbox, or a ucp_poll_ifunc buffer */
typedef struct tc_ifunc_ring {
    uint8_t            *base;           /* slot 0 */
    uint64_t           expect;          /* seq of the next frame = consumed */
    uint8_t            *head;           /* its slot: no division per poll */
    uint64_t           published;       /* consumed count last put to the sender */
    void               *credit_req;     /* credit put in flight */
    tc_write_header_t  credit_header;   /* the write lane's, while it is */
    int                peer;            /* sender rank, -1: unknown */
    uint32_t           depth;           /* slots; 0: no sequence (ucp_poll_ifunc) */
    int                trailer_mode;    /* the sender uses TC_IFUNC_SIGNAL_TRAILER */
    double             pending_since;   /* > 0: head frame incomplete since */
    uint64_t           last_signal;     /* of the last frame run or rejected here */
    uint64_t           last_check;      /* its check (checked frames), 0 if incomplete */
    khash_t(tc_cached) cached;          /* code_hash -> code, for Cached frames */
    tc_ifunc_link_t    *links;
    uint32_t           warned;          /* reasons already logged (bits) */
    int                portable_waiting;  /* its head frame waits for a compile... */
    uint64_t           portable_wait_for; /* ... of the module of this hash */
} tc_ifunc_ring_t;

TC_STATIC_ASSERT(TC_IFUNC_REJECT_LAST <= 32, "warned bits");

/* What every receiver has: policy, code cache, statistics */
typedef struct tc_ifunc_rx {
    tc_ifunc_security_t  security;
    tc_ifunc_placement_t placement;
    double               trailer_timeout;
    void                 *target_args;
    size_t               target_size;   /* what a confined jam may touch at it */
    void                 *state;        /* a group's state: a confined jam's too */
    size_t               state_size;
    uint32_t             trap_warned;   /* confine traps already logged (bits) */
    tc_ifunc_trap_t      last_trap;     /* of the last confined run */
    int                  rank;          /* for log lines, -1 if none */
    /* NULL, or loads the package a TC_FRAME_F_NAMED frame names (its name
     * checked by tc_frame_name_ok); returns it with a reference kept */
    tc_ifunc_pkg_h       (*autoload)(const tc_frame_hdr_t *hdr);
    tc_code_cache_t      cache;
    tc_ifunc_stats_t     *stats;
    int                  install_only;  /* Injected code is placed and linked, not
                                           called (codes of a state transfer) */
    int                  portable_wait; /* a Portable frame may wait here for its
                                           module's compile and keep its place:
                                           mailbox rings and caller-managed
                                           buffers, not carriers that deliver
                                           in one order */
} tc_ifunc_rx_t;

void tc_ifunc_ring_init(tc_ifunc_ring_t *ring, uint8_t *base, int peer,
                        uint32_t depth);
void tc_ifunc_ring_cleanup(tc_ifunc_ring_t *ring);

static inline double tc_ifunc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Count and log (once per reason and ring) a rejected frame */
void tc_ifunc_reject(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                     tc_ifunc_reject_t reason, uint32_t seq, unsigned type,
                     uint32_t element_id, const char *detail);

END_C_DECLS

#endif
