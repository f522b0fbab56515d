/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * A Portable frame at the receiver, one format among the others: its
 * module found in the process's table (ifunc/portable/portable.c), queued
 * for a compile if it is new, and called once compiled; for a group, the
 * hashes of modules compiled before the group.
 *
 * Threads: polling threads (any number of mailboxes) and carriers'
 * delivery threads; the compile thread is the table's.
 *
 * Invariants: those of the table (portable.c): copy, then verify, then
 * compile; a peer's module never stands in for our own, nor one compiled
 * unconfined where confine asked.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/rx/rx.h"
#include "ifunc/code/package.h"
#include "ifunc/config/ifunc_config.h"
#include "ifunc/confine/confine.h"
#include "ifunc/portable/portable.h"

#include <base/debug.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a Portable frame in a ring ---- */

tc_ifunc_reject_t tc_ifunc_portable_stage(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                                          const tc_frame_hdr_t *h, const uint8_t *slot,
                                          tc_portable_code_t **entry_p, char *detail,
                                          size_t detail_len)
{
    const tc_ifunc_element_t *e       = NULL;
    const tc_ifunc_portable_bc_t *bc;
    tc_portable_code_t setup, *entry;
    tc_ifunc_pkg_h pkg                = NULL;
    tc_ifunc_reject_t reason;
    const char *name;
    size_t name_len;
    int state, ret, verify, confine, own = 0, asked = 0;   /* asked: this poll asked
                                                             for the compile */
    khiter_t it;

    if (rx->security == TC_IFUNC_SECURITY_LOCAL_ONLY) {
        snprintf(detail, detail_len, "portable code in local-only mode");
        return TC_IFUNC_REJECT_DISABLED;
    }
    if (h->flags & TC_FRAME_F_HASHES) {
        snprintf(detail, detail_len, "a Portable frame of module hashes (a group's) "
                 "where a module travels");
        return TC_IFUNC_REJECT_TYPE;
    }
    verify  = (rx->security == TC_IFUNC_SECURITY_VERIFY);
    confine = (rx->security == TC_IFUNC_SECURITY_CONFINE);
    if (confine) {
        /* our own module of that hash runs as in verify; any other module
         * is the frame's, confined */
        pkg = tc_ifunc_frame_pkg(rx, h);
        e   = (pkg != NULL) ? tc_ifunc_pkg_elem(pkg, h->element_id) : NULL;
        own = (e != NULL) && !tc_ifunc_config_get()->confine_own &&
              (tc_portable_own_check(pkg, e, h->code_hash, &bc, detail, detail_len) ==
               TC_IFUNC_REJECT_NONE);
        detail[0] = '\0';
        verify    = own;
    } else if (verify) {
        /* only our own module of that hash, compiled already or not: the
         * frame's module is never read */
        pkg    = tc_ifunc_frame_pkg(rx, h);
        reason = tc_ifunc_pkg_elem_find(pkg, h->element_id, &e, detail, detail_len);
        if (reason == TC_IFUNC_REJECT_UNKNOWN_PKG) {
            snprintf(detail, detail_len, "package %016" PRIx64, h->pkg_id);
        }
        if (reason != TC_IFUNC_REJECT_NONE) {
            return reason;
        }
        reason = tc_portable_own_check(pkg, e, h->code_hash, &bc, detail, detail_len);
        if (reason != TC_IFUNC_REJECT_NONE) {
            return reason;
        }
    }
    /* trust runs our own module of that hash if we have one, else a peer's;
     * confine ours (verify is set) or a confined one */
    entry = NULL;
    if (!confine || verify) {
        entry = tc_portable_get(h->code_hash, TC_PORTABLE_TABLE_OWN, NULL, NULL, 1, NULL,
                                detail, detail_len);
    }
    if ((entry == NULL) && !verify) {
        entry = tc_portable_get(h->code_hash, confine ? TC_PORTABLE_TABLE_CONFINED :
                                                        TC_PORTABLE_TABLE_PEER,
                                NULL, NULL, 1, NULL, detail, detail_len);
    }
    if (entry == NULL) {
        if (verify) {
            reason = tc_portable_own_setup(pkg, e, h->code_hash, &setup, detail,
                                           detail_len);
            if (reason != TC_IFUNC_REJECT_NONE) {
                return reason;
            }
        } else {
            /* trust, confine: copy, check the copy against its hash, compile
             * (confined) the copy */
            reason = tc_frame_check_symtab(h, slot);
            if (reason != TC_IFUNC_REJECT_NONE) {
                snprintf(detail, detail_len, "malformed entry name");
                return reason;
            }
            memset(&setup, 0, sizeof(setup));
            setup.bitcode = malloc(h->code_size);
            if (setup.bitcode == NULL) {
                snprintf(detail, detail_len, "no memory for a %u-byte module",
                         h->code_size);
                return TC_IFUNC_REJECT_RESOURCE;
            }
            memcpy(setup.bitcode, slot + h->code_offset, h->code_size);
            setup.bitcode_size = h->code_size;
            setup.confined     = confine;
            if (tc_fnv1a64(setup.bitcode, setup.bitcode_size) != h->code_hash) {
                free(setup.bitcode);
                snprintf(detail, detail_len, "module does not hash to %016" PRIx64,
                         h->code_hash);
                return TC_IFUNC_REJECT_HASH;
            }
            name     = (const char*)slot + h->symtab_offset;
            name_len = strnlen(name, sizeof(setup.entry_name));
            if (name_len >= sizeof(setup.entry_name)) {
                free(setup.bitcode);
                snprintf(detail, detail_len, "entry name too long");
                return TC_IFUNC_REJECT_OFFSET;
            }
            /* the name was measured in the slot; exactly that many bytes are
             * copied (a peer may overwrite its NUL meanwhile, and a read up to
             * the next NUL would run off the ring), and it is only looked up
             * in the module, so a late change of its value is harmless */
            memcpy(setup.entry_name, name, name_len);
            setup.entry_name[name_len] = '\0';
            setup.entry.pkg_id     = h->pkg_id;
            setup.entry.element_id = h->element_id;
        }
        asked = 1;
        entry = tc_portable_get_or_free(h->code_hash, &setup,
                                        &rx->stats->portable_evictions, detail, detail_len);
        if (entry == NULL) {
            return TC_IFUNC_REJECT_RESOURCE;
        }
    }

    /* held from here: on every way out but success it is let go */
    state = __atomic_load_n(&entry->state, __ATOMIC_ACQUIRE);
    if (state == TC_PORTABLE_COMPILING) {
        ring->portable_waiting  = 1;
        ring->portable_wait_for = entry->hash;
        ++rx->stats->portable_waits;
        tc_portable_put(entry);
        return TC_IFUNC_PORTABLE_WAIT;
    }
    if ((asked || (ring->portable_waiting && (ring->portable_wait_for == entry->hash))) &&
        !__atomic_exchange_n(&entry->counted, 1, __ATOMIC_RELAXED)) {
        /* the poll that asked for it, or the first ring that waited for it,
         * counts the compile: a compile thread that finished before the
         * asking poll looked (that poll preempted) was never waited for */
        ++rx->stats->portable_compiles;
        rx->stats->portable_compile_s += entry->compile_s;
    }
    ring->portable_waiting = 0;
    if (state == TC_PORTABLE_FAILED) {
        snprintf(detail, detail_len, "%s", entry->detail);
        reason = entry->reason;
        tc_portable_put(entry);
        return reason;
    }
    if ((entry->entry.pkg_id != h->pkg_id) || (entry->entry.element_id != h->element_id)) {
        snprintf(detail, detail_len, "module %016" PRIx64 " is another element",
                 h->code_hash);
        tc_portable_put(entry);
        return TC_IFUNC_REJECT_HASH;
    }
    if (h->flags & TC_FRAME_F_CACHE) {
        it = kh_put(tc_cached, &ring->cached, h->code_hash, &ret);
        if (ret < 0) {
            tc_portable_put(entry);
            return TC_IFUNC_REJECT_RESOURCE;
        }
        if (ret != 0) {
            kh_val(&ring->cached, it) = &entry->entry;
            /* rings of mailboxes on other threads may name it too */
            __atomic_fetch_add(&entry->entry.pins, 1, __ATOMIC_RELAXED);
        }
    }
    *entry_p = entry;
    return TC_IFUNC_REJECT_NONE;
}

