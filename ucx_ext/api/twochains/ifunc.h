/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Two-Chains: ship a C function ("jam") and its payload to another process
 * with one-sided puts into a pinned mailbox; the receiver runs it on arrival.
 *
 *  - Packages (tc_ifunc_pkg_*): what twochains-pkg built -- a manifest, the
 *    Local Function library, rieds and injectable spans. Load them on both
 *    sides; the sender needs them for payload init and code, the receiver
 *    for Local frames, for `verify` and for its GOT tables.
 *  - Mailboxes (tc_ifunc_mailbox_*): collective over a bootstrap. Every rank
 *    maps (ucp_mem_map) one ring of fixed-size slots per sender and
 *    publishes the rkey; credits flow back one-sided. A poller on the shared
 *    progress engine runs arriving frames; tc_ifunc_poll() drives it by hand.
 *  - Messages (tc_ifunc_msg_*): built once in registered memory, re-sent
 *    without a copy; tc_ifunc_send() is one put (a compact frame with its
 *    check word), or a put, a fence and the signal (a frame with code).
 *
 * Frame types (tc_ifunc_mode_t): Local (element id), Injected (code in the
 * frame), Cached (the code once, then only its hash). Wire format:
 * ucx_ext/ifunc/wire/frame.h.
 *
 * Back-pressure: a send to a ring without credits returns
 * UCS_ERR_NO_RESOURCE (counted as a credit stall); the caller progresses the
 * engine and retries. A slot is never overwritten before it was consumed.
 *
 * Threads: a mailbox belongs to the thread that drives its engine; sends,
 * polls and message calls happen on that thread (the worker is
 * single-threaded). Packages may be loaded from any thread.
 *
 * The public Two-Chains calls (ucp_register_ifunc, ...) are in
 * <twochains/ucp_ifunc.h>.
 */
#ifndef TWOCHAINS_IFUNC_H_
#define TWOCHAINS_IFUNC_H_

#include <twochains/bootstrap.h>
#include <twochains/progress.h>
#include <ucp/api/ucp.h>
#include <ucs/config/types.h>
#include <stdint.h>
#include <stdio.h>

BEGIN_C_DECLS

typedef struct tc_ifunc_pkg     *tc_ifunc_pkg_h;
typedef struct tc_ifunc_mailbox *tc_ifunc_mailbox_h;
typedef struct tc_ifunc_msg     *tc_ifunc_msg_h;

/** UCX_TC_IFUNC_SECURITY: which frames a receiver runs. */
typedef enum tc_ifunc_security {
    TC_IFUNC_SECURITY_LOCAL_ONLY, /**< Local frames only: no code accepted */
    TC_IFUNC_SECURITY_VERIFY,     /**< injected code must equal, by hash and
                                       bytes, the installed element (default) */
    TC_IFUNC_SECURITY_TRUST,      /**< any code from a connected peer (paper);
                                       links code of packages not installed
                                       here from the symbol names it carries */
    TC_IFUNC_SECURITY_CONFINE,    /**< as verify for our own code; a Portable
                                       module we do not have is checked,
                                       rewritten and run confined to its
                                       payload, its target's declared size, a
                                       group's state and its own stack, with
                                       fuel (docs/security.md) */
    TC_IFUNC_SECURITY_LAST
} tc_ifunc_security_t;

/**
 * UCX_TC_IFUNC_PLACEMENT: where injected code runs.
 *
 * With `inplace` the code runs from the slot, which the sender can still
 * write: `verify` checks the bytes before the call, but a peer that writes
 * into a slot it does not own (ignoring its credits) could change them after
 * the check. `copy` runs receiver-owned read+execute copies and has no such
 * window. Jams with writable globals (TC_JAM_F_WRITABLE_DATA) need `inplace`
 * and cannot be Cached.
 */
typedef enum tc_ifunc_placement {
    TC_IFUNC_PLACEMENT_COPY,    /**< copied into an RX code cache (W^X, default) */
    TC_IFUNC_PLACEMENT_INPLACE, /**< in the slot: RWX mailbox (paper's compact mode) */
    TC_IFUNC_PLACEMENT_LAST
} tc_ifunc_placement_t;

