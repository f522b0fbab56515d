/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The write lane: one way to say "store these bytes at this address of that
 * peer's registered region", carried by ucp_put_nbx where UCP has an RMA
 * lane and by one eager active message where it would only emulate the put.
 *
 * Invariants:
 * - The AM handler stores only into the region the write's key names, one
 *   allowed with tc_write_lane_allow(), wholly inside it, and only for a
 *   sender the region admits. Anything else is counted by reason, logged
 *   once per reason, and dropped; the next message is served.
 * - The sender a write names is believed only if the message came in on
 *   an endpoint bound to that sender (tc_write_lane_bind_sender): UCP's
 *   reply endpoint of the message, which is the receiver's endpoint of the
 *   matched pair the sender wrote on. A write that names a sender whose
 *   endpoints it did not come in on is "forged-sender". So a region that
 *   admits one sender (a ring, an SST row, an SMC window) is written over
 *   the AM lane by that sender's process alone, as a region whose rkey
 *   only that sender holds is over an RMA lane that checks rkeys.
 * - A region is never written after tc_write_lane_forbid() returns: the
 *   handler stores under the registry lock that forbid takes. Keys are
 *   never reused, so a write for a region that has ended is known as late
 *   (counted, debug level: expected at teardown) and never lands in a
 *   region allowed later at the same address.
 * - On one endpoint the AM lane delivers in send order (eager, one lane),
 *   and each store completes before the handler returns, so a counter sent
 *   after its data is stored after it, as ucp_worker_fence orders puts.
 *
 * - One lane per worker, shared by its users (a mailbox and a group on one
 *   worker): the active-message id has one handler per worker.
 *
 * Threads: the handler runs inside ucp_worker_progress of the lane's worker;
 * allow, set_senders and forbid may run on any thread.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include <twochains/config.h>
#include <twochains/lane.h>

#include <ucs/debug/log_def.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tc_write_lane_mode_names[] = {
    [TC_WRITE_LANE_AUTO] = "auto",
    [TC_WRITE_LANE_RMA]  = "rma",
    [TC_WRITE_LANE_AM]   = "am",
    [TC_WRITE_LANE_LAST] = NULL
};

typedef struct tc_write_region {
    uint64_t  key;
    uintptr_t base;
    size_t    length;
    uint64_t  *senders;      /* bit i of word i / 64: sender i; NULL: any */
    size_t    num_senders;   /* bits in senders */
} tc_write_region_t;

/* The endpoints a sender id's writes may come in on: one per user of the
 * lane that talks to it (the group's node, a mailbox), and for a moment
 * the one being replaced. */
#define TC_WRITE_LANE_EPS_PER_SENDER 4

typedef struct tc_write_sender_eps {
    ucp_ep_h eps[TC_WRITE_LANE_EPS_PER_SENDER];
} tc_write_sender_eps_t;

typedef enum {
    TC_WRITE_REJECT_MALFORMED,
    TC_WRITE_REJECT_UNKNOWN,
    TC_WRITE_REJECT_RANGE,
    TC_WRITE_REJECT_SENDER,
    TC_WRITE_REJECT_FORGED,
    TC_WRITE_REJECT_LAST
} tc_write_reject_t;

static const char *tc_write_reject_names[] = {
    [TC_WRITE_REJECT_MALFORMED] = "malformed",
    [TC_WRITE_REJECT_UNKNOWN]   = "unknown-region",
    [TC_WRITE_REJECT_RANGE]     = "out-of-range",
    [TC_WRITE_REJECT_SENDER]    = "non-member",
    [TC_WRITE_REJECT_FORGED]    = "forged-sender",
};

struct tc_write_lane {
    struct tc_write_lane *next;       /* in tc_write_lanes */
    unsigned             refs;
    ucp_worker_h         worker;
    tc_write_lane_mode_t mode;
    int                  have_am;     /* the handler is registered */
    pthread_mutex_t      lock;        /* regions, counts */
    tc_write_region_t    *regions;
    size_t               num_regions;
    size_t               max_regions;
    uint64_t             last_key;    /* keys 1..last_key were given out */
    tc_write_sender_eps_t *sender_eps; /* by sender id: where its writes come in */
    size_t               num_sender_eps;
    uint64_t             stored;
    uint64_t             late;
    uint64_t             bytes_stored;
    uint64_t             rejected[TC_WRITE_REJECT_LAST];
};