tc_ifunc_reject_t tc_ifunc_run_portable_hashes(tc_ifunc_rx_t *rx, const tc_frame_hdr_t *h,
                                               const uint8_t *frame, void *payload,
                                               char *detail, size_t detail_len)
{
    const tc_ifunc_portable_bc_t *bc;
    const tc_ifunc_element_t *e;
    tc_portable_code_t setup, *entry;
    tc_ifunc_reject_t reason;
    tc_ifunc_pkg_h pkg;
    uint64_t hash;
    int state;

    if (rx->security == TC_IFUNC_SECURITY_LOCAL_ONLY) {
        snprintf(detail, detail_len, "portable code in local-only mode");
        return TC_IFUNC_REJECT_DISABLED;
    }
    /* read once: the hash our architecture has in the table */
    memcpy(&hash, frame + h->code_offset + 8 * (tc_portable_host_arch() - 1), 8);
    pkg    = tc_ifunc_frame_pkg(rx, h);
    reason = tc_ifunc_pkg_elem_find(pkg, h->element_id, &e, detail, detail_len);
    if (reason == TC_IFUNC_REJECT_UNKNOWN_PKG) {
        snprintf(detail, detail_len, "package %016" PRIx64, h->pkg_id);
    }
    if (reason != TC_IFUNC_REJECT_NONE) {
        return reason;
    }
    if (hash == 0) {
        snprintf(detail, detail_len, "the sender's %s.%s has no module for %s", pkg->name,
                 e->name, tc_portable_host_triple());
        return TC_IFUNC_REJECT_HASH;
    }
    reason = tc_portable_own_check(pkg, e, hash, &bc, detail, detail_len);
    if (reason != TC_IFUNC_REJECT_NONE) {
        return reason;
    }
    entry = tc_portable_get(hash, TC_PORTABLE_TABLE_OWN, NULL, NULL, 1, NULL, detail,
                            detail_len);
    if (entry == NULL) {
        reason = tc_portable_own_setup(pkg, e, hash, &setup, detail, detail_len);
        if (reason != TC_IFUNC_REJECT_NONE) {
            return reason;
        }
        entry = tc_portable_get_or_free(hash, &setup, &rx->stats->portable_evictions,
                                        detail, detail_len);
        if (entry == NULL) {
            return TC_IFUNC_REJECT_RESOURCE;
        }
    }
    /* a member that did not prepare compiles now: the total order cannot
     * let a later message pass this one */
    state = tc_portable_wait(entry, 60.0);
    if (state == TC_PORTABLE_COMPILING) {
        snprintf(detail, detail_len, "module %016" PRIx64 " still compiling after 60 s",
                 hash);
        reason = TC_IFUNC_REJECT_RESOURCE;
    } else if (state == TC_PORTABLE_FAILED) {
        snprintf(detail, detail_len, "%s", entry->detail);
        reason = entry->reason;
    } else {
        reason = TC_IFUNC_REJECT_NONE;
        if (!rx->install_only) {
            ((tc_jam_main_fn_t)(void*)entry->entry.code)(payload, h->payload_size,
                                                         rx->target_args);
        }
    }
    tc_portable_put(entry);
    return reason;
}

