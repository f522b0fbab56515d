/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The Two-Chains frame: what one sender puts into one mailbox slot. This
 * header is the wire format; every field, offset and rule is here.
 *
 *   0                tc_frame_hdr_t (128 bytes, two cache lines)
 *   code_offset      the injectable span (Injected only), 64-aligned:
 *                      got_offset   the GOT-pointer slot, inside the span
 *                                   (span offset 0 for twochains-pkg spans),
 *                                   8 bytes, shipped as zero; the receiver
 *                                   writes ITS OWN table address there
 *                      entry_offset <name>_main, inside the span
 *                      data_offset  (span-relative, TC_FRAME_F_WDATA) the
 *                                   jam's writable globals, up to the span
 *                                   end: the receiver keeps them writable
 *                                   and its code read+execute, never both
 *   symtab_offset    the span's external symbol names (Injected, and the
 *                    first Cached frame of an element, TC_FRAME_F_SYMBOLS):
 *                    num_symbols NUL-terminated names in GOT order; used
 *                    only by a receiver that links the code itself (trust
 *                    mode without the package installed)
 *   payload_offset   the payload, 64-aligned
 *   frame_size - 1   the trailing signal byte, TC_FRAME_TRAILER(seq)
 *   frame_size       a multiple of TC_FRAME_ALIGN, <= the slot size
 *
 * All offsets are absolute (from the frame start), all integers little
 * endian. Regions are ordered (code < symtab < payload < trailer) and may
 * not overlap; a region of size 0 has offset 0.
 *
 * Frame types:
 *  - Local    (1): element id only; the receiver calls its own copy
 *                  through the package's element table.
 *  - Injected (2): the span travels in the frame; the receiver runs it
 *                  (in place or from its RX code cache).
 *  - Portable (4): LLVM bitcode of one target triple's module travels in
 *                  the code region (code_offset/code_size), code_hash is its
 *                  FNV-1a 64 (the manifest's bc_hash), the symbol table holds
 *                  exactly one name, the entry function (<name>_main); no GOT,
 *                  entry or data fields. The receiver compiles the module for
 *                  its own CPU (portable.c, off the polling thread: only this
 *                  ring waits) and runs the code compiled once per hash;
 *                  with TC_FRAME_F_CACHE later Cached frames of the same peer
 *                  name it by that hash. In `verify` the frame's bitcode is
 *                  never read: the receiver compiles its own package's module
 *                  of that hash, or rejects the frame. In a group
 *                  (TC_FRAME_F_HASHES) no module travels: the code region
 *                  holds the hash of each architecture's module, code_hash
 *                  the sender's, and every member runs its own package's
 *                  module of the hash its architecture has there, compiled
 *                  before it joined (the total order cannot wait).
 *  - Cached   (3): element id and code_hash only: the receiver runs the copy
 *                  it cached from an earlier Injected frame of the same peer
 *                  that carried TC_FRAME_F_CACHE. code_offset/size are 0; the
 *                  bytes between the header and the payload are undefined
 *                  (not transmitted). A sender lays a Cached message out as
 *                  [header][code][symbols][2nd header][payload][trailer]:
 *                  the first frame to a peer is all of it (the 2nd header is
 *                  padding to the receiver), later ones start at the 2nd
 *                  header -- both one contiguous put, payload not copied.
 *
 * Identity: pkg_id = FNV-1a 64 of the package NAME (tc_frame_pkg_id()), so it
 * is stable across rebuilds and both sides compute it without exchanging
 * anything; frames of the public API also carry the name (TC_FRAME_F_NAMED,
 * names shorter than TC_FRAME_PKG_NAME_MAX), checked to be a C identifier
 * that hashes to pkg_id before a receiver looks for it on disk; element ids are the toolchain's (jam names sorted, stable for the
 * same sources). build_id is the sender's package build id, informative.
 * code_hash = FNV-1a 64 of the span with the GOT slot as zero bytes (the
 * manifest's span_hash): identity and integrity, not authentication.
 *
 * Sequence: each (sender, receiver) ring numbers its frames 0, 1, 2, ...;
 * frame k lands in slot k mod depth. The signal word carries the magic and
 * the low 32 bits of seq, the trailer byte 0x80 | (seq & 0x7f). A frame whose
 * seq is not the one the receiver expects in that slot was written by a
 * sender that ignored its credits: it is rejected. The receiver zeroes a
 * complete frame's header and trailer when it frees the slot, so nothing of
 * an earlier lap remains -- except bytes of a put that lands after its frame
 * was already rejected as truncated (of such a frame only the signal word is
 * cleared: the sender may still be writing the rest); the trailer's 7 bits
 * repeat every 128 frames, so in trailer mode such a late byte could
 * complete a later frame early (TC_FRAME_F_CHECKSUM detects that).
 *
 * ucp_poll_ifunc frames (TC_FRAME_SENDER_NONE) go to caller-managed buffers
 * without rings: their seq is a per-process send counter that starts at a
 * random value, so that consecutive frames into one buffer never share a
 * signal and a late second store of the last one is recognised.
 *
 * Checked frames (UCX_TC_IFUNC_SIGNAL=check, the default, for
 * ucp_ifunc_send_nbix up to UCX_TC_IFUNC_CHECKED_MAX bytes): a full frame,
 * code and all, in ONE put that may land in any byte order and store any
 * byte twice. The signal word carries TC_FRAME_MAGIC_CHECKED, which differs
 * from TC_FRAME_MAGIC in every byte, so a receiver tells the two rules
 * apart from the signal word alone, and a signal word still landing is
 * neither magic. TC_FRAME_F_CHECKED is set and `checksum` holds
 * tc_frame_checked_check(): the words [8, frame_size) with the checksum
 * word itself as zero, mixed as the compact check mixes them. The receiver
 * snapshots the header, bounds frame_size by its buffer, and acts only when
 * the snapshot's signal, seq and flag agree and the check over the snapshot
 * and the live body matches the snapshot's checksum: by the argument of the
 * compact frames below, each word it read was the sent one. After running
 * (or rejecting) it clears only the signal word, so an empty buffer is one
 * load; a late second store that puts the signal back is recognised by the
 * buffer's last (signal, check) and by a table of the last 1,024 run, keyed
 * by seq.
 *
 * "Data, then signal" -- which ordering guarantee each variant uses
 * (UCX_TC_IFUNC_SIGNAL):
 *  - fence (default): put [8, frame_size) (header minus signal, body and
 *    trailer), ucp_worker_fence(), put the 8-byte signal word. UCP
 *    guarantees that operations after a fence become visible at the target
 *    after those before it, on every transport. (A Cached hash-only frame
 *    is one contiguous range too, see above.)
 *  - trailer (opt-in, the paper's): one put of [0, frame_size); the receiver
 *    sees the signal, reads frame_size, then waits for the trailer byte.
 *    This relies on one put landing in address order, which neither UCP, nor
 *    the shared-memory transports (memcpy may copy backwards or with
 *    non-temporal stores), nor InfiniBand promise. The test
 *    ifunc_procs.trailer_soundness (test/gtest/ifunc/test_ifunc_procs.cc) measures
 *    it on the transport at hand (every frame checksummed) and reports the
 *    result; nothing assumes it.
 * In both variants the receiver checks the trailer; a frame whose trailer
 * has not arrived within UCX_TC_IFUNC_TRAILER_TIMEOUT is rejected as
 * truncated, without ever blocking the progress engine.
 *
 * The receiver frees a slot by zeroing the header and trailer byte of a
 * complete frame (run or rejected), or only the signal word of a frame that
 * never completed, then returns credits one-sided. It never writes beyond
 * the frame.
 *
 * Compact frames (UCX_TC_IFUNC_SIGNAL=check, the default, mailbox rings
 * only): Local and Cached frames without code, in one put that may land in
 * any byte order and store any byte twice. A sender uses them up to 1 KiB
 * (send.c: above that, hashing every word costs more than a fence and a
 * second put).
 *
 *   0   check         tc_frame_compact_check() of the words [8, frame_size)
 *   8   format        TC_FRAME_COMPACT_FORMAT: where a full frame has its
 *                     version, so one 16-bit load tells the two apart
 *   10  type          TC_FRAME_LOCAL or TC_FRAME_CACHED
 *   11  hdr_words     header size / 8 (5 Local, 6 Cached)
 *   12  seq           ring sequence number
 *   16  pkg_id, 24 element_id, 28 sender, 32 payload_size,
 *   36  zero          (reserved)
 *   40  code_hash     Cached only
 *   hdr payload, then zero padding to frame_size = align8(hdr + payload)
 *
 * A Local frame with 16 bytes of payload is 56 bytes, one cache line.
 * Soundness without any ordering: the receiver acts on a slot only when the
 * seq is the one it expects there and the check word matches the bytes it
 * reads. Every byte a put stores is a byte of the new frame (twice or not),
 * so what the receiver reads is, word by word, either the new frame's word
 * or an older one (an earlier lap's frame or zeroes). The check mixes each
 * word through an odd multiply, a bijection, so a snapshot that differs from
 * the sent frame in one word never matches, and one that differs in several
 * matches with probability about 2^-64; the seq it covers makes an earlier
 * lap's complete frame in the same slot "not yet". The receiver never writes
 * a compact slot: nothing of it needs clearing, and no late store can race
 * a clear. A frame whose seq arrived but whose check never matches is
 * rejected as truncated after UCX_TC_IFUNC_TRAILER_TIMEOUT.
 */
#ifndef TC_IFUNC_FRAME_H_
#define TC_IFUNC_FRAME_H_

#include <twochains/ifunc.h>

#include <stddef.h>
#include <stdint.h>

BEGIN_C_DECLS

#ifdef __cplusplus
#  define TC_STATIC_ASSERT(_cond, _msg) static_assert(_cond, _msg)
#else
#  define TC_STATIC_ASSERT(_cond, _msg) _Static_assert(_cond, _msg)
#endif

#define TC_FRAME_VERSION      1u
#define TC_FRAME_ALIGN        64u            /* every region and the frame */
#define TC_FRAME_HDR_SIZE     128u
#define TC_FRAME_MAGIC        0x31464354u    /* "TCF1" */
#define TC_FRAME_MAGIC_CHECKED 0x32646b63u   /* "ckd2": no byte of TC_FRAME_MAGIC */
#define TC_FRAME_GOT_SIZE     8u             /* one pointer */
#define TC_FRAME_MIN_SIZE     (TC_FRAME_HDR_SIZE + TC_FRAME_ALIGN)
#define TC_FRAME_MAX_SYMBOLS  256u
#define TC_FRAME_SYMBOL_MAX   128u           /* name length, NUL included */
#define TC_FRAME_SENDER_NONE  0xffffffffu    /* ucp_ifunc_send_nbix frames */
#define TC_FRAME_PKG_NAME_MAX 20u            /* pkg_name[], NUL included */

/* Signal word and trailer byte of frame @a _seq */
#define TC_FRAME_SIGNAL(_seq)  (((uint64_t)TC_FRAME_MAGIC << 32) | (uint32_t)(_seq))
#define TC_FRAME_SIGNAL_CHECKED(_seq) \
    (((uint64_t)TC_FRAME_MAGIC_CHECKED << 32) | (uint32_t)(_seq))
#define TC_FRAME_TRAILER(_seq) ((uint8_t)(0x80u | ((uint32_t)(_seq) & 0x7fu)))
#define TC_FRAME_SIGNAL_SEQ(_sig)   ((uint32_t)(_sig))
#define TC_FRAME_SIGNAL_MAGIC(_sig) ((uint32_t)((_sig) >> 32))

/* tc_frame_hdr_t::type */
typedef enum tc_frame_type {
    TC_FRAME_LOCAL    = 1,
    TC_FRAME_INJECTED = 2,
    TC_FRAME_CACHED   = 3,
    TC_FRAME_PORTABLE = 4
} tc_frame_type_t;

#define TC_FRAME_CODE_MAX (1u << 20)   /* a span or a bitcode module */

/* tc_frame_hdr_t::flags */
enum {
    TC_FRAME_F_SYMBOLS  = 0x1,  /* symtab present */
    TC_FRAME_F_CACHE    = 0x2,  /* receiver: keep this code for Cached frames */
    TC_FRAME_F_CHECKSUM = 0x4,  /* checksum covers header [8, 88) + payload */
    TC_FRAME_F_WDATA    = 0x8,  /* span has writable globals (TC_JAM_F_WRITABLE_DATA) */
    TC_FRAME_F_NAMED    = 0x10, /* pkg_name holds the package name (ucp_ifunc frames) */
    TC_FRAME_F_CHECKED  = 0x20, /* one put: checksum is tc_frame_checked_check() */
    TC_FRAME_F_HASHES   = 0x40, /* Portable, in a group: the code region is the
                                   hash of each architecture's module, no module */
    TC_FRAME_F_ALL      = 0x7f
};

/* A TC_FRAME_F_HASHES code region: the FNV-1a 64 of the element's module
 * for each architecture (tc_ifunc_arch_t - 1), 0 where the package has none */
#define TC_FRAME_ARCHS       2u
#define TC_FRAME_HASHES_SIZE (8u * TC_FRAME_ARCHS)

typedef struct tc_frame_hdr {
    uint64_t signal;          /*   0 TC_FRAME_SIGNAL(seq), written last */
    uint16_t version;         /*   8 TC_FRAME_VERSION */
    uint8_t  type;            /*  10 tc_frame_type_t */
    uint8_t  hdr_lines;       /*  11 TC_FRAME_HDR_SIZE / TC_FRAME_ALIGN */
    uint32_t flags;           /*  12 TC_FRAME_F_* */
    uint32_t frame_size;      /*  16 bytes, trailer included */
    uint32_t seq;             /*  20 ring sequence number */
    uint64_t pkg_id;          /*  24 tc_frame_pkg_id(package name) */
    uint64_t code_hash;       /*  32 span hash (Injected, Cached), else 0 */
    uint32_t element_id;      /*  40 */
    uint32_t sender;          /*  44 sender rank */
    uint32_t got_offset;      /*  48 GOT-pointer slot */
    uint32_t got_size;        /*  52 TC_FRAME_GOT_SIZE, or 0 */
    uint32_t code_offset;     /*  56 span */
    uint32_t code_size;       /*  60 */
    uint32_t entry_offset;    /*  64 <name>_main */
    uint32_t payload_offset;  /*  68 */
    uint32_t payload_size;    /*  72 */
    uint32_t symtab_offset;   /*  76 */
    uint32_t symtab_size;     /*  80 bytes of names, NULs included */
    uint32_t num_symbols;     /*  84 */
    uint64_t checksum;        /*  88 TC_FRAME_F_CHECKSUM: FNV-1a 64; TC_FRAME_F_CHECKED:
                                 tc_frame_checked_check() */
    uint64_t build_id;        /*  96 sender's package build id */
    uint32_t data_offset;     /* 104 TC_FRAME_F_WDATA: the span's writable data, from the span start */
    char     pkg_name[TC_FRAME_PKG_NAME_MAX]; /* 108 TC_FRAME_F_NAMED: NUL-terminated C
                                 identifier whose tc_frame_pkg_id() is pkg_id, so
                                 that ucp_poll_ifunc can register it on arrival */
} tc_frame_hdr_t;

/* The bytes the checksum covers in the header: version .. num_symbols */
#define TC_FRAME_CSUM_HDR_BEGIN  8u
#define TC_FRAME_CSUM_HDR_END    88u

TC_STATIC_ASSERT(sizeof(tc_frame_hdr_t) == TC_FRAME_HDR_SIZE, "frame header size");
TC_STATIC_ASSERT(TC_FRAME_HDR_SIZE % TC_FRAME_ALIGN == 0, "header is whole lines");
TC_STATIC_ASSERT(offsetof(tc_frame_hdr_t, signal) == 0, "signal word first");
TC_STATIC_ASSERT(offsetof(tc_frame_hdr_t, frame_size) == 16, "frame_size offset");
TC_STATIC_ASSERT(offsetof(tc_frame_hdr_t, pkg_id) == 24, "pkg_id offset");
TC_STATIC_ASSERT(offsetof(tc_frame_hdr_t, code_hash) == 32, "code_hash offset");
TC_STATIC_ASSERT(offsetof(tc_frame_hdr_t, got_offset) == 48, "got_offset offset");
TC_STATIC_ASSERT(offsetof(tc_frame_hdr_t, entry_offset) == 64, "entry_offset offset");
TC_STATIC_ASSERT(offsetof(tc_frame_hdr_t, checksum) == TC_FRAME_CSUM_HDR_END,
               "checksum follows the covered header bytes");
TC_STATIC_ASSERT(offsetof(tc_frame_hdr_t, data_offset) == 104, "data_offset offset");
TC_STATIC_ASSERT(offsetof(tc_frame_hdr_t, pkg_name) == 108, "pkg_name offset");
TC_STATIC_ASSERT((TC_FRAME_ALIGN & (TC_FRAME_ALIGN - 1)) == 0, "alignment power of 2");

/* Compact frames (see the top of this file) */
#define TC_FRAME_COMPACT_FORMAT   0x4354u     /* "TC" at byte 8 */
#define TC_FRAME_COMPACT_LOCAL_HDR  40u
#define TC_FRAME_COMPACT_CACHED_HDR 48u
#define TC_FRAME_COMPACT_MAX      65536u      /* bytes a receiver accepts; senders
                                                 send larger frames full, and
                                                 choose full well below this */

typedef struct tc_frame_compact {
    uint64_t check;           /*  0 tc_frame_compact_check() */
    uint16_t format;          /*  8 TC_FRAME_COMPACT_FORMAT */
    uint8_t  type;            /* 10 TC_FRAME_LOCAL or TC_FRAME_CACHED */
    uint8_t  hdr_words;       /* 11 header bytes / 8 */
    uint32_t seq;             /* 12 */
    uint64_t pkg_id;          /* 16 */
    uint32_t element_id;      /* 24 */
    uint32_t sender;          /* 28 */
    uint32_t payload_size;    /* 32 */
    uint32_t reserved;        /* 36 zero */
    uint64_t code_hash;       /* 40 Cached only: not part of a Local header */
} tc_frame_compact_t;

TC_STATIC_ASSERT(offsetof(tc_frame_compact_t, format) ==
                 offsetof(tc_frame_hdr_t, version), "format where version is");
TC_STATIC_ASSERT(offsetof(tc_frame_compact_t, code_hash) ==
                 TC_FRAME_COMPACT_LOCAL_HDR, "Local header ends before code_hash");
TC_STATIC_ASSERT(sizeof(tc_frame_compact_t) == TC_FRAME_COMPACT_CACHED_HDR,
                 "Cached header size");

static inline uint32_t tc_frame_compact_size(uint32_t hdr_size, uint32_t payload_size)
{
    return (hdr_size + payload_size + 7u) & ~7u;
}

static inline uint64_t tc_frame_check_mix(uint64_t h, uint64_t w)
{
    return (h ^ w) * 0x9e3779b97f4a7c15ull;   /* odd: a bijection of h ^ w */
}

static inline uint64_t tc_frame_check_fold(uint64_t h)
{
    h ^= h >> 31;                             /* each step a bijection */
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 29);
}

/**
 * Check word of a compact frame: the 8-byte words [8, @a size) (size a
 * multiple of 8), four independent lanes so that it costs about a cycle per
 * word. Reads every word once, with plain loads: the caller compares the
 * result with the check word it read before.
 */
static inline uint64_t tc_frame_compact_check(const void *frame, uint32_t size)
{
    const uint64_t *w = (const uint64_t*)frame + 1;
    uint32_t n        = (size / 8) - 1, i;
    uint64_t a = 0x243f6a8885a308d3ull ^ size, b = 0x13198a2e03707344ull;
    uint64_t c = 0xa4093822299f31d0ull, d = 0x082efa98ec4e6c89ull;

    for (i = 0; i + 4 <= n; i += 4) {
        a = tc_frame_check_mix(a, __atomic_load_n(&w[i], __ATOMIC_RELAXED));
        b = tc_frame_check_mix(b, __atomic_load_n(&w[i + 1], __ATOMIC_RELAXED));
        c = tc_frame_check_mix(c, __atomic_load_n(&w[i + 2], __ATOMIC_RELAXED));
        d = tc_frame_check_mix(d, __atomic_load_n(&w[i + 3], __ATOMIC_RELAXED));
    }
    for (; i < n; ++i) {
        a = tc_frame_check_mix(a, __atomic_load_n(&w[i], __ATOMIC_RELAXED));
    }
    /* lanes folded apart (rotations keep a one-lane difference a difference) */
    b = tc_frame_check_fold(b);
    c = tc_frame_check_fold(c);
    d = tc_frame_check_fold(d);
    return tc_frame_check_fold(a) ^ ((b << 17) | (b >> 47)) ^ ((c << 31) | (c >> 33)) ^
           ((d << 47) | (d >> 17)) ^ (uint64_t)n;
}

/**
 * Check word of a checked frame (see the top of this file): the header
 * words 1..15 of @a hdr (a snapshot; its checksum word counts as zero),
 * then the words [TC_FRAME_HDR_SIZE, @a size) of @a frame, read once each
 * with plain loads. @a size is a multiple of TC_FRAME_ALIGN, at least
 * TC_FRAME_MIN_SIZE, so the body is whole groups of four words.
 */
static inline uint64_t tc_frame_checked_check(const tc_frame_hdr_t *hdr,
                                              const void *frame, uint32_t size)
{
    const uint64_t *hw = (const uint64_t*)hdr;
    const uint64_t *w  = (const uint64_t*)frame;
    const uint32_t csum_word = TC_FRAME_CSUM_HDR_END / 8;   /* the checksum word */
    uint32_t n = size / 8, i;
    uint64_t l[4] = {0x243f6a8885a308d3ull ^ size, 0x13198a2e03707344ull,
                     0xa4093822299f31d0ull, 0x082efa98ec4e6c89ull};
    uint64_t a, b, c, d;

    for (i = 1; i < TC_FRAME_HDR_SIZE / 8; ++i) {
        l[i & 3] = tc_frame_check_mix(l[i & 3], (i == csum_word) ? 0 : hw[i]);
    }
    a = l[0];
    b = l[1];
    c = l[2];
    d = l[3];
    for (; i + 4 <= n; i += 4) {
        a = tc_frame_check_mix(a, __atomic_load_n(&w[i], __ATOMIC_RELAXED));
        b = tc_frame_check_mix(b, __atomic_load_n(&w[i + 1], __ATOMIC_RELAXED));
        c = tc_frame_check_mix(c, __atomic_load_n(&w[i + 2], __ATOMIC_RELAXED));
        d = tc_frame_check_mix(d, __atomic_load_n(&w[i + 3], __ATOMIC_RELAXED));
    }
    b = tc_frame_check_fold(b);
    c = tc_frame_check_fold(c);
    d = tc_frame_check_fold(d);
    return tc_frame_check_fold(a) ^ ((b << 17) | (b >> 47)) ^ ((c << 31) | (c >> 33)) ^
           ((d << 47) | (d >> 17)) ^ (uint64_t)n;
}

/**
 * Validate a compact header (a snapshot whose check matched) against its
 * ring: format, type, header size, size inside @a slot_size, reserved zero,
 * seq. Pure; inline, as it is on every frame's path.
 * @return TC_IFUNC_REJECT_NONE or why.
 */
#define TC_FRAME_SEQ_ANY UINT64_MAX
static inline tc_ifunc_reject_t
tc_frame_check_compact(const tc_frame_compact_t *hdr,
                                         uint32_t slot_size, uint64_t expect_seq)
{
    uint32_t hdr_size;

    if (hdr->format != TC_FRAME_COMPACT_FORMAT) {
        return TC_IFUNC_REJECT_VERSION;
    }
    if (hdr->type == TC_FRAME_LOCAL) {
        hdr_size = TC_FRAME_COMPACT_LOCAL_HDR;
    } else if (hdr->type == TC_FRAME_CACHED) {
        hdr_size = TC_FRAME_COMPACT_CACHED_HDR;
    } else {
        return TC_IFUNC_REJECT_TYPE;
    }
    if ((hdr->hdr_words * 8u != hdr_size) || (hdr->reserved != 0)) {
        return TC_IFUNC_REJECT_VERSION;
    }
    if (((uint64_t)hdr_size + hdr->payload_size > slot_size) ||
        ((uint64_t)hdr_size + hdr->payload_size > TC_FRAME_COMPACT_MAX)) {
        return TC_IFUNC_REJECT_SIZE;
    }
    if ((expect_seq != TC_FRAME_SEQ_ANY) && (hdr->seq != (uint32_t)expect_seq)) {
        return TC_IFUNC_REJECT_SEQUENCE;
    }
    if ((hdr->type == TC_FRAME_CACHED) && (hdr->code_hash == 0)) {
        return TC_IFUNC_REJECT_CACHE_MISS;
    }
    return TC_IFUNC_REJECT_NONE;
}

/* What the header validator learned: all offsets checked against the frame */
typedef struct tc_frame_info {
    tc_frame_type_t type;
    uint32_t        seq;
    uint32_t        frame_size;
} tc_frame_info_t;

static inline uint32_t tc_frame_align(uint32_t n)
{
    return (n + TC_FRAME_ALIGN - 1) & ~(TC_FRAME_ALIGN - 1);
}

/* FNV-1a 64, the toolchain's hash (twochains/jam_format.h) */
#define TC_FNV1A64_INIT 0xcbf29ce484222325ull

static inline uint64_t tc_fnv1a64_update(uint64_t h, const void *data, size_t len)
{
    const uint8_t *p = (const uint8_t*)data;
    size_t i;

    for (i = 0; i < len; ++i) {
        h = (h ^ p[i]) * 0x100000001b3ull;
    }
    return h;
}

static inline uint64_t tc_fnv1a64(const void *data, size_t len)
{
    return tc_fnv1a64_update(TC_FNV1A64_INIT, data, len);
}

/** pkg_id of a package: FNV-1a 64 of its name, without the NUL. */
uint64_t tc_frame_pkg_id(const char *pkg_name);

/** A TC_FRAME_F_NAMED header's name: terminated, a C identifier, hashing
 * to its pkg_id. Pure, on a snapshot. */
int tc_frame_name_ok(const tc_frame_hdr_t *hdr);

/**
 * Validate a header against the slot it sits in, before anything else of
 * the frame is read: version, type, flags, size (non-zero, aligned, at most
 * @a slot_size), every region inside [TC_FRAME_HDR_SIZE, frame_size - 1),
 * aligned, ordered and consistent with the type, and (unless @a expect_seq is
 * TC_FRAME_SEQ_ANY) the sequence number in both the signal and the header.
 * Pure: reads only the TC_FRAME_HDR_SIZE bytes at @a hdr (a snapshot).
 * @return TC_IFUNC_REJECT_NONE, or why the frame must be rejected.
 */
tc_ifunc_reject_t tc_frame_check_header(const tc_frame_hdr_t *hdr,
                                        uint32_t slot_size, uint64_t expect_seq,
                                        tc_frame_info_t *info);

/**
 * Validate the symbol table of a frame whose header passed
 * tc_frame_check_header: exactly num_symbols names, each a C identifier
 * shorter than TC_FRAME_SYMBOL_MAX, all inside symtab_size.
 */
tc_ifunc_reject_t tc_frame_check_symtab(const tc_frame_hdr_t *hdr,
                                        const uint8_t *frame);

/** Checksum of a frame (TC_FRAME_F_CHECKSUM): header [8, 88) + payload. */
uint64_t tc_frame_checksum(const tc_frame_hdr_t *hdr, const uint8_t *frame);

/**
 * Hash of a span as the toolchain computes it: the 8 bytes at @a got_rel
 * (the GOT slot) count as zero, whatever the buffer holds.
 */
uint64_t tc_frame_span_hash(const uint8_t *span, uint32_t size, uint32_t got_rel);

END_C_DECLS

#endif