/** UCX_TC_IFUNC_SIGNAL: how "data, then signal" is ordered (see frame.h). */
typedef enum tc_ifunc_signal {
    TC_IFUNC_SIGNAL_FENCE,   /**< frame put, ucp_worker_fence, signal put */
    TC_IFUNC_SIGNAL_TRAILER, /**< one put; relies on in-order landing */
    TC_IFUNC_SIGNAL_CHECK,   /**< compact Local and Cached frames in one put with a
                                  check word (default); full frames as fence */
    TC_IFUNC_SIGNAL_LAST
} tc_ifunc_signal_t;

/** UCX_TC_IFUNC_PUBLIC_CODE: the code a public-API frame carries. */
typedef enum tc_ifunc_public_code {
    TC_IFUNC_PUBLIC_CODE_INJECTED, /**< the GOT-patched span (default) */
    TC_IFUNC_PUBLIC_CODE_PORTABLE, /**< the sender's architecture's LLVM module,
                                        compiled by the receiver once per hash */
    TC_IFUNC_PUBLIC_CODE_LAST
} tc_ifunc_public_code_t;

/** What a message sends. */
typedef enum tc_ifunc_mode {
    TC_IFUNC_MODE_LOCAL,    /**< element id; receiver calls its own copy */
    TC_IFUNC_MODE_INJECTED, /**< the code in every frame */
    TC_IFUNC_MODE_CACHED,   /**< the code in the first frame to each peer,
                                 then only its hash */
    TC_IFUNC_MODE_PORTABLE, /**< the jam's LLVM bitcode in every frame; the
                                 receiver compiles it once per hash for its
                                 own CPU (mailboxes only) */
    TC_IFUNC_MODE_PORTABLE_CACHED, /**< the bitcode in the first frame to each
                                 peer, then only its hash */
    TC_IFUNC_MODE_LAST
} tc_ifunc_mode_t;

/** Why a confined run (security `confine`) ended before it returned; index
 *  of tc_ifunc_stats_t::confine_traps. Nothing the trapping access would
 *  have written was written; what the jam wrote before stays. */
typedef enum tc_ifunc_trap {
    TC_IFUNC_TRAP_NONE,
    TC_IFUNC_TRAP_MEMORY,      /**< a load or store outside the run's regions */
    TC_IFUNC_TRAP_FUEL,        /**< out of fuel (UCX_TC_IFUNC_CONFINE_FUEL) */
    TC_IFUNC_TRAP_STACK,       /**< too deep: native or shadow stack exhausted */
    TC_IFUNC_TRAP_UNREACHABLE, /**< reached code the compiler proved undefined */
    TC_IFUNC_TRAP_LAST
} tc_ifunc_trap_t;

/** Why a frame was rejected; index of tc_ifunc_stats_t::rejects. */
typedef enum tc_ifunc_reject {
    TC_IFUNC_REJECT_NONE,
    TC_IFUNC_REJECT_SIGNAL,        /**< signal word without the frame magic */
    TC_IFUNC_REJECT_SEQUENCE,      /**< not the expected frame: sender ignored credits */
    TC_IFUNC_REJECT_VERSION,       /**< unknown frame version or header size */
    TC_IFUNC_REJECT_TYPE,          /**< unknown frame type or flags */
    TC_IFUNC_REJECT_SIZE,          /**< size zero, unaligned or larger than the slot */
    TC_IFUNC_REJECT_OFFSET,        /**< a region outside the frame, misaligned or overlapping */
    TC_IFUNC_REJECT_TRUNCATED,     /**< trailer never arrived */
    TC_IFUNC_REJECT_CHECKSUM,      /**< frame checksum mismatch */
    TC_IFUNC_REJECT_UNKNOWN_PKG,   /**< package not registered here */
    TC_IFUNC_REJECT_UNKNOWN_ELEMENT, /**< element id not in the package */
    TC_IFUNC_REJECT_HASH,          /**< code differs from its hash or the installed element */
    TC_IFUNC_REJECT_DISABLED,      /**< frame type not allowed by the security mode */
    TC_IFUNC_REJECT_CACHE_MISS,    /**< Cached frame for code never sent here */
    TC_IFUNC_REJECT_LINK,          /**< no GOT table: symbols missing or unresolved */
    TC_IFUNC_REJECT_PLACEMENT,     /**< cannot place (writable data in W^X mode) */
    TC_IFUNC_REJECT_RESOURCE,      /**< code cache full or mapping failed */
    TC_IFUNC_REJECT_BITCODE,       /**< Portable: not bitcode, no entry, or not compilable */
    TC_IFUNC_REJECT_TRIPLE,        /**< Portable: a module for another architecture */
    TC_IFUNC_REJECT_EXTERNAL,      /**< Portable: an external unresolved or not allowed */
    TC_IFUNC_REJECT_CONFINE,       /**< Portable, confine: refused by the checker (an
                                        indirect call, assembly, a call off the list) */
    TC_IFUNC_REJECT_LAST
} tc_ifunc_reject_t;

