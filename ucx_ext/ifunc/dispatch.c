/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The receive path: look at one slot, and when its frame is complete,
 * validate it and run it (Local, Injected, Cached), or reject it.
 *
 * Threads: the thread that drives the receiver (mailbox poller or
 * ucp_poll_ifunc caller); one thread per ring.
 *
 * Invariants:
 *  - the header is copied once (a snapshot) after the signal, and only the
 *    snapshot is validated and used: tc_frame_check_header bounds every
 *    region before any code or payload byte is read;
 *  - package-level checks (package, element, hash, security mode, GOT)
 *    happen before the code is placed or called;
 *  - the GOT pointer that code sees is always the receiver's own table
 *    (installed package, or built here from names with dlsym), never a value
 *    from the wire;
 *  - every frame ends RUN or REJECTED exactly once; both free the slot. The
 *    receiver writes only what the sender is done with: of a complete
 *    frame (its signal, size, trailer and header agree) the header and
 *    trailer; of one that never completed, only the signal word, which a
 *    sender writes last. It never clears beyond the frame, so rejecting a
 *    frame cannot erase the next one;
 *  - a header that is not yet a valid frame (no magic, a size that does
 *    not fit, no trailer, a header of another signal) is "not a frame
 *    yet": PENDING, untouched, until the trailer timeout makes it a reject.
 *    In a caller-managed buffer (ucp_poll_ifunc) a signal without the frame
 *    magic is no message at all, as in the public API;
 *  - clearing is not final: a put may store the same bytes twice (glibc's
 *    memcpy writes an 8-byte signal with two overlapping 8-byte stores, and
 *    a preempted sender can do the second one after we ran the frame and
 *    cleared the slot). So the previous lap's signal in a slot means "not
 *    yet", never a bad frame: signals carry the sequence for this reason.
 *  - an incomplete frame never blocks the progress engine;
 *  - a compact frame (frame.h) is acted on only when its slot holds the
 *    expected seq and a check word matching every word read; its header is
 *    read after that match, and its slot is never written.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc_int.h"

#include <base/debug.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TC_IFUNC_MAX_LINKS 1024

void tc_ifunc_ring_init(tc_ifunc_ring_t *ring, uint8_t *base, int peer,
                        uint32_t depth)
{
    memset(ring, 0, sizeof(*ring));
    ring->base  = base;
    ring->head  = base;
    ring->peer  = peer;
    ring->depth = depth;
    kh_init_inplace(tc_cached, &ring->cached);
}

void tc_ifunc_ring_cleanup(tc_ifunc_ring_t *ring)
{
    tc_ifunc_link_t *link, *next;
    tc_code_entry_t *entry;

    /* the cache outlives the ring: its copies are no longer named here
     * (atomic: a compiled Portable module is the process's, named by rings
     * of any thread) */
    kh_foreach_value(&ring->cached, entry, {
        __atomic_fetch_sub(&entry->pins, 1, __ATOMIC_RELAXED);
    })

    for (link = ring->links; link != NULL; link = next) {
        next = link->next;
        free(link->got);
        free(link);
    }
    ring->links = NULL;
    kh_destroy_inplace(tc_cached, &ring->cached);
}

void tc_ifunc_reject(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                     tc_ifunc_reject_t reason, uint32_t seq, unsigned type,
                     uint32_t element_id, const char *detail)
{
    char from[32];

    ++rx->stats->rejects[reason];
    ++rx->stats->rejects_total;
    if (ring->peer >= 0) {
        snprintf(from, sizeof(from), "rank %d", ring->peer);
    } else {
        snprintf(from, sizeof(from), "buffer %p", ring->base);
    }

    if (!(ring->warned & UCS_BIT(reason))) {
        ring->warned |= UCS_BIT(reason);
        ucs_warn("ifunc rank %d: rejected frame seq %u type %u element %u from %s: "
                 "%s%s%s (further '%s' rejects from this peer are only counted)",
                 rx->rank, seq, type, element_id, from,
                 tc_ifunc_reject_name(reason), (detail[0] != '\0') ? ": " : "",
                 detail, tc_ifunc_reject_name(reason));
    } else {
        ucs_debug("ifunc rank %d: rejected frame seq %u from %s: %s%s%s", rx->rank,
                  seq, from, tc_ifunc_reject_name(reason),
                  (detail[0] != '\0') ? ": " : "", detail);
    }
}

