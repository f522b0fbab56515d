/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Jams carried by another protocol (twochains/ifunc_exec.h): frames planned
 * and written by a sender into memory the carrier gives it, run by the
 * receiver through the mailbox's validator and dispatcher.
 *
 * Invariants:
 *  - a carried frame's carrier (an SMC slot) is memory its sender can still
 *    write. A frame whose code may become known here (Injected with the
 *    cache flag, or Injected in trust mode) is copied once into this
 *    executor's memory before anything reads it: the run, the divergence
 *    check and the bytes kept for joiners read that copy. Any other full
 *    frame runs where it lies, from one snapshot of its header, as a
 *    mailbox frame does: the dispatcher reads each code byte once (the
 *    compare with the installed element) and runs the installed copy, so
 *    nothing read after the check decides what runs. Compact frames are
 *    copied (header and payload: a few cache lines);
 *  - the same validation as a mailbox frame (tc_ifunc_frame_run), minus the
 *    ring's sequence and signal; a frame is never written;
 *  - code runs from the code cache only (placement copy), and every code a
 *    Cached frame may name stays there (pinned by the executor's ring);
 *  - a code is known here, for planning and for Cached frames alike, only
 *    once a frame that carried it ran here (or a transfer brought it and
 *    it passed the same checks): delivered in one order, every member
 *    knows the same codes at the same point;
 *  - each known code keeps the bytes that shipped it (header, code, symbol
 *    names), so that a newcomer checks and links it as it would the frame.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/carried/carried.h"
#include "ifunc/code/code_cache.h"
#include "ifunc/code/package.h"
#include "ifunc/config/ifunc_config.h"
#include "ifunc/portable/portable.h"
#include "ifunc/receiver/receiver.h"
#include "ifunc/tx/frame_encode.h"
#include "ifunc/tx/message.h"
#include "ifunc/wire/frame.h"

#include <twochains/ifunc_exec.h>

#include <base/debug.h>

#include <ucs/sys/math.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The frame that shipped a code: header, code, names, without payload */
typedef struct tc_exec_shipment {
    uint32_t size;
    uint8_t  *bytes;
} tc_exec_shipment_t;

KHASH_MAP_INIT_INT64(tc_shipment, tc_exec_shipment_t)

#define TC_EXEC_MAX_DECLARED TC_IFUNC_MAX_PKGS

struct tc_ifunc_exec {
    tc_ifunc_rx_t        rx;
    uint64_t             declared[TC_EXEC_MAX_DECLARED];   /* package ids */
    unsigned             num_declared;
    tc_ifunc_ring_t      ring;        /* the codes Cached frames name */
    tc_ifunc_stats_t     stats;
    khash_t(tc_shipment) shipments;   /* code hash -> what shipped it */
    uint8_t              *copy;       /* the frame being run, read once */
    size_t               copy_len;
    khash_t(tc_shipment) modules;     /* confine: module hash -> our module's
                                         bytes, what our Portable frames carry */
};


ucs_status_t tc_ifunc_exec_create(tc_ifunc_security_t security, tc_ifunc_exec_h *exec_p)
{
    tc_ifunc_exec_h exec;

    if (security >= TC_IFUNC_SECURITY_LAST) {
        return UCS_ERR_INVALID_PARAM;
    }
    exec = calloc(1, sizeof(*exec));
    if (exec == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    exec->rx.security  = security;
    exec->rx.placement = TC_IFUNC_PLACEMENT_COPY;
    exec->rx.rank      = -1;
    exec->rx.stats     = &exec->stats;
    tc_code_cache_init(&exec->rx.cache, tc_ifunc_config_get()->cache_entries);
    tc_ifunc_ring_init(&exec->ring, NULL, -1, 0);
    kh_init_inplace(tc_shipment, &exec->shipments);
    kh_init_inplace(tc_shipment, &exec->modules);
    *exec_p = exec;
    return UCS_OK;
}

void tc_ifunc_exec_destroy(tc_ifunc_exec_h exec)
{
    tc_exec_shipment_t shipment;

    if (exec == NULL) {
        return;
    }
    kh_foreach_value(&exec->shipments, shipment, {
        free(shipment.bytes);
    })
    kh_destroy_inplace(tc_shipment, &exec->shipments);
    kh_foreach_value(&exec->modules, shipment, {
        free(shipment.bytes);
    })
    kh_destroy_inplace(tc_shipment, &exec->modules);
    tc_ifunc_ring_cleanup(&exec->ring);
    tc_code_cache_cleanup(&exec->rx.cache);
    free(exec->copy);
    free(exec);
}

void tc_ifunc_exec_confine_regions(tc_ifunc_exec_h exec, size_t target_size, void *state,
                                   size_t state_size)
{
    exec->rx.target_size = target_size;
    exec->rx.state       = state;
    exec->rx.state_size  = state_size;
}

/* Security confine: Portable frames carry the sender's module (whoever does
 * not have it runs it confined), so a member may send jams of a package the
 * group did not declare */
static int tc_exec_carries_module(tc_ifunc_exec_h exec, tc_ifunc_mode_t mode)
{
    return (exec->rx.security == TC_IFUNC_SECURITY_CONFINE) &&
           tc_ifunc_mode_portable(mode);
}

/* Our module of @a elem for this host, read once per executor */
static const tc_exec_shipment_t *tc_exec_module(tc_ifunc_exec_h exec,
                                                const tc_ifunc_element_t *elem)
{
    const tc_ifunc_portable_bc_t *bc = tc_ifunc_elem_portable(elem,
                                                              tc_portable_host_triple());
    tc_exec_shipment_t *module;
    char detail[192];
    size_t size;
    khiter_t it;
    int ret;

    if (bc == NULL) {
        return NULL;
    }
    it = kh_get(tc_shipment, &exec->modules, bc->bc_hash);
    if (it != kh_end(&exec->modules)) {
        return &kh_val(&exec->modules, it);
    }
    it = kh_put(tc_shipment, &exec->modules, bc->bc_hash, &ret);
    if (ret < 0) {
        return NULL;
    }
    module        = &kh_val(&exec->modules, it);
    module->bytes = tc_portable_read_module(bc->path, bc->bc_hash, &size, detail,
                                            sizeof(detail));
    if (module->bytes == NULL) {
        ucs_error("ifunc: %s: %s", elem->name, detail);
        kh_del(tc_shipment, &exec->modules, it);
        return NULL;
    }
    module->size = (uint32_t)size;
    return module;
}

tc_ifunc_security_t tc_ifunc_exec_security(tc_ifunc_exec_h exec)
{
    return exec->rx.security;
}

ucs_status_t tc_ifunc_exec_declare(tc_ifunc_exec_h exec, const tc_ifunc_pkg_h *pkgs,
                                   unsigned count)
{
    unsigned i;

    if (count > TC_EXEC_MAX_DECLARED) {
        ucs_error("ifunc: %u packages declared, at most %u", count, TC_EXEC_MAX_DECLARED);
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    for (i = 0; i < count; ++i) {
        exec->declared[i] = pkgs[i]->id;
    }
    exec->num_declared = count;
    return UCS_OK;
}

static int tc_exec_declared(tc_ifunc_exec_h exec, uint64_t pkg_id)
{
    unsigned i;

    for (i = 0; i < exec->num_declared; ++i) {
        if (exec->declared[i] == pkg_id) {
            return 1;
        }
    }
    return exec->num_declared == 0;
}

/* The package a frame names, before anything of it runs (0: too short) */
static uint64_t tc_exec_frame_pkg(const uint8_t *frame, size_t size)
{
    uint16_t format;
    uint64_t pkg_id = 0;

    if (size >= TC_FRAME_COMPACT_CACHED_HDR) {
        memcpy(&format, frame + offsetof(tc_frame_compact_t, format), sizeof(format));
        memcpy(&pkg_id, frame + ((format == TC_FRAME_COMPACT_FORMAT) ?
                                 offsetof(tc_frame_compact_t, pkg_id) :
                                 offsetof(tc_frame_hdr_t, pkg_id)), sizeof(pkg_id));
    }
    return pkg_id;
}

static int tc_exec_knows(tc_ifunc_exec_h exec, uint64_t code_hash)
{
    return kh_get(tc_cached, &exec->ring.cached, code_hash) != kh_end(&exec->ring.cached);
}

unsigned tc_ifunc_exec_codes(tc_ifunc_exec_h exec)
{
    return kh_size(&exec->ring.cached);
}

/* Bytes a frame of @a type with @a payload_cap bytes of payload reserves:
 * compact without code when it fits (*@a compact_p), else a full frame */
/* A Portable frame for a group (stamped with TC_FRAME_F_HASHES): the hash
 * of the element's module for each architecture in the code region, the
 * host's as code_hash. It lives here, not in the wire codec, which stays
 * free of packages (the frame fuzzer builds ifunc/wire/frame.c alone). */
static void tc_exec_prepare_portable_hashes(uint8_t *frame, tc_ifunc_pkg_h pkg,
                                           const tc_ifunc_element_t *elem,
                                           tc_frame_desc_t *desc)
{
    uint64_t hashes[TC_FRAME_ARCHS] = {0};
    const tc_ifunc_portable_bc_t *bc;
    unsigned arch;

    for (arch = TC_IFUNC_ARCH_UNKNOWN + 1; arch < TC_IFUNC_ARCH_LAST; ++arch) {
        bc = tc_ifunc_elem_portable(elem, tc_portable_arch_triple(arch));
        hashes[arch - 1] = (bc != NULL) ? bc->bc_hash : 0;
    }
    /* the region of a module as large as the table, and the table in it */
    tc_frame_prepare_portable(frame, pkg, elem, NULL, TC_FRAME_HASHES_SIZE,
                              TC_FRAME_HASHES_SIZE, hashes[tc_portable_host_arch() - 1],
                              desc);
    if (frame != NULL) {
        memcpy(frame + desc->code_offset, hashes, sizeof(hashes));
    }
}

static size_t tc_exec_frame_capacity(tc_ifunc_pkg_h pkg, const tc_ifunc_element_t *elem,
                                     uint8_t type, uint32_t payload_cap,
                                     const tc_exec_shipment_t *module, uint8_t *compact_p)
{
    const uint32_t hdr_size = (type == TC_FRAME_LOCAL) ? TC_FRAME_COMPACT_LOCAL_HDR :
                                                         TC_FRAME_COMPACT_CACHED_HDR;
    const int compact       = (type != TC_FRAME_INJECTED) && (type != TC_FRAME_PORTABLE) &&
                              ((uint64_t)hdr_size + payload_cap <= TC_FRAME_COMPACT_MAX);
    tc_frame_desc_t desc;

    if (compact_p != NULL) {
        *compact_p = (uint8_t)compact;
    }
    if (compact) {
        return tc_frame_compact_size(hdr_size, payload_cap);
    }
    if (module != NULL) {
        tc_frame_prepare_portable(NULL, pkg, elem, module->bytes, module->size,
                                  module->size, 0, &desc);
    } else if (type == TC_FRAME_PORTABLE) {
        tc_exec_prepare_portable_hashes(NULL, pkg, elem, &desc);
    } else {
        tc_frame_prepare(NULL, pkg, elem, type == TC_FRAME_INJECTED, &desc);
    }
    return tc_frame_size(&desc, payload_cap);
}

ucs_status_t tc_ifunc_exec_plan_frame(tc_ifunc_exec_h exec, const tc_ifunc_exec_jam_t *jam,
                                      tc_ifunc_exec_plan_t *plan)
{
    const tc_ifunc_element_t *elem = (jam->pkg != NULL) ?
                                     tc_ifunc_pkg_elem(jam->pkg, jam->element_id) : NULL;
    const tc_exec_shipment_t *module = NULL;
    size_t payload_cap;

    if (elem == NULL) {
        ucs_error("ifunc: no element %u in package %s", jam->element_id,
                  (jam->pkg != NULL) ? jam->pkg->name : "(none)");
        return UCS_ERR_INVALID_PARAM;
    }
    if (jam->mode >= TC_IFUNC_MODE_LAST) {
        ucs_error("ifunc: invalid jam mode %d", (int)jam->mode);
        return UCS_ERR_INVALID_PARAM;
    }
    if (!tc_exec_declared(exec, jam->pkg->id) && !tc_exec_carries_module(exec, jam->mode)) {
        ucs_error("ifunc: package %s is not one of the %u declared", jam->pkg->name,
                  exec->num_declared);
        return UCS_ERR_INVALID_PARAM;
    }
    if (jam->mode == TC_IFUNC_MODE_PORTABLE_CACHED && tc_exec_carries_module(exec, jam->mode)) {
        ucs_error("ifunc: %s: a confining group sends Portable frames, not Portable-Cached",
                  elem->name);
        return UCS_ERR_UNSUPPORTED;
    }
    if (tc_ifunc_mode_portable(jam->mode) &&
        (tc_ifunc_elem_portable(elem, tc_portable_host_triple()) == NULL)) {
        ucs_error("ifunc: %s %s: its package has no module for %s (twochains-pkg "
                  "--portable)", tc_ifunc_mode_names[jam->mode], elem->name,
                  tc_portable_host_triple());
        return UCS_ERR_UNSUPPORTED;
    }
    if ((jam->mode != TC_IFUNC_MODE_LOCAL) &&
        (exec->rx.security == TC_IFUNC_SECURITY_LOCAL_ONLY)) {
        ucs_error("ifunc: %s %s: security mode local-only accepts no code",
                  tc_ifunc_mode_names[jam->mode], elem->name);
        return UCS_ERR_UNSUPPORTED;
    }
    if ((jam->mode == TC_IFUNC_MODE_CACHED) && (elem->flags & TC_JAM_F_WRITABLE_DATA)) {
        ucs_error("ifunc: %s has writable globals: it cannot be cached", elem->name);
        return UCS_ERR_UNSUPPORTED;
    }
    if (tc_exec_carries_module(exec, jam->mode)) {
        module = tc_exec_module(exec, elem);
        if (module == NULL) {
            return UCS_ERR_IO_ERROR;
        }
    }
    payload_cap = tc_ifunc_payload_capacity(elem, jam->source_args, jam->source_args_size);
    if (payload_cap > UINT32_MAX / 2) {
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    memset(plan, 0, sizeof(*plan));
    plan->payload_capacity = (uint32_t)payload_cap;
    plan->with_code        = (jam->mode == TC_IFUNC_MODE_INJECTED) ||
                             ((jam->mode == TC_IFUNC_MODE_CACHED) &&
                              !tc_exec_knows(exec, elem->span_hash));
    plan->type             = tc_ifunc_mode_portable(jam->mode) ? TC_FRAME_PORTABLE :
                             plan->with_code ? TC_FRAME_INJECTED :
                             (jam->mode == TC_IFUNC_MODE_LOCAL) ? TC_FRAME_LOCAL :
                                                                  TC_FRAME_CACHED;
    plan->with_code       |= (module != NULL);
    plan->capacity         = tc_exec_frame_capacity(jam->pkg, elem, plan->type,
                                                    plan->payload_capacity, module,
                                                    &plan->compact);
    plan->known_capacity   = (jam->mode == TC_IFUNC_MODE_CACHED) ?
                             tc_exec_frame_capacity(jam->pkg, elem, TC_FRAME_CACHED,
                                                    plan->payload_capacity, NULL, NULL) :
                             plan->capacity;
    return UCS_OK;
}

ucs_status_t tc_ifunc_exec_write_frame(tc_ifunc_exec_h exec, const tc_ifunc_exec_jam_t *jam,
                                       const tc_ifunc_exec_plan_t *plan, void *buf,
                                       size_t *size_p)
{
    const tc_ifunc_element_t *elem = tc_ifunc_pkg_elem(jam->pkg, jam->element_id);
    const tc_exec_shipment_t *module = NULL;
    uint8_t *frame                 = buf;
    tc_frame_desc_t desc;
    uint32_t hdr_size, payload_size, flags;
    ucs_status_t status;

    if (plan->compact) {
        tc_frame_prepare(NULL, jam->pkg, elem, 0, &desc);
        hdr_size = (plan->type == TC_FRAME_LOCAL) ? TC_FRAME_COMPACT_LOCAL_HDR :
                                                    TC_FRAME_COMPACT_CACHED_HDR;
        status   = tc_ifunc_payload_fill(elem, jam->source_args, jam->source_args_size,
                                         frame + hdr_size, plan->payload_capacity,
                                         &payload_size);
        if (status == UCS_OK) {
            *size_p = tc_frame_stamp_compact_header(frame, &desc, plan->type, 0, 0,
                                                    payload_size);
        }
        return status;
    }
    if ((plan->type == TC_FRAME_PORTABLE) && tc_exec_carries_module(exec, jam->mode)) {
        /* confine: our module; a member without it runs it confined */
        module = tc_exec_module(exec, elem);
        if (module == NULL) {
            return UCS_ERR_IO_ERROR;
        }
        tc_frame_prepare_portable(frame, jam->pkg, elem, module->bytes, module->size,
                                  module->size,
                                  tc_ifunc_elem_portable(elem, tc_portable_host_triple())->bc_hash,
                                  &desc);
    } else if (plan->type == TC_FRAME_PORTABLE) {
        /* no module: every member runs its own, compiled before it joined */
        tc_exec_prepare_portable_hashes(frame, jam->pkg, elem, &desc);
    } else {
        tc_frame_prepare(frame, jam->pkg, elem, plan->with_code, &desc);
    }
    status = tc_ifunc_payload_fill(elem, jam->source_args, jam->source_args_size,
                                   frame + desc.payload_offset, plan->payload_capacity,
                                   &payload_size);
    if (status != UCS_OK) {
        return status;
    }
    flags   = (jam->mode == TC_IFUNC_MODE_CACHED)          ? TC_FRAME_F_CACHE :
              (module != NULL)                             ? 0 :
              (plan->type == TC_FRAME_PORTABLE)            ? TC_FRAME_F_HASHES : 0;
    *size_p = tc_frame_stamp(frame, &desc, plan->type, flags, 0, 0, payload_size);
    return UCS_OK;
}

/* A group's Portable frame this member rejected by hash: its own build
 * differs when the frame is consistent (the hash its architecture has in
 * the table is the sender's own, code_hash: a sender of this architecture)
 * and names another module than this member's package has. A table entry
 * that is not the sender's own is corrupt, or from a sender of another
 * architecture: alike at every member of this one. */
static int tc_exec_portable_diverges(tc_ifunc_exec_h exec, const tc_frame_hdr_t *h,
                                     const uint8_t *frame)
{
    const tc_ifunc_portable_bc_t *bc;
    const tc_ifunc_element_t *e;
    tc_ifunc_pkg_h pkg;
    uint64_t hash;

    if (exec->num_declared != 0) {
        return 0;   /* the members compared their packages when they joined */
    }
    memcpy(&hash, frame + h->code_offset + 8 * (tc_portable_host_arch() - 1), 8);
    pkg = tc_ifunc_pkg_find(h->pkg_id);
    e   = (pkg != NULL) ? tc_ifunc_pkg_elem(pkg, h->element_id) : NULL;
    bc  = (e != NULL) ? tc_ifunc_elem_portable(e, tc_portable_host_triple()) : NULL;
    return (bc != NULL) && (hash == h->code_hash) && (hash != bc->bc_hash);
}

/* Whether a reject depends on this member; the frame passed the header
 * check (of @a h, the header the run used) when the reason is a
 * package-level one. Run in place, a HASH reject hashes the code where it
 * lies: the sender can change only this member's verdict on its own
 * frame, as it could by sending that code. */
static int tc_exec_diverges(tc_ifunc_exec_h exec, tc_ifunc_reject_t reason,
                            const tc_frame_hdr_t *h, const uint8_t *frame)
{
    const tc_ifunc_element_t *e;
    tc_ifunc_pkg_h pkg;

    switch (reason) {
    case TC_IFUNC_REJECT_LINK:
    case TC_IFUNC_REJECT_PLACEMENT:
    case TC_IFUNC_REJECT_RESOURCE:
        return 1;
    case TC_IFUNC_REJECT_TRIPLE:
        /* a confining group's module is its sender's architecture's: the
         * members of that architecture ran it */
        return exec->rx.security == TC_IFUNC_SECURITY_CONFINE;
    case TC_IFUNC_REJECT_UNKNOWN_PKG:
    case TC_IFUNC_REJECT_UNKNOWN_ELEMENT:
        /* declared packages are the same everywhere */
        return exec->num_declared == 0;
    case TC_IFUNC_REJECT_HASH:
        if (h->type == TC_FRAME_PORTABLE) {
            return tc_exec_portable_diverges(exec, h, frame);
        }
        /* only full frames carry code. This member's build differs when the
         * code is what its own header says and the installed element is
         * another code; a frame whose code does not hash to its header, or
         * that claims the installed hash with other bytes or offsets, is
         * corrupt, at every receiver alike */
        if ((exec->num_declared != 0) || (exec->rx.security == TC_IFUNC_SECURITY_TRUST)) {
            return 0;
        }
        pkg = tc_ifunc_pkg_find(h->pkg_id);
        e   = (pkg != NULL) ? tc_ifunc_pkg_elem(pkg, h->element_id) : NULL;
        return (e != NULL) && (e->span_hash != h->code_hash) &&
               (tc_frame_span_hash(frame + h->code_offset, h->code_size,
                                   h->got_offset - h->code_offset) == h->code_hash);
    default:
        return 0;
    }
}

/* Keep what shipped a code the first time it is known here */
static ucs_status_t tc_exec_keep_shipment(tc_ifunc_exec_h exec, const uint8_t *frame,
                                          uint64_t code_hash, uint32_t shipment_size)
{
    tc_exec_shipment_t *shipment;
    tc_frame_hdr_t *h;
    khiter_t it;
    uint32_t size;
    int ret;

    it = kh_put(tc_shipment, &exec->shipments, code_hash, &ret);
    if (ret < 0) {
        return UCS_ERR_NO_MEMORY;
    }
    if (ret == 0) {
        return UCS_OK;
    }
    /* a frame of its own, without payload: header, code, names, trailer */
    shipment        = &kh_val(&exec->shipments, it);
    size            = tc_frame_align(shipment_size + 1);
    shipment->bytes = calloc(1, size);
    if (shipment->bytes == NULL) {
        kh_del(tc_shipment, &exec->shipments, it);
        return UCS_ERR_NO_MEMORY;
    }
    shipment->size = size;
    memcpy(shipment->bytes, frame, shipment_size);
    h                 = (tc_frame_hdr_t*)shipment->bytes;
    h->frame_size     = size;
    h->payload_offset = 0;
    h->payload_size   = 0;
    h->flags         &= ~(uint32_t)TC_FRAME_F_CHECKSUM;
    h->checksum       = 0;
    shipment->bytes[size - 1] = TC_FRAME_TRAILER(h->seq);
    return UCS_OK;
}

/* Whether a full frame, by its one header snapshot, can run where it lies:
 * nothing of it is read again after the run. Code that may become known
 * here (Injected with the cache flag, or any Injected code in trust mode)
 * is kept for joiners after the run, so its frame is copied first. */
static int tc_exec_runs_in_place(tc_ifunc_exec_h exec, const uint8_t *frame, size_t size,
                                 tc_frame_hdr_t *h)
{
    uint16_t format;

    if (size < TC_FRAME_HDR_SIZE) {
        return 0;
    }
    memcpy(h, frame, sizeof(*h));
    memcpy(&format, (const uint8_t*)h + offsetof(tc_frame_compact_t, format),
           sizeof(format));
    return (format != TC_FRAME_COMPACT_FORMAT) &&
           ((h->type != TC_FRAME_INJECTED) ||
            (!(h->flags & TC_FRAME_F_CACHE) &&
             (exec->rx.security != TC_IFUNC_SECURITY_TRUST)));
}

tc_ifunc_reject_t tc_ifunc_exec_run(tc_ifunc_exec_h exec, const void *frame, size_t size,
                                    void *target_args, tc_ifunc_exec_result_t *result)
{
    tc_ifunc_frame_view_t view;
    tc_ifunc_reject_t reason;
    tc_frame_hdr_t h;
    const tc_frame_hdr_t *hdr;
    uint64_t pkg_id;
    int was_known, in_place;

    if (size > UINT32_MAX) {
        size = UINT32_MAX;   /* larger than any frame: rejected as such */
    }
    in_place = tc_exec_runs_in_place(exec, frame, size, &h);
    if (in_place) {
        hdr    = &h;   /* the one read of its header */
        pkg_id = h.pkg_id;
    } else {
        /* the carrier bounds the size (a group's largest message) */
        if ((size > exec->copy_len) || (exec->copy == NULL)) {
            uint8_t *grown = realloc(exec->copy, ucs_max(size, TC_FRAME_HDR_SIZE));
            if (grown != NULL) {
                exec->copy     = grown;
                exec->copy_len = ucs_max(size, TC_FRAME_HDR_SIZE);
            }
        }
        if ((size > exec->copy_len) || (exec->copy == NULL)) {
            memset(&view, 0, sizeof(view));
            snprintf(result->detail, sizeof(result->detail), "no memory for a private "
                     "copy of a frame of %zu bytes", size);
            reason = TC_IFUNC_REJECT_RESOURCE;
            ++exec->stats.rejects[reason];
            ++exec->stats.rejects_total;
            memset(result, 0, offsetof(tc_ifunc_exec_result_t, detail));
            result->reason   = reason;
            result->diverges = 0;
            return reason;
        }
        memcpy(exec->copy, frame, size);
        frame  = exec->copy;
        hdr    = NULL;
        pkg_id = tc_exec_frame_pkg(frame, size);
    }
    exec->rx.target_args = target_args;
    exec->rx.last_trap   = TC_IFUNC_TRAP_NONE;
    was_known = exec->ring.cached.size;
    if (!tc_exec_declared(exec, pkg_id) &&
        !((exec->rx.security == TC_IFUNC_SECURITY_CONFINE) && (hdr != NULL) &&
          (hdr->type == TC_FRAME_PORTABLE) && !(hdr->flags & TC_FRAME_F_HASHES))) {
        /* (confine: a module that travels runs confined wherever it is not
         * ours, whatever its package) */
        memset(&view, 0, sizeof(view));
        view.pkg_id = pkg_id;
        snprintf(result->detail, sizeof(result->detail), "package %016" PRIx64 " is not "
                 "one of the %u declared", view.pkg_id, exec->num_declared);
        reason = TC_IFUNC_REJECT_UNKNOWN_PKG;
        ++exec->stats.rejects[reason];
        ++exec->stats.rejects_total;
    } else {
        reason = tc_exec_frame_run(&exec->rx, &exec->ring, (uint8_t*)frame, (uint32_t)size,
                                   hdr, &view, result->detail, sizeof(result->detail));
    }
    /* in place, no code became known (the snapshot had no cache flag) */
    tc_assert(!in_place || ((unsigned)was_known == exec->ring.cached.size));
    if ((reason == TC_IFUNC_REJECT_NONE) && (view.type == TC_FRAME_INJECTED) &&
        ((unsigned)was_known != exec->ring.cached.size) &&
        (tc_exec_keep_shipment(exec, frame, view.code_hash, view.shipment_size) !=
         UCS_OK)) {
        snprintf(result->detail, sizeof(result->detail), "no memory to keep the code");
        reason = TC_IFUNC_REJECT_RESOURCE;
    }
    result->reason       = reason;   /* TC_IFUNC_EXEC_PENDING: again later */
    result->diverges     = tc_exec_diverges(exec, reason,
                                            in_place ? &h : (const tc_frame_hdr_t*)frame,
                                            frame);
    result->type         = view.type;
    result->pkg_id       = view.pkg_id;
    result->element_id   = view.element_id;
    result->payload      = view.payload;
    result->payload_size = view.payload_size;
    result->trap         = exec->rx.last_trap;
    return reason;
}

/* Export format: [uint32 size][size bytes of a shipment frame] ... */
ucs_status_t tc_ifunc_exec_export(tc_ifunc_exec_h exec, void **data_p, size_t *size_p)
{
    tc_exec_shipment_t shipment;
    size_t total = 0, pos = 0;
    uint8_t *out;

    kh_foreach_value(&exec->shipments, shipment, {
        total += sizeof(uint32_t) + shipment.size;
    })
    *data_p = NULL;
    *size_p = 0;
    if (total == 0) {
        return UCS_OK;
    }
    out = malloc(total);
    if (out == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    kh_foreach_value(&exec->shipments, shipment, {
        memcpy(out + pos, &shipment.size, sizeof(uint32_t));
        memcpy(out + pos + sizeof(uint32_t), shipment.bytes, shipment.size);
        pos += sizeof(uint32_t) + shipment.size;
    })
    *data_p = out;
    *size_p = total;
    return UCS_OK;
}

ucs_status_t tc_ifunc_exec_import(tc_ifunc_exec_h exec, const void *data, size_t size,
                                  tc_ifunc_exec_result_t *result)
{
    const uint8_t *p = data, *end = p + size;
    uint8_t *copy;
    uint32_t len;

    memset(result, 0, sizeof(*result));
    while (p < end) {
        if ((size_t)(end - p) < sizeof(len)) {
            snprintf(result->detail, sizeof(result->detail), "truncated code list");
            return UCS_ERR_INVALID_PARAM;
        }
        memcpy(&len, p, sizeof(len));
        p += sizeof(len);
        if (len > (size_t)(end - p)) {
            snprintf(result->detail, sizeof(result->detail), "code of %u bytes in %zu",
                     len, (size_t)(end - p));
            return UCS_ERR_INVALID_PARAM;
        }
        /* aligned, as a slot is, and ours: it is checked, then copied */
        copy = malloc(len);
        if (copy == NULL) {
            return UCS_ERR_NO_MEMORY;
        }
        memcpy(copy, p, len);
        if ((len < TC_FRAME_HDR_SIZE) ||
            (((tc_frame_hdr_t*)copy)->version == TC_FRAME_COMPACT_FORMAT) ||
            (((tc_frame_hdr_t*)copy)->type != TC_FRAME_INJECTED)) {
            free(copy);
            snprintf(result->detail, sizeof(result->detail), "a code list entry that "
                     "is not a frame with code");
            return UCS_ERR_INVALID_PARAM;
        }
        exec->rx.install_only = 1;
        tc_ifunc_exec_run(exec, copy, len, NULL, result);
        exec->rx.install_only = 0;
        free(copy);
        if (result->reason != TC_IFUNC_REJECT_NONE) {
            return UCS_ERR_REJECTED;
        }
        p += len;
    }
    return UCS_OK;
}

void tc_ifunc_exec_stats(tc_ifunc_exec_h exec, tc_ifunc_stats_t *stats)
{
    *stats = exec->stats;
}