/* the lanes of this process, one per worker */
static pthread_mutex_t tc_write_lanes_lock = PTHREAD_MUTEX_INITIALIZER;
static tc_write_lane_h tc_write_lanes;

static void tc_write_lane_reject(tc_write_lane_h lane, tc_write_reject_t why,
                                 const tc_write_header_t *hdr, size_t length)
{
    if (lane->rejected[why]++ == 0) {
        ucs_error("write lane: rejected a %s write of %zu bytes at %#lx from sender %u "
                  "(counted; logged once)", tc_write_reject_names[why], length,
                  (hdr != NULL) ? (unsigned long)hdr->address : 0ul,
                  (hdr != NULL) ? hdr->sender : 0u);
    }
}

static int tc_write_region_admits(const tc_write_region_t *region, uint32_t sender)
{
    return (region->senders == NULL) ||
           ((sender < region->num_senders) &&
            (region->senders[sender / 64] & (1ull << (sender % 64))));
}

/* The message came in on an endpoint bound to the sender it names. */
static int tc_write_lane_sender_genuine(const tc_write_lane_h lane, uint32_t sender,
                                        const ucp_am_recv_param_t *param)
{
    unsigned i;

    if (!(param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) || (param->reply_ep == NULL) ||
        (sender >= lane->num_sender_eps)) {
        return 0;
    }
    for (i = 0; i < TC_WRITE_LANE_EPS_PER_SENDER; ++i) {
        if (lane->sender_eps[sender].eps[i] == param->reply_ep) {
            return 1;
        }
    }
    return 0;
}