/* The GOT table built from the names a peer's frame carries (trust mode) */
static void **tc_ifunc_link(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                            const tc_frame_hdr_t *h, const uint8_t *slot,
                            tc_ifunc_reject_t *reason_p, char *detail,
                            size_t detail_len)
{
    tc_ifunc_link_t *link;
    const char *name;
    unsigned n, count = 0;
    void **got;

    for (link = ring->links; link != NULL; link = link->next, ++count) {
        if ((link->pkg_id == h->pkg_id) && (link->element_id == h->element_id) &&
            (link->code_hash == h->code_hash)) {
            return link->got;
        }
    }
    /* an Injected frame carries the names of every external its code
     * uses; one that carries none needs none, and links to an empty table */
    if (h->flags & TC_FRAME_F_SYMBOLS) {
        *reason_p = tc_frame_check_symtab(h, slot);
        if (*reason_p != TC_IFUNC_REJECT_NONE) {
            snprintf(detail, detail_len, "malformed symbol names");
            return NULL;
        }
    }
    if (count >= TC_IFUNC_MAX_LINKS) {
        *reason_p = TC_IFUNC_REJECT_RESOURCE;
        snprintf(detail, detail_len, "%u linked elements", count);
        return NULL;
    }

    got  = calloc(h->num_symbols + 1, sizeof(*got));
    link = calloc(1, sizeof(*link));
    if ((got == NULL) || (link == NULL)) {
        *reason_p = TC_IFUNC_REJECT_RESOURCE;
        goto err;
    }
    name = (const char*)slot + h->symtab_offset;
    for (n = 0; n < h->num_symbols; ++n) {
        got[n] = tc_ifunc_symbol_resolve(name);
        if (got[n] == NULL) {
            snprintf(detail, detail_len, "cannot resolve '%s'", name);
            *reason_p = TC_IFUNC_REJECT_LINK;
            goto err;
        }
        name += strlen(name) + 1;
    }
    link->pkg_id     = h->pkg_id;
    link->element_id = h->element_id;
    link->code_hash  = h->code_hash;
    link->got        = got;
    link->next       = ring->links;
    ring->links      = link;
    ++rx->stats->remote_links;
    ucs_debug("ifunc rank %d: linked element %u of package %016" PRIx64
              " from rank %d: %u symbols", rx->rank, h->element_id, h->pkg_id,
              ring->peer, h->num_symbols);
    return got;

err:
    free(got);
    free(link);
    return NULL;
}

tc_ifunc_pkg_h tc_ifunc_frame_pkg(tc_ifunc_rx_t *rx, const tc_frame_hdr_t *h)
{
    tc_ifunc_pkg_h pkg = tc_ifunc_pkg_find(h->pkg_id);

    if ((pkg == NULL) && (rx->autoload != NULL) && (h->flags & TC_FRAME_F_NAMED) &&
        tc_frame_name_ok(h)) {
        pkg = rx->autoload(h);
    }
    return pkg;
}

static void tc_ifunc_unknown_pkg(const tc_frame_hdr_t *h, char *detail,
                                 size_t detail_len)
{
    if (!(h->flags & TC_FRAME_F_NAMED)) {
        snprintf(detail, detail_len, "package %016" PRIx64, h->pkg_id);
    } else if (tc_frame_name_ok(h)) {
        snprintf(detail, detail_len, "package %016" PRIx64 " '%s' is not registered "
                 "and not in UCX_IFUNC_LIB_DIR or UCX_TC_IFUNC_PKG_PATH", h->pkg_id,
                 h->pkg_name);
    } else {
        snprintf(detail, detail_len, "package %016" PRIx64 " named by something that "
                 "is not its name (not a C identifier, or another hash)", h->pkg_id);
    }
}

/* Same bytes as the installed span, GOT slot excluded */
static int tc_ifunc_same_span(const tc_ifunc_element_t *e, const uint8_t *code,
                              uint32_t got_rel)
{
    uint32_t after = got_rel + TC_FRAME_GOT_SIZE;

    return (memcmp(code, e->span, got_rel) == 0) &&
           (memcmp(code + after, e->span + after, e->span_size - after) == 0);
}

