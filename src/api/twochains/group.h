/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * C API of the replication layer, for MPI and PGAS runtimes. A node is one
 * UCP context + worker + progress engine with endpoints to every rank of a
 * bootstrap; groups (shards) are formed over a node. Usable from C and C++.
 *
 * Threads: every call on a node and its groups, and every delivery
 * callback, happens on one thread (the one that drives the node's engine).
 */
#ifndef TWOCHAINS_GROUP_H_
#define TWOCHAINS_GROUP_H_

#include <twochains/bootstrap.h>
#include <twochains/ifunc.h>
#include <twochains/progress.h>

#include <stddef.h>
#include <stdint.h>

BEGIN_C_DECLS

typedef struct tc_node  *tc_node_h;
typedef struct tc_group *tc_group_h;

typedef struct tc_group_message {
    int        sender;  /**< bootstrap rank of the sender */
    int64_t    index;   /**< the sender's message number */
    int64_t    seq;     /**< global sequence in the group's total order */
    const void *data;
    size_t     size;
} tc_group_message_t;

typedef void (*tc_group_deliver_cb_t)(const tc_group_message_t *msg, void *arg);
/** @a count consecutive messages in delivery order; their data is valid
 *  until the callback returns. */
typedef void (*tc_group_deliver_span_cb_t)(const tc_group_message_t *msgs, size_t count,
                                           void *arg);

/** At a member sponsoring a joiner, after the old view's last delivery:
 *  *@a data_p is malloc()ed state (the library frees it), or NULL for none. */
typedef ucs_status_t (*tc_group_get_state_cb_t)(void **data_p, size_t *size_p, void *arg);
/** At the joiner, before the first message of its first view. */
typedef void (*tc_group_set_state_cb_t)(const void *data, size_t size, void *arg);

/** A replicated jam as it ran (or was rejected) at this member */
typedef struct tc_group_jam_event {
    int               sender;   /**< member rank of the sender */
    int64_t           index;    /**< the sender's message number */
    int64_t           seq;      /**< in the view's total order */
    int64_t           view;     /**< epoch */
    uint64_t          pkg_id;
    uint32_t          element;
    const void        *payload; /**< valid for the callback */
    size_t            payload_size;
    int               status;   /**< what the jam set in its context (0: success) */
    tc_ifunc_reject_t reject;   /**< TC_IFUNC_REJECT_NONE: it ran */
} tc_group_jam_event_t;

typedef void (*tc_group_jam_cb_t)(const tc_group_jam_event_t *event, void *arg);

typedef struct tc_group_params {
    const int             *members;      /**< bootstrap ranks, in view order */
    int                   member_count;
    const int             *senders;      /**< NULL: every member sends */
    int                   sender_count;
    size_t                max_payload;   /**< largest message, bytes */
    unsigned              window;        /**< slots per sender */
    int                   unordered;     /**< deliver on receipt, no total order */
    tc_group_deliver_cb_t deliver;
    void                  *deliver_arg;
    size_t                rdmc_max_message; /**< > 0: larger sends go over RDMC */
    uint16_t              join_port;     /**< > 0: admit joiners on this TCP port */
    tc_group_get_state_cb_t get_state;
    tc_group_set_state_cb_t set_state;
    void                  *state_arg;
    /** Instead of @a deliver (set one, not both): spans of consecutive
     *  messages, one call each; @a deliver_arg is its argument. */
    tc_group_deliver_span_cb_t deliver_span;
    /** Replicated jams (tc_group_send_jam): the state they run against at
     *  this member (every member's of the same size; a joiner receives it
     *  with the codes), the mode they are sent in (0: Local), and a
     *  callback after each jam ran or was rejected here, in delivery order.
     *  Which frames run: UCX_TC_IFUNC_SECURITY, the same at every member. */
    const tc_ifunc_pkg_h  *jam_packages;  /**< NULL, or the packages whose jams run:
                                               same code everywhere, or refused */
    int                   jam_package_count;
    void                  *jam_state;
    size_t                jam_state_size;
    tc_ifunc_mode_t       jam_mode;
    tc_group_jam_cb_t     jam_ran;
    void                  *jam_arg;
} tc_group_params_t;

/** What replicated jams did at this member */
typedef struct tc_group_jam_stats {
    uint64_t sent;        /**< jams sent from here */
    uint64_t codes_sent;  /**< of them, frames that carried code */
    uint64_t run;         /**< jams run here */
    uint64_t errors;      /**< of them, jams that set a failure status */
    uint64_t rejects;     /**< jams rejected here */
    int      left;        /**< this member left the group: it could not run a
                               jam the others ran (the reason is logged) */
} tc_group_jam_stats_t;

/** Collective over the bootstrap (one allgather of worker addresses;
 * endpoints are created on first use). The node does not take @a boot. */
ucs_status_t tc_node_create(tc_bootstrap_h boot, tc_node_h *node_p);
void tc_node_destroy(tc_node_h node);
tc_progress_engine_h tc_node_engine(tc_node_h node);

/**
 * Collective over @a params->members only (they talk among themselves; the
 * bootstrap is not used). Ranks outside them may call it too and get
 * *@a group_p == NULL and UCS_OK at once. Members that share several groups
 * create them in the same order.
 */
ucs_status_t tc_group_create(tc_node_h node, const tc_group_params_t *params,
                             tc_group_h *group_p);

/**
 * Join a running group through a member's join port, @a contact
 * ("host:port"), from a node with its own (single-member) bootstrap: enters
 * the next view with the sponsor's state (set_state). members and senders of
 * @a params are ignored; the rest must match the group's, or the member
 * refuses with the reason logged (UCS_ERR_INVALID_PARAM). The joiner sends if
 * every member sends.
 */
ucs_status_t tc_group_join(tc_node_h node, const tc_group_params_t *params,
                           const char *contact, tc_group_h *group_p);

/** Multicast a copy of @a data; waits while the window is full (failing with
 *  UCS_ERR_TIMED_OUT if the group makes no progress for UCX_TC_GROUP_TIMEOUT,
 *  30 s). Sizes above
 *  max_payload (up to rdmc_max_message) go over RDMC, in the same order. */
ucs_status_t tc_group_send(tc_group_h group, const void *data, size_t size);

/** Same, but UCS_ERR_NO_RESOURCE instead of waiting. */
ucs_status_t tc_group_send_nb(tc_group_h group, const void *data, size_t size);

/**
 * Multicast a jam in the group's total order: element @a element of
 * @a package (loaded here and, for Local frames and `verify`, at every
 * member), its payload written in place by the element's payload_init from
 * @a source_args (else a copy of them), in the group's jam_mode: Local frames
 * name the element; Injected ones carry the code; Cached ones carry it until
 * a frame with it was delivered here, then only its hash. Every member runs
 * it at delivery, in sequence order, with a tc_jam_replica_t (state, sender,
 * sequence number, view; <twochains/jam.h>) as target_args. Frames above
 * max_payload go over RDMC (rdmc_max_message). Blocks as tc_group_send.
 */
ucs_status_t tc_group_send_jam(tc_group_h group, tc_ifunc_pkg_h package, uint32_t element,
                               void *source_args, size_t size);

void tc_group_jam_stats_get(tc_group_h group, tc_group_jam_stats_t *stats);

ucs_status_t tc_group_flush(tc_group_h group);

/** Collective over the members: returns once everything sent is delivered. */
ucs_status_t tc_group_close(tc_group_h group);

/** Closes if needed, then frees. */
void tc_group_destroy(tc_group_h group);

/** Application messages delivered here so far. */
uint64_t tc_group_delivered(tc_group_h group);

/**
 * The view this member is in: returns its epoch, sets *@a count_p (if not
 * NULL) to its number of members, and copies the first @a max_members of
 * their ids, in view order, to @a members (if not NULL). A joiner's id is
 * larger than every id a view had before it. Call it on the thread that
 * progresses the group (a progress condition may call it).
 */
int64_t tc_group_view_get(tc_group_h group, int *members, int max_members, int *count_p);

END_C_DECLS

#endif