/** Frame types as counted in statistics. */
typedef enum tc_ifunc_frame_kind {
    TC_IFUNC_FRAME_LOCAL,
    TC_IFUNC_FRAME_INJECTED,
    TC_IFUNC_FRAME_CACHED,
    TC_IFUNC_FRAME_PORTABLE,
    TC_IFUNC_FRAME_KIND_LAST
} tc_ifunc_frame_kind_t;

extern const char *tc_ifunc_security_names[];
extern const char *tc_ifunc_placement_names[];
extern const char *tc_ifunc_signal_names[];
extern const char *tc_ifunc_mode_names[];
extern const char *tc_ifunc_public_code_names[];

/** Short name of a reject reason, e.g. "size", "hash". */
const char *tc_ifunc_reject_name(tc_ifunc_reject_t reason);
const char *tc_ifunc_trap_name(tc_ifunc_trap_t trap);


/* ------------------------------------------------------------------------
 * Packages
 * ------------------------------------------------------------------------ */

/**
 * Load a package: @a path is its manifest, its share/twochains/<pkg>
 * directory, or the install prefix when @a name is given (then
 * PREFIX/share/twochains/NAME/manifest). Loads the Local Function library and
 * the rieds named by the manifest -- only regular files inside the package's
 * prefix lib/ directory, with the names twochains-pkg gives them -- reads and
 * checks every span against its hash, and resolves every element's GOT table
 * (dlsym over the rieds, then the process). An element whose externals do not
 * all resolve stays usable as a Local Function.
 *
 * A loaded package is registered process-wide: receivers find it by pkg_id.
 * Loading the same package twice returns the same handle (reference counted).
 */
ucs_status_t tc_ifunc_pkg_load(const char *path, const char *name,
                               tc_ifunc_pkg_h *pkg_p);

/** Drop a reference; the last one unregisters and unloads it. No mailbox may
 *  be dispatching frames of it then. */
void tc_ifunc_pkg_unload(tc_ifunc_pkg_h pkg);

const char *tc_ifunc_pkg_name(tc_ifunc_pkg_h pkg);
uint64_t tc_ifunc_pkg_id(tc_ifunc_pkg_h pkg);
uint64_t tc_ifunc_pkg_build_id(tc_ifunc_pkg_h pkg);
/** FNV-1a 64 over the package name and every element's name and code hash:
 *  equal where the jams are the same code, whatever the build id says */
uint64_t tc_ifunc_pkg_code_digest(tc_ifunc_pkg_h pkg);
/** FNV-1a 64 over the package name, every element's name and the hash of
 *  its module for every triple (twochains-pkg --portable): equal where the
 *  Portable jams are the same, on every architecture (the machine code,
 *  and so tc_ifunc_pkg_code_digest, differs between architectures) */
uint64_t tc_ifunc_pkg_portable_digest(tc_ifunc_pkg_h pkg);
unsigned tc_ifunc_pkg_element_count(tc_ifunc_pkg_h pkg);

/** Element id of jam @a name; UCS_ERR_NO_ELEM when the package has none. */
ucs_status_t tc_ifunc_pkg_element(tc_ifunc_pkg_h pkg, const char *name,
                                  uint32_t *id_p);