/* The sender may still write the slot, so bytes compared there could differ
 * from bytes copied from there a moment later: what runs never comes from
 * the slot after a check of it. Code equal to the installed element (each
 * slot byte read once, by the compare) runs as the installed element, from
 * its own copy: the slot's code is not copied at all. Code that is not
 * installed (trust mode) is copied once with its names into private memory,
 * hashed and linked there, and run from there. The payload, the sender's
 * data, stays in the slot. Only in-place placement, allowed with trust
 * alone, runs the slot itself. */
static tc_ifunc_reject_t
tc_ifunc_run_injected(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                      const tc_frame_hdr_t *h, uint8_t *slot, void *payload,
                      char *detail, size_t detail_len)
{
    uint8_t *code;
    uint32_t got_rel   = h->got_offset - h->code_offset;
    uint32_t entry_rel = h->entry_offset - h->code_offset;
    uint32_t data_rel  = (h->flags & TC_FRAME_F_WDATA) ? h->data_offset : h->code_size;
    const tc_ifunc_element_t *e = NULL;
    tc_ifunc_reject_t reason;
    tc_code_entry_t *entry = NULL;
    tc_jam_main_fn_t fn;
    tc_ifunc_pkg_h pkg;
    uint64_t hash, evictions;
    void **got;
    khiter_t it;
    int ret, installed;

    if (rx->security == TC_IFUNC_SECURITY_LOCAL_ONLY) {
        snprintf(detail, detail_len, "injected code in local-only mode");
        return TC_IFUNC_REJECT_DISABLED;
    }
    code = slot + h->code_offset;
    pkg  = tc_ifunc_frame_pkg(rx, h);
    if (pkg != NULL) {
        e = tc_ifunc_pkg_elem(pkg, h->element_id);
    }
    /* the installed element, byte for byte: its hash was checked at load,
     * so the hot path hashes nothing */
    installed = (e != NULL) && (e->span_hash == h->code_hash) &&
                (e->span_size == h->code_size) && (e->got_slot_offset == got_rel) &&
                (e->entry_offset == entry_rel) && tc_ifunc_same_span(e, code, got_rel);
    hash      = h->code_hash;

    if (rx->security == TC_IFUNC_SECURITY_VERIFY) {
        if (pkg == NULL) {
            tc_ifunc_unknown_pkg(h, detail, detail_len);
            return TC_IFUNC_REJECT_UNKNOWN_PKG;
        }
        if (e == NULL) {
            snprintf(detail, detail_len, "package %s has %u elements", pkg->name,
                     pkg->num_elements);
            return TC_IFUNC_REJECT_UNKNOWN_ELEMENT;
        }
        if (!installed) {
            snprintf(detail, detail_len, "code is not the installed %s.%s", pkg->name,
                     e->name);
            return TC_IFUNC_REJECT_HASH;
        }
    }
    if (installed) {
        if (e->got == NULL) {
            snprintf(detail, detail_len, "%s.%s has unresolved externals", pkg->name,
                     e->name);
            return TC_IFUNC_REJECT_LINK;
        }
        got      = e->got;
        data_rel = (e->flags & TC_JAM_F_WRITABLE_DATA) ? e->data_offset : e->span_size;
        if (rx->placement != TC_IFUNC_PLACEMENT_INPLACE) {
            code = e->span;   /* what was compared equal, from memory only we write */
        }
    } else {
        /* trust mode, code not installed here: copy it once, check the copy
         * against its hash, then link it from the names the copy carries */
        if (rx->placement != TC_IFUNC_PLACEMENT_INPLACE) {
            slot = tc_code_cache_snapshot(&rx->cache, slot, h->frame_size);
            if (slot == NULL) {
                snprintf(detail, detail_len, "no memory for a private copy of %u bytes",
                         h->frame_size);
                return TC_IFUNC_REJECT_RESOURCE;
            }
            code = slot + h->code_offset;
        }
        hash = tc_frame_span_hash(code, h->code_size, got_rel);
        if (hash != h->code_hash) {
            snprintf(detail, detail_len, "code hashes to %016" PRIx64 ", header says "
                     "%016" PRIx64, hash, h->code_hash);
            return TC_IFUNC_REJECT_HASH;
        }
        reason = TC_IFUNC_REJECT_NONE;
        got    = tc_ifunc_link(rx, ring, h, slot, &reason, detail, detail_len);
        if (got == NULL) {
            return reason;
        }
    }

    if ((rx->placement == TC_IFUNC_PLACEMENT_COPY) || (h->flags & TC_FRAME_F_CACHE)) {
        entry = tc_code_cache_find(&rx->cache, hash, code, h->code_size, got_rel,
                                   entry_rel, data_rel, got);
        if (entry != NULL) {
            ++rx->stats->cache_hits;
        } else {
            evictions = rx->cache.evictions;
            entry = tc_code_cache_install(&rx->cache, hash, code, h->code_size,
                                          got_rel, entry_rel, data_rel, got,
                                          h->pkg_id, h->element_id);
            if (entry == NULL) {
                snprintf(detail, detail_len, "code cache full (%u entries, all named "
                         "by Cached frames) or mapping failed", rx->cache.count);
                return TC_IFUNC_REJECT_RESOURCE;
            }
            ++rx->stats->cache_installs;
            rx->stats->cache_evictions += rx->cache.evictions - evictions;
        }
        if (h->flags & TC_FRAME_F_CACHE) {
            it = kh_put(tc_cached, &ring->cached, h->code_hash, &ret);
            if (ret < 0) {
                return TC_IFUNC_REJECT_RESOURCE;
            }
            if (ret == 0) {
                --kh_val(&ring->cached, it)->pins;   /* re-sent: the new copy counts */
            }
            kh_val(&ring->cached, it) = entry;
            ++entry->pins;
        }
    }

    if (rx->install_only) {
        return TC_IFUNC_REJECT_NONE;
    }
    if (rx->placement == TC_IFUNC_PLACEMENT_COPY) {
        tc_code_entry_run(entry, payload, h->payload_size, rx->target_args);
        return TC_IFUNC_REJECT_NONE;
    } else {
        /* compact mode: the slot is RWX; our table into the GOT slot */
        memcpy(code + got_rel, &got, sizeof(got));
        __builtin___clear_cache((char*)code, (char*)code + h->code_size);
        fn = (tc_jam_main_fn_t)(void*)(code + entry_rel);
    }
    fn(payload, h->payload_size, rx->target_args);
    return TC_IFUNC_REJECT_NONE;
}