/* A private copy of a caller's sender set (NULL stays NULL: any sender). */
static ucs_status_t tc_write_senders_dup(const uint64_t *senders, size_t num_senders,
                                         uint64_t **copy_p)
{
    const size_t words = (num_senders + 63) / 64;

    *copy_p = NULL;
    if (senders == NULL) {
        return UCS_OK;
    }
    *copy_p = calloc((words > 0) ? words : 1, sizeof(uint64_t));
    if (*copy_p == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    memcpy(*copy_p, senders, words * sizeof(uint64_t));
    if (num_senders % 64) {   /* bits past num_senders admit no one */
        (*copy_p)[words - 1] &= (1ull << (num_senders % 64)) - 1;
    }
    return UCS_OK;
}

static ucs_status_t tc_write_lane_on_am(void *arg, const void *header, size_t header_length,
                                        void *data, size_t length,
                                        const ucp_am_recv_param_t *param)
{
    tc_write_lane_h lane = arg;
    tc_write_header_t hdr;
    const tc_write_region_t *region = NULL;
    size_t i;

    pthread_mutex_lock(&lane->lock);
    if ((header_length != sizeof(hdr)) || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
        tc_write_lane_reject(lane, TC_WRITE_REJECT_MALFORMED, NULL, length);
        goto out;
    }
    memcpy(&hdr, header, sizeof(hdr));
    if (hdr.magic != TC_WRITE_HEADER_MAGIC) {
        tc_write_lane_reject(lane, TC_WRITE_REJECT_MALFORMED, &hdr, length);
        goto out;
    }
    for (i = 0; i < lane->num_regions; ++i) {
        if (lane->regions[i].key == hdr.region) {
            region = &lane->regions[i];
            break;
        }
    }
    if ((region == NULL) && (hdr.region != 0) && (hdr.region <= lane->last_key)) {
        if (lane->late++ == 0) {
            ucs_debug("write lane: dropped a late write of %zu bytes for ended region %lu "
                      "from sender %u (counted; logged once)", length,
                      (unsigned long)hdr.region, hdr.sender);
        }
    } else if (region == NULL) {
        tc_write_lane_reject(lane, TC_WRITE_REJECT_UNKNOWN, &hdr, length);
    } else if ((hdr.address < region->base) || (hdr.address - region->base >= region->length) ||
               (length > region->length - (hdr.address - region->base))) {
        tc_write_lane_reject(lane, TC_WRITE_REJECT_RANGE, &hdr, length);
    } else if (!tc_write_region_admits(region, hdr.sender)) {
        tc_write_lane_reject(lane, TC_WRITE_REJECT_SENDER, &hdr, length);
    } else if (!tc_write_lane_sender_genuine(lane, hdr.sender, param)) {
        tc_write_lane_reject(lane, TC_WRITE_REJECT_FORGED, &hdr, length);
    } else {
        memcpy((void*)(uintptr_t)hdr.address, data, length);
        ++lane->stored;
        lane->bytes_stored += length;
    }
out:
    pthread_mutex_unlock(&lane->lock);
    return UCS_OK;
}

static ucs_status_t tc_write_lane_set_handler(tc_write_lane_h lane, ucp_am_recv_callback_t cb)
{
    ucp_am_handler_param_t am = {
        .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                      UCP_AM_HANDLER_PARAM_FIELD_ARG,
        .id         = TC_WRITE_LANE_AM_ID,
        .cb         = cb,
        .arg        = lane,
    };
    return ucp_worker_set_am_recv_handler(lane->worker, &am);
}

ucs_status_t tc_write_lane_create(ucp_worker_h worker, tc_write_lane_h *lane_p)
{
    tc_config_t config;
    tc_write_lane_h lane;
    ucs_status_t status;

    pthread_mutex_lock(&tc_write_lanes_lock);
    for (lane = tc_write_lanes; lane != NULL; lane = lane->next) {
        if (lane->worker == worker) {
            ++lane->refs;
            *lane_p = lane;
            pthread_mutex_unlock(&tc_write_lanes_lock);
            return UCS_OK;
        }
    }
    status = tc_config_read(&config);
    if (status != UCS_OK) {
        pthread_mutex_unlock(&tc_write_lanes_lock);
        return status;
    }
    lane = calloc(1, sizeof(*lane));
    if (lane == NULL) {
        tc_config_release(&config);
        pthread_mutex_unlock(&tc_write_lanes_lock);
        return UCS_ERR_NO_MEMORY;
    }
    lane->refs   = 1;
    lane->worker = worker;
    lane->mode   = config.write_lane;
    tc_config_release(&config);
    pthread_mutex_init(&lane->lock, NULL);

    status = tc_write_lane_set_handler(lane, tc_write_lane_on_am);
    if (status == UCS_OK) {
        lane->have_am = 1;
    } else if (lane->mode == TC_WRITE_LANE_AM) {
        ucs_error("UCX_TC_WRITE_LANE=am needs UCP_FEATURE_AM in the context: %s",
                  ucs_status_string(status));
        pthread_mutex_destroy(&lane->lock);
        free(lane);
        pthread_mutex_unlock(&tc_write_lanes_lock);
        return UCS_ERR_UNSUPPORTED;
    } else {
        ucs_debug("write lane: no active messages on worker %p (%s): puts only",
                  (void*)worker, ucs_status_string(status));
    }
    lane->next     = tc_write_lanes;
    tc_write_lanes = lane;
    pthread_mutex_unlock(&tc_write_lanes_lock);
    *lane_p = lane;
    return UCS_OK;
}

void tc_write_lane_destroy(tc_write_lane_h lane)
{
    tc_write_lane_h *link;
    size_t i;

    if (lane == NULL) {
        return;
    }
    pthread_mutex_lock(&tc_write_lanes_lock);
    if (--lane->refs > 0) {
        pthread_mutex_unlock(&tc_write_lanes_lock);
        return;
    }
    for (link = &tc_write_lanes; *link != NULL; link = &(*link)->next) {
        if (*link == lane) {
            *link = lane->next;
            break;
        }
    }
    pthread_mutex_unlock(&tc_write_lanes_lock);
    if (lane->have_am) {
        (void)tc_write_lane_set_handler(lane, NULL);
    }
    pthread_mutex_destroy(&lane->lock);
    for (i = 0; i < lane->num_regions; ++i) {
        free(lane->regions[i].senders);
    }
    free(lane->regions);
    free(lane->sender_eps);
    free(lane);
}

tc_write_lane_mode_t tc_write_lane_mode(tc_write_lane_h lane)
{
    return lane->mode;
}

tc_write_lane_mode_t tc_write_lane_resolve(tc_write_lane_h lane, ucp_ep_h ep)
{
    char name[64];

    if (!lane->have_am) {
        return TC_WRITE_LANE_RMA;
    }
    if (lane->mode != TC_WRITE_LANE_AUTO) {
        return lane->mode;
    }
    (void)tc_put_lane_describe(ep, name, sizeof(name));
    return (strstr(name, "(put emulated over am)") != NULL) ? TC_WRITE_LANE_AM :
                                                              TC_WRITE_LANE_RMA;
}

void tc_write_lane_describe(tc_write_lane_h lane, ucp_ep_h ep, char *out, size_t max)
{
    char name[64];

    (void)tc_put_lane_describe(ep, name, sizeof(name));
    snprintf(out, max, "%s %s", tc_write_lane_mode_names[tc_write_lane_resolve(lane, ep)],
             name);
}

ucs_status_t tc_write_lane_allow(tc_write_lane_h lane, void *base, size_t len,
                                 const uint64_t *senders, size_t num_senders,
                                 uint64_t *key_p)
{
    tc_write_region_t *regions;
    uint64_t *admitted;
    ucs_status_t status;
    uintptr_t start     = (uintptr_t)base;
    size_t i;

    status = tc_write_senders_dup(senders, num_senders, &admitted);
    if (status != UCS_OK) {
        return status;
    }
    pthread_mutex_lock(&lane->lock);
    for (i = 0; i < lane->num_regions; ++i) {
        if ((start < lane->regions[i].base + lane->regions[i].length) &&
            (lane->regions[i].base < start + len)) {
            ucs_error("write lane: region %p+%zu overlaps %#lx+%zu", base, len,
                      (unsigned long)lane->regions[i].base, lane->regions[i].length);
            status = UCS_ERR_ALREADY_EXISTS;
            goto out;
        }
    }
    if (lane->num_regions == lane->max_regions) {
        regions = realloc(lane->regions,
                          sizeof(*regions) * (lane->max_regions ? 2 * lane->max_regions : 8));
        if (regions == NULL) {
            status = UCS_ERR_NO_MEMORY;
            goto out;
        }
        lane->regions     = regions;
        lane->max_regions = lane->max_regions ? 2 * lane->max_regions : 8;
    }
    *key_p = ++lane->last_key;
    lane->regions[lane->num_regions++] = (tc_write_region_t){*key_p, start, len, admitted,
                                                             num_senders};
    admitted = NULL;   /* the region owns it */
out:
    pthread_mutex_unlock(&lane->lock);
    free(admitted);
    return status;
}

ucs_status_t tc_write_lane_set_senders(tc_write_lane_h lane, const void *base,
                                       const uint64_t *senders, size_t num_senders)
{
    ucs_status_t status = UCS_ERR_NO_ELEM;
    uint64_t *admitted;
    size_t i;

    if (tc_write_senders_dup(senders, num_senders, &admitted) != UCS_OK) {
        return UCS_ERR_NO_MEMORY;
    }
    pthread_mutex_lock(&lane->lock);
    for (i = 0; i < lane->num_regions; ++i) {
        if (lane->regions[i].base == (uintptr_t)base) {
            free(lane->regions[i].senders);
            lane->regions[i].senders     = admitted;
            lane->regions[i].num_senders = num_senders;
            admitted                     = NULL;
            status                       = UCS_OK;
            break;
        }
    }
    pthread_mutex_unlock(&lane->lock);
    free(admitted);
    return status;
}

ucs_status_t tc_write_lane_bind_sender(tc_write_lane_h lane, uint32_t sender, ucp_ep_h ep)
{
    tc_write_sender_eps_t *grown;
    ucs_status_t status = UCS_ERR_EXCEEDS_LIMIT;
    size_t count;
    unsigned i;

    pthread_mutex_lock(&lane->lock);
    if (sender >= lane->num_sender_eps) {
        count = (sender + 1 > 2 * lane->num_sender_eps) ? sender + 1 : 2 * lane->num_sender_eps;
        grown = realloc(lane->sender_eps, count * sizeof(*grown));
        if (grown == NULL) {
            status = UCS_ERR_NO_MEMORY;
            goto out;
        }
        memset(grown + lane->num_sender_eps, 0,
               (count - lane->num_sender_eps) * sizeof(*grown));
        lane->sender_eps     = grown;
        lane->num_sender_eps = count;
    }
    for (i = 0; i < TC_WRITE_LANE_EPS_PER_SENDER; ++i) {
        if (lane->sender_eps[sender].eps[i] == ep) {
            status = UCS_OK;   /* bound already */
            goto out;
        }
    }
    for (i = 0; i < TC_WRITE_LANE_EPS_PER_SENDER; ++i) {
        if (lane->sender_eps[sender].eps[i] == NULL) {
            lane->sender_eps[sender].eps[i] = ep;
            status = UCS_OK;
            goto out;
        }
    }
    ucs_error("write lane: sender %u has %d endpoints bound already", sender,
              TC_WRITE_LANE_EPS_PER_SENDER);
out:
    pthread_mutex_unlock(&lane->lock);
    return status;
}

int tc_write_lane_is_sender(tc_write_lane_h lane, uint32_t sender, ucp_ep_h ep)
{
    ucp_am_recv_param_t param;
    int genuine;

    param.recv_attr = UCP_AM_RECV_ATTR_FIELD_REPLY_EP;
    param.reply_ep  = ep;
    pthread_mutex_lock(&lane->lock);
    genuine = tc_write_lane_sender_genuine(lane, sender, &param);
    pthread_mutex_unlock(&lane->lock);
    return genuine;
}

void tc_write_lane_unbind_sender(tc_write_lane_h lane, uint32_t sender, ucp_ep_h ep)
{
    unsigned i;

    pthread_mutex_lock(&lane->lock);
    for (i = 0; (sender < lane->num_sender_eps) && (i < TC_WRITE_LANE_EPS_PER_SENDER); ++i) {
        if (lane->sender_eps[sender].eps[i] == ep) {
            lane->sender_eps[sender].eps[i] = NULL;
        }
    }
    pthread_mutex_unlock(&lane->lock);
}

void tc_write_lane_forbid(tc_write_lane_h lane, const void *base)
{
    size_t i;

    pthread_mutex_lock(&lane->lock);
    for (i = 0; i < lane->num_regions; ++i) {
        if (lane->regions[i].base == (uintptr_t)base) {
            free(lane->regions[i].senders);
            lane->regions[i] = lane->regions[--lane->num_regions];
            break;
        }
    }
    pthread_mutex_unlock(&lane->lock);
}

ucs_status_ptr_t tc_write_lane_write(tc_write_lane_h lane, tc_write_lane_mode_t lane_kind,
                                     ucp_ep_h ep, uint32_t sender, const void *src,
                                     size_t len, uint64_t raddr, ucp_rkey_h rkey,
                                     uint64_t region_key, const ucp_request_param_t *param,
                                     tc_write_header_t *header)
{
    ucp_request_param_t am;

    if ((lane_kind != TC_WRITE_LANE_AM) || !lane->have_am) {
        return ucp_put_nbx(ep, src, len, raddr, rkey, param);
    }
    am = *param;
    if (!(am.op_attr_mask & UCP_OP_ATTR_FIELD_FLAGS)) {
        am.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
        am.flags         = 0;
    }
    /* eager: the handler stores the bytes as they arrive, in send order;
     * reply: the receiver learns the endpoint it came in on, which is how
     * it knows the sender (the header's sender is only a claim) */
    am.flags        |= UCP_AM_SEND_FLAG_EAGER | UCP_AM_SEND_FLAG_REPLY;
    header->address  = raddr;
    header->region   = region_key;
    header->sender   = sender;
    header->magic    = TC_WRITE_HEADER_MAGIC;
    return ucp_am_send_nbx(ep, TC_WRITE_LANE_AM_ID, header, sizeof(*header), src, len, &am);
}

void tc_write_lane_query(tc_write_lane_h lane, tc_write_lane_stats_t *stats)
{
    pthread_mutex_lock(&lane->lock);
    stats->stored             = lane->stored;
    stats->bytes_stored       = lane->bytes_stored;
    stats->rejected_malformed = lane->rejected[TC_WRITE_REJECT_MALFORMED];
    stats->rejected_unknown   = lane->rejected[TC_WRITE_REJECT_UNKNOWN];
    stats->rejected_range     = lane->rejected[TC_WRITE_REJECT_RANGE];
    stats->rejected_sender    = lane->rejected[TC_WRITE_REJECT_SENDER];
    stats->rejected_forged    = lane->rejected[TC_WRITE_REJECT_FORGED];
    stats->dropped_late       = lane->late;
    pthread_mutex_unlock(&lane->lock);
}