/**
 * Compile, for this host, every module of @a pkg's Portable jams now, and
 * wait for them (up to @a timeout_s): a receiver that calls it before its
 * peers send never makes a ring wait for a compile on a first Portable
 * frame. The modules are the package's own (what `verify` would compile).
 * @return UCS_OK, UCS_ERR_TIMED_OUT, or UCS_ERR_INVALID_PARAM if one does
 *         not compile here (logged with the reason).
 */
ucs_status_t tc_ifunc_portable_prepare(tc_ifunc_pkg_h pkg, double timeout_s);

/** A symbol of the package's rieds (or the process), e.g. receiver state. */
void *tc_ifunc_pkg_symbol(tc_ifunc_pkg_h pkg, const char *symbol);


/* ------------------------------------------------------------------------
 * Mailboxes
 * ------------------------------------------------------------------------ */

enum tc_ifunc_mailbox_params_field {
    TC_IFUNC_MAILBOX_PARAM_FIELD_SLOT_SIZE   = UCS_BIT(0),
    TC_IFUNC_MAILBOX_PARAM_FIELD_RING_DEPTH  = UCS_BIT(1),
    TC_IFUNC_MAILBOX_PARAM_FIELD_SECURITY    = UCS_BIT(2),
    TC_IFUNC_MAILBOX_PARAM_FIELD_PLACEMENT   = UCS_BIT(3),
    TC_IFUNC_MAILBOX_PARAM_FIELD_SIGNAL      = UCS_BIT(4),
    TC_IFUNC_MAILBOX_PARAM_FIELD_TARGET_ARGS = UCS_BIT(5),
    TC_IFUNC_MAILBOX_PARAM_FIELD_EPS         = UCS_BIT(6),
    TC_IFUNC_MAILBOX_PARAM_FIELD_FLAGS       = UCS_BIT(7),
    TC_IFUNC_MAILBOX_PARAM_FIELD_TRAILER_TIMEOUT = UCS_BIT(8),
    TC_IFUNC_MAILBOX_PARAM_FIELD_TARGET_SIZE = UCS_BIT(9)
};

enum tc_ifunc_mailbox_flags {
    /** The caller drives tc_ifunc_poll(); the engine only serves peers'
     *  requests for rings. */
    TC_IFUNC_MAILBOX_FLAG_NO_POLLER = UCS_BIT(0),
    /** Checksum every frame sent (TC_FRAME_F_CHECKSUM), e.g. to test the
     *  trailer mode; receivers always check frames that carry one. */
    TC_IFUNC_MAILBOX_FLAG_CHECKSUM  = UCS_BIT(1)
};

typedef struct tc_ifunc_mailbox_params {
    uint64_t             field_mask;  /**< tc_ifunc_mailbox_params_field bits */
    unsigned             slot_size;   /**< bytes, multiple of 64; UCX_TC_IFUNC_SLOT_SIZE */
    unsigned             ring_depth;  /**< slots per sender; UCX_TC_IFUNC_RING_DEPTH */
    tc_ifunc_security_t  security;    /**< UCX_TC_IFUNC_SECURITY */
    tc_ifunc_placement_t placement;   /**< UCX_TC_IFUNC_PLACEMENT */
    tc_ifunc_signal_t    signal;      /**< UCX_TC_IFUNC_SIGNAL (for our sends) */
    void                 *target_args; /**< passed to every jam's main */
    /** The caller's endpoints, eps[r] to rank r, all on the engine's worker;
     *  kept by the caller. Without them the mailbox exchanges worker
     *  addresses over the bootstrap and creates (and closes) its own. */
    const ucp_ep_h       *eps;
    uint64_t             flags;       /**< tc_ifunc_mailbox_flags */
    double               trailer_timeout; /**< UCX_TC_IFUNC_TRAILER_TIMEOUT, s */
    /** Bytes at target_args that a confined jam may read and write (security
     *  `confine`); 0, the default: none */
    size_t               target_size;
} tc_ifunc_mailbox_params_t;