/* A Local call: the receiver's own copy of element @a element_id of @a pkg
 * (NULL: not registered, said in @a detail by the caller) */
static tc_ifunc_reject_t tc_ifunc_run_local(tc_ifunc_rx_t *rx, tc_ifunc_pkg_h pkg,
                                            uint32_t element_id, void *payload,
                                            uint32_t payload_size, char *detail,
                                            size_t detail_len)
{
    const tc_ifunc_element_t *e;

    if (pkg == NULL) {
        return TC_IFUNC_REJECT_UNKNOWN_PKG;
    }
    e = tc_ifunc_pkg_elem(pkg, element_id);
    if (e == NULL) {
        snprintf(detail, detail_len, "package %s has %u elements", pkg->name,
                 pkg->num_elements);
        return TC_IFUNC_REJECT_UNKNOWN_ELEMENT;
    }
    e->local->main(payload, payload_size, rx->target_args);
    return TC_IFUNC_REJECT_NONE;
}

/* A Cached call: the copy this ring's sender shipped earlier */
static tc_ifunc_reject_t tc_ifunc_run_cached(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                                             uint64_t code_hash, uint64_t pkg_id,
                                             uint32_t element_id, void *payload,
                                             uint32_t payload_size, char *detail,
                                             size_t detail_len)
{
    tc_code_entry_t *entry;
    khiter_t it;

    if (rx->security == TC_IFUNC_SECURITY_LOCAL_ONLY) {
        snprintf(detail, detail_len, "cached code in local-only mode");
        return TC_IFUNC_REJECT_DISABLED;
    }
    it = kh_get(tc_cached, &ring->cached, code_hash);
    if (it == kh_end(&ring->cached)) {
        snprintf(detail, detail_len, "code %016" PRIx64 " was never sent here",
                 code_hash);
        return TC_IFUNC_REJECT_CACHE_MISS;
    }
    entry = kh_val(&ring->cached, it);
    if ((entry->pkg_id != pkg_id) || (entry->element_id != element_id)) {
        snprintf(detail, detail_len, "code %016" PRIx64 " is another element",
                 code_hash);
        return TC_IFUNC_REJECT_CACHE_MISS;
    }
    ++rx->stats->cache_hits;
    if (entry->confined) {
        (void)tc_confine_run(rx, entry->code, payload, payload_size);
    } else {
        tc_code_entry_run(entry, payload, payload_size, rx->target_args);
    }
    return TC_IFUNC_REJECT_NONE;
}

