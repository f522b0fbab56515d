/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Mailboxes: receiver memory and its region, rkey exchange and connection,
 * barrier and flush. The credits are in credits.c, the poll in poll.c.
 *
 * One ucp_mem_map region per rank:
 *   [0, size*64)              credits[r]: how many of OUR frames rank r has
 *                             consumed -- written by r with a put
 *   [size*64, 2*size*64)      credit_src[s]: source buffer of our credit put
 *                             to sender s (never rewritten while in flight)
 *   [rings_offset, +size*depth*slot_size)
 *                             ring s: the frames rank s sends us
 * Each word sits in its own cache line. With UCX_TC_IFUNC_PLACEMENT=inplace
 * the rings are mapped read+write+execute. Frames and credits travel by the
 * worker's write lane (<twochains/lane.h>): puts where UCP has an RMA lane to
 * the peer, its active messages where UCP would emulate the put; the whole
 * region admits the mailbox's ranks as senders. The lane's handler stores
 * on this thread, inside the engine's worker progress, never during a poll.
 *
 * Threads: everything runs on the thread that drives the engine.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc_int.h"

#include <twochains/lane.h>
#include <base/debug.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define TC_IFUNC_LINE 64u

typedef struct tc_ifunc_blob {
    uint64_t region_addr;
    uint64_t region_key;    /* the write lane's name for the region */
    uint64_t rings_offset;
    uint32_t slot_size;
    uint32_t depth;
    uint32_t size;
    uint32_t signal;
    uint32_t rkey_len;
    uint32_t addr_len;
} tc_ifunc_blob_t;

static unsigned tc_ifunc_mailbox_poller(void *arg)
{
    return tc_ifunc_poll((tc_ifunc_mailbox_h)arg, 0);
}

static int tc_ifunc_req_done(void *arg)
{
    return ucp_request_check_status(arg) != UCS_INPROGRESS;
}

ucs_status_t tc_ifunc_request_wait(tc_progress_engine_h engine,
                                   ucs_status_ptr_t req, double timeout_s)
{
    ucs_status_t status;

    if (req == NULL) {
        return UCS_OK;
    }
    if (UCS_PTR_IS_ERR(req)) {
        return UCS_PTR_STATUS(req);
    }
    status = tc_progress_until(engine, tc_ifunc_req_done, req, timeout_s);
    if (status == UCS_OK) {
        status = ucp_request_check_status(req);
    } else {
        ucp_request_cancel(tc_progress_engine_worker(engine), req);
    }
    ucp_request_free(req);
    return status;
}

/* ---- barrier and flush ---- */

typedef struct {
    tc_bootstrap_h boot;
    ucs_status_t   status;
    int            done;
} tc_ifunc_barrier_arg_t;

