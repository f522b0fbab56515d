/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Private types of the Two-Chains runtime: packages, the code cache, the
 * receive context shared by mailboxes and ucp_poll_ifunc, mailboxes and
 * messages.
 */
#ifndef TC_IFUNC_INT_H_
#define TC_IFUNC_INT_H_

#include "frame.h"

#include <twochains/ifunc.h>
#include <twochains/jam.h>
#include <twochains/jam_format.h>
#include <twochains/lane.h>

#include <ucs/datastruct/khash.h>
#include <ucs/sys/compiler_def.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

BEGIN_C_DECLS

#define TC_IFUNC_MAX_PKGS    32
#define TC_IFUNC_MAX_RIEDS   16
#define TC_IFUNC_PKG_NAME_MAX 64


/* ---- packages (package.c) ---- */

#define TC_IFUNC_MAX_PORTABLE 4   /* portable records (triples) per element */

/* The element as LLVM bitcode for one target triple: a manifest's portable
 * record, its file checked at load */
typedef struct tc_ifunc_portable_bc {
    char     triple[TC_JAM_TRIPLE_MAX];
    uint64_t bc_hash;      /* FNV-1a 64 of the whole file */
    uint32_t bc_size;
    char     *path;        /* realpath, malloc'ed, a regular file inside the
                              package's share dir */
} tc_ifunc_portable_bc_t;

typedef struct tc_ifunc_element {
    uint32_t               id;
    char                   name[TC_JAM_NAME_MAX];
    uint32_t               span_size;
    uint64_t               span_hash;
    uint32_t               got_slot_offset;
    uint32_t               entry_offset;
    uint32_t               data_offset;
    uint32_t               flags;          /* TC_JAM_F_* */
    uint32_t               num_externals;
    uint8_t                *span;          /* slot zeroed, hash checked */
    char                   *symtab;        /* names, NUL-separated, GOT order */
    uint32_t               symtab_size;
    void                   **got;          /* resolved here; NULL if any failed */
    const tc_jam_element_t *local;         /* row of the element table */
    tc_ifunc_portable_bc_t portable[TC_IFUNC_MAX_PORTABLE];
    unsigned               num_portable;
} tc_ifunc_element_t;

struct tc_ifunc_pkg {
    char               name[TC_IFUNC_PKG_NAME_MAX];
    char               arch[16];
    uint64_t           id;                 /* tc_frame_pkg_id(name) */
    uint64_t           build_id;
    char               *manifest;          /* realpath, identifies the package */
    unsigned           refcount;           /* under the registry lock */
    void               *local_dl;
    void               *rieds[TC_IFUNC_MAX_RIEDS];
    unsigned           num_rieds;
    tc_ifunc_element_t *elements;
    unsigned           num_elements;
};

/* Registered package with this id, or NULL. Lock-free read. */
tc_ifunc_pkg_h tc_ifunc_pkg_find(uint64_t pkg_id);

/* Package that has a jam called @a name (for ucp_register_ifunc) */
tc_ifunc_pkg_h tc_ifunc_pkg_find_element(const char *name, uint32_t *id_p);

/* Take one more reference on a registered package */
void tc_ifunc_pkg_ref(tc_ifunc_pkg_h pkg);

static inline const tc_ifunc_element_t *
tc_ifunc_pkg_elem(tc_ifunc_pkg_h pkg, uint32_t id)
{
    return (id < pkg->num_elements) ? &pkg->elements[id] : NULL;
}

/* The element's bitcode for @a triple (as the manifest spells it), or NULL */
const tc_ifunc_portable_bc_t *
tc_ifunc_elem_portable(const tc_ifunc_element_t *e, const char *triple);

/* dlsym over the rieds of every registered package, then the process */
void *tc_ifunc_symbol_resolve(const char *name);


/* ---- code cache (code_cache.c) ---- */