static tc_ifunc_reject_t tc_ifunc_dispatch(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                                           const tc_frame_hdr_t *h, uint8_t *slot,
                                           char *detail, size_t detail_len)
{
    void *payload = (h->payload_size != 0) ? slot + h->payload_offset : NULL;
    tc_ifunc_pkg_h pkg;

    switch (h->type) {
    case TC_FRAME_LOCAL:
        pkg = tc_ifunc_frame_pkg(rx, h);
        if (pkg == NULL) {
            tc_ifunc_unknown_pkg(h, detail, detail_len);
        }
        return tc_ifunc_run_local(rx, pkg, h->element_id, payload, h->payload_size,
                                  detail, detail_len);
    case TC_FRAME_INJECTED:
        return tc_ifunc_run_injected(rx, ring, h, slot, payload, detail, detail_len);
    case TC_FRAME_PORTABLE:
        /* a carrier delivers in one order and cannot hold a frame for a
         * compile: it carries hashes of modules compiled before; a ring or
         * a buffer carries the module, and its frame may wait */
        if (!rx->portable_wait && !(h->flags & TC_FRAME_F_HASHES) &&
            (rx->security == TC_IFUNC_SECURITY_CONFINE)) {
            /* a group's confined jam: its module travels, the delivery waits */
            return tc_ifunc_run_portable_in_order(rx, ring, h, slot, payload, detail,
                                                  detail_len);
        }
        if (!(h->flags & TC_FRAME_F_HASHES) != !!rx->portable_wait) {
            snprintf(detail, detail_len, "%s", rx->portable_wait ?
                     "a Portable frame of module hashes (a group's) in a mailbox" :
                     "a Portable frame with a module in a group");
            return TC_IFUNC_REJECT_TYPE;
        }
        if (h->flags & TC_FRAME_F_HASHES) {
            return tc_ifunc_run_portable_hashes(rx, h, slot, payload, detail, detail_len);
        }
        return tc_ifunc_run_portable(rx, ring, h, slot, payload, detail, detail_len);
    default: /* TC_FRAME_CACHED; the header check allows nothing else */
        return tc_ifunc_run_cached(rx, ring, h->code_hash, h->pkg_id, h->element_id,
                                   payload, h->payload_size, detail, detail_len);
    }
}

static int tc_ifunc_size_ok(uint32_t size, uint32_t slot_size)
{
    return (size >= TC_FRAME_MIN_SIZE) && (size <= slot_size) &&
           ((size % TC_FRAME_ALIGN) == 0);
}

int tc_ifunc_slot_timed_out(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring)
{
    double now = tc_ifunc_now();

    if (ring->pending_since == 0) {
        ring->pending_since = now;
        return 0;
    }
    if (now - ring->pending_since < rx->trailer_timeout) {
        return 0;
    }
    rx->stats->pending_wait_s += now - ring->pending_since;
    ring->pending_since = 0;
    return 1;
}

/* A frame is over: keep its signal as the slot's last, and clear what tells
 * the next poll that a frame is here. A complete frame is the receiver's
 * (the sender fenced or flushed everything before its signal): clear its
 * header and trailer. Of an incomplete one the sender may still be writing
 * anything but the signal word, which it writes last: clear only that. */
static void tc_ifunc_slot_release(tc_ifunc_ring_t *ring, uint8_t *slot,
                                  uint64_t sig, uint32_t complete_size)
{
    ring->last_signal = sig;
    if (complete_size != 0) {
        slot[complete_size - 1] = 0;
        memset(slot, 0, TC_FRAME_HDR_SIZE);
    } else {
        __atomic_store_n(&((tc_frame_hdr_t*)slot)->signal, 0, __ATOMIC_RELAXED);
    }
}

