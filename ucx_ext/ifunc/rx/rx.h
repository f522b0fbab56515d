/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The receive path (slot.c, run.c, checked_frame.c, portable_run.c): a slot
 * looked at, its frame validated and run, or rejected.
 */
#ifndef TC_IFUNC_RX_H_
#define TC_IFUNC_RX_H_

#include "ifunc/code/package.h"
#include "ifunc/portable/portable.h"
#include "ifunc/receiver/receiver.h"
#include "ifunc/wire/frame.h"

#include <twochains/ifunc.h>

#include <ucs/sys/compiler_def.h>
#include <stdint.h>

BEGIN_C_DECLS

typedef enum {
    TC_IFUNC_SLOT_EMPTY,     /* nothing arrived */
    TC_IFUNC_SLOT_PENDING,   /* arriving: come back later */
    TC_IFUNC_SLOT_RUN,       /* a frame ran; slot freed */
    TC_IFUNC_SLOT_REJECTED   /* a frame was rejected; slot freed */
} tc_ifunc_slot_result_t;

/* The frame behind the non-zero signal @a sig at @a slot: see below. */
tc_ifunc_slot_result_t tc_ifunc_slot_process_frame(tc_ifunc_rx_t *rx,
                                                   tc_ifunc_ring_t *ring,
                                                   uint8_t *slot,
                                                   uint32_t slot_size,
                                                   uint64_t expect_seq,
                                                   uint64_t sig);

/* (checked_frame.c) The checked frame (frame.h) whose signal @a sig, with
 * TC_FRAME_MAGIC_CHECKED, is at @a buffer of ucp_poll_ifunc: run, rejected,
 * still arriving, or a late second store of one already run (EMPTY). Writes
 * only the signal word of a frame it is done with. */
tc_ifunc_slot_result_t tc_ifunc_slot_process_checked(tc_ifunc_rx_t *rx,
                                                     tc_ifunc_ring_t *ring,
                                                     uint8_t *buffer,
                                                     uint32_t buffer_size,
                                                     uint64_t sig);

/* (checked_frame.c) The checked frame of signal @a sig and check @a check
 * is one of the last this process ran: a late second store of it */
int tc_checked_recently_run(uint64_t sig, uint64_t check);

/* A frame that began to arrive is still incomplete: 1 once it has been so
 * for the trailer timeout (and the wait is accounted), 0 while it may come */
int tc_ifunc_slot_timed_out(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring);

/* The compact frame (frame.h) whose format and expected seq are at @a slot
 * of a mailbox ring: run, rejected, or still arriving. Never writes the slot. */
tc_ifunc_slot_result_t tc_ifunc_slot_process_compact(tc_ifunc_rx_t *rx,
                                                     tc_ifunc_ring_t *ring,
                                                     uint8_t *slot,
                                                     uint32_t slot_size,
                                                     uint64_t expect_seq);

/* A full frame whose header passed tc_frame_check_header: Local, Injected,
 * Portable or Cached, run or rejected (detail in @a detail) */
tc_ifunc_reject_t tc_ifunc_run_frame(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                                     const tc_frame_hdr_t *h, uint8_t *slot,
                                     char *detail, size_t detail_len);

/* A Portable frame whose header passed tc_frame_check_header, up to its
 * call: the module compiled for it (READY, in @a entry_p, pinned for the
 * ring's Cached frames if the frame asks), TC_IFUNC_PORTABLE_WAIT while it
 * compiles (queued now if it is new), or why not. Reads the frame's module
 * (trust, a new hash) and entry name, never its payload: a caller that
 * frees the buffer before the call does it after this */
tc_ifunc_reject_t tc_ifunc_portable_stage(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                                          const tc_frame_hdr_t *h, const uint8_t *slot,
                                          tc_portable_code_t **entry_p, char *detail,
                                          size_t detail_len);

/* The call of a staged frame (nothing with install_only), which lets go
 * of the entry the stage held: every successful stage is followed by it */
void tc_ifunc_portable_run(tc_ifunc_rx_t *rx, tc_portable_code_t *entry,
                           void *payload, uint32_t payload_size);

/* Both: run (or reject) a Portable frame; TC_IFUNC_PORTABLE_WAIT while its
 * module compiles */
/* A carrier's (a group's) Portable frame with its module, security confine:
 * as tc_ifunc_run_portable; TC_IFUNC_PORTABLE_WAIT while its module
 * compiles, and the carrier runs it again later (TC_IFUNC_EXEC_PENDING) */
tc_ifunc_reject_t tc_ifunc_run_portable_in_order(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                                                 const tc_frame_hdr_t *h, uint8_t *slot,
                                                 void *payload, char *detail,
                                                 size_t detail_len);

tc_ifunc_reject_t tc_ifunc_run_portable(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                                        const tc_frame_hdr_t *h, uint8_t *slot,
                                        void *payload, char *detail, size_t detail_len);

/* Run (or reject) a group's Portable frame (TC_FRAME_F_HASHES): this
 * member's own package's module of the hash its architecture has in the
 * frame, compiled before the group (tc_ifunc_portable_prepare), or now,
 * holding the caller, when it was not */
tc_ifunc_reject_t tc_ifunc_run_portable_hashes(tc_ifunc_rx_t *rx, const tc_frame_hdr_t *h,
                                               const uint8_t *frame, void *payload,
                                               char *detail, size_t detail_len);

/* The registered package a frame names; one it names by name may be
 * registered now (rx->autoload, as the public API does on arrival) */
tc_ifunc_pkg_h tc_ifunc_frame_pkg(tc_ifunc_rx_t *rx, const tc_frame_hdr_t *h);

END_C_DECLS

#endif