typedef struct tc_code_entry {
    uint64_t             hash;
    uint32_t             size;
    uint32_t             got_rel;        /* GOT slot, from the span start */
    uint32_t             entry_rel;
    void                 **got;          /* the table written into the slot */
    uint64_t             pkg_id;
    uint32_t             element_id;
    uint8_t              *code;          /* the span: read+execute up to data_rel */
    uint32_t             data_rel;       /* writable globals from here (size: none) */
    uint8_t              *data_init;     /* their initial bytes, or NULL */
    void                 *map;           /* the mapping holding the span */
    size_t               map_len;
    uint64_t             last_use;       /* cache tick of the last run */
    unsigned             pins;           /* rings whose Cached frames name it */
    int                  confined;       /* a confined module's: runs only through
                                            tc_confine_run */
    struct tc_code_entry *next;          /* same hash */
} tc_code_entry_t;

KHASH_MAP_INIT_INT64(tc_code, tc_code_entry_t*)

/* Architectures whose modules a mailbox knows (published at creation) */
typedef enum {
    TC_IFUNC_ARCH_UNKNOWN,
    TC_IFUNC_ARCH_X86_64,
    TC_IFUNC_ARCH_AARCH64,
    TC_IFUNC_ARCH_LAST
} tc_ifunc_arch_t;

/* A module of Portable frames compiled for this host (portable.c): one per
 * bitcode hash per process */
typedef enum {
    TC_PORTABLE_COMPILING,
    TC_PORTABLE_READY,
    TC_PORTABLE_FAILED
} tc_portable_state_t;

typedef struct tc_portable_code {
    tc_code_entry_t         entry;       /* what rings name for Cached frames:
                                            code = the compiled entry, entry_rel 0,
                                            no writable globals */
    uint64_t                hash;        /* FNV-1a 64 of the bitcode */
    int                     state;       /* tc_portable_state_t, release-stored once
                                            final by the compile thread */
    tc_ifunc_reject_t       reason;      /* FAILED: why, for every frame naming it */
    char                    detail[192];
    double                  compile_s;
    int                     counted;     /* compile_s is in a mailbox's stats */
    int                     own;         /* from our own package's file (what
                                            `verify` may run), not a peer's bytes */
    int                     confined;    /* compiled confined: runs through
                                            tc_confine_run (confine.c) */
    struct tc_jit_code      *jit_code;
    unsigned                users;       /* polls running it now (eviction waits) */
    int                     prepared;    /* pinned by tc_ifunc_portable_prepare */
    /* the job's inputs, freed once compiled: a private copy of the module
     * (trust), or the path of our own package's module (verify) */
    uint8_t                 *bitcode;
    size_t                  bitcode_size;
    char                    *path;
    char                    entry_name[TC_JAM_NAME_MAX + 8];
    struct tc_portable_code *next_job;
} tc_portable_code_t;

/* dispatch's "the module is still compiling": not a reject, the ring waits
 * (a carrier: TC_IFUNC_EXEC_PENDING, the same value) */
#define TC_IFUNC_PORTABLE_WAIT TC_IFUNC_REJECT_LAST

typedef struct tc_code_cache {
    khash_t(tc_code) entries;            /* hash -> chain */
    unsigned         count;
    unsigned         capacity;
    uint64_t         tick;               /* for least-recently-used eviction */
    uint64_t         evictions;
    uint8_t          *snapshot;          /* the frame being verified, privately */
    size_t           snapshot_len;
} tc_code_cache_t;

void tc_code_cache_init(tc_code_cache_t *cache, unsigned capacity);
void tc_code_cache_cleanup(tc_code_cache_t *cache);

/* A private copy of @a len bytes at @a src, memory a peer may still write:
 * what is checked, hashed, linked and installed is this copy, and the
 * source is not read again. Valid until the next call; NULL: no memory. */
uint8_t *tc_code_cache_snapshot(tc_code_cache_t *cache, const uint8_t *src, size_t len);

/* An entry holding exactly @a code (slot excluded; writable globals as
 * they were shipped) linked with @a got */
tc_code_entry_t *tc_code_cache_find(tc_code_cache_t *cache, uint64_t hash,
                                    const uint8_t *code, uint32_t size,
                                    uint32_t got_rel, uint32_t entry_rel,
                                    uint32_t data_rel, void **got);