tc_ifunc_slot_result_t tc_ifunc_slot_process_frame(tc_ifunc_rx_t *rx,
                                                   tc_ifunc_ring_t *ring,
                                                   uint8_t *slot,
                                                   uint32_t slot_size,
                                                   uint64_t expect_seq,
                                                   uint64_t sig)
{
    tc_frame_hdr_t *live = (tc_frame_hdr_t*)slot;
    uint32_t complete_size = 0;
    tc_ifunc_reject_t reason;
    char detail[192];
    tc_frame_hdr_t h;
    uint32_t size;
    int complete;

    detail[0] = '\0';
    if (ring->depth != 0) {
        if (ucs_unlikely(sig == TC_FRAME_SIGNAL(expect_seq - ring->depth))) {
            ++rx->stats->stale_signals;   /* a late second store of a run frame */
            return TC_IFUNC_SLOT_EMPTY;
        }
    } else {
        /* a caller-managed buffer: anything but a frame magic is no message
         * (the public API's rule); the last frame's signal stored again is
         * a late store, as above (each send has its own signal) */
        if (TC_FRAME_SIGNAL_MAGIC(sig) == TC_FRAME_MAGIC_CHECKED) {
            return tc_ifunc_slot_process_checked(rx, ring, slot, slot_size, sig);
        }
        if (TC_FRAME_SIGNAL_MAGIC(sig) != TC_FRAME_MAGIC) {
            return TC_IFUNC_SLOT_EMPTY;
        }
        if (ucs_unlikely(sig == ring->last_signal)) {
            ++rx->stats->stale_signals;
            return TC_IFUNC_SLOT_EMPTY;
        }
    }

    /* Complete: magic, a size that fits, the trailer of this signal, and a
     * header that says the same (a header of another frame, or none yet,
     * is a frame still arriving). Until then it is not a frame yet, and
     * nothing of it is touched: only the trailer timeout makes it a reject. */
    size     = __atomic_load_n(&live->frame_size, __ATOMIC_ACQUIRE);
    complete = (TC_FRAME_SIGNAL_MAGIC(sig) == TC_FRAME_MAGIC) &&
               tc_ifunc_size_ok(size, slot_size) &&
               (__atomic_load_n(&slot[size - 1], __ATOMIC_ACQUIRE) ==
                TC_FRAME_TRAILER(TC_FRAME_SIGNAL_SEQ(sig)));
    if (complete) {
        /* one snapshot; only it is validated and used from here on */
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        memcpy(&h, slot, sizeof(h));
        complete = (h.signal == sig) && (h.frame_size == size) &&
                   (h.seq == TC_FRAME_SIGNAL_SEQ(sig));
    }
    if (ucs_unlikely(!complete)) {
        if (!tc_ifunc_slot_timed_out(rx, ring)) {
            return TC_IFUNC_SLOT_PENDING;
        }
        memcpy(&h, slot, sizeof(h));
        if (TC_FRAME_SIGNAL_MAGIC(sig) != TC_FRAME_MAGIC) {
            reason = TC_IFUNC_REJECT_SIGNAL;
        } else if (!tc_ifunc_size_ok(size, slot_size)) {
            reason = TC_IFUNC_REJECT_SIZE;
            snprintf(detail, sizeof(detail), "frame size %u, slot %u", size,
                     slot_size);
        } else if ((h.signal != sig) || (h.frame_size != size) ||
                   (h.seq != TC_FRAME_SIGNAL_SEQ(sig))) {
            reason = TC_IFUNC_REJECT_SEQUENCE;
            snprintf(detail, sizeof(detail), "header of seq %u under the signal of "
                     "seq %u after %.3f s", h.seq, TC_FRAME_SIGNAL_SEQ(sig),
                     rx->trailer_timeout);
        } else {
            reason = TC_IFUNC_REJECT_TRUNCATED;
            snprintf(detail, sizeof(detail), "no trailer at byte %u after %.3f s",
                     size - 1, rx->trailer_timeout);
        }
        goto reject;
    }
    tc_ifunc_slot_arrived(rx, ring);

    complete_size = size;
    reason = tc_frame_check_header(&h, slot_size, expect_seq, NULL);
    if (reason != TC_IFUNC_REJECT_NONE) {
        if (reason == TC_IFUNC_REJECT_OFFSET) {
            snprintf(detail, sizeof(detail), "code %u+%u, got %u+%u, entry %u, "
                     "symbols %u+%u, payload %u+%u in %u bytes", h.code_offset,
                     h.code_size, h.got_offset, h.got_size, h.entry_offset,
                     h.symtab_offset, h.symtab_size, h.payload_offset,
                     h.payload_size, h.frame_size);
        } else if (reason == TC_IFUNC_REJECT_SEQUENCE) {
            snprintf(detail, sizeof(detail), "seq %u in the slot of seq %u",
                     h.seq, (uint32_t)expect_seq);
        }
        goto reject;
    }
    if ((ring->peer >= 0) && (h.sender != (uint32_t)ring->peer)) {
        reason = TC_IFUNC_REJECT_SEQUENCE;
        snprintf(detail, sizeof(detail), "sender %u in the ring of rank %d",
                 h.sender, ring->peer);
        goto reject;
    }
    if ((h.flags & TC_FRAME_F_CHECKSUM) && (tc_frame_checksum(&h, slot) != h.checksum)) {
        reason = TC_IFUNC_REJECT_CHECKSUM;
        goto reject;
    }

    reason = tc_ifunc_dispatch(rx, ring, &h, slot, detail, sizeof(detail));
    if (ucs_unlikely(reason == TC_IFUNC_PORTABLE_WAIT)) {
        /* its module compiles off this thread: the frame stays, untouched,
         * and waiting for the compiler is not waiting for a trailer */
        ring->pending_since = 0;
        return TC_IFUNC_SLOT_PENDING;
    }
    if (reason != TC_IFUNC_REJECT_NONE) {
        goto reject;
    }

    ++rx->stats->frames[h.type - TC_FRAME_LOCAL];
    rx->stats->bytes += h.frame_size;
    ucs_trace_data("ifunc rank %d: ran frame seq %u type %u element %u from %d",
                   rx->rank, h.seq, h.type, h.element_id, ring->peer);
    tc_ifunc_slot_release(ring, slot, sig, complete_size);
    return TC_IFUNC_SLOT_RUN;

reject:
    tc_ifunc_reject(rx, ring, reason, h.seq, h.type, h.element_id, detail);
    tc_ifunc_slot_release(ring, slot, sig, complete_size);
    return TC_IFUNC_SLOT_REJECTED;
}

