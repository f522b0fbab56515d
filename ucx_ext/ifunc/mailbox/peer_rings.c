/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Peer rings: a sender's ring at a receiver is made on first contact, and a
 * ring whose sender went quiet sleeps until the sender rings its doorbell.
 * A mailbox of a job of any size thus pins memory, holds endpoints and
 * reads rings only for the peers that talk to it.
 *
 * Control messages (active messages of TC_IFUNC_CONTROL_AM_ID, one handler
 * per worker that queues them for the poll of the mailbox they name):
 *   REQUEST  s -> r  s mapped a credit line that r alone may write; asks r
 *                    for a ring (s's sends to r stall until the grant)
 *   GRANT    r -> s  r mapped a ring that s alone may write; its rkey
 *   SLEEP    r -> s  r consumed k frames of s and then read the ring empty
 *                    many times: may it stop reading?
 *   AGREE    s -> r  yes if s had sent exactly k frames; s then rings the
 *                    doorbell after its next frame
 *   DOORBELL s -> r  a frame went into a ring r may have let sleep
 *
 * Invariants:
 *  - A ring asks to sleep only once it has put back the credit for every
 *    frame it consumed, so a sender stalled for credits is never left
 *    waiting on a ring nobody reads.
 *  - No frame waits in a ring nobody reads. r stops reading s's ring only
 *    on an AGREE to its latest SLEEP (numbered), which named k, while it
 *    has still consumed k and no doorbell came since it asked; s
 *    agrees only when it had sent k, and rings the doorbell after every
 *    frame it sends while it believes the ring sleeps. A doorbell in any
 *    state makes the ring read again, so the order in which the doorbell,
 *    the AGREE and the frame's put arrive does not matter.
 *  - Each ring and each credit line is its own ucp_mem_map region. Its rkey
 *    goes to one peer, and the write lane admits that peer alone.
 *  - The handler copies and queues; everything else happens in the poll,
 *    in arrival order, outside any UCP callback (it maps memory, creates
 *    endpoints and sends).
 *  - A control message is input: its size, magic, type, sender rank and
 *    rkey length are checked before use, and one out of turn (a second
 *    request, a grant nobody asked for) is rejected, counted and logged once.
 *  - The addresses a REQUEST (credit line) and a GRANT (ring) carry are put
 *    targets only once they lie inside what the rkey beside them maps
 *    (tc_put_target_unpack): the whole ring of depth x slot size, the
 *    credit word. One outside is the peer's fault: rejected, counted and
 *    logged once; no ring (or no credit line) is used with it.
 *
 * Threads: the handler runs inside ucp_worker_progress of the mailbox's
 * worker, everything else on the thread that drives the mailbox's engine.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/mailbox/mailbox_int.h"

#include <twochains/am_ids.h>

#include <base/debug.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define TC_IFUNC_CONTROL_MAGIC  0x74634d42u   /* "tcMB" */
#define TC_IFUNC_RKEY_MAX       4096u

typedef enum {
    TC_IFUNC_CONTROL_REQUEST = 1,
    TC_IFUNC_CONTROL_GRANT,
    TC_IFUNC_CONTROL_SLEEP,
    TC_IFUNC_CONTROL_AGREE,
    TC_IFUNC_CONTROL_DOORBELL,
    TC_IFUNC_CONTROL_LAST
} tc_ifunc_control_type_t;

static const char *tc_ifunc_control_names[] = {
    [TC_IFUNC_CONTROL_REQUEST]  = "request",
    [TC_IFUNC_CONTROL_GRANT]    = "grant",
    [TC_IFUNC_CONTROL_SLEEP]    = "sleep",
    [TC_IFUNC_CONTROL_AGREE]    = "agree",
    [TC_IFUNC_CONTROL_DOORBELL] = "doorbell",
};

typedef struct tc_ifunc_control {
    uint32_t magic;
    uint16_t type;
    uint16_t agree;        /* AGREE: 1 yes, 0 no */
    int32_t  status;       /* GRANT: UCS_OK, or why there is no ring */
    uint32_t src_rank;
    uint32_t rkey_len;     /* bytes after the header: a packed rkey */
    uint32_t reserved;
    uint64_t dst_tag;      /* the receiving mailbox */
    uint64_t addr;         /* REQUEST: credit line; GRANT: ring */
    uint64_t key;          /* its write-lane key; SLEEP, AGREE: the request's number */
    uint64_t seq;          /* SLEEP, AGREE: consumed count; DOORBELL: sent */
} tc_ifunc_control_t;

struct tc_ifunc_ctrl_msg {
    tc_ifunc_ctrl_msg_t *next;
    tc_ifunc_control_t  hdr;
    uint8_t             rkey[];
};

/* The mailboxes of one worker, for its control handler. Never freed: the
 * handler stays registered for the worker's life, so a late message finds
 * no mailbox and is dropped rather than warned about by UCX. */
typedef struct tc_ifunc_control_worker {
    struct tc_ifunc_control_worker *next;
    ucp_worker_h                   worker;
    tc_ifunc_mailbox_h             *mboxes;
    unsigned                       count;
    unsigned                       max;
    uint64_t                       dropped;   /* for no mailbox here */
} tc_ifunc_control_worker_t;

static pthread_mutex_t tc_ifunc_control_lock = PTHREAD_MUTEX_INITIALIZER;
static tc_ifunc_control_worker_t *tc_ifunc_control_workers;
static uint64_t tc_ifunc_control_next_tag = 1;

static void tc_ifunc_control_reject(tc_ifunc_mailbox_h mbox, const char *why,
                                    const tc_ifunc_control_t *hdr)
{
    if (mbox->stats.control_rejects++ == 0) {
        ucs_error("ifunc rank %d: rejected a %s control message from rank %u: %s "
                  "(counted; logged once)", mbox->rank,
                  ((hdr->type > 0) && (hdr->type < TC_IFUNC_CONTROL_LAST)) ?
                  tc_ifunc_control_names[hdr->type] : "unknown", hdr->src_rank, why);
    }
}

static ucs_status_t tc_ifunc_control_on_am(void *arg, const void *header,
                                           size_t header_length, void *data,
                                           size_t length,
                                           const ucp_am_recv_param_t *param)
{
    tc_ifunc_control_worker_t *w = arg;
    tc_ifunc_mailbox_h mbox      = NULL;
    tc_ifunc_control_t hdr;
    tc_ifunc_ctrl_msg_t *msg;
    unsigned i;

    if ((header_length != sizeof(hdr)) || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
        __atomic_fetch_add(&w->dropped, 1, __ATOMIC_RELAXED);
        return UCS_OK;
    }
    memcpy(&hdr, header, sizeof(hdr));
    pthread_mutex_lock(&tc_ifunc_control_lock);
    for (i = 0; i < w->count; ++i) {
        if (w->mboxes[i]->tag == hdr.dst_tag) {
            mbox = w->mboxes[i];
            break;
        }
    }
    if (mbox == NULL) {
        ++w->dropped;       /* a mailbox destroyed meanwhile, or garbage */
    } else if ((hdr.magic != TC_IFUNC_CONTROL_MAGIC) || (hdr.type == 0) ||
               (hdr.type >= TC_IFUNC_CONTROL_LAST) || (hdr.rkey_len != length) ||
               (length > TC_IFUNC_RKEY_MAX) || (hdr.src_rank >= (uint32_t)mbox->size)) {
        tc_ifunc_control_reject(mbox, "malformed", &hdr);
    } else if ((msg = malloc(sizeof(*msg) + length)) == NULL) {
        tc_ifunc_control_reject(mbox, "no memory to queue it", &hdr);
    } else {
        msg->next = NULL;
        msg->hdr  = hdr;
        memcpy(msg->rkey, data, length);
        *mbox->ctrl_tail = msg;
        mbox->ctrl_tail  = &msg->next;
    }
    pthread_mutex_unlock(&tc_ifunc_control_lock);
    return UCS_OK;
}

ucs_status_t tc_ifunc_ctrl_attach(tc_ifunc_mailbox_h mbox)
{
    ucp_am_handler_param_t am;
    tc_ifunc_control_worker_t *w;
    tc_ifunc_mailbox_h *grown;
    ucs_status_t status = UCS_OK;

    pthread_mutex_lock(&tc_ifunc_control_lock);
    for (w = tc_ifunc_control_workers; w != NULL; w = w->next) {
        if (w->worker == mbox->worker) {
            break;
        }
    }
    if (w == NULL) {
        w = calloc(1, sizeof(*w));
        if (w == NULL) {
            status = UCS_ERR_NO_MEMORY;
            goto out;
        }
        w->worker                = mbox->worker;
        w->next                  = tc_ifunc_control_workers;
        tc_ifunc_control_workers = w;
    }
    if (w->count == 0) {
        /* (again) for this worker: an earlier worker at the same address
         * may have been destroyed since */
        am.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                        UCP_AM_HANDLER_PARAM_FIELD_ARG;
        am.id         = TC_IFUNC_CONTROL_AM_ID;
        am.cb         = tc_ifunc_control_on_am;
        am.arg        = w;
        status = ucp_worker_set_am_recv_handler(mbox->worker, &am);
        if (status != UCS_OK) {
            ucs_error("ifunc mailbox: its control messages need UCP_FEATURE_AM in the "
                      "context: %s", ucs_status_string(status));
            goto out;
        }
    }
    if (w->count == w->max) {
        grown = realloc(w->mboxes, (w->max ? 2 * w->max : 4) * sizeof(*grown));
        if (grown == NULL) {
            status = UCS_ERR_NO_MEMORY;
            goto out;
        }
        w->mboxes = grown;
        w->max    = w->max ? 2 * w->max : 4;
    }
    mbox->tag            = tc_ifunc_control_next_tag++;
    mbox->ctrl_head      = NULL;
    mbox->ctrl_tail      = &mbox->ctrl_head;
    w->mboxes[w->count++] = mbox;
out:
    pthread_mutex_unlock(&tc_ifunc_control_lock);
    return status;
}

void tc_ifunc_ctrl_detach(tc_ifunc_mailbox_h mbox)
{
    tc_ifunc_control_worker_t *w;
    tc_ifunc_ctrl_msg_t *msg;
    unsigned i;

    pthread_mutex_lock(&tc_ifunc_control_lock);
    for (w = tc_ifunc_control_workers; w != NULL; w = w->next) {
        for (i = 0; (w->worker == mbox->worker) && (i < w->count); ++i) {
            if (w->mboxes[i] == mbox) {
                w->mboxes[i] = w->mboxes[--w->count];
                break;
            }
        }
    }
    pthread_mutex_unlock(&tc_ifunc_control_lock);
    while ((msg = mbox->ctrl_head) != NULL) {
        mbox->ctrl_head = msg->next;
        free(msg);
    }
    mbox->ctrl_tail = &mbox->ctrl_head;
}

static void tc_ifunc_control_sent(void *request, ucs_status_t status, void *user_data)
{
    free(user_data);
    ucp_request_free(request);
}

static ucs_status_t tc_ifunc_control_send(tc_ifunc_mailbox_h mbox, tc_ifunc_peer_t *peer,
                                          tc_ifunc_control_type_t type, ucs_status_t st,
                                          uint64_t addr, uint64_t key, uint64_t seq,
                                          int agree, const void *rkey, size_t rkey_len)
{
    tc_ifunc_control_t *hdr = malloc(sizeof(*hdr) + rkey_len);
    ucp_request_param_t param;
    ucs_status_ptr_t req;

    if (hdr == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    memset(hdr, 0, sizeof(*hdr));
    hdr->magic    = TC_IFUNC_CONTROL_MAGIC;
    hdr->type     = (uint16_t)type;
    hdr->agree    = (uint16_t)agree;
    hdr->status   = st;
    hdr->src_rank = (uint32_t)mbox->rank;
    hdr->rkey_len = (uint32_t)rkey_len;
    hdr->dst_tag  = mbox->infos[peer->rank].tag;
    hdr->addr     = addr;
    hdr->key      = key;
    hdr->seq      = seq;
    if (rkey_len != 0) {
        memcpy(hdr + 1, rkey, rkey_len);
    }
    /* header and data live in one buffer until the send completes */
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                         UCP_OP_ATTR_FIELD_FLAGS;
    param.flags        = UCP_AM_SEND_FLAG_EAGER;
    param.cb.send      = tc_ifunc_control_sent;
    param.user_data    = hdr;
    req = ucp_am_send_nbx(peer->ep, TC_IFUNC_CONTROL_AM_ID, hdr, sizeof(*hdr), hdr + 1,
                          rkey_len, &param);
    if (req == NULL) {
        free(hdr);
        return UCS_OK;
    }
    if (UCS_PTR_IS_ERR(req)) {
        free(hdr);
        ucs_error("ifunc rank %d: %s to rank %d failed: %s", mbox->rank,
                  tc_ifunc_control_names[type], peer->rank,
                  ucs_status_string(UCS_PTR_STATUS(req)));
        return UCS_PTR_STATUS(req);
    }
    return UCS_OK;
}

tc_ifunc_peer_t *tc_ifunc_peer_get(tc_ifunc_mailbox_h mbox, int r)
{
    const tc_ifunc_peer_info_t *info = &mbox->infos[r];
    tc_ifunc_peer_t *peer            = mbox->peers[r];
    ucp_ep_params_t ep_params;
    ucs_status_t status;

    if (ucs_likely(peer != NULL)) {
        return peer;
    }
    peer = calloc(1, sizeof(*peer));
    if (peer == NULL) {
        return NULL;
    }
    peer->rank = r;
    if (mbox->caller_eps != NULL) {
        peer->ep = mbox->caller_eps[r];
    } else {
        ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
        ep_params.address    = (const ucp_address_t*)info->address;
        status = ucp_ep_create(mbox->worker, &ep_params, &peer->ep);
        if (status != UCS_OK) {
            ucs_error("ifunc mailbox: ucp_ep_create to rank %d failed: %s", r,
                      ucs_status_string(status));
            free(peer);
            return NULL;
        }
        peer->own_ep = 1;
    }
    /* the write lane believes rank r's writes only on this endpoint */
    (void)tc_write_lane_bind_sender(mbox->lane, (uint32_t)r, peer->ep); /* logged; its
                                                   writes are then refused as forged */
    peer->slot_size    = info->slot_size;
    peer->depth        = info->depth;
    peer->trailer_mode = (info->signal == TC_IFUNC_SIGNAL_TRAILER);
    (void)tc_put_lane_describe(peer->ep, peer->transport, sizeof(peer->transport));
    peer->lane = tc_write_lane_resolve(mbox->lane, peer->ep);
    tc_write_lane_describe(mbox->lane, peer->ep, peer->lane_name, sizeof(peer->lane_name));
    mbox->peers[r] = peer;
    return peer;
}

/* A ucp_mem_map region of @a len bytes that rank @a writer alone may write
 * through the write lane; zeroed */
static ucs_status_t tc_ifunc_region_map(tc_ifunc_mailbox_h mbox, size_t len, int writer,
                                        ucp_mem_h *memh_p, uint8_t **addr_p,
                                        uint64_t *key_p)
{
    const size_t words = (size_t)writer / 64 + 1;
    ucp_mem_map_params_t mp = {0};
    ucp_mem_attr_t attr;
    uint64_t *senders;
    ucs_status_t status;

    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                    UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    mp.address    = NULL;
    mp.length     = len;
    mp.flags      = UCP_MEM_MAP_ALLOCATE;
    status = ucp_mem_map(mbox->context, &mp, memh_p);
    if (status != UCS_OK) {
        ucs_error("ifunc mailbox: ucp_mem_map of %zu bytes failed: %s", len,
                  ucs_status_string(status));
        return status;
    }
    attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
    status = ucp_mem_query(*memh_p, &attr);
    senders = calloc(words, sizeof(*senders));
    if ((status != UCS_OK) || (senders == NULL)) {
        free(senders);
        ucp_mem_unmap(mbox->context, *memh_p);
        return (status != UCS_OK) ? status : UCS_ERR_NO_MEMORY;
    }
    *addr_p = attr.address;
    memset(*addr_p, 0, len);
    senders[writer / 64] = 1ull << (writer % 64);
    status = tc_write_lane_allow(mbox->lane, *addr_p, len, senders, (size_t)writer + 1,
                                 key_p);
    free(senders);
    if (status != UCS_OK) {
        ucp_mem_unmap(mbox->context, *memh_p);
    }
    return status;
}

static void tc_ifunc_region_unmap(tc_ifunc_mailbox_h mbox, ucp_mem_h memh, void *addr)
{
    tc_write_lane_forbid(mbox->lane, addr);
    ucp_mem_unmap(mbox->context, memh);
}

ucs_status_t tc_ifunc_ring_request(tc_ifunc_mailbox_h mbox, tc_ifunc_peer_t *peer)
{
    uint8_t *line;
    void *rkey_buf;
    size_t rkey_len;
    ucs_status_t status;

    if (peer->tx != TC_IFUNC_TX_NONE) {
        return (peer->tx == TC_IFUNC_TX_READY)     ? UCS_OK :
               (peer->tx == TC_IFUNC_TX_REQUESTED) ? UCS_INPROGRESS : UCS_ERR_UNREACHABLE;
    }
    /* a line of its own, where the receiver puts its consumed count */
    status = tc_ifunc_region_map(mbox, 64, peer->rank, &peer->credit_memh, &line,
                                 &peer->credit_key);
    if (status != UCS_OK) {
        goto err;
    }
    peer->credit = (volatile uint64_t*)line;
    status = ucp_rkey_pack(mbox->context, peer->credit_memh, &rkey_buf, &rkey_len);
    if (status != UCS_OK) {
        goto err_unmap;
    }
    status = tc_ifunc_control_send(mbox, peer, TC_IFUNC_CONTROL_REQUEST, UCS_OK,
                                   (uintptr_t)line, peer->credit_key, 0, 0, rkey_buf,
                                   rkey_len);
    ucp_rkey_buffer_release(rkey_buf);
    if (status != UCS_OK) {
        goto err_unmap;
    }
    peer->tx = TC_IFUNC_TX_REQUESTED;
    ++mbox->stats.rings_requested;
    return UCS_INPROGRESS;

err_unmap:
    tc_ifunc_region_unmap(mbox, peer->credit_memh, line);
    peer->credit_memh = NULL;
    peer->credit      = NULL;
err:
    peer->tx = TC_IFUNC_TX_FAILED;
    return status;
}

static void tc_ifunc_ring_activate(tc_ifunc_mailbox_h mbox, tc_ifunc_rx_ring_t *rx)
{
    rx->idle  = 0;
    if (rx->state != TC_IFUNC_RX_ASLEEP) {
        rx->state = TC_IFUNC_RX_ACTIVE;
        return;
    }
    /* room was made when the ring was granted */
    rx->active_index                = mbox->num_active;
    mbox->active[mbox->num_active++] = rx;
    rx->state                       = TC_IFUNC_RX_ACTIVE;
}

static void tc_ifunc_ring_deactivate(tc_ifunc_mailbox_h mbox, tc_ifunc_rx_ring_t *rx)
{
    tc_ifunc_rx_ring_t *last = mbox->active[--mbox->num_active];

    mbox->active[rx->active_index] = last;
    last->active_index             = rx->active_index;
    rx->state                      = TC_IFUNC_RX_ASLEEP;
    if (mbox->next_active >= mbox->num_active) {
        mbox->next_active = 0;
    }
}

/* Room in the active list for every ring there is, so waking never fails */
static ucs_status_t tc_ifunc_active_reserve(tc_ifunc_mailbox_h mbox, unsigned rings)
{
    tc_ifunc_rx_ring_t **grown;
    unsigned max;

    if (rings <= mbox->max_active) {
        return UCS_OK;
    }
    max   = mbox->max_active ? 2 * mbox->max_active : 8;
    grown = realloc(mbox->active, max * sizeof(*grown));
    if (grown == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    mbox->active     = grown;
    mbox->max_active = max;
    return UCS_OK;
}

static ucs_status_t tc_ifunc_ring_make(tc_ifunc_mailbox_h mbox, tc_ifunc_peer_t *peer,
                                       const tc_ifunc_ctrl_msg_t *msg,
                                       tc_ifunc_rx_ring_t **rx_p)
{
    tc_ifunc_rx_ring_t *rx;
    ucs_status_t status;

    status = tc_ifunc_active_reserve(mbox, mbox->num_rings + 1);
    if (status != UCS_OK) {
        return status;
    }
    rx = calloc(1, sizeof(*rx));
    if (rx == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    rx->region_len = (size_t)mbox->depth * mbox->slot_size;
    status = tc_ifunc_region_map(mbox, rx->region_len, peer->rank, &rx->memh, &rx->region,
                                 &rx->region_key);
    if (status != UCS_OK) {
        free(rx);
        return status;
    }
    if ((mbox->rx.placement == TC_IFUNC_PLACEMENT_INPLACE) &&
        (mprotect(rx->region, rx->region_len, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)) {
        /* the paper's compact mode: code runs where it landed */
        ucs_error("ifunc mailbox: cannot make a ring executable (%m); use "
                  "UCX_TC_IFUNC_PLACEMENT=copy");
        status = UCS_ERR_UNSUPPORTED;
        goto err_unmap;
    }
    /* the credit line as requested: our puts of the consumed count go
     * inside what its rkey maps, or the request is refused (its fault) */
    if ((msg->hdr.addr % sizeof(uint64_t)) != 0) {
        status = UCS_ERR_OUT_OF_RANGE;
    } else {
        status = tc_put_target_unpack(peer->ep, msg->rkey, msg->hdr.addr, sizeof(uint64_t),
                                      &rx->credit_rkey);
    }
    if (status == UCS_ERR_OUT_OF_RANGE) {
        tc_ifunc_control_reject(mbox, "its credit line is outside what its rkey maps",
                                &msg->hdr);
        goto err_unmap;
    } else if (status != UCS_OK) {
        ucs_error("ifunc rank %d: the credit rkey of rank %d: %s", mbox->rank, peer->rank,
                  ucs_status_string(status));
        goto err_unmap;
    }
    rx->credit_addr = msg->hdr.addr;
    rx->credit_key  = msg->hdr.key;
    tc_ifunc_ring_init(&rx->ring, rx->region, peer->rank, mbox->depth);
    rx->ring.trailer_mode = peer->trailer_mode;
    rx->state             = TC_IFUNC_RX_ASLEEP;
    tc_ifunc_ring_activate(mbox, rx);      /* its first frames are on their way */
    *rx_p = rx;
    return UCS_OK;

err_unmap:
    tc_ifunc_region_unmap(mbox, rx->memh, rx->region);
    free(rx);
    return status;
}

static void tc_ifunc_on_request(tc_ifunc_mailbox_h mbox, tc_ifunc_peer_t *peer,
                                const tc_ifunc_ctrl_msg_t *msg)
{
    tc_ifunc_rx_ring_t *rx = NULL;
    void *rkey_buf         = NULL;
    size_t rkey_len        = 0;
    ucs_status_t status;

    if (peer->rx != NULL) {
        tc_ifunc_control_reject(mbox, "it has a ring here already", &msg->hdr);
        return;
    }
    status = tc_ifunc_ring_make(mbox, peer, msg, &rx);
    if (status == UCS_OK) {
        peer->rx = rx;
        ++mbox->num_rings;
        ++mbox->stats.rings_granted;
        status = ucp_rkey_pack(mbox->context, rx->memh, &rkey_buf, &rkey_len);
    }
    if (status == UCS_OK) {
        status = tc_ifunc_control_send(mbox, peer, TC_IFUNC_CONTROL_GRANT, UCS_OK,
                                       (uintptr_t)rx->region, rx->region_key, 0, 0,
                                       rkey_buf, rkey_len);
        ucp_rkey_buffer_release(rkey_buf);
        return;
    }
    /* the sender hears why, instead of waiting for credits forever */
    ucs_error("ifunc rank %d: no ring for rank %d: %s", mbox->rank, peer->rank,
              ucs_status_string(status));
    (void)tc_ifunc_control_send(mbox, peer, TC_IFUNC_CONTROL_GRANT, status, 0, 0, 0, 0,
                                NULL, 0);
}

static void tc_ifunc_on_grant(tc_ifunc_mailbox_h mbox, tc_ifunc_peer_t *peer,
                              const tc_ifunc_ctrl_msg_t *msg)
{
    ucs_status_t status;

    if (peer->tx != TC_IFUNC_TX_REQUESTED) {
        tc_ifunc_control_reject(mbox, "no ring was asked of it", &msg->hdr);
        return;
    }
    if (msg->hdr.status != UCS_OK) {
        ucs_error("ifunc rank %d: rank %d has no ring for us: %s", mbox->rank, peer->rank,
                  ucs_status_string((ucs_status_t)msg->hdr.status));
        peer->tx = TC_IFUNC_TX_FAILED;
        return;
    }
    /* the ring as granted: depth frames of the receiver's slot size, all
     * inside what its rkey maps, or no frame goes there (its fault) */
    if ((msg->hdr.addr % 64) != 0) {
        status = UCS_ERR_OUT_OF_RANGE;
    } else {
        status = tc_put_target_unpack(peer->ep, msg->rkey, msg->hdr.addr,
                                      (size_t)peer->depth * peer->slot_size, &peer->rkey);
    }
    if (status != UCS_OK) {
        if (status == UCS_ERR_OUT_OF_RANGE) {
            tc_ifunc_control_reject(mbox, "its ring is outside what its rkey maps", &msg->hdr);
        } else {
            ucs_error("ifunc rank %d: the ring rkey of rank %d: %s", mbox->rank, peer->rank,
                      ucs_status_string(status));
        }
        peer->rkey = NULL;
        peer->tx   = TC_IFUNC_TX_FAILED;
        return;
    }
    peer->ring_addr  = msg->hdr.addr;
    peer->region_key = msg->hdr.key;
    peer->tx         = TC_IFUNC_TX_READY;
}

void tc_ifunc_ring_idle(tc_ifunc_mailbox_h mbox, tc_ifunc_rx_ring_t *rx)
{
    tc_ifunc_peer_t *peer = mbox->peers[rx->ring.peer];

    rx->idle = 0;
    if (rx->state != TC_IFUNC_RX_ACTIVE) {
        return;
    }
    /* a sleeping ring owes no credit: its sender may be stalled on a full
     * ring, and nothing would return the credit once the poll stops reading
     * it. A put still in flight completes by worker progress alone. */
    tc_ifunc_mailbox_credit(mbox, rx, 1);
    if (rx->ring.published != rx->ring.expect) {
        return;            /* the previous credit put still reads its word */
    }
    /* each request has its own number: an answer to an older one (a
     * doorbell came in between) is no answer to this one */
    if (tc_ifunc_control_send(mbox, peer, TC_IFUNC_CONTROL_SLEEP, UCS_OK, 0,
                              rx->sleep_asks + 1, rx->ring.expect, 0, NULL, 0) == UCS_OK) {
        ++rx->sleep_asks;
        rx->sleep_seq = rx->ring.expect;
        rx->state     = TC_IFUNC_RX_ASKED;
    }
}

static void tc_ifunc_on_sleep(tc_ifunc_mailbox_h mbox, tc_ifunc_peer_t *peer,
                              const tc_ifunc_ctrl_msg_t *msg)
{
    int agree;

    if (peer->tx != TC_IFUNC_TX_READY) {
        tc_ifunc_control_reject(mbox, "it has no ring of ours", &msg->hdr);
        return;
    }
    /* every frame we sent was consumed: the next one rings the doorbell */
    agree = (peer->sent == msg->hdr.seq);
    if (tc_ifunc_control_send(mbox, peer, TC_IFUNC_CONTROL_AGREE, UCS_OK, 0, msg->hdr.key,
                              msg->hdr.seq, agree, NULL, 0) == UCS_OK) {
        peer->asleep = agree;
    }
}

static void tc_ifunc_on_agree(tc_ifunc_mailbox_h mbox, tc_ifunc_rx_ring_t *rx,
                              const tc_ifunc_ctrl_msg_t *msg)
{
    if ((rx->state != TC_IFUNC_RX_ASKED) || (msg->hdr.key != rx->sleep_asks)) {
        return;   /* a doorbell came first, or an answer to an older request */
    }
    if (msg->hdr.agree && (msg->hdr.seq == rx->sleep_seq) &&
        (rx->ring.expect == rx->sleep_seq)) {
        tc_ifunc_ring_deactivate(mbox, rx);
        ++mbox->stats.ring_sleeps;
    } else {
        rx->state = TC_IFUNC_RX_ACTIVE;
        rx->idle  = 0;
    }
}

void tc_ifunc_ring_doorbell(tc_ifunc_mailbox_h mbox, tc_ifunc_peer_t *peer)
{
    /* on failure the next frame tries again; the receiver still reads the
     * ring once its sleep is refused */
    if (tc_ifunc_control_send(mbox, peer, TC_IFUNC_CONTROL_DOORBELL, UCS_OK, 0, 0,
                              peer->sent, 0, NULL, 0) == UCS_OK) {
        peer->asleep = 0;
        ++mbox->stats.doorbells;
    }
}

void tc_ifunc_ctrl_drain(tc_ifunc_mailbox_h mbox)
{
    tc_ifunc_ctrl_msg_t *msg;
    tc_ifunc_peer_t *peer;

    while ((msg = mbox->ctrl_head) != NULL) {
        mbox->ctrl_head = msg->next;
        if (mbox->ctrl_head == NULL) {
            mbox->ctrl_tail = &mbox->ctrl_head;
        }
        peer = (msg->hdr.type == TC_IFUNC_CONTROL_REQUEST) ?
               tc_ifunc_peer_get(mbox, (int)msg->hdr.src_rank) :
               mbox->peers[msg->hdr.src_rank];
        if (peer == NULL) {
            tc_ifunc_control_reject(mbox, "we never talked to it", &msg->hdr);
        } else {
            switch (msg->hdr.type) {
            case TC_IFUNC_CONTROL_REQUEST:
                tc_ifunc_on_request(mbox, peer, msg);
                break;
            case TC_IFUNC_CONTROL_GRANT:
                tc_ifunc_on_grant(mbox, peer, msg);
                break;
            case TC_IFUNC_CONTROL_SLEEP:
                tc_ifunc_on_sleep(mbox, peer, msg);
                break;
            default:
                if (peer->rx == NULL) {
                    tc_ifunc_control_reject(mbox, "it has no ring here", &msg->hdr);
                } else if (msg->hdr.type == TC_IFUNC_CONTROL_AGREE) {
                    tc_ifunc_on_agree(mbox, peer->rx, msg);
                } else if (peer->rx->state == TC_IFUNC_RX_ASLEEP) {
                    tc_ifunc_ring_activate(mbox, peer->rx);
                    ++mbox->stats.ring_wakes;
                } else {
                    tc_ifunc_ring_activate(mbox, peer->rx);
                }
                break;
            }
        }
        free(msg);
    }
}

void tc_ifunc_peers_release(tc_ifunc_mailbox_h mbox)
{
    tc_ifunc_rx_ring_t *rx;
    tc_ifunc_peer_t *peer;
    int r;

    /* (a mailbox refused at creation has no peer table yet) */
    for (r = 0; (mbox->peers != NULL) && (r < mbox->size); ++r) {
        if ((peer = mbox->peers[r]) == NULL) {
            continue;
        }
        if ((rx = peer->rx) != NULL) {
            if (rx->credit_rkey != NULL) {
                ucp_rkey_destroy(rx->credit_rkey);
            }
            tc_ifunc_ring_cleanup(&rx->ring);
            tc_ifunc_region_unmap(mbox, rx->memh, rx->region);
            free(rx);
        }
        if (peer->rkey != NULL) {
            ucp_rkey_destroy(peer->rkey);
        }
        tc_write_lane_unbind_sender(mbox->lane, (uint32_t)r, peer->ep);
        if (peer->credit_memh != NULL) {
            tc_ifunc_region_unmap(mbox, peer->credit_memh, (void*)peer->credit);
        }
        free(peer);
        mbox->peers[r] = NULL;
    }
    free(mbox->active);
    mbox->active     = NULL;
    mbox->num_active = mbox->max_active = 0;
}