/* Copy @a code into a fresh mapping, write @a got into its slot, make
 * [0, data_rel) read+execute and the writable globals [data_rel, size)
 * read+write (placed page aligned, at the same distance from the code),
 * keep the I-cache coherent. data_rel == size: no writable globals. NULL
 * when full or mmap fails. */
tc_code_entry_t *tc_code_cache_install(tc_code_cache_t *cache, uint64_t hash,
                                       const uint8_t *code, uint32_t size,
                                       uint32_t got_rel, uint32_t entry_rel,
                                       uint32_t data_rel, void **got,
                                       uint64_t pkg_id, uint32_t element_id);

/* Run an entry: its writable globals start from their shipped values, as
 * in a frame run in place (the jam contract: a per-message copy) */
static inline void tc_code_entry_run(tc_code_entry_t *entry, void *payload,
                                     size_t payload_size, void *target_args)
{
    if (entry->data_init != NULL) {
        memcpy(entry->code + entry->data_rel, entry->data_init,
               entry->size - entry->data_rel);
    }
    ((tc_jam_main_fn_t)(void*)(entry->code + entry->entry_rel))(payload, payload_size,
                                                                 target_args);
}


/* ---- receive side (dispatch.c) ---- */

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

typedef enum {
    TC_IFUNC_SLOT_EMPTY,     /* nothing arrived */
    TC_IFUNC_SLOT_PENDING,   /* arriving: come back later */
    TC_IFUNC_SLOT_RUN,       /* a frame ran; slot freed */
    TC_IFUNC_SLOT_REJECTED   /* a frame was rejected; slot freed */
} tc_ifunc_slot_result_t;

void tc_ifunc_ring_init(tc_ifunc_ring_t *ring, uint8_t *base, int peer,
                        uint32_t depth);
void tc_ifunc_ring_cleanup(tc_ifunc_ring_t *ring);

/* The frame behind the non-zero signal @a sig at @a slot: see below. */
tc_ifunc_slot_result_t tc_ifunc_slot_process_frame(tc_ifunc_rx_t *rx,
                                                   tc_ifunc_ring_t *ring,
                                                   uint8_t *slot,
                                                   uint32_t slot_size,
                                                   uint64_t expect_seq,
                                                   uint64_t sig);

static inline double tc_ifunc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* (ucp_ifunc.c) How ucp_ifunc_send_nbix sends a frame */
typedef enum {
    TC_UCP_IFUNC_FORM_CHECKED,   /* one put, TC_FRAME_MAGIC_CHECKED */
    TC_UCP_IFUNC_FORM_TRAILER,   /* one put, trailer rule */
    TC_UCP_IFUNC_FORM_FENCED     /* body, flush, signal */
} tc_ucp_ifunc_form_t;

/* Stamp the next send of a ucp_ifunc message to @a ep (seq, signal, trailer, and
 * check) without sending it; the frame must not be read by a put still:
 * tc_ucp_ifunc_settle waits for the message's last put while UCX reads
 * its frame. Tests tear what this stamps. */
struct ucp_ifunc_msg;
tc_ucp_ifunc_form_t tc_ucp_ifunc_stamp(struct ucp_ifunc_msg *msg, ucp_ep_h ep);
void tc_ucp_ifunc_settle(struct ucp_ifunc_msg *msg);

/* (context_workers.c) The one worker this program created on @a context,
 * or NULL if it created none or several, or its calls bypassed ours */
ucp_worker_h tc_context_only_worker(ucp_context_h context);

/* What ucp_poll_ifunc counted in this process */
const tc_ifunc_stats_t *tc_ucp_ifunc_stats_get(void);

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

/* Count and log (once per reason and ring) a rejected frame */
void tc_ifunc_reject(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                     tc_ifunc_reject_t reason, uint32_t seq, unsigned type,
                     uint32_t element_id, const char *detail);

/* A frame that began to arrive is still incomplete: 1 once it has been so
 * for the trailer timeout (and the wait is accounted), 0 while it may come */
int tc_ifunc_slot_timed_out(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring);

