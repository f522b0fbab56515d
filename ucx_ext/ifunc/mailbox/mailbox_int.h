/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Private types of the mailbox (mailbox.c, peer_rings.c, credits.c, poll.c,
 * send.c): its peers, the rings they write here, its messages.
 */
#ifndef TC_IFUNC_MAILBOX_INT_H_
#define TC_IFUNC_MAILBOX_INT_H_

#include "ifunc/portable/portable.h"
#include "ifunc/receiver/receiver.h"
#include "ifunc/tx/frame_encode.h"
#include "ifunc/tx/message.h"

#include <twochains/ifunc.h>
#include <twochains/lane.h>

#include <ucs/sys/compiler_def.h>
#include <stdint.h>

BEGIN_C_DECLS

/* ---- mailbox (mailbox.c, peer_rings.c, credits.c, poll.c) ---- */

/* What rank r published at creation (the allgather, kept whole) */
typedef struct tc_ifunc_peer_info {
    uint64_t tag;              /* r's mailbox on r's worker: control messages name it */
    uint32_t slot_size;        /* r's ring geometry, for frames we send it */
    uint32_t depth;
    uint32_t signal;
    uint32_t addr_len;         /* r's worker address, 0 with caller's endpoints */
    uint32_t arch;             /* tc_ifunc_arch_t: whose modules r runs */
    const uint8_t *address;
} tc_ifunc_peer_info_t;

typedef enum {
    TC_IFUNC_TX_NONE,          /* no ring at r yet */
    TC_IFUNC_TX_REQUESTED,     /* asked r for a ring; sends stall until granted */
    TC_IFUNC_TX_READY,         /* r's ring for us is mapped and its rkey ours */
    TC_IFUNC_TX_FAILED         /* the request could not be sent */
} tc_ifunc_tx_state_t;

typedef enum {
    TC_IFUNC_RX_ACTIVE,        /* the poll reads the ring */
    TC_IFUNC_RX_ASKED,         /* the poll reads it; asked its sender to let it sleep */
    TC_IFUNC_RX_ASLEEP         /* unread until its sender rings the doorbell */
} tc_ifunc_rx_state_t;

/* The ring rank r writes into here: its own registration, whose rkey only
 * r was given, and where r wants its credits */
typedef struct tc_ifunc_rx_ring {
    tc_ifunc_ring_t     ring;
    ucp_mem_h           memh;
    uint8_t             *region;
    size_t              region_len;
    uint64_t            region_key;     /* the write lane's key of the ring */
    ucp_rkey_h          credit_rkey;    /* r's credit line for our consumption */
    uint64_t            credit_addr;
    uint64_t            credit_key;     /* its write-lane key at r */
    uint64_t            credit_src;     /* source word of the credit put */
    tc_ifunc_rx_state_t state;
    unsigned            active_index;   /* in mbox->active while not asleep */
    uint32_t            idle;           /* empty reads since the last frame */
    uint64_t            sleep_seq;      /* consumed count the sleep request named */
    uint64_t            sleep_asks;     /* sleep requests sent (the latest's number) */
} tc_ifunc_rx_ring_t;

/* Everything about rank r, made on first contact (a send to r, r's ring
 * request, or a question about its transport) */
typedef struct tc_ifunc_peer {
    int        rank;
    ucp_ep_h   ep;
    int        own_ep;         /* created (and closed) by the mailbox */
    tc_write_lane_mode_t lane; /* how our frames and credits reach r */
    char       transport[64];
    char       lane_name[80];  /* "rma posix/memory.0", "am tcp/lo.0 ..." */
    /* sending to r */
    tc_ifunc_tx_state_t tx;
    ucp_rkey_h rkey;           /* r's ring for us */
    uint64_t   ring_addr;
    uint64_t   region_key;     /* r's write-lane key of that ring */
    uint32_t   slot_size;      /* r's */
    uint32_t   depth;          /* r's */
    int        trailer_mode;   /* r's sends use the trailer */
    int        asleep;         /* r stopped reading our ring: ring its doorbell */
    uint64_t   sent;           /* frames we sent to r */
    double     stall_since;    /* > 0 while refused for credits */
    unsigned   credit_past_sent; /* reads in a row of a credit word past sent */
    int        credit_faulted; /* r wrote one twice: we send it nothing more */
    ucp_mem_h  credit_memh;    /* the line r puts its consumed count into */
    volatile uint64_t *credit;
    uint64_t   credit_key;     /* its write-lane key here */
    /* receiving from r: NULL until r asked for a ring */
    tc_ifunc_rx_ring_t *rx;
} tc_ifunc_peer_t;

/* A control message that arrived, waiting for the poll (peer_rings.c) */
typedef struct tc_ifunc_ctrl_msg tc_ifunc_ctrl_msg_t;