tc_ifunc_slot_result_t tc_ifunc_slot_process_compact(tc_ifunc_rx_t *rx,
                                                     tc_ifunc_ring_t *ring,
                                                     uint8_t *slot,
                                                     uint32_t slot_size,
                                                     uint64_t expect_seq)
{
    tc_frame_compact_t *live = (tc_frame_compact_t*)slot;
    uint32_t hdr_size, payload_size, size = 0;
    tc_ifunc_reject_t reason;
    tc_frame_compact_t h;
    char detail[160];
    uint64_t check;
    void *payload;

    /* the check word and the size it covers, then every covered word: a
     * match means each word read was the sent one, and words only ever
     * change from old to sent, so the header read after it is the sent one */
    check        = __atomic_load_n(&live->check, __ATOMIC_RELAXED);
    hdr_size     = __atomic_load_n(&live->hdr_words, __ATOMIC_RELAXED) * 8u;
    payload_size = __atomic_load_n(&live->payload_size, __ATOMIC_RELAXED);
    if (((hdr_size == TC_FRAME_COMPACT_LOCAL_HDR) ||
         (hdr_size == TC_FRAME_COMPACT_CACHED_HDR)) &&
        ((uint64_t)hdr_size + payload_size <= slot_size) &&
        (hdr_size + (uint64_t)payload_size <= TC_FRAME_COMPACT_MAX)) {
        size = tc_frame_compact_size(hdr_size, payload_size);
        if (tc_frame_compact_check(slot, size) != check) {
            size = 0;
        }
    }
    if (ucs_unlikely(size == 0)) {
        /* the expected seq is here, the rest not yet */
        if (!tc_ifunc_slot_timed_out(rx, ring)) {
            return TC_IFUNC_SLOT_PENDING;
        }
        memcpy(&h, slot, sizeof(h));
        if ((hdr_size != TC_FRAME_COMPACT_LOCAL_HDR) &&
            (hdr_size != TC_FRAME_COMPACT_CACHED_HDR)) {
            reason = TC_IFUNC_REJECT_VERSION;
            snprintf(detail, sizeof(detail), "compact header of %u bytes", hdr_size);
        } else if ((uint64_t)hdr_size + payload_size > slot_size) {
            reason = TC_IFUNC_REJECT_SIZE;
            snprintf(detail, sizeof(detail), "compact frame of %u + %u bytes, slot %u",
                     hdr_size, payload_size, slot_size);
        } else {
            reason = TC_IFUNC_REJECT_TRUNCATED;
            snprintf(detail, sizeof(detail), "compact frame whose check word does not "
                     "match its %u-byte header and %u bytes of payload after %.3f s",
                     hdr_size, payload_size, rx->trailer_timeout);
        }
        goto reject;
    }
    tc_ifunc_slot_arrived(rx, ring);

    /* the whole Cached size, a constant copy; a Local frame's code_hash
     * is payload bytes here, never read (slots are at least 64 bytes) */
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    memcpy(&h, slot, sizeof(h));
    detail[0] = '\0';
    reason    = tc_frame_check_compact(&h, slot_size, expect_seq);
    if (ucs_unlikely(reason != TC_IFUNC_REJECT_NONE)) {
        goto reject;
    }
    if (ucs_unlikely(h.sender != (uint32_t)ring->peer)) {
        reason = TC_IFUNC_REJECT_SEQUENCE;
        snprintf(detail, sizeof(detail), "sender %u in the ring of rank %d",
                 h.sender, ring->peer);
        goto reject;
    }

    payload = (h.payload_size != 0) ? slot + hdr_size : NULL;
    if (h.type == TC_FRAME_LOCAL) {
        reason = tc_ifunc_run_local(rx, tc_ifunc_pkg_find(h.pkg_id), h.element_id,
                                    payload, h.payload_size, detail, sizeof(detail));
        if (reason == TC_IFUNC_REJECT_UNKNOWN_PKG) {
            snprintf(detail, sizeof(detail), "package %016" PRIx64, h.pkg_id);
        }
    } else {
        reason = tc_ifunc_run_cached(rx, ring, h.code_hash, h.pkg_id, h.element_id,
                                     payload, h.payload_size, detail, sizeof(detail));
    }
    if (ucs_unlikely(reason != TC_IFUNC_REJECT_NONE)) {
        goto reject;
    }
    ++rx->stats->frames[h.type - TC_FRAME_LOCAL];
    rx->stats->bytes += size;
    return TC_IFUNC_SLOT_RUN;

reject:
    /* nothing to clear: the next lap's seq makes this slot "not yet" */
    tc_ifunc_reject(rx, ring, reason, h.seq, h.type, h.element_id, detail);
    return TC_IFUNC_SLOT_REJECTED;
}

/* The calls above for frames another protocol carried (exec.c); the
 * mailbox's own path keeps them static, inlined where it is hot */
tc_ifunc_reject_t tc_ifunc_call_local(tc_ifunc_rx_t *rx, tc_ifunc_pkg_h pkg,
                                      uint32_t element_id, void *payload,
                                      uint32_t payload_size, char *detail,
                                      size_t detail_len)
{
    return tc_ifunc_run_local(rx, pkg, element_id, payload, payload_size, detail,
                              detail_len);
}

tc_ifunc_reject_t tc_ifunc_call_cached(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                                       uint64_t code_hash, uint64_t pkg_id,
                                       uint32_t element_id, void *payload,
                                       uint32_t payload_size, char *detail,
                                       size_t detail_len)
{
    return tc_ifunc_run_cached(rx, ring, code_hash, pkg_id, element_id, payload,
                               payload_size, detail, detail_len);
}

tc_ifunc_reject_t tc_ifunc_call_frame(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                                      const tc_frame_hdr_t *h, uint8_t *frame,
                                      char *detail, size_t detail_len)
{
    return tc_ifunc_dispatch(rx, ring, h, frame, detail, detail_len);
}
