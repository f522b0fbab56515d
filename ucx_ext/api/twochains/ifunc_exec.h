/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Jams carried by another protocol: frames that a sender lays out in memory
 * of its choosing and that a receiver runs from memory nothing else writes
 * while they run (the replication layer's delivered slots, where a jam
 * travels in the group's total order and runs at every member).
 *
 * Same packages, frame format (ucx_ext/ifunc/wire/frame.h: compact Local and
 * Cached frames, full frames with code), security modes, code cache and
 * reject reasons as the mailbox; no rings, signals, credits or check words:
 * the carrier delivers the bytes the sender wrote, whole, once, in its order. Code always runs from the
 * executor's code cache (placement copy): a frame is never written.
 *
 * Cached mode is group-wide: an Injected frame with the cache flag leaves
 * its code in the executor, named by its hash, and later Cached frames from
 * any sender name it. A sender asks its own executor (tc_ifunc_exec_plan_frame):
 * code that ran here goes by hash, other code in full. Delivered in one
 * total order, a frame that carried the code precedes every frame that
 * names it, at every member.
 *
 * Threads: one executor belongs to one thread (the carrier's delivery
 * thread), which also plans and writes its frames.
 */
#ifndef TWOCHAINS_IFUNC_EXEC_H_
#define TWOCHAINS_IFUNC_EXEC_H_

#include <twochains/ifunc.h>

#include <stddef.h>
#include <stdint.h>

BEGIN_C_DECLS

typedef struct tc_ifunc_exec *tc_ifunc_exec_h;

/** @a security: which frames run (tc_ifunc_security_t, as in a mailbox). */
ucs_status_t tc_ifunc_exec_create(tc_ifunc_security_t security, tc_ifunc_exec_h *exec_p);
void tc_ifunc_exec_destroy(tc_ifunc_exec_h exec);
tc_ifunc_security_t tc_ifunc_exec_security(tc_ifunc_exec_h exec);

/**
 * The packages every receiver has, with the same code (the carrier checked
 * that, e.g. with tc_ifunc_pkg_code_digest): frames of any other package are
 * rejected, and a package, element or hash reject is then the same at every
 * receiver (result->diverges is 0). Without it any registered package runs.
 */
ucs_status_t tc_ifunc_exec_declare(tc_ifunc_exec_h exec, const tc_ifunc_pkg_h *pkgs,
                                   unsigned count);

/**
 * Security `confine`: what a confined jam may touch besides its payload and
 * stack: @a target_size bytes at every run's target_args (a group's
 * tc_jam_replica_t), and the state at @a state (@a state_size bytes).
 */
void tc_ifunc_exec_confine_regions(tc_ifunc_exec_h exec, size_t target_size, void *state,
                                   size_t state_size);

/* ---- sending ---- */

/** One jam to send: element @a element_id of @a pkg, its payload from
 *  payload_init (else a copy of the source arguments). */
typedef struct tc_ifunc_exec_jam {
    tc_ifunc_pkg_h  pkg;
    uint32_t        element_id;
    tc_ifunc_mode_t mode;
    void            *source_args;
    size_t          source_args_size;
} tc_ifunc_exec_jam_t;

/** What one frame of a jam will be, decided before its bytes are written */
typedef struct tc_ifunc_exec_plan {
    size_t   capacity;          /**< bytes to reserve for the frame */
    size_t   known_capacity;    /**< what a frame of the jam reserves once its code is
                                     known here (Cached: the hash-only frame; else
                                     @a capacity): what slots need after the first */
    uint32_t payload_capacity;
    uint8_t  type;              /**< frame type (Local 1, Injected 2, Cached 3) */
    uint8_t  compact;           /**< a compact frame (no code) */
    uint8_t  with_code;         /**< the frame carries the code */
} tc_ifunc_exec_plan_t;

/**
 * Plan a frame of @a jam: Local frames name the element; Injected frames
 * carry the code; Cached frames carry it until this executor has run it,
 * then only its hash.
 * @return UCS_ERR_INVALID_PARAM (no such element, an undeclared package, bad mode),
 *         UCS_ERR_UNSUPPORTED (code in a local-only executor, Cached with
 *         writable globals), each logged.
 */
ucs_status_t tc_ifunc_exec_plan_frame(tc_ifunc_exec_h exec, const tc_ifunc_exec_jam_t *jam,
                                      tc_ifunc_exec_plan_t *plan);

/**
 * Write the planned frame into @a buf (plan->capacity bytes): the code,
 * then the payload in place. *@a size_p: the frame's bytes.
 * @return UCS_ERR_CANCELED if payload_init failed, UCS_ERR_EXCEEDS_LIMIT if
 *         it wrote more than its capacity.
 */
ucs_status_t tc_ifunc_exec_write_frame(tc_ifunc_exec_h exec, const tc_ifunc_exec_jam_t *jam,
                                       const tc_ifunc_exec_plan_t *plan, void *buf,
                                       size_t *size_p);

/* ---- running ---- */

typedef struct tc_ifunc_exec_result {
    tc_ifunc_reject_t reason;     /**< TC_IFUNC_REJECT_NONE: it ran */
    /** A reject that depends on this member (its packages, its builds, its
     *  code cache), not on the frame, the security mode and the declared
     *  packages alone: a member that ran it and one that did not would
     *  diverge. A frame whose code does not hash to its own header is
     *  corrupt, the same everywhere: it does not diverge. */
    int               diverges;
    uint8_t           type;       /**< frame type, 0 if unreadable */
    uint64_t          pkg_id;
    uint32_t          element_id;
    const void        *payload;
    size_t            payload_size;
    tc_ifunc_trap_t   trap;       /**< a confined run that ended early: why */
    char              detail[192];
} tc_ifunc_exec_result_t;

/** tc_ifunc_exec_run's result for a frame whose module is still compiling
 *  (security confine, a module this member does not have): nothing ran and
 *  nothing was counted; the carrier runs the same frame again later, and
 *  lets nothing after it pass meanwhile, while its engine goes on. */
#define TC_IFUNC_EXEC_PENDING TC_IFUNC_REJECT_LAST

/**
 * Validate the complete frame at @a frame (@a size bytes, the carrier's
 * message) and run it with @a target_args, or reject it. Counts it in the
 * executor's statistics; logs nothing (the carrier knows the sender).
 * @return result->reason
 */
tc_ifunc_reject_t tc_ifunc_exec_run(tc_ifunc_exec_h exec, const void *frame, size_t size,
                                    void *target_args, tc_ifunc_exec_result_t *result);

/** Codes Cached frames may name here */
unsigned tc_ifunc_exec_codes(tc_ifunc_exec_h exec);

/**
 * Those codes as bytes, for a newcomer (a group's state transfer):
 * malloc()ed into *@a data_p (NULL when none).
 */
ucs_status_t tc_ifunc_exec_export(tc_ifunc_exec_h exec, void **data_p, size_t *size_p);

/**
 * Take the codes of tc_ifunc_exec_export(), each checked as its frame was
 * (this executor's security mode). @return UCS_ERR_INVALID_PARAM (malformed)
 * or UCS_ERR_REJECTED (a code this member may not run), with the reason in
 * @a result.
 */
ucs_status_t tc_ifunc_exec_import(tc_ifunc_exec_h exec, const void *data, size_t size,
                                  tc_ifunc_exec_result_t *result);

void tc_ifunc_exec_stats(tc_ifunc_exec_h exec, tc_ifunc_stats_t *stats);

END_C_DECLS

#endif