/**
 * Collective over @a boot: exchange each rank's ring geometry and control
 * tag (and worker address, without @a params->eps) with
 * tc_bootstrap_allgatherv, a few dozen bytes plus an address per rank, and
 * register the poller on @a engine (whose worker carries every put). The
 * context needs UCP_FEATURE_AM (control messages) besides UCP_FEATURE_RMA.
 *
 * Nothing is pinned and no endpoint is made for a peer until it talks to
 * us or we to it. A sender's first frame to a rank asks that rank, by an
 * active message, for a ring of its own: one ucp_mem_map region whose rkey
 * only that sender gets. Until the grant is back (one round trip, once per
 * pair), tc_ifunc_send() to that rank returns UCS_ERR_NO_RESOURCE, as for
 * credits. A ring whose sender stays quiet is no longer read by the poll
 * once the sender agrees to ring a doorbell with its next frame, so an
 * empty poll reads only the rings that had frames lately.
 */
ucs_status_t tc_ifunc_mailbox_create(ucp_context_h context,
                                     tc_progress_engine_h engine,
                                     tc_bootstrap_h boot,
                                     const tc_ifunc_mailbox_params_t *params,
                                     tc_ifunc_mailbox_h *mbox_p);

/**
 * Collective: flush our puts, wait (progressing) until every rank got here,
 * then release everything. Frames still in the rings are dropped.
 */
void tc_ifunc_mailbox_destroy(tc_ifunc_mailbox_h mbox);

int tc_ifunc_mailbox_rank(tc_ifunc_mailbox_h mbox);
int tc_ifunc_mailbox_size(tc_ifunc_mailbox_h mbox);
tc_progress_engine_h tc_ifunc_mailbox_engine(tc_ifunc_mailbox_h mbox);

/** Set the target argument passed to every jam's main from now on. */
void tc_ifunc_mailbox_set_target_args(tc_ifunc_mailbox_h mbox, void *target_args);

/** Set it with the bytes at it that a confined jam may read and write. */
void tc_ifunc_mailbox_set_target_region(tc_ifunc_mailbox_h mbox, void *target_args,
                                        size_t target_size);

/**
 * Caller-driven receive: run up to @a max_frames arrived frames (0: the
 * configured batch), without blocking. Also called by the poller.
 * @return frames handled (run or rejected).
 */
unsigned tc_ifunc_poll(tc_ifunc_mailbox_h mbox, unsigned max_frames);

/** Complete all our puts (progressing the engine), up to @a timeout_s. */
ucs_status_t tc_ifunc_mailbox_flush(tc_ifunc_mailbox_h mbox, double timeout_s);

/**
 * Bootstrap barrier that keeps the engine progressing while it waits (peers
 * over emulated RMA need our progress to finish their puts).
 *
 * It is not a clean cut for receiver-side effects: the mailbox poller runs
 * inside it, so frames that a peer sent after it left the barrier may run
 * before this call returns. Sample a counter before a barrier that the
 * sender must pass before it sends, or wait for absolute targets.
 */
ucs_status_t tc_ifunc_mailbox_barrier(tc_ifunc_mailbox_h mbox);

/**
 * Ask rank @a rank for our ring now, before the first send (which does the
 * same): UCS_OK once the ring is ours, UCS_INPROGRESS while the request is
 * out (progress the engine), or the error that stopped it.
 */
ucs_status_t tc_ifunc_mailbox_connect(tc_ifunc_mailbox_h mbox, int rank);

/** The transport carrying puts to @a rank, e.g. "posix", "tcp" (makes the
 *  endpoint to @a rank if there is none yet). */
const char *tc_ifunc_mailbox_transport(tc_ifunc_mailbox_h mbox, int rank);

/** The write lane carrying frames and credits to @a rank (<twochains/lane.h>):
 * "rma posix/memory.0", or "am tcp/lo.0 (put emulated over am)". */
const char *tc_ifunc_mailbox_write_lane(tc_ifunc_mailbox_h mbox, int rank);

/** Effective modes of this mailbox. */
tc_ifunc_security_t tc_ifunc_mailbox_security(tc_ifunc_mailbox_h mbox);
tc_ifunc_placement_t tc_ifunc_mailbox_placement(tc_ifunc_mailbox_h mbox);
tc_ifunc_signal_t tc_ifunc_mailbox_signal(tc_ifunc_mailbox_h mbox);


/* ------------------------------------------------------------------------
 * Statistics
 * ------------------------------------------------------------------------ */