struct tc_ifunc_mailbox {
    ucp_context_h        context;
    ucp_worker_h         worker;
    tc_progress_engine_h engine;
    tc_bootstrap_h       boot;
    int                  rank;
    int                  size;
    uint64_t             tag;           /* ours, in the control messages */
    tc_ifunc_signal_t    signal;
    uint32_t             slot_size;
    uint32_t             depth;
    uint32_t             min_slot;      /* smallest slot of any rank */
    uint32_t             credit_batch;
    uint32_t             idle_reads;    /* empty reads before a ring may sleep */
    unsigned             poll_batch;
    uint64_t             flags;
    tc_write_lane_h      lane;          /* the worker's; carries every write */
    void                 *infos_blob;   /* the allgather */
    tc_ifunc_peer_info_t *infos;        /* [size] */
    const ucp_ep_h       *caller_eps;   /* a copy of the caller's, or NULL */
    tc_ifunc_peer_t      **peers;       /* [size], NULL until first contact */
    tc_ifunc_rx_ring_t   **active;      /* rings the poll reads */
    unsigned             num_active;
    unsigned             num_rings;     /* granted here */
    unsigned             max_active;
    tc_ifunc_ctrl_msg_t  *ctrl_head;    /* arrived, in order */
    tc_ifunc_ctrl_msg_t  **ctrl_tail;
    int                  poller_id;
    unsigned             next_active;
    int                  in_poll;
    tc_ifunc_rx_t        rx;
    tc_ifunc_stats_t     stats;
};

/* The peer record of rank @a r, made (with its endpoint) if there is none.
 * NULL when the endpoint cannot be created (logged). */
tc_ifunc_peer_t *tc_ifunc_peer_get(tc_ifunc_mailbox_h mbox, int r);

/* Ask @a peer for a ring (once); the grant makes it READY (peer_rings.c) */
ucs_status_t tc_ifunc_ring_request(tc_ifunc_mailbox_h mbox, tc_ifunc_peer_t *peer);

/* Tell @a peer that frames wait in a ring it stopped reading */
void tc_ifunc_ring_doorbell(tc_ifunc_mailbox_h mbox, tc_ifunc_peer_t *peer);

/* Handle the control messages that arrived (from the poll) */
void tc_ifunc_ctrl_drain(tc_ifunc_mailbox_h mbox);

/* A ring found empty @a idle_reads times in a row: ask its sender to let it sleep */
void tc_ifunc_ring_idle(tc_ifunc_mailbox_h mbox, tc_ifunc_rx_ring_t *rx);

/* Register the mailbox for control messages on its worker, and undo it */
ucs_status_t tc_ifunc_ctrl_attach(tc_ifunc_mailbox_h mbox);
void tc_ifunc_ctrl_detach(tc_ifunc_mailbox_h mbox);

/* Release the rings and credit lines of every peer */
void tc_ifunc_peers_release(tc_ifunc_mailbox_h mbox);

/* Put our consumed count for @a rx's sender, if due and possible */
void tc_ifunc_mailbox_credit(tc_ifunc_mailbox_h mbox, tc_ifunc_rx_ring_t *rx, int force);

/* Wait for a UCP request, progressing the engine */
ucs_status_t tc_ifunc_request_wait(tc_progress_engine_h engine,
                                   ucs_status_ptr_t req, double timeout_s);


/* ---- messages (send.c) ---- */

#define TC_IFUNC_MSG_MAX_REQS 4

typedef struct tc_ifunc_msg_module {
    uint8_t  *bytes;        /* NULL: the package has none for this architecture */
    uint32_t size;
    uint64_t hash;
} tc_ifunc_msg_module_t;

struct tc_ifunc_msg {
    tc_ifunc_mailbox_h       mbox;
    tc_ifunc_pkg_h           pkg;
    const tc_ifunc_element_t *elem;
    tc_ifunc_mode_t          mode;
    int                      compact;         /* Local and hash-only frames compact */
    ucp_mem_h                memh;
    uint8_t                  *frame;
    size_t                   capacity;        /* bytes mapped */
    tc_frame_desc_t    desc;
    uint32_t                 alt_offset;      /* Cached: hash-only header */
    tc_frame_desc_t    alt_desc;        /* its layout */
    uint32_t                 payload_capacity;
    uint32_t                 payload_size;
    void                     *reqs[TC_IFUNC_MSG_MAX_REQS];
    tc_write_header_t        headers[TC_IFUNC_MSG_MAX_REQS];  /* reqs[i]'s, on the AM lane */
    unsigned                 num_reqs;
    uint8_t                  *code_sent;      /* [size]: Cached code sent to r */
    /* Portable: the element's module for each architecture a peer may
     * have, and which one the frame holds now */
    tc_ifunc_msg_module_t    modules[TC_IFUNC_ARCH_LAST];
    uint32_t                 module_capacity;
    int                      laid_arch;
};

END_C_DECLS

#endif