/* The frame is complete: the time it was pending counts as trailer wait */
static UCS_F_ALWAYS_INLINE void tc_ifunc_slot_arrived(tc_ifunc_rx_t *rx,
                                                      tc_ifunc_ring_t *ring)
{
    if (ucs_unlikely(ring->pending_since != 0)) {
        rx->stats->pending_wait_s += tc_ifunc_now() - ring->pending_since;
        ring->pending_since = 0;
    }
}

/* The compact frame (frame.h) whose format and expected seq are at @a slot
 * of a mailbox ring: run, rejected, or still arriving. Never writes the slot. */
tc_ifunc_slot_result_t tc_ifunc_slot_process_compact(tc_ifunc_rx_t *rx,
                                                     tc_ifunc_ring_t *ring,
                                                     uint8_t *slot,
                                                     uint32_t slot_size,
                                                     uint64_t expect_seq);

/*
 * Look at the frame at @a slot and, if complete, validate and run or reject
 * it, then free the slot. Never blocks: an incomplete frame is PENDING until
 * rx->trailer_timeout, then rejected as truncated.
 *
 * Inline up to the first loads: an empty slot is what most polls find, and
 * it should cost one or two loads of one line, not the validator's setup.
 */
static UCS_F_ALWAYS_INLINE tc_ifunc_slot_result_t
tc_ifunc_slot_process(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring, uint8_t *slot,
                      uint32_t slot_size, uint64_t expect_seq)
{
    const tc_frame_compact_t *compact = (const tc_frame_compact_t*)slot;
    uint64_t sig;

    /* a compact frame, of this lap or an earlier one (never cleared): an
     * empty slot costs two loads from one line */
    if ((ring->depth != 0) &&
        (__atomic_load_n(&compact->format, __ATOMIC_RELAXED) == TC_FRAME_COMPACT_FORMAT)) {
        if (__atomic_load_n(&compact->seq, __ATOMIC_RELAXED) != (uint32_t)expect_seq) {
            return TC_IFUNC_SLOT_EMPTY;
        }
        return tc_ifunc_slot_process_compact(rx, ring, slot, slot_size, expect_seq);
    }

    sig = __atomic_load_n(&((const tc_frame_hdr_t*)slot)->signal, __ATOMIC_ACQUIRE);
    if (ucs_likely(sig == 0)) {
        return TC_IFUNC_SLOT_EMPTY;
    }
    return tc_ifunc_slot_process_frame(rx, ring, slot, slot_size, expect_seq,
                                       sig);
}

/* What tc_ifunc_frame_run learned of a frame, also of one it rejected */
typedef struct tc_ifunc_frame_view {
    uint8_t  type;           /* tc_frame_type_t; 0 if the header was not read */
    uint32_t element_id;
    uint64_t pkg_id;
    uint64_t code_hash;
    void     *payload;
    uint32_t payload_size;
    uint32_t shipment_size;  /* full frames: the bytes up to the end of the
                                code and symbol names (header included) */
} tc_ifunc_frame_view_t;

/*
 * (exec.c) A complete frame, compact or full, in memory that nothing else writes
 * while it runs (a replicated slot already delivered): validate it and run
 * it, or say why not. No ring sequence, signal, trailer or compact check
 * word (whoever delivered it delivered the bytes the sender wrote, whole);
 * the frame is never written (rx->placement must be copy). @a ring keeps the codes Cached frames name and trust-mode links.
 * Counts the frame or its reject in rx->stats; logs nothing.
 */
tc_ifunc_reject_t tc_ifunc_frame_run(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                                     uint8_t *frame, uint32_t size,
                                     tc_ifunc_frame_view_t *view, char *detail,
                                     size_t detail_len);

/* The receive path's calls, for a carried frame (dispatch.c): a Local
 * element, a Cached code of @a ring, and a full frame whose header passed
 * tc_frame_check_header. Detail on a reject in @a detail. */
tc_ifunc_reject_t tc_ifunc_call_local(tc_ifunc_rx_t *rx, tc_ifunc_pkg_h pkg,
                                      uint32_t element_id, void *payload,
                                      uint32_t payload_size, char *detail,
                                      size_t detail_len);
tc_ifunc_reject_t tc_ifunc_call_cached(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                                       uint64_t code_hash, uint64_t pkg_id,
                                       uint32_t element_id, void *payload,
                                       uint32_t payload_size, char *detail,
                                       size_t detail_len);
