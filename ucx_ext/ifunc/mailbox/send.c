/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The send path: messages built once in registered memory, stamped per send
 * and put into the peer's ring without a copy.
 *
 * Threads: the thread that drives the mailbox's engine.
 *
 * Invariants:
 *  - a frame is stamped only when no put of it is in flight (a message
 *    completes its previous send first);
 *  - frame k to a peer goes to slot k mod depth only while
 *    k - credits < depth: a slot is never overwritten before the receiver
 *    consumed it;
 *  - fast path (credits available, nothing in flight): no syscall, no
 *    malloc, no lock; header stores and one put (a compact frame, or any
 *    frame on the active-message lane), or two puts and a fence (a full
 *    frame over RMA in fence mode).
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/mailbox/mailbox_int.h"
#include "ifunc/code/package.h"
#include "ifunc/portable/portable.h"
#include "ifunc/tx/frame_encode.h"
#include "ifunc/tx/message.h"

#include <base/debug.h>

#include <stdlib.h>
#include <inttypes.h>
#include <string.h>

/* Largest compact frame we send. Both sides hash every word of a compact
 * frame; a fenced full frame costs a second put instead. Measured on posix
 * (contrib/bench/ifunc.sh's sweep, Local, check against fence): compact
 * 0.75x at 256 B, even at 1 KiB, 2x slower at 4 KiB. */
#define TC_IFUNC_COMPACT_SEND_MAX 1024u

ucs_status_t tc_ifunc_msg_wait(tc_ifunc_msg_h msg)
{
    ucs_status_t status = UCS_OK, s;
    unsigned i;

    for (i = 0; i < msg->num_reqs; ++i) {
        s = tc_ifunc_request_wait(msg->mbox->engine, msg->reqs[i], 30.0);
        if (s != UCS_OK) {
            status = s;
        }
    }
    msg->num_reqs = 0;
    return status;
}
static ucs_status_t tc_ifunc_msg_fill(tc_ifunc_msg_h msg, void *source_args,
                                      size_t source_args_size)
{
    return tc_ifunc_payload_fill(msg->elem, source_args, source_args_size,
                                 msg->frame + msg->desc.payload_offset,
                                 msg->payload_capacity, &msg->payload_size);
}

/*
 * Cached messages carry a second header right in front of the payload:
 *   [header][code][symbols][hash-only header][payload][trailer]
 * The first frame to a peer is the whole buffer (the second header is just
 * bytes the receiver skips); later frames start at the second header, so
 * both are one contiguous put of the same payload, without a copy.
 */
static void tc_ifunc_msg_alt_layout(tc_ifunc_msg_h msg)
{
    if (msg->mode == TC_IFUNC_MODE_LOCAL) {
        if (msg->compact) {
            msg->desc.payload_offset = TC_FRAME_COMPACT_LOCAL_HDR;
        }
        return;
    }
    if (!tc_ifunc_mode_cached(msg->mode)) {
        return;
    }
    if (msg->compact) {
        /* the compact hash-only header ends where the payload starts */
        msg->desc.payload_offset += TC_FRAME_ALIGN;
        msg->alt_offset           = msg->desc.payload_offset -
                                    TC_FRAME_COMPACT_CACHED_HDR;
    } else {
        msg->alt_offset           = msg->desc.payload_offset;
        msg->desc.payload_offset += TC_FRAME_HDR_SIZE;
    }
    msg->alt_desc                 = msg->desc;
    msg->alt_desc.payload_offset  = TC_FRAME_HDR_SIZE;
    msg->alt_desc.code_offset     = 0;
    msg->alt_desc.code_size       = 0;
    msg->alt_desc.got_offset      = 0;
    msg->alt_desc.entry_offset    = 0;
    msg->alt_desc.symtab_offset   = 0;
    msg->alt_desc.symtab_size     = 0;
    msg->alt_desc.num_symbols     = 0;
}

/* Lay the message out (and copy its code into @a frame when not NULL). A
 * Portable message starts with the host's module, or the first it has */
static void tc_ifunc_msg_layout(tc_ifunc_msg_h msg, uint8_t *frame)
{
    const tc_ifunc_msg_module_t *m;

    if (tc_ifunc_mode_portable(msg->mode)) {
        m = &msg->modules[msg->laid_arch];
        tc_frame_prepare_portable(frame, msg->pkg, msg->elem, m->bytes, m->size,
                                  msg->module_capacity, m->hash, &msg->desc);
    } else {
        tc_frame_prepare(frame, msg->pkg, msg->elem, msg->mode != TC_IFUNC_MODE_LOCAL,
                         &msg->desc);
    }
    tc_ifunc_msg_alt_layout(msg);
}