typedef struct tc_ifunc_stats {
    /* receiver */
    uint64_t frames[TC_IFUNC_FRAME_KIND_LAST]; /**< run, by type */
    uint64_t bytes;                 /**< frame bytes run */
    uint64_t rejects[TC_IFUNC_REJECT_LAST];    /**< by reason */
    uint64_t rejects_total;
    uint64_t credit_updates;        /**< credit words put back to senders */
    uint64_t credit_failures;       /**< credit puts that failed (a dead sender) */
    uint64_t cache_hits;            /**< Injected/Cached frames run from the cache */
    uint64_t cache_installs;        /**< copies made into the code cache */
    uint64_t cache_evictions;       /**< least recently run copies dropped for
                                         new ones (never one Cached frames name) */
    uint64_t remote_links;          /**< GOT tables built from frame symbols */
    double   pending_wait_s;        /**< time frames waited for their trailer */
    uint64_t stale_signals;         /**< polls that found the previous lap's signal
                                         stored again in a cleared slot (a
                                         sender's late duplicate store; harmless) */
    uint64_t rings_granted;         /**< rings set up here, one per sender, on its
                                         first frame */
    uint64_t ring_reads;            /**< ring slots the poll looked at */
    uint64_t ring_sleeps;           /**< idle rings the poll stopped reading (their
                                         sender agreed to ring a doorbell) */
    uint64_t ring_wakes;            /**< doorbells that woke a sleeping ring */
    uint64_t control_rejects;       /**< control messages rejected (malformed, for
                                         another mailbox, out of turn) */
    /* sender */
    uint64_t sent[TC_IFUNC_FRAME_KIND_LAST];   /**< frames sent, by type */
    uint64_t bytes_sent;
    uint64_t puts;                  /**< ucp_put_nbx calls for frames */
    uint64_t credit_stalls;         /**< times a ring ran out of credits (a send
                                         got UCS_ERR_NO_RESOURCE) */
    double   credit_wait_s;         /**< time from a stall to the next send to that ring */
    uint64_t rings_requested;       /**< rings asked of receivers (first contact) */
    uint64_t doorbells;             /**< doorbells rung for a sleeping ring */
    uint64_t credit_faults;         /**< receivers that wrote a credit word past
                                         what we sent them (read so twice): their
                                         fault; sends to them fail with
                                         UCS_ERR_REJECTED from then on */
    /* receiver, Portable frames */
    uint64_t portable_compiles;     /**< modules compiled here (once per hash) */
    double   portable_compile_s;    /**< time the compile thread spent on them */
    uint64_t portable_waits;        /**< polls that found the head frame's
                                         module still compiling (its ring waits,
                                         the others go on) */
    uint64_t portable_evictions;    /**< compiled modules this receiver evicted
                                         to make room (UCX_TC_IFUNC_PORTABLE_CODE) */
    /* receiver, security confine */
    uint64_t confine_runs;          /**< confined runs (returned or trapped) */
    uint64_t confine_traps[TC_IFUNC_TRAP_LAST]; /**< runs ended early, by trap */
} tc_ifunc_stats_t;

void tc_ifunc_mailbox_stats(tc_ifunc_mailbox_h mbox, tc_ifunc_stats_t *stats);

/** One line per non-zero counter, prefixed by @a prefix. */
void tc_ifunc_stats_print(const tc_ifunc_stats_t *stats, FILE *stream,
                          const char *prefix);


/* ------------------------------------------------------------------------
 * Messages
 * ------------------------------------------------------------------------ */

/**
 * Build a message for element @a element_id of @a pkg in registered memory:
 * payload size from the jam's payload_get_max_size (else @a source_args_size),
 * payload from its payload_init (else a copy of @a source_args). Injected and
 * Cached messages carry the span and its symbol names.
 * @return UCS_ERR_CANCELED if payload_init failed, UCS_ERR_EXCEEDS_LIMIT if the
 *         frame cannot fit the peers' slots.
 */
ucs_status_t tc_ifunc_msg_create(tc_ifunc_mailbox_h mbox, tc_ifunc_pkg_h pkg,
                                 uint32_t element_id, tc_ifunc_mode_t mode,
                                 void *source_args, size_t source_args_size,
                                 tc_ifunc_msg_h *msg_p);