tc_ifunc_reject_t tc_ifunc_call_frame(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                                      const tc_frame_hdr_t *h, uint8_t *frame,
                                      char *detail, size_t detail_len);


/* ---- mailbox (mailbox.c, peer_rings.c, credits.c, poll.c) ---- */

/* What rank r published at creation (the allgather, kept whole) */
typedef struct tc_ifunc_peer_info {
    uint64_t tag;              /* r's mailbox on r's worker: control messages name it */
    uint32_t slot_size;        /* r's ring geometry, for frames we send it */
    uint32_t depth;
    uint32_t signal;
    uint32_t addr_len;         /* r's worker address, 0 with caller's endpoints */
    uint32_t arch;             /* tc_ifunc_arch_t: whose modules r runs */
    const uint8_t *address;
} tc_ifunc_peer_info_t;

typedef enum {
    TC_IFUNC_TX_NONE,          /* no ring at r yet */
    TC_IFUNC_TX_REQUESTED,     /* asked r for a ring; sends stall until granted */
    TC_IFUNC_TX_READY,         /* r's ring for us is mapped and its rkey ours */
    TC_IFUNC_TX_FAILED         /* the request could not be sent */
} tc_ifunc_tx_state_t;

typedef enum {
    TC_IFUNC_RX_ACTIVE,        /* the poll reads the ring */
    TC_IFUNC_RX_ASKED,         /* the poll reads it; asked its sender to let it sleep */
    TC_IFUNC_RX_ASLEEP         /* unread until its sender rings the doorbell */
} tc_ifunc_rx_state_t;

/* The ring rank r writes into here: its own registration, whose rkey only
 * r was given, and where r wants its credits */
typedef struct tc_ifunc_rx_ring {
    tc_ifunc_ring_t     ring;
    ucp_mem_h           memh;
    uint8_t             *region;
    size_t              region_len;
    uint64_t            region_key;     /* the write lane's key of the ring */
    ucp_rkey_h          credit_rkey;    /* r's credit line for our consumption */
    uint64_t            credit_addr;
    uint64_t            credit_key;     /* its write-lane key at r */
    uint64_t            credit_src;     /* source word of the credit put */
    tc_ifunc_rx_state_t state;
    unsigned            active_index;   /* in mbox->active while not asleep */
    uint32_t            idle;           /* empty reads since the last frame */
    uint64_t            sleep_seq;      /* consumed count the sleep request named */
    uint64_t            sleep_asks;     /* sleep requests sent (the latest's number) */
} tc_ifunc_rx_ring_t;

/* Everything about rank r, made on first contact (a send to r, r's ring
 * request, or a question about its transport) */
typedef struct tc_ifunc_peer {
    int        rank;
    ucp_ep_h   ep;
    int        own_ep;         /* created (and closed) by the mailbox */
    tc_write_lane_mode_t lane; /* how our frames and credits reach r */
    char       transport[64];
    char       lane_name[80];  /* "rma posix/memory.0", "am tcp/lo.0 ..." */
    /* sending to r */
    tc_ifunc_tx_state_t tx;
    ucp_rkey_h rkey;           /* r's ring for us */
    uint64_t   ring_addr;
    uint64_t   region_key;     /* r's write-lane key of that ring */
    uint32_t   slot_size;      /* r's */
    uint32_t   depth;          /* r's */
    int        trailer_mode;   /* r's sends use the trailer */
    int        asleep;         /* r stopped reading our ring: ring its doorbell */
    uint64_t   sent;           /* frames we sent to r */
    double     stall_since;    /* > 0 while refused for credits */
    unsigned   credit_past_sent; /* reads in a row of a credit word past sent */
    int        credit_faulted; /* r wrote one twice: we send it nothing more */
    ucp_mem_h  credit_memh;    /* the line r puts its consumed count into */
    volatile uint64_t *credit;
    uint64_t   credit_key;     /* its write-lane key here */
    /* receiving from r: NULL until r asked for a ring */
    tc_ifunc_rx_ring_t *rx;
} tc_ifunc_peer_t;