void tc_ifunc_portable_run(tc_ifunc_rx_t *rx, tc_portable_code_t *entry,
                           void *payload, uint32_t payload_size)
{
    if (rx->install_only) {
        /* nothing runs */
    } else if (entry->confined) {
        (void)tc_confine_run(rx, entry->entry.code, payload, payload_size);
    } else {
        ((tc_jam_main_fn_t)(void*)entry->entry.code)(payload, payload_size,
                                                     rx->target_args);
    }
    tc_portable_put(entry);
}

tc_ifunc_reject_t tc_ifunc_run_portable_in_order(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                                                 const tc_frame_hdr_t *h, uint8_t *slot,
                                                 void *payload, char *detail,
                                                 size_t detail_len)
{
    tc_portable_code_t *entry;
    tc_ifunc_reject_t reason;

    if (h->flags & TC_FRAME_F_CACHE) {
        snprintf(detail, detail_len, "a Portable-Cached frame in a group");
        return TC_IFUNC_REJECT_TYPE;
    }
    /* a compile running is TC_IFUNC_PORTABLE_WAIT: the carrier holds its
     * delivery there and keeps its engine going (heartbeats), rather than
     * this thread waiting for a compile that may take longer than the
     * group's suspicion timeout beside a CPU hog */
    reason = tc_ifunc_portable_stage(rx, ring, h, slot, &entry, detail, detail_len);
    if (reason == TC_IFUNC_REJECT_NONE) {
        tc_ifunc_portable_run(rx, entry, payload, h->payload_size);
    }
    return reason;
}

tc_ifunc_reject_t tc_ifunc_run_portable(tc_ifunc_rx_t *rx, tc_ifunc_ring_t *ring,
                                        const tc_frame_hdr_t *h, uint8_t *slot,
                                        void *payload, char *detail, size_t detail_len)
{
    tc_portable_code_t *entry;
    tc_ifunc_reject_t reason;

    reason = tc_ifunc_portable_stage(rx, ring, h, slot, &entry, detail, detail_len);
    if (reason == TC_IFUNC_REJECT_NONE) {
        tc_ifunc_portable_run(rx, entry, payload, h->payload_size);
    }
    return reason;
}