/**
 * Refill the payload with payload_init (or a copy) for new source args, in
 * place. The new payload must fit the capacity given at create.
 */
ucs_status_t tc_ifunc_msg_reinit(tc_ifunc_msg_h msg, void *source_args,
                                 size_t source_args_size);

/** The payload in the frame, to write directly; @a capacity_p may be NULL. */
void *tc_ifunc_msg_payload(tc_ifunc_msg_h msg, size_t *size_p, size_t *capacity_p);

/** Set the payload size after writing tc_ifunc_msg_payload() directly. */
ucs_status_t tc_ifunc_msg_set_payload_size(tc_ifunc_msg_h msg, size_t size);

/** Bytes one send of @a msg puts (Cached: a hash-only frame, after the
 *  first frame to a peer, which carries the code). */
size_t tc_ifunc_msg_frame_size(tc_ifunc_msg_h msg);

/** Wait (progressing the engine) until the last send of @a msg completed
 *  locally; then the message may be changed. */
ucs_status_t tc_ifunc_msg_wait(tc_ifunc_msg_h msg);

void tc_ifunc_msg_free(tc_ifunc_msg_h msg);

/**
 * Send @a msg to rank @a dest's mailbox. If a previous send of the same
 * message is still in flight, it is completed first (the frame is stamped
 * per send).
 * @return UCS_OK (the frame is reusable), UCS_INPROGRESS (puts in flight;
 *         tc_ifunc_msg_wait or the next send completes them), or
 *         UCS_ERR_NO_RESOURCE (no credits: progress and retry).
 */
ucs_status_t tc_ifunc_send(tc_ifunc_mailbox_h mbox, int dest, tc_ifunc_msg_h msg);


/* ------------------------------------------------------------------------
 * A UCP context, worker and engine for programs that have none (C helper)
 * ------------------------------------------------------------------------ */

typedef struct tc_ifunc_ucp {
    ucp_context_h        context; /**< UCP_FEATURE_RMA */
    ucp_worker_h         worker;  /**< single-threaded */
    tc_progress_engine_h engine;  /**< on @a worker, default wait policy */
} tc_ifunc_ucp_t;

ucs_status_t tc_ifunc_ucp_init(tc_ifunc_ucp_t *ucp);
void tc_ifunc_ucp_cleanup(tc_ifunc_ucp_t *ucp);


/* ------------------------------------------------------------------------
 * Configuration (UCX_TC_IFUNC_*)
 * ------------------------------------------------------------------------ */

/** UCX_TC_IFUNC_*, read once per process (when the library loads); mailbox
 *  parameters override them per mailbox. */
typedef struct tc_ifunc_config {
    tc_ifunc_security_t  security;
    tc_ifunc_placement_t placement;
    tc_ifunc_signal_t    signal;
    unsigned             slot_size;
    unsigned             ring_depth;
    unsigned             poll_batch;
    unsigned             ring_idle;
    double               trailer_timeout;
    unsigned             cache_entries;
    char                 *pkg_path;
    size_t               checked_max;   /**< ucp_ifunc_send_nbix: largest frame sent
                                             checked, in one put (signal check) */
    unsigned             poll_progress; /**< ucp_poll_ifunc: progress the context's
                                             worker every this many empty polls */
    ucs_config_names_array_t portable_allow; /**< libc functions Portable jams may call */
    int                  public_code;   /**< tc_ifunc_public_code_t: what
                                             ucp_ifunc_msg_create's frames carry */
    unsigned             portable_code; /**< compiled modules kept per process */
    unsigned long        confine_fuel;  /**< units of one confined run */
    size_t               confine_stack; /**< native stack bytes a confined run may use */
    size_t               confine_shadow; /**< shadow stack bytes per polling thread */
    ucs_config_names_array_t confine_allow; /**< functions a confined jam may call
                                                 besides memcpy/memmove/memset, libm */
    int                  confine_own;   /**< confine our own packages' modules too */
} tc_ifunc_config_t;

ucs_status_t tc_ifunc_config_read(tc_ifunc_config_t *config);
void tc_ifunc_config_release(tc_ifunc_config_t *config);
void tc_ifunc_config_print(FILE *stream, int with_doc);

END_C_DECLS

#endif