/* A control message that arrived, waiting for the poll (peer_rings.c) */
typedef struct tc_ifunc_ctrl_msg tc_ifunc_ctrl_msg_t;

struct tc_ifunc_mailbox {
    ucp_context_h        context;
    ucp_worker_h         worker;
    tc_progress_engine_h engine;
    tc_bootstrap_h       boot;
    int                  rank;
    int                  size;
    uint64_t             tag;           /* ours, in the control messages */
    tc_ifunc_signal_t    signal;
    uint32_t             slot_size;
    uint32_t             depth;
    uint32_t             min_slot;      /* smallest slot of any rank */
    uint32_t             credit_batch;
    uint32_t             idle_reads;    /* empty reads before a ring may sleep */
    unsigned             poll_batch;
    uint64_t             flags;
    tc_write_lane_h      lane;          /* the worker's; carries every write */
    void                 *infos_blob;   /* the allgather */
    tc_ifunc_peer_info_t *infos;        /* [size] */
    const ucp_ep_h       *caller_eps;   /* a copy of the caller's, or NULL */
    tc_ifunc_peer_t      **peers;       /* [size], NULL until first contact */
    tc_ifunc_rx_ring_t   **active;      /* rings the poll reads */
    unsigned             num_active;
    unsigned             num_rings;     /* granted here */
    unsigned             max_active;
    tc_ifunc_ctrl_msg_t  *ctrl_head;    /* arrived, in order */
    tc_ifunc_ctrl_msg_t  **ctrl_tail;
    int                  poller_id;
    unsigned             next_active;
    int                  in_poll;
    tc_ifunc_rx_t        rx;
    tc_ifunc_stats_t     stats;
};

/* The peer record of rank @a r, made (with its endpoint) if there is none.
 * NULL when the endpoint cannot be created (logged). */
tc_ifunc_peer_t *tc_ifunc_peer_get(tc_ifunc_mailbox_h mbox, int r);

/* Ask @a peer for a ring (once); the grant makes it READY (peer_rings.c) */
ucs_status_t tc_ifunc_ring_request(tc_ifunc_mailbox_h mbox, tc_ifunc_peer_t *peer);

/* Tell @a peer that frames wait in a ring it stopped reading */
void tc_ifunc_ring_doorbell(tc_ifunc_mailbox_h mbox, tc_ifunc_peer_t *peer);

/* Handle the control messages that arrived (from the poll) */
void tc_ifunc_ctrl_drain(tc_ifunc_mailbox_h mbox);

/* A ring found empty @a idle_reads times in a row: ask its sender to let it sleep */
void tc_ifunc_ring_idle(tc_ifunc_mailbox_h mbox, tc_ifunc_rx_ring_t *rx);

/* Register the mailbox for control messages on its worker, and undo it */
ucs_status_t tc_ifunc_ctrl_attach(tc_ifunc_mailbox_h mbox);
void tc_ifunc_ctrl_detach(tc_ifunc_mailbox_h mbox);

/* Release the rings and credit lines of every peer */
void tc_ifunc_peers_release(tc_ifunc_mailbox_h mbox);

/* Put our consumed count for @a rx's sender, if due and possible */
void tc_ifunc_mailbox_credit(tc_ifunc_mailbox_h mbox, tc_ifunc_rx_ring_t *rx, int force);

/* Wait for a UCP request, progressing the engine */
ucs_status_t tc_ifunc_request_wait(tc_progress_engine_h engine,
                                   ucs_status_ptr_t req, double timeout_s);


/* ---- the frame encoder (frame.c, with the decoder) ---- */

/* Everything a frame header says that does not change per send */
typedef struct tc_frame_desc {
    uint64_t pkg_id;
    uint64_t build_id;
    uint64_t code_hash;
    uint32_t element_id;
    uint32_t code_offset;    /* 0: no code in this layout */
    uint32_t code_size;
    uint32_t got_offset;     /* absolute */
    uint32_t entry_offset;   /* absolute */
    uint32_t symtab_offset;
    uint32_t symtab_size;
    uint32_t num_symbols;
    uint32_t payload_offset;
    uint32_t wdata;          /* TC_FRAME_F_WDATA or 0 */
    uint32_t data_offset;    /* span-relative, with wdata */
} tc_frame_desc_t;

