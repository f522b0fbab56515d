/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Mailboxes: creation (what every rank publishes), barrier, flush and
 * teardown. Rings and credit lines are made per peer on first contact
 * (peer_rings.c); the credits are in credits.c, the poll in poll.c.
 *
 * At creation each rank publishes, by one tc_bootstrap_allgatherv, its
 * control tag, its ring geometry and (without the caller's endpoints) its
 * worker address: O(job size) bytes per rank, nothing pinned, no endpoint.
 * A sender's ring at rank r is one ucp_mem_map region at r
 * (depth * slot_size bytes, read+write+execute with
 * UCX_TC_IFUNC_PLACEMENT=inplace), and r's credits for it go into a line
 * mapped at the sender; each has its own rkey, given to the one peer that
 * writes it, and the worker's write lane (<twochains/lane.h>) admits that
 * peer alone. Frames and credits travel by the write lane: puts where UCP
 * has an RMA lane to the peer, its active messages where UCP would emulate
 * the put. The lane's handler stores on this thread, inside the engine's
 * worker progress, never during a poll.
 *
 * Threads: everything runs on the thread that drives the engine.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/mailbox/mailbox_int.h"
#include "ifunc/code/code_cache.h"
#include "ifunc/config/ifunc_config.h"
#include "ifunc/portable/portable.h"
#include "ifunc/wire/frame.h"

#include <twochains/lane.h>
#include <base/debug.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a rank publishes at creation, followed by its worker address */
typedef struct tc_ifunc_blob {
    uint64_t tag;
    uint32_t slot_size;
    uint32_t depth;
    uint32_t signal;
    uint32_t addr_len;
    uint32_t arch;       /* tc_ifunc_arch_t: which Portable modules we run */
    uint32_t reserved;
} tc_ifunc_blob_t;

static unsigned tc_ifunc_mailbox_poller(void *arg)
{
    return tc_ifunc_poll((tc_ifunc_mailbox_h)arg, 0);
}

/* With TC_IFUNC_MAILBOX_FLAG_NO_POLLER the caller reads the rings, but
 * requests for rings are still served as the engine progresses: a peer's
 * first frame must not wait for our first tc_ifunc_poll() */
static unsigned tc_ifunc_mailbox_control_poller(void *arg)
{
    tc_ifunc_mailbox_h mbox = arg;

    if ((mbox->ctrl_head == NULL) || mbox->in_poll) {
        return 0;
    }
    tc_ifunc_ctrl_drain(mbox);
    return 1;
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
    mbox->rx.portable_wait   = 1;
    mbox->rx.placement       = TC_IFUNC_PARAM(PLACEMENT, placement, config->placement);
    mbox->signal             = TC_IFUNC_PARAM(SIGNAL, signal, config->signal);
    mbox->rx.target_args     = TC_IFUNC_PARAM(TARGET_ARGS, target_args, NULL);
    mbox->rx.target_size     = TC_IFUNC_PARAM(TARGET_SIZE, target_size, 0);
    mbox->flags              = TC_IFUNC_PARAM(FLAGS, flags, 0);
    mbox->rx.trailer_timeout = TC_IFUNC_PARAM(TRAILER_TIMEOUT, trailer_timeout,
                                              config->trailer_timeout);
#undef TC_IFUNC_PARAM
    mbox->poll_batch   = config->poll_batch ? config->poll_batch : 1;
    mbox->idle_reads   = config->ring_idle ? config->ring_idle : 1;
    mbox->credit_batch = (mbox->depth >= 4) ? mbox->depth / 4 : 1;
}

/* Publish ours, keep everyone's: tag, geometry, worker address */
static ucs_status_t tc_ifunc_mailbox_publish(tc_ifunc_mailbox_h mbox)
{
    ucp_address_t *address = NULL;
    size_t address_len     = 0, blob_len, off;
    tc_ifunc_blob_t *blob = NULL, remote;
    size_t *lens;
    ucs_status_t status;
    uint8_t *p;
    int r;

    if (mbox->caller_eps == NULL) {
        status = ucp_worker_get_address(mbox->worker, &address, &address_len);
        if (status != UCS_OK) {
            ucs_error("ifunc mailbox: ucp_worker_get_address failed: %s",
                      ucs_status_string(status));
            return status;
        }
    }
    blob_len = sizeof(*blob) + address_len;
    blob     = calloc(1, blob_len);
    lens     = calloc(mbox->size, sizeof(*lens));
    mbox->infos = calloc(mbox->size, sizeof(*mbox->infos));
    if ((blob == NULL) || (lens == NULL) || (mbox->infos == NULL)) {
        status = UCS_ERR_NO_MEMORY;
        goto out;
    }
    blob->tag       = mbox->tag;
    blob->slot_size = mbox->slot_size;
    blob->depth     = mbox->depth;
    blob->signal    = mbox->signal;
    blob->addr_len  = address_len;
    blob->arch      = tc_portable_host_arch();
    if (address_len != 0) {
        memcpy(blob + 1, address, address_len);
    }

    /* nothing is in flight yet: the blocking collective is safe here */
    status = tc_bootstrap_allgatherv(mbox->boot, blob, blob_len, &mbox->infos_blob, lens);
    if (status != UCS_OK) {
        goto out;
    }
    mbox->min_slot = UINT32_MAX;
    for (r = 0, off = 0; r < mbox->size; off += lens[r], ++r) {
        p = (uint8_t*)mbox->infos_blob + off;
        if (lens[r] < sizeof(remote)) {
            status = UCS_ERR_INVALID_PARAM;
            goto out;
        }
        memcpy(&remote, p, sizeof(remote));
        if ((lens[r] != sizeof(remote) + remote.addr_len) ||
            ((mbox->caller_eps == NULL) && (remote.addr_len == 0)) ||
            (remote.slot_size < TC_FRAME_MIN_SIZE) || (remote.depth == 0) ||
            (remote.signal >= TC_IFUNC_SIGNAL_LAST) || (remote.arch >= TC_IFUNC_ARCH_LAST)) {
            ucs_error("ifunc mailbox: rank %d sent an inconsistent descriptor", r);
            status = UCS_ERR_INVALID_PARAM;
            goto out;
        }
        mbox->infos[r].tag       = remote.tag;
        mbox->infos[r].slot_size = remote.slot_size;
        mbox->infos[r].depth     = remote.depth;
        mbox->infos[r].signal    = remote.signal;
        mbox->infos[r].addr_len  = remote.addr_len;
        mbox->infos[r].arch      = remote.arch;
        mbox->infos[r].address   = p + sizeof(remote);
        if (remote.slot_size < mbox->min_slot) {
            mbox->min_slot = remote.slot_size;
        }
    }
    status = UCS_OK;

out:
    free(lens);
    free(blob);
    if (address != NULL) {
        ucp_worker_release_address(mbox->worker, address);
    }
    return status;
}

static void tc_ifunc_mailbox_disconnect(tc_ifunc_mailbox_h mbox, int collective)
{
    ucp_request_param_t param;
    tc_ifunc_peer_t *peer;
    int r;

    for (r = 0; r < mbox->size; ++r) {
        peer = mbox->peers[r];
        if ((peer != NULL) && (peer->rx != NULL) && (peer->rx->ring.credit_req != NULL)) {
            tc_ifunc_request_wait(mbox->engine, peer->rx->ring.credit_req, 5.0);
            peer->rx->ring.credit_req = NULL;
        }
    }
    for (r = 0; r < mbox->size; ++r) {
        peer = mbox->peers[r];
        if (peer != NULL) {
            tc_write_lane_unbind_sender(mbox->lane, (uint32_t)r, peer->ep);
        }
        if ((peer == NULL) || !peer->own_ep) {
            continue;
        }
        /* flush mode: FORCE needs UCP_ERR_HANDLING_MODE_PEER; nothing is in
         * flight after the flush and barrier of destroy */
        param.op_attr_mask = 0;
        tc_ifunc_request_wait(mbox->engine, ucp_ep_close_nbx(peer->ep, &param), 5.0);
        peer->ep     = NULL;
        peer->own_ep = 0;
    }
    /* a flushing close needs its peer's progress: nobody leaves before all
     * closes are done */
    if (collective && (mbox->caller_eps == NULL)) {
        tc_ifunc_mailbox_barrier(mbox);
    }
}

static void tc_ifunc_mailbox_free(tc_ifunc_mailbox_h mbox)
{
    tc_ifunc_peers_release(mbox);
    tc_write_lane_destroy(mbox->lane);
    tc_code_cache_cleanup(&mbox->rx.cache);
    free(mbox->peers);
    free(mbox->infos);
    free(mbox->infos_blob);
    free((void*)mbox->caller_eps);
    free(mbox);
}

ucs_status_t tc_ifunc_mailbox_create(ucp_context_h context,
                                     tc_progress_engine_h engine,
                                     tc_bootstrap_h boot,
                                     const tc_ifunc_mailbox_params_t *params,
                                     tc_ifunc_mailbox_h *mbox_p)
{
    tc_ifunc_mailbox_h mbox;
    ucp_ep_h *eps;
    ucs_status_t status;

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
    mbox->ctrl_tail = &mbox->ctrl_head;
    tc_ifunc_mailbox_params_read(mbox, params);
    tc_code_cache_init(&mbox->rx.cache, tc_ifunc_config_get()->cache_entries);

    if ((mbox->slot_size < TC_FRAME_MIN_SIZE) || (mbox->slot_size % TC_FRAME_ALIGN) ||
        (mbox->depth == 0) || (mbox->depth > (1u << 20)) ||
        ((uint64_t)mbox->slot_size * mbox->depth > (1ull << 34)) ||
        (mbox->rx.security >= TC_IFUNC_SECURITY_LAST) ||
        (mbox->rx.placement >= TC_IFUNC_PLACEMENT_LAST) ||
        (mbox->signal >= TC_IFUNC_SIGNAL_LAST)) {
        ucs_error("ifunc mailbox: invalid parameters (slot %u bytes, depth %u)",
                  mbox->slot_size, mbox->depth);
        status = UCS_ERR_INVALID_PARAM;
        goto err_free;
    }
    status = tc_ifunc_policy_check(mbox->rx.security, mbox->rx.placement);
    if (status != UCS_OK) {
        goto err_free;
    }

    mbox->rx.rank  = mbox->rank;
    mbox->rx.stats = &mbox->stats;
    mbox->peers    = calloc(mbox->size, sizeof(*mbox->peers));
    if (mbox->peers == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto err_free;
    }
    if ((params != NULL) && (params->field_mask & TC_IFUNC_MAILBOX_PARAM_FIELD_EPS)) {
        /* the caller keeps its endpoints; we keep the table */
        eps = malloc(mbox->size * sizeof(*eps));
        if (eps == NULL) {
            status = UCS_ERR_NO_MEMORY;
            goto err_free;
        }
        memcpy(eps, params->eps, mbox->size * sizeof(*eps));
        mbox->caller_eps = eps;
    }
    status = tc_write_lane_create(mbox->worker, &mbox->lane);
    if (status != UCS_OK) {
        goto err_free;
    }
    /* before we publish our tag: a request may come right after */
    status = tc_ifunc_ctrl_attach(mbox);
    if (status != UCS_OK) {
        goto err_free;
    }
    status = tc_ifunc_mailbox_publish(mbox);
    if (status != UCS_OK) {
        goto err_detach;
    }

    status = tc_progress_poller_add(engine,
                                    (mbox->flags & TC_IFUNC_MAILBOX_FLAG_NO_POLLER) ?
                                    tc_ifunc_mailbox_control_poller :
                                    tc_ifunc_mailbox_poller, mbox, &mbox->poller_id);
    if (status != UCS_OK) {
        goto err_detach;
    }

    ucs_debug("ifunc mailbox rank %d/%d: %u slots of %u bytes per sender that talks to "
              "us, %s, %s, %s signal", mbox->rank, mbox->size, mbox->depth,
              mbox->slot_size, tc_ifunc_security_names[mbox->rx.security],
              tc_ifunc_placement_names[mbox->rx.placement],
              tc_ifunc_signal_names[mbox->signal]);
    *mbox_p = mbox;
    return UCS_OK;

err_detach:
    tc_ifunc_ctrl_detach(mbox);
err_free:
    tc_ifunc_mailbox_free(mbox);
    return status;
}

void tc_ifunc_mailbox_destroy(tc_ifunc_mailbox_h mbox)
{
    tc_ifunc_mailbox_flush(mbox, 10.0);
    tc_ifunc_mailbox_barrier(mbox);     /* nobody puts into us any more */
    if (mbox->poller_id >= 0) {
        tc_progress_poller_remove(mbox->engine, mbox->poller_id);
    }
    tc_ifunc_ctrl_detach(mbox);         /* late control messages are dropped */
    tc_ifunc_mailbox_disconnect(mbox, 1);
    tc_ifunc_mailbox_free(mbox);
}

ucs_status_t tc_ifunc_mailbox_connect(tc_ifunc_mailbox_h mbox, int rank)
{
    tc_ifunc_peer_t *peer;

    if ((rank < 0) || (rank >= mbox->size)) {
        return UCS_ERR_INVALID_PARAM;
    }
    peer = tc_ifunc_peer_get(mbox, rank);
    return (peer == NULL) ? UCS_ERR_UNREACHABLE : tc_ifunc_ring_request(mbox, peer);
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

void tc_ifunc_mailbox_set_target_region(tc_ifunc_mailbox_h mbox, void *target_args,
                                        size_t target_size)
{
    mbox->rx.target_args = target_args;
    mbox->rx.target_size = target_size;
}

void tc_ifunc_mailbox_set_target_args(tc_ifunc_mailbox_h mbox, void *target_args)
{
    mbox->rx.target_args = target_args;
}

const char *tc_ifunc_mailbox_transport(tc_ifunc_mailbox_h mbox, int rank)
{
    tc_ifunc_peer_t *peer = ((rank >= 0) && (rank < mbox->size)) ?
                            tc_ifunc_peer_get(mbox, rank) : NULL;

    return (peer != NULL) ? peer->transport : "none";
}

const char *tc_ifunc_mailbox_write_lane(tc_ifunc_mailbox_h mbox, int rank)
{
    tc_ifunc_peer_t *peer = ((rank >= 0) && (rank < mbox->size)) ?
                            tc_ifunc_peer_get(mbox, rank) : NULL;

    return (peer != NULL) ? peer->lane_name : "none";
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
    static const char *kinds[] = {"local", "injected", "cached", "portable"};
    unsigned i;

    fprintf(stream, "%sframes run: local %" PRIu64 ", injected %" PRIu64 ", cached %"
            PRIu64 " (%" PRIu64 " bytes); rejected %" PRIu64 "\n", prefix,
            s->frames[0], s->frames[1], s->frames[2], s->bytes, s->rejects_total);
    if ((s->frames[TC_IFUNC_FRAME_PORTABLE] != 0) || (s->portable_compiles != 0)) {
        fprintf(stream, "%sframes run: portable %" PRIu64 "; %" PRIu64 " modules "
                "compiled in %.6f s (off the poll), %" PRIu64 " polls found a compile "
                "running, %" PRIu64 " modules evicted\n", prefix,
                s->frames[TC_IFUNC_FRAME_PORTABLE], s->portable_compiles,
                s->portable_compile_s, s->portable_waits, s->portable_evictions);
    }
    if (s->confine_runs != 0) {
        fprintf(stream, "%sconfined runs: %" PRIu64 "; trapped: memory %" PRIu64
                ", fuel %" PRIu64 ", stack %" PRIu64 ", unreachable %" PRIu64 "\n", prefix,
                s->confine_runs, s->confine_traps[TC_IFUNC_TRAP_MEMORY],
                s->confine_traps[TC_IFUNC_TRAP_FUEL], s->confine_traps[TC_IFUNC_TRAP_STACK],
                s->confine_traps[TC_IFUNC_TRAP_UNREACHABLE]);
    }
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
    fprintf(stream, "%srings: %" PRIu64 " granted here, %" PRIu64 " asked of peers; %"
            PRIu64 " slot reads; %" PRIu64 " sleeps, %" PRIu64 " wakes, %" PRIu64
            " doorbells rung; control messages rejected %" PRIu64 "; credit faults %"
            PRIu64 "\n", prefix,
            s->rings_granted, s->rings_requested, s->ring_reads, s->ring_sleeps,
            s->ring_wakes, s->doorbells, s->control_rejects, s->credit_faults);
}