static void *tc_ifunc_barrier_thread(void *arg)
{
    tc_ifunc_barrier_arg_t *b = arg;

    b->status = tc_bootstrap_barrier(b->boot);
    __atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static int tc_ifunc_barrier_done(void *arg)
{
    return __atomic_load_n(&((tc_ifunc_barrier_arg_t*)arg)->done, __ATOMIC_ACQUIRE);
}

ucs_status_t tc_ifunc_mailbox_barrier(tc_ifunc_mailbox_h mbox)
{
    tc_ifunc_barrier_arg_t b = {mbox->boot, UCS_OK, 0};
    pthread_t thread;

    if (pthread_create(&thread, NULL, tc_ifunc_barrier_thread, &b) != 0) {
        return tc_bootstrap_barrier(mbox->boot);
    }
    while (tc_progress_until(mbox->engine, tc_ifunc_barrier_done, &b, 1.0) != UCS_OK) {
    }
    pthread_join(thread, NULL);
    return b.status;
}

ucs_status_t tc_ifunc_mailbox_flush(tc_ifunc_mailbox_h mbox, double timeout_s)
{
    ucp_request_param_t param = {0};

    return tc_ifunc_request_wait(mbox->engine,
                                 ucp_worker_flush_nbx(mbox->worker, &param),
                                 timeout_s);
}

static void tc_ifunc_mailbox_params_read(tc_ifunc_mailbox_h mbox,
                                         const tc_ifunc_mailbox_params_t *params)
{
    const tc_ifunc_config_t *config = tc_ifunc_config_get();
    uint64_t mask = (params != NULL) ? params->field_mask : 0;

#define TC_IFUNC_PARAM(_bit, _field, _default) \
    (((mask) & TC_IFUNC_MAILBOX_PARAM_FIELD_##_bit) ? params->_field : (_default))

    mbox->slot_size          = TC_IFUNC_PARAM(SLOT_SIZE, slot_size, config->slot_size);
    mbox->depth              = TC_IFUNC_PARAM(RING_DEPTH, ring_depth, config->ring_depth);
    mbox->rx.security        = TC_IFUNC_PARAM(SECURITY, security, config->security);
    mbox->rx.placement       = TC_IFUNC_PARAM(PLACEMENT, placement, config->placement);
    mbox->signal             = TC_IFUNC_PARAM(SIGNAL, signal, config->signal);
    mbox->rx.target_args     = TC_IFUNC_PARAM(TARGET_ARGS, target_args, NULL);
    mbox->flags              = TC_IFUNC_PARAM(FLAGS, flags, 0);
    mbox->rx.trailer_timeout = TC_IFUNC_PARAM(TRAILER_TIMEOUT, trailer_timeout,
                                              config->trailer_timeout);
#undef TC_IFUNC_PARAM
    mbox->poll_batch   = config->poll_batch ? config->poll_batch : 1;
    mbox->credit_batch = (mbox->depth >= 4) ? mbox->depth / 4 : 1;
}

/* The region and its lane: nobody writes it after this */
static void tc_ifunc_mailbox_unmap(tc_ifunc_mailbox_h mbox)
{
    tc_write_lane_forbid(mbox->lane, mbox->region);
    tc_write_lane_destroy(mbox->lane);
    mbox->lane = NULL;
    ucp_mem_unmap(mbox->context, mbox->memh);
}

/* Every rank of the job may write the region over the AM lane. */
static ucs_status_t tc_mbox_allow_ranks(tc_ifunc_mailbox_h mbox)
{
    const size_t words = ((size_t)mbox->size + 63) / 64;
    uint64_t *ranks    = calloc(words, sizeof(*ranks));
    ucs_status_t status;

    if (ranks == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    memset(ranks, 0xff, words * sizeof(*ranks));   /* the lane drops bits past size */
    status = tc_write_lane_allow(mbox->lane, mbox->region, mbox->region_len, ranks,
                                 (size_t)mbox->size, &mbox->region_key);
    free(ranks);
    return status;
}

static ucs_status_t tc_ifunc_mailbox_map(tc_ifunc_mailbox_h mbox,
                                         size_t *rings_offset_p)
{
    ucp_mem_map_params_t mp = {0};
    ucp_mem_attr_t attr;
    size_t rings_offset, lines;
    ucs_status_t status;

    lines        = 2 * (size_t)mbox->size;
    rings_offset = (lines * TC_IFUNC_LINE + 4095) & ~(size_t)4095;
    mbox->region_len = rings_offset +
                       (size_t)mbox->size * mbox->depth * mbox->slot_size;

    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                    UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    mp.address    = NULL;
    mp.length     = mbox->region_len;
    mp.flags      = UCP_MEM_MAP_ALLOCATE;
    status = ucp_mem_map(mbox->context, &mp, &mbox->memh);
    if (status != UCS_OK) {
        ucs_error("ifunc mailbox: ucp_mem_map of %zu bytes failed: %s",
                  mbox->region_len, ucs_status_string(status));
        return status;
    }
    attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
    status = ucp_mem_query(mbox->memh, &attr);
    if (status != UCS_OK) {
        ucs_error("ifunc mailbox: ucp_mem_query failed: %s", ucs_status_string(status));
        ucp_mem_unmap(mbox->context, mbox->memh);
        return status;
    }
    mbox->region = attr.address;
    memset(mbox->region, 0, mbox->region_len);
    mbox->credits    = (volatile uint64_t*)mbox->region;
    mbox->credit_src = (uint64_t*)(mbox->region + mbox->size * TC_IFUNC_LINE);
    mbox->rings      = mbox->region + rings_offset;

    status = tc_write_lane_create(mbox->worker, &mbox->lane);
    if (status == UCS_OK) {
        status = tc_mbox_allow_ranks(mbox);
    }
    if (status != UCS_OK) {
        tc_write_lane_destroy(mbox->lane);
        mbox->lane = NULL;
        ucp_mem_unmap(mbox->context, mbox->memh);
        return status;
    }

    if (mbox->rx.placement == TC_IFUNC_PLACEMENT_INPLACE) {
        /* the paper's compact mode: code runs where it landed */
        if (mprotect(mbox->rings, mbox->region_len - rings_offset,
                     PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
            ucs_error("ifunc mailbox: cannot make the rings executable (%m); "
                      "use UCX_TC_IFUNC_PLACEMENT=copy");
            tc_ifunc_mailbox_unmap(mbox);
            return UCS_ERR_UNSUPPORTED;
        }
    }
    *rings_offset_p = rings_offset;
    return UCS_OK;
}

static ucs_status_t tc_ifunc_mailbox_connect(tc_ifunc_mailbox_h mbox,
                                             const tc_ifunc_mailbox_params_t *params,
                                             size_t rings_offset)
{
    int own_eps = !(params && (params->field_mask & TC_IFUNC_MAILBOX_PARAM_FIELD_EPS));
    ucp_address_t *address = NULL;
    size_t address_len = 0, rkey_len, blob_len, *lens, off;
    void *rkey_buf, *all = NULL;
    tc_ifunc_blob_t *blob, remote;
    ucp_ep_params_t ep_params;
    ucs_status_t status;
    uint8_t *p;
    int r;

    status = ucp_rkey_pack(mbox->context, mbox->memh, &rkey_buf, &rkey_len);
    if (status != UCS_OK) {
        ucs_error("ifunc mailbox: ucp_rkey_pack failed: %s", ucs_status_string(status));
        return status;
    }
    if (own_eps) {
        status = ucp_worker_get_address(mbox->worker, &address, &address_len);
        if (status != UCS_OK) {
            ucs_error("ifunc mailbox: ucp_worker_get_address failed: %s",
                      ucs_status_string(status));
            goto out_rkey;
        }
    }

    blob_len = sizeof(*blob) + rkey_len + address_len;
    blob     = calloc(1, blob_len);
    lens     = calloc(mbox->size, sizeof(*lens));
    if ((blob == NULL) || (lens == NULL)) {
        status = UCS_ERR_NO_MEMORY;
        goto out_free;
    }
    blob->region_addr  = (uintptr_t)mbox->region;
    blob->region_key   = mbox->region_key;
    blob->rings_offset = rings_offset;
    blob->slot_size    = mbox->slot_size;
    blob->depth        = mbox->depth;
    blob->size         = mbox->size;
    blob->signal       = mbox->signal;
    blob->rkey_len     = rkey_len;
    blob->addr_len     = address_len;
    memcpy(blob + 1, rkey_buf, rkey_len);
    if (address_len != 0) {
        memcpy((uint8_t*)(blob + 1) + rkey_len, address, address_len);
    }

    /* nothing is in flight yet: the blocking collective is safe here */
    status = tc_bootstrap_allgatherv(mbox->boot, blob, blob_len, &all, lens);
    if (status != UCS_OK) {
        goto out_free;
    }

    if (own_eps) {
        mbox->own_eps = calloc(mbox->size, sizeof(ucp_ep_h));
        if (mbox->own_eps == NULL) {
            status = UCS_ERR_NO_MEMORY;
            goto out_free;
        }
    }
    for (r = 0, off = 0; r < mbox->size; off += lens[r], ++r) {
        tc_ifunc_peer_t *peer = &mbox->peers[r];

        p = (uint8_t*)all + off;
        if (lens[r] < sizeof(remote)) {
            status = UCS_ERR_INVALID_PARAM;
            goto out_free;
        }
        memcpy(&remote, p, sizeof(remote));
        if ((remote.size != (uint32_t)mbox->size) ||
            (lens[r] != sizeof(remote) + remote.rkey_len + remote.addr_len) ||
            (own_eps && (remote.addr_len == 0))) {
            ucs_error("ifunc mailbox: rank %d sent an inconsistent descriptor", r);
            status = UCS_ERR_INVALID_PARAM;
            goto out_free;
        }
        if (own_eps) {
            ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
            ep_params.address    = (const ucp_address_t*)(p + sizeof(remote) +
                                                          remote.rkey_len);
            status = ucp_ep_create(mbox->worker, &ep_params, &mbox->own_eps[r]);
            if (status != UCS_OK) {
                ucs_error("ifunc mailbox: ucp_ep_create to rank %d failed: %s", r,
                          ucs_status_string(status));
                mbox->own_eps[r] = NULL;
                goto out_free;
            }
            peer->ep = mbox->own_eps[r];
        } else {
            peer->ep = params->eps[r];
        }
        status = ucp_ep_rkey_unpack(peer->ep, p + sizeof(remote), &peer->rkey);
        if (status != UCS_OK) {
            ucs_error("ifunc mailbox: rkey of rank %d: %s", r,
                      ucs_status_string(status));
            peer->rkey = NULL;
            goto out_free;
        }
        peer->ring_addr    = remote.region_addr + remote.rings_offset +
                             (uint64_t)mbox->rank * remote.depth * remote.slot_size;
        peer->credit_addr  = remote.region_addr + (uint64_t)mbox->rank * TC_IFUNC_LINE;
        peer->region_key   = remote.region_key;
        peer->slot_size    = remote.slot_size;
        peer->depth        = remote.depth;
        peer->trailer_mode = (remote.signal == TC_IFUNC_SIGNAL_TRAILER);
        mbox->rx_rings[r].trailer_mode = peer->trailer_mode;
        (void)tc_put_lane_describe(peer->ep, peer->transport, sizeof(peer->transport));
        peer->lane = tc_write_lane_resolve(mbox->lane, peer->ep);
        tc_write_lane_describe(mbox->lane, peer->ep, peer->lane_name, sizeof(peer->lane_name));
    }
    status = UCS_OK;

out_free:
    free(all);
    free(lens);
    free(blob);
    if (address != NULL) {
        ucp_worker_release_address(mbox->worker, address);
    }
out_rkey:
    ucp_rkey_buffer_release(rkey_buf);
    return status;
}

static void tc_ifunc_mailbox_disconnect(tc_ifunc_mailbox_h mbox, int collective)
{
    ucp_request_param_t param;
    int r;

    for (r = 0; r < mbox->size; ++r) {
        if (mbox->rx_rings[r].credit_req != NULL) {
            tc_ifunc_request_wait(mbox->engine, mbox->rx_rings[r].credit_req, 5.0);
            mbox->rx_rings[r].credit_req = NULL;
        }
        if (mbox->peers[r].rkey != NULL) {
            ucp_rkey_destroy(mbox->peers[r].rkey);
            mbox->peers[r].rkey = NULL;
        }
    }
    if (mbox->own_eps == NULL) {
        return;
    }
    for (r = 0; r < mbox->size; ++r) {
        if (mbox->own_eps[r] == NULL) {
            continue;
        }
        /* flush mode: FORCE needs UCP_ERR_HANDLING_MODE_PEER; nothing is in
         * flight after the flush and barrier of destroy */
        param.op_attr_mask = 0;
        tc_ifunc_request_wait(mbox->engine, ucp_ep_close_nbx(mbox->own_eps[r], &param),
                              5.0);
    }
    free(mbox->own_eps);
    mbox->own_eps = NULL;
    /* a flushing close needs its peer's progress: nobody leaves before all
     * closes are done */
    if (collective) {
        tc_ifunc_mailbox_barrier(mbox);
    }
}

ucs_status_t tc_ifunc_mailbox_create(ucp_context_h context,
                                     tc_progress_engine_h engine,
                                     tc_bootstrap_h boot,
                                     const tc_ifunc_mailbox_params_t *params,
                                     tc_ifunc_mailbox_h *mbox_p)
{
    tc_ifunc_mailbox_h mbox;
    size_t rings_offset;
    ucs_status_t status;
    int r;

    if ((context == NULL) || (engine == NULL) || (tc_progress_engine_worker(engine) == NULL)) {
        ucs_error("ifunc mailbox: a context and an engine with a worker are required");
        return UCS_ERR_INVALID_PARAM;
    }
    mbox = calloc(1, sizeof(*mbox));
    if (mbox == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    mbox->context   = context;
    mbox->engine    = engine;
    mbox->worker    = tc_progress_engine_worker(engine);
    mbox->boot      = boot;
    mbox->rank      = tc_bootstrap_rank(boot);
    mbox->size      = tc_bootstrap_size(boot);
    mbox->poller_id = -1;
    tc_ifunc_mailbox_params_read(mbox, params);

    if ((mbox->slot_size < TC_FRAME_MIN_SIZE) || (mbox->slot_size % TC_FRAME_ALIGN) ||
        (mbox->depth == 0) || (mbox->depth > (1u << 20)) ||
        ((uint64_t)mbox->slot_size * mbox->depth * mbox->size > (1ull << 34)) ||
        (mbox->rx.security >= TC_IFUNC_SECURITY_LAST) ||
        (mbox->rx.placement >= TC_IFUNC_PLACEMENT_LAST) ||
        (mbox->signal >= TC_IFUNC_SIGNAL_LAST)) {
        ucs_error("ifunc mailbox: invalid parameters (slot %u bytes, depth %u)",
                  mbox->slot_size, mbox->depth);
        status = UCS_ERR_INVALID_PARAM;
        goto err_free;
    }

    mbox->rx.rank  = mbox->rank;
    mbox->rx.stats = &mbox->stats;
    tc_code_cache_init(&mbox->rx.cache, tc_ifunc_config_get()->cache_entries);
    mbox->rx_rings = calloc(mbox->size, sizeof(*mbox->rx_rings));
    mbox->peers    = calloc(mbox->size, sizeof(*mbox->peers));
    if ((mbox->rx_rings == NULL) || (mbox->peers == NULL)) {
        status = UCS_ERR_NO_MEMORY;
        goto err_cache;
    }

    status = tc_ifunc_mailbox_map(mbox, &rings_offset);
    if (status != UCS_OK) {
        goto err_cache;
    }
    for (r = 0; r < mbox->size; ++r) {
        tc_ifunc_ring_init(&mbox->rx_rings[r],
                           mbox->rings + (size_t)r * mbox->depth * mbox->slot_size, r,
                           mbox->depth);
    }

    status = tc_ifunc_mailbox_connect(mbox, params, rings_offset);
    if (status != UCS_OK) {
        goto err_disconnect;
    }

    if (!(mbox->flags & TC_IFUNC_MAILBOX_FLAG_NO_POLLER)) {
        status = tc_progress_poller_add(engine, tc_ifunc_mailbox_poller, mbox,
                                        &mbox->poller_id);
        if (status != UCS_OK) {
            goto err_disconnect;
        }
    }

    ucs_debug("ifunc mailbox rank %d/%d: %u slots of %u bytes per sender, %s, %s, "
              "%s signal", mbox->rank, mbox->size, mbox->depth, mbox->slot_size,
              tc_ifunc_security_names[mbox->rx.security],
              tc_ifunc_placement_names[mbox->rx.placement],
              tc_ifunc_signal_names[mbox->signal]);
    *mbox_p = mbox;
    return UCS_OK;

err_disconnect:
    tc_ifunc_mailbox_disconnect(mbox, 0);
    for (r = 0; r < mbox->size; ++r) {
        tc_ifunc_ring_cleanup(&mbox->rx_rings[r]);
    }
    tc_ifunc_mailbox_unmap(mbox);
err_cache:
    tc_code_cache_cleanup(&mbox->rx.cache);
    free(mbox->rx_rings);
    free(mbox->peers);
err_free:
    free(mbox);
    return status;
}

void tc_ifunc_mailbox_destroy(tc_ifunc_mailbox_h mbox)
{
    int r;

    tc_ifunc_mailbox_flush(mbox, 10.0);
    tc_ifunc_mailbox_barrier(mbox);     /* nobody puts into us any more */
    if (mbox->poller_id >= 0) {
        tc_progress_poller_remove(mbox->engine, mbox->poller_id);
    }
    tc_ifunc_mailbox_disconnect(mbox, 1);
    for (r = 0; r < mbox->size; ++r) {
        tc_ifunc_ring_cleanup(&mbox->rx_rings[r]);
    }
    tc_ifunc_mailbox_unmap(mbox);
    tc_code_cache_cleanup(&mbox->rx.cache);
    free(mbox->rx_rings);
    free(mbox->peers);
    free(mbox);
}

int tc_ifunc_mailbox_rank(tc_ifunc_mailbox_h mbox)
{
    return mbox->rank;
}

int tc_ifunc_mailbox_size(tc_ifunc_mailbox_h mbox)
{
    return mbox->size;
}

tc_progress_engine_h tc_ifunc_mailbox_engine(tc_ifunc_mailbox_h mbox)
{
    return mbox->engine;
}

void tc_ifunc_mailbox_set_target_args(tc_ifunc_mailbox_h mbox, void *target_args)
{
    mbox->rx.target_args = target_args;
}

const char *tc_ifunc_mailbox_transport(tc_ifunc_mailbox_h mbox, int rank)
{
    return ((rank >= 0) && (rank < mbox->size)) ? mbox->peers[rank].transport : "none";
}

const char *tc_ifunc_mailbox_write_lane(tc_ifunc_mailbox_h mbox, int rank)
{
    return ((rank >= 0) && (rank < mbox->size)) ? mbox->peers[rank].lane_name : "none";
}

tc_ifunc_security_t tc_ifunc_mailbox_security(tc_ifunc_mailbox_h mbox)
{
    return mbox->rx.security;
}

tc_ifunc_placement_t tc_ifunc_mailbox_placement(tc_ifunc_mailbox_h mbox)
{
    return mbox->rx.placement;
}

tc_ifunc_signal_t tc_ifunc_mailbox_signal(tc_ifunc_mailbox_h mbox)
{
    return mbox->signal;
}

void tc_ifunc_mailbox_stats(tc_ifunc_mailbox_h mbox, tc_ifunc_stats_t *stats)
{
    *stats = mbox->stats;
}

void tc_ifunc_stats_print(const tc_ifunc_stats_t *s, FILE *stream, const char *prefix)
{
    static const char *kinds[] = {"local", "injected", "cached"};
    unsigned i;

    fprintf(stream, "%sframes run: local %" PRIu64 ", injected %" PRIu64 ", cached %"
            PRIu64 " (%" PRIu64 " bytes); rejected %" PRIu64 "\n", prefix,
            s->frames[0], s->frames[1], s->frames[2], s->bytes, s->rejects_total);
    for (i = 1; i < TC_IFUNC_REJECT_LAST; ++i) {
        if (s->rejects[i] != 0) {
            fprintf(stream, "%s  rejected %s: %" PRIu64 "\n", prefix,
                    tc_ifunc_reject_name(i), s->rejects[i]);
        }
    }
    for (i = 0; i < TC_IFUNC_FRAME_KIND_LAST; ++i) {
        if (s->sent[i] != 0) {
            fprintf(stream, "%sframes sent %s: %" PRIu64 "\n", prefix, kinds[i],
                    s->sent[i]);
        }
    }
    fprintf(stream, "%scode cache: %" PRIu64 " hits, %" PRIu64 " installs, %" PRIu64
            " evictions; %" PRIu64
            " remote links; credits: %" PRIu64 " updates, %" PRIu64 " stalls, %.6f s "
            "waiting; trailer wait %.6f s; stale signals %" PRIu64 "\n", prefix,
            s->cache_hits, s->cache_installs, s->cache_evictions, s->remote_links, s->credit_updates,
            s->credit_stalls, s->credit_wait_s, s->pending_wait_s, s->stale_signals);
}