/* Lay out a frame of @a elem (with or without its code) and copy the code
 * and symbol names into @a frame when it is not NULL */
void tc_frame_prepare(uint8_t *frame, tc_ifunc_pkg_h pkg,
                            const tc_ifunc_element_t *elem, int with_code,
                            tc_frame_desc_t *desc);

/* The same for a Portable frame: @a bitcode (its FNV-1a 64 @a hash; NULL:
 * not copied) in a code region of @a capacity bytes (the largest module
 * the message may carry, so that the payload never moves), and the one
 * name its symbol table carries, <name>_main */
void tc_frame_prepare_portable(uint8_t *frame, tc_ifunc_pkg_h pkg,
                               const tc_ifunc_element_t *elem, const uint8_t *bitcode,
                               uint32_t size, uint32_t capacity, uint64_t hash,
                               tc_frame_desc_t *desc);

/* Bytes a frame of @a desc needs for @a payload_size bytes of payload */
static inline uint32_t tc_frame_size(const tc_frame_desc_t *desc,
                                           uint32_t payload_size)
{
    return tc_frame_align(desc->payload_offset + payload_size + 1);
}

/* Write the header and trailer of one send; returns the frame size. Type
 * TC_FRAME_CACHED leaves the code out (hash only). */
uint32_t tc_frame_stamp(uint8_t *frame, const tc_frame_desc_t *desc,
                              tc_frame_type_t type, uint32_t flags, uint32_t seq,
                              uint32_t sender, uint32_t payload_size);

/* Write a compact frame's header, padding and check word (the payload is in
 * place after the header); returns the frame size. Type Local or Cached. */
uint32_t tc_frame_stamp_compact(uint8_t *frame, const tc_frame_desc_t *desc,
                                tc_frame_type_t type, uint32_t seq, uint32_t sender,
                                uint32_t payload_size);

/* The same without the check word (left 0), for a carrier that delivers
 * frames whole (tc_ifunc_frame_run never looks at it) */
uint32_t tc_frame_stamp_compact_header(uint8_t *frame, const tc_frame_desc_t *desc,
                                       tc_frame_type_t type, uint32_t seq,
                                       uint32_t sender, uint32_t payload_size);

/* ---- messages (send.c) ---- */

/* Payload bytes a message of @a elem may need: its payload_get_max_size,
 * else the source arguments' size */
size_t tc_ifunc_payload_capacity(const tc_ifunc_element_t *elem, void *source_args,
                                 size_t source_args_size);

/* The payload in place: the jam's payload_init, else a copy of the source
 * arguments; at most @a capacity bytes, *@a size_p those written */
ucs_status_t tc_ifunc_payload_fill(const tc_ifunc_element_t *elem, void *source_args,
                                   size_t source_args_size, uint8_t *payload,
                                   uint32_t capacity, uint32_t *size_p);

#define TC_IFUNC_MSG_MAX_REQS 4

typedef struct tc_ifunc_msg_module {
    uint8_t  *bytes;        /* NULL: the package has none for this architecture */
    uint32_t size;
    uint64_t hash;
} tc_ifunc_msg_module_t;

struct tc_ifunc_msg {
    tc_ifunc_mailbox_h       mbox;
    tc_ifunc_pkg_h           pkg;
    const tc_ifunc_element_t *elem;
    tc_ifunc_mode_t          mode;
    int                      compact;         /* Local and hash-only frames compact */
    ucp_mem_h                memh;
    uint8_t                  *frame;
    size_t                   capacity;        /* bytes mapped */
    tc_frame_desc_t    desc;
    uint32_t                 alt_offset;      /* Cached: hash-only header */
    tc_frame_desc_t    alt_desc;        /* its layout */
    uint32_t                 payload_capacity;
    uint32_t                 payload_size;
    void                     *reqs[TC_IFUNC_MSG_MAX_REQS];
    tc_write_header_t        headers[TC_IFUNC_MSG_MAX_REQS];  /* reqs[i]'s, on the AM lane */
    unsigned                 num_reqs;
    uint8_t                  *code_sent;      /* [size]: Cached code sent to r */
    /* Portable: the element's module for each architecture a peer may
     * have, and which one the frame holds now */
    tc_ifunc_msg_module_t    modules[TC_IFUNC_ARCH_LAST];
    uint32_t                 module_capacity;
    int                      laid_arch;
};

