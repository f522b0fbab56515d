/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The run layer of the receive path: a full frame whose header was checked,
 * run as its type says (Local, Injected, Cached, Portable) or rejected;
 * trust-mode links of the names a frame carries.
 *
 * Threads: the thread that drives the receiver (mailbox poller,
 * ucp_poll_ifunc caller, or a carrier's delivery); one thread per ring.
 *
 * Invariants (of the whole receive path: slot.c):
 *  - package-level checks (package, element, hash, security mode, GOT)
 *    happen before the code is placed or called;
 *  - the GOT pointer that code sees is always the receiver's own table
 *    (installed package, or built here from names with dlsym), never a value
 *    from the wire.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/rx/rx.h"
#include "ifunc/rx/run.inl"
#include "ifunc/code/code_cache.h"
#include "ifunc/code/package.h"
#include "ifunc/confine/confine.h"

#include <base/debug.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TC_IFUNC_MAX_LINKS 1024

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
        reason = tc_ifunc_pkg_elem_find(pkg, h->element_id, &e, detail, detail_len);
        if (reason == TC_IFUNC_REJECT_UNKNOWN_PKG) {
            tc_ifunc_unknown_pkg(h, detail, detail_len);
        }
        if (reason != TC_IFUNC_REJECT_NONE) {
            return reason;
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

tc_ifunc_reject_t tc_ifunc_run_frame(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
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