/* A Portable message's modules, one per architecture the package has one
 * for: a peer gets the one of the architecture it published */
static ucs_status_t tc_ifunc_msg_load_modules(tc_ifunc_msg_h msg)
{
    const tc_ifunc_portable_bc_t *bc;
    tc_ifunc_msg_module_t *m;
    char detail[192];
    size_t size;
    int arch;

    msg->laid_arch = TC_IFUNC_ARCH_UNKNOWN;
    for (arch = TC_IFUNC_ARCH_UNKNOWN + 1; arch < TC_IFUNC_ARCH_LAST; ++arch) {
        bc = tc_ifunc_elem_portable(msg->elem, tc_portable_arch_triple(arch));
        if (bc == NULL) {
            continue;
        }
        m        = &msg->modules[arch];
        m->bytes = tc_portable_read_module(bc->path, bc->bc_hash, &size, detail,
                                           sizeof(detail));
        if (m->bytes == NULL) {
            ucs_error("ifunc: %s.%s: %s", msg->pkg->name, msg->elem->name, detail);
            return UCS_ERR_IO_ERROR;
        }
        m->size = (uint32_t)size;
        m->hash = bc->bc_hash;
        if (m->size > msg->module_capacity) {
            msg->module_capacity = m->size;
        }
        if ((msg->laid_arch == TC_IFUNC_ARCH_UNKNOWN) ||
            (arch == (int)tc_portable_host_arch())) {
            msg->laid_arch = arch;
        }
    }
    if (msg->laid_arch == TC_IFUNC_ARCH_UNKNOWN) {
        ucs_error("ifunc: %s.%s has no module: build the package with twochains-pkg "
                  "--portable", msg->pkg->name, msg->elem->name);
        return UCS_ERR_UNSUPPORTED;
    }
    return UCS_OK;
}

static void tc_ifunc_msg_free_modules(tc_ifunc_msg_h msg)
{
    int arch;

    for (arch = 0; arch < TC_IFUNC_ARCH_LAST; ++arch) {
        free(msg->modules[arch].bytes);
        msg->modules[arch].bytes = NULL;
    }
}

/* Make the frame carry @a arch's module (no put of it is in flight): the
 * code region is sized for the largest, so only the code and its hash
 * change; the payload stays where it is */
static ucs_status_t tc_ifunc_msg_lay_arch(tc_ifunc_msg_h msg, uint32_t arch)
{
    const tc_ifunc_msg_module_t *m;

    if ((arch >= TC_IFUNC_ARCH_LAST) || (msg->modules[arch].bytes == NULL)) {
        ucs_error("ifunc: %s.%s has no module for %s, the architecture of the "
                  "receiver", msg->pkg->name, msg->elem->name,
                  tc_portable_arch_triple(arch));
        return UCS_ERR_UNSUPPORTED;
    }
    m = &msg->modules[arch];
    memcpy(msg->frame + msg->desc.code_offset, m->bytes, m->size);
    msg->desc.code_size     = m->size;
    msg->desc.code_hash     = m->hash;
    msg->alt_desc.code_hash = m->hash;
    msg->laid_arch          = (int)arch;
    return UCS_OK;
}