/* Modes whose code goes once per peer, then by hash */
static inline int tc_ifunc_mode_cached(tc_ifunc_mode_t mode)
{
    return (mode == TC_IFUNC_MODE_CACHED) || (mode == TC_IFUNC_MODE_PORTABLE_CACHED);
}

static inline int tc_ifunc_mode_portable(tc_ifunc_mode_t mode)
{
    return (mode == TC_IFUNC_MODE_PORTABLE) || (mode == TC_IFUNC_MODE_PORTABLE_CACHED);
}


/* ---- Portable frames (portable.c) ---- */

/* This host's, and the triple of an architecture as twochains-pkg names it */
tc_ifunc_arch_t tc_portable_host_arch(void);
const char *tc_portable_arch_triple(tc_ifunc_arch_t arch);

/* The triple whose modules this host runs */
const char *tc_portable_host_triple(void);

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

/* The module file @a path, which must hash to @a hash: malloc'ed bytes, or
 * NULL with why in @a detail */
uint8_t *tc_portable_read_module(const char *path, uint64_t hash, size_t *size_p,
                                 char *detail, size_t detail_len);

/* The compiled module of @a hash, NULL unless ready, not held (benchmarks
 * that compile fewer modules than the bound); @a jit_setup_s (may be
 * NULL): the time the first compile spent loading LLVM and creating the
 * JIT, which no module's compile_s includes (benchmarks) */
const tc_portable_code_t *tc_portable_find(uint64_t hash, double *jit_setup_s);

/* Compile @a bitcode confined outside any frame (benchmarks, the checker's
 * fuzzer) and wait for it: the entry, pinned for the process's life, or
 * NULL with the reject reason and detail in @a detail */
const tc_portable_code_t *tc_portable_compile_confined(const void *bitcode, size_t size,
                                                       const char *entry_name,
                                                       double timeout_s, char *detail,
                                                       size_t detail_len);

/* ---- security confine (confine.c) ---- */

struct tc_jit_symbol;
struct tc_jit_confine;

/* Run a confined module's @a entry with the regions of @a rx (its target's
 * declared size, a group's state) and @a payload, read only; counts the run
 * and its trap in rx->stats, logs each trap reason once */
tc_ifunc_trap_t tc_confine_run(tc_ifunc_rx_t *rx, const void *entry, void *payload,
                               size_t payload_size);

/* What the JIT gives a confined module: the runner's calls, the allow-list */
const struct tc_jit_confine *tc_confine_jit_options(void);

/* What the symbol at @a addr is: a function, or an object with its size and
 * whether its mapping is writable */
void tc_confine_symbol_info(void *addr, struct tc_jit_symbol *sym);

/* A confined module's externals (tc_jit_resolve_fn_t): a ried's symbol, or a
 * function of the process; never the process's data */
void *tc_confine_resolve(void *arg, const char *name, struct tc_jit_symbol *sym, char *why,
                         size_t why_len);

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

/* A symbol of a registered package's rieds (never the rest of the process) */
void *tc_ifunc_ried_symbol(const char *name);

/* ---- configuration (ifunc_config.c) ---- */

/* The process-wide configuration, read once */
const tc_ifunc_config_t *tc_ifunc_config_get(void);

/* UCS_OK if a receiver may run with @a security and @a placement; else
 * logs why (in-place code runs in memory its sender can still write, so
 * only trust may place it there) and returns UCS_ERR_INVALID_PARAM */
ucs_status_t tc_ifunc_policy_check(tc_ifunc_security_t security,
                                   tc_ifunc_placement_t placement);

/* UCX_IFUNC_LIB_DIR, the public API's search path (NULL or "" if unset) */
const char *tc_ifunc_lib_dir(void);

END_C_DECLS

#endif