ucs_status_t tc_ifunc_msg_create(tc_ifunc_mailbox_h mbox, tc_ifunc_pkg_h pkg,
                                 uint32_t element_id, tc_ifunc_mode_t mode,
                                 void *source_args, size_t source_args_size,
                                 tc_ifunc_msg_h *msg_p)
{
    const tc_ifunc_element_t *elem = tc_ifunc_pkg_elem(pkg, element_id);
    ucp_mem_map_params_t mp = {0};
    uint32_t min_slot;
    ucp_mem_attr_t attr;
    tc_ifunc_msg_h msg;
    ucs_status_t status;
    size_t payload_cap;

    if ((elem == NULL) || (mode >= TC_IFUNC_MODE_LAST)) {
        return UCS_ERR_INVALID_PARAM;
    }
    if (tc_ifunc_mode_cached(mode) && (elem->flags & TC_JAM_F_WRITABLE_DATA)) {
        ucs_error("ifunc: %s has writable globals: it cannot be cached", elem->name);
        return UCS_ERR_UNSUPPORTED;
    }
    payload_cap = tc_ifunc_payload_capacity(elem, source_args, source_args_size);

    msg = calloc(1, sizeof(*msg));
    if (msg == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    msg->mbox    = mbox;
    msg->pkg     = pkg;
    msg->elem    = elem;
    msg->mode    = mode;
    msg->compact = (mbox->signal == TC_IFUNC_SIGNAL_CHECK) &&
                   (mode != TC_IFUNC_MODE_INJECTED) && (mode != TC_IFUNC_MODE_PORTABLE) &&
                   (payload_cap <= TC_IFUNC_COMPACT_SEND_MAX - TC_FRAME_COMPACT_CACHED_HDR);
    if (tc_ifunc_mode_portable(mode)) {
        status = tc_ifunc_msg_load_modules(msg);
        if (status != UCS_OK) {
            goto err_free;
        }
    }
    tc_ifunc_msg_layout(msg, NULL);

    min_slot = mbox->min_slot;
    if ((payload_cap > UINT32_MAX / 2) ||
        (tc_frame_size(&msg->desc, (uint32_t)payload_cap) > min_slot)) {
        ucs_error("ifunc: a %s frame with %zu bytes of payload does not fit %u-byte "
                  "slots", elem->name, payload_cap, min_slot);
        status = UCS_ERR_EXCEEDS_LIMIT;
        goto err_free;
    }
    msg->payload_capacity = (uint32_t)payload_cap;
    msg->capacity         = tc_frame_size(&msg->desc, msg->payload_capacity);

    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                    UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    mp.length     = msg->capacity;
    mp.flags      = UCP_MEM_MAP_ALLOCATE;
    status = ucp_mem_map(mbox->context, &mp, &msg->memh);
    if (status != UCS_OK) {
        ucs_error("ifunc: ucp_mem_map of a %zu-byte frame failed: %s", msg->capacity,
                  ucs_status_string(status));
        goto err_free;
    }
    attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
    status = ucp_mem_query(msg->memh, &attr);
    if (status != UCS_OK) {
        goto err_unmap;
    }
    msg->frame = attr.address;
    memset(msg->frame, 0, msg->capacity);
    tc_ifunc_msg_layout(msg, msg->frame);

    msg->code_sent = calloc(mbox->size, 1);
    if (msg->code_sent == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto err_unmap;
    }
    status = tc_ifunc_msg_fill(msg, source_args, source_args_size);
    if (status != UCS_OK) {
        goto err_sent;
    }
    tc_ifunc_pkg_ref(pkg);
    *msg_p = msg;
    return UCS_OK;

err_sent:
    free(msg->code_sent);
err_unmap:
    ucp_mem_unmap(mbox->context, msg->memh);
err_free:
    tc_ifunc_msg_free_modules(msg);
    free(msg);
    return status;
}

ucs_status_t tc_ifunc_msg_reinit(tc_ifunc_msg_h msg, void *source_args,
                                 size_t source_args_size)
{
    ucs_status_t status = tc_ifunc_msg_wait(msg);

    if (status != UCS_OK) {
        return status;
    }
    return tc_ifunc_msg_fill(msg, source_args, source_args_size);
}

void *tc_ifunc_msg_payload(tc_ifunc_msg_h msg, size_t *size_p, size_t *capacity_p)
{
    tc_ifunc_msg_wait(msg);
    if (size_p != NULL) {
        *size_p = msg->payload_size;
    }
    if (capacity_p != NULL) {
        *capacity_p = msg->payload_capacity;
    }
    return msg->frame + msg->desc.payload_offset;
}

ucs_status_t tc_ifunc_msg_set_payload_size(tc_ifunc_msg_h msg, size_t size)
{
    if (size > msg->payload_capacity) {
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    msg->payload_size = (uint32_t)size;
    return UCS_OK;
}

size_t tc_ifunc_msg_frame_size(tc_ifunc_msg_h msg)
{
    if (msg->compact) {
        return tc_frame_compact_size(tc_ifunc_mode_cached(msg->mode) ?
                                     TC_FRAME_COMPACT_CACHED_HDR :
                                     TC_FRAME_COMPACT_LOCAL_HDR, msg->payload_size);
    }
    return tc_frame_size(tc_ifunc_mode_cached(msg->mode) ? &msg->alt_desc :
                               &msg->desc, msg->payload_size);
}

void tc_ifunc_msg_free(tc_ifunc_msg_h msg)
{
    if (msg == NULL) {
        return;
    }
    tc_ifunc_msg_wait(msg);
    ucp_mem_unmap(msg->mbox->context, msg->memh);
    tc_ifunc_pkg_unload(msg->pkg);
    tc_ifunc_msg_free_modules(msg);
    free(msg->code_sent);
    free(msg);
}

/* Put [offset, offset + length) of the frame at @a frame into the slot */
static UCS_F_ALWAYS_INLINE ucs_status_t
tc_ifunc_put(tc_ifunc_msg_h msg, tc_ifunc_peer_t *peer, const uint8_t *frame,
             uint32_t offset, uint32_t length, uint64_t remote)
{
    ucp_request_param_t param;
    ucs_status_ptr_t req;

    param.op_attr_mask = UCP_OP_ATTR_FIELD_MEMH;
    param.memh         = msg->memh;
    /* the header of the active-message lane lives with its request */
    req = tc_write_lane_write(msg->mbox->lane, peer->lane, peer->ep, (uint32_t)msg->mbox->rank,
                              frame + offset, length, remote + offset, peer->rkey,
                              peer->region_key, &param,
                              &msg->headers[msg->num_reqs]);
    ++msg->mbox->stats.puts;
    if (ucs_likely(req == NULL)) {
        return UCS_OK;
    }
    if (UCS_PTR_IS_ERR(req)) {
        return UCS_PTR_STATUS(req);
    }
    msg->reqs[msg->num_reqs++] = req;
    return UCS_OK;
}

static ucs_status_t tc_ifunc_send_stall(tc_ifunc_mailbox_h mbox,
                                        tc_ifunc_peer_t *peer)
{
    if (peer->stall_since == 0) {
        peer->stall_since = tc_ifunc_now();
        ++mbox->stats.credit_stalls;      /* one per stall, not per retry */
    }
    return UCS_ERR_NO_RESOURCE;
}

/* The receiver says it consumed more than we sent: once may be a word
 * read while a put was storing it (any byte order), twice in a row is the
 * receiver's fault. Its ring is not written again: counted, logged once,
 * and every later send to it fails. */
static ucs_status_t tc_ifunc_send_credit_past_sent(tc_ifunc_mailbox_h mbox,
                                                   tc_ifunc_peer_t *peer,
                                                   uint64_t credits)
{
    if (peer->credit_faulted) {
        return UCS_ERR_REJECTED;
    }
    if (++peer->credit_past_sent < 2) {
        return tc_ifunc_send_stall(mbox, peer);
    }
    peer->credit_faulted = 1;
    ++mbox->stats.credit_faults;
    ucs_error("ifunc rank %d: rank %d wrote credit word %" PRIu64 " for a ring we sent %"
              PRIu64 " frames: its fault; nothing more is sent to it", mbox->rank,
              peer->rank, credits, peer->sent);
    return UCS_ERR_REJECTED;
}

static void tc_ifunc_send_unstall(tc_ifunc_mailbox_h mbox, tc_ifunc_peer_t *peer)
{
    mbox->stats.credit_wait_s += tc_ifunc_now() - peer->stall_since;
    peer->stall_since          = 0;
}

ucs_status_t tc_ifunc_send(tc_ifunc_mailbox_h mbox, int dest, tc_ifunc_msg_h msg)
{
    tc_ifunc_peer_t *peer;
    uint8_t *frame                    = msg->frame;
    const tc_frame_desc_t *desc = &msg->desc;
    uint32_t flags                    = 0;
    tc_frame_type_t type;
    ucs_status_t status;
    uint64_t credits, remote;
    uint32_t size;
    int compact;

    if (ucs_unlikely((dest < 0) || (dest >= mbox->size) || (msg->mbox != mbox))) {
        return UCS_ERR_INVALID_PARAM;
    }
    peer = mbox->peers[dest];
    if (ucs_unlikely((peer != NULL) && peer->credit_faulted)) {
        return UCS_ERR_REJECTED;
    }
    if (ucs_unlikely((peer == NULL) || (peer->tx != TC_IFUNC_TX_READY))) {
        /* first contact: our ring at dest comes back with its grant */
        status = tc_ifunc_mailbox_connect(mbox, dest);
        if (status != UCS_OK) {
            return (status == UCS_INPROGRESS) ? UCS_ERR_NO_RESOURCE : status;
        }
        peer = mbox->peers[dest];
    }
    if (ucs_unlikely(msg->num_reqs != 0)) {
        status = tc_ifunc_msg_wait(msg);
        if (status != UCS_OK) {
            return status;
        }
    }

    credits = __atomic_load_n(peer->credit, __ATOMIC_ACQUIRE);
    if (ucs_unlikely(peer->sent - credits >= peer->depth)) {
        if (credits > peer->sent) {
            return tc_ifunc_send_credit_past_sent(mbox, peer, credits);
        }
        return tc_ifunc_send_stall(mbox, peer);
    }
    peer->credit_past_sent = 0;
    if (ucs_unlikely(peer->stall_since != 0)) {
        tc_ifunc_send_unstall(mbox, peer);
    }

    if (tc_ifunc_mode_portable(msg->mode) &&
        ucs_unlikely(mbox->infos[dest].arch != (uint32_t)msg->laid_arch)) {
        status = tc_ifunc_msg_lay_arch(msg, mbox->infos[dest].arch);
        if (status != UCS_OK) {
            return status;
        }
    }

    switch (msg->mode) {
    case TC_IFUNC_MODE_LOCAL:
        type = TC_FRAME_LOCAL;
        break;
    case TC_IFUNC_MODE_INJECTED:
        type = TC_FRAME_INJECTED;
        break;
    case TC_IFUNC_MODE_PORTABLE:
        type = TC_FRAME_PORTABLE;
        break;
    default:
        if (msg->code_sent[dest]) {
            /* the hash-only frame starts at the second header, right in
             * front of the shared payload: one contiguous range again */
            type  = TC_FRAME_CACHED;
            frame = msg->frame + msg->alt_offset;
            desc  = &msg->alt_desc;
        } else {
            type  = (msg->mode == TC_IFUNC_MODE_CACHED) ? TC_FRAME_INJECTED :
                                                          TC_FRAME_PORTABLE;
            flags = TC_FRAME_F_CACHE;
        }
        break;
    }
    if (mbox->flags & TC_IFUNC_MAILBOX_FLAG_CHECKSUM) {
        flags |= TC_FRAME_F_CHECKSUM;
    }

    compact = msg->compact && ((type == TC_FRAME_LOCAL) || (type == TC_FRAME_CACHED));
    if (compact) {
        /* the check word makes the frame self-validating: one put, landing
         * in any order */
        size = tc_frame_stamp_compact(frame, desc, type, (uint32_t)peer->sent,
                                      mbox->rank, msg->payload_size);
    } else {
        size = tc_frame_stamp(frame, desc, type, flags, (uint32_t)peer->sent,
                              mbox->rank, msg->payload_size);
    }
    if (ucs_unlikely(size > peer->slot_size)) {
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    remote = peer->ring_addr + (peer->sent % peer->depth) * peer->slot_size;

    if (!compact && (mbox->signal != TC_IFUNC_SIGNAL_TRAILER) &&
        (peer->lane != TC_WRITE_LANE_AM)) {
        /* data, fence, signal: the signal word lands after everything */
        status = tc_ifunc_put(msg, peer, frame, 8, size - 8, remote);
        if (status == UCS_OK) {
            status = ucp_worker_fence(mbox->worker);
        }
        if (status == UCS_OK) {
            status = tc_ifunc_put(msg, peer, frame, 0, 8, remote);
        }
    } else {
        /* one write. With the trailer, the receiver waits for the trailer
         * byte. On the active-message lane the receiver's handler stores
         * the whole frame on the thread that polls, before the poll can look
         * at it: signal and data arrive together, and one message does what
         * data, fence and signal do on the RMA lane */
        status = tc_ifunc_put(msg, peer, frame, 0, size, remote);
    }
    if (ucs_unlikely(status != UCS_OK)) {
        ucs_error("ifunc rank %d: put to rank %d failed: %s", mbox->rank, dest,
                  ucs_status_string(status));
        return status;
    }

    ++peer->sent;
    if (ucs_unlikely(peer->asleep)) {
        tc_ifunc_ring_doorbell(mbox, peer);   /* after the frame's put */
    }
    ++mbox->stats.sent[type - TC_FRAME_LOCAL];
    mbox->stats.bytes_sent += size;
    if (flags & TC_FRAME_F_CACHE) {
        msg->code_sent[dest] = 1;
    }
    return (msg->num_reqs == 0) ? UCS_OK : UCS_INPROGRESS;
}
