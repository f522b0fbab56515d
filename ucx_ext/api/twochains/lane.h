/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Lanes. Which transport carries an endpoint's puts, as UCP chose it; and
 * the write lane, which carries "store these bytes at this address of that
 * peer's registered region" over the fastest way that survives the peer's
 * death, for the mailbox and the replication layer alike.
 */
#ifndef TWOCHAINS_LANE_H_
#define TWOCHAINS_LANE_H_

#include <twochains/am_ids.h>
#include <ucp/api/ucp.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

#include <stddef.h>
#include <stdint.h>

BEGIN_C_DECLS

/**
 * From the text of ucp_ep_print_info(): the transport of the lane that
 * "put[N]" names ("posix/memory.0"), or, when the endpoint has no RMA lane
 * and UCP emulates puts with active messages, the am lane's transport with
 * " (put emulated over am)". "unknown" and UCS_ERR_NO_ELEM when the text
 * names neither. @a out is always terminated.
 */
ucs_status_t tc_put_lane_parse(const char *ep_info, char *out, size_t max);

/** tc_put_lane_parse() of @a ep's own info. */
ucs_status_t tc_put_lane_describe(ucp_ep_h ep, char *out, size_t max);


/**
 * Unpack @a packed, a peer's rkey, on @a ep for puts to [address,
 * address+length): UCS_ERR_OUT_OF_RANGE (the rkey destroyed) if that range
 * is not inside what the peer registered as far as this process can see
 * it. Where UCX maps the peer's memory into this process (shared memory:
 * ucp_rkey_ptr works) the range must lie in the mapping that unpacking
 * created; elsewhere the peer's side checks its range (an rkey on
 * InfiniBand, the write lane's AM handler) or the put lands in the peer's
 * own memory (cma, tcp). Slow path: reads /proc/self/maps twice.
 */
ucs_status_t tc_put_target_unpack(ucp_ep_h ep, const void *packed, uint64_t address,
                                  size_t length, ucp_rkey_h *rkey_p);


/** One put target of a batch (tc_put_targets_unpack). */
typedef struct tc_put_target {
    ucp_ep_h     ep;      /**< in: the peer's endpoint */
    const void   *packed; /**< in: its packed rkey */
    uint64_t     address; /**< in: the range it names */
    size_t       length;
    ucp_rkey_h   rkey;    /**< out: the rkey if @a status is UCS_OK, else NULL */
    ucs_status_t status;  /**< out: as tc_put_target_unpack() returns */
} tc_put_target_t;


/**
 * tc_put_target_unpack() of @a count targets at once, with the same check
 * for each, reading /proc/self/maps twice in all when every target is
 * honest. Returns an error only if the check itself could not run (every
 * rkey destroyed); each target's own verdict is in its status.
 */
ucs_status_t tc_put_targets_unpack(tc_put_target_t *targets, size_t count);


/** How a write travels (UCX_TC_WRITE_LANE). */
typedef enum {
    TC_WRITE_LANE_AUTO, /**< RMA where UCP has an RMA lane to the peer, else AM */
    TC_WRITE_LANE_RMA,  /**< ucp_put_nbx */
    TC_WRITE_LANE_AM,   /**< one eager active message, stored by its handler */
    TC_WRITE_LANE_LAST
} tc_write_lane_mode_t;

/** "auto", "rma", "am" */
extern const char *tc_write_lane_mode_names[];


/**
 * What travels with a write on the active-message lane. UCX 1.13 reads an
 * active message's header when the send completes (it has no COPY_HEADER
 * flag), so it lives with the request: the caller owns it until then.
 */
typedef struct tc_write_header {
    uint64_t address;   /**< where the bytes go, in the receiver's space */
    uint64_t region;    /**< the region's key at the receiver (tc_write_lane_allow) */
    uint32_t sender;    /**< the sender's id: its rank, any size of job */
    uint32_t magic;     /**< TC_WRITE_HEADER_MAGIC */
} tc_write_header_t;

#define TC_WRITE_HEADER_MAGIC 0x7c3a11e5u

/** Writes received and rejected on the active-message lane. */
typedef struct tc_write_lane_stats {
    uint64_t stored;               /**< writes stored into a region */
    uint64_t bytes_stored;
    uint64_t rejected_malformed;   /**< bad header, or a rendezvous message */
    uint64_t rejected_unknown;     /**< the key names no region this lane ever had */
    uint64_t rejected_range;       /**< not wholly inside the region its key names */
    uint64_t rejected_sender;      /**< the sender may not write the region */
    uint64_t rejected_forged;      /**< the message did not come in on an endpoint
                                        bound to the sender it names */
    uint64_t dropped_late;         /**< for a region that has ended (forbidden): a
                                        peer's write still in flight at teardown */
} tc_write_lane_stats_t;

typedef struct tc_write_lane *tc_write_lane_h;

/**
 * The write lane of @a worker: reads UCX_TC_WRITE_LANE and registers the
 * handler of TC_WRITE_LANE_AM_ID. A worker has one lane: a second create
 * returns the same one, counted, and the last destroy frees it. Without UCP_FEATURE_AM in the worker's
 * context, "auto" falls back to RMA everywhere (said once at debug level)
 * and "am" fails with UCS_ERR_UNSUPPORTED.
 *
 * Ordering: on one endpoint, writes on the RMA lane are ordered by
 * ucp_worker_fence (or ucp_ep_flush); writes on the AM lane are eager
 * single-lane active messages, which UCP delivers in order per endpoint,
 * and the handler stores each one before the next is delivered. So "data,
 * fence, counter" keeps the counter behind its data on either lane.
 *
 * Threads: the handler runs in ucp_worker_progress; regions may be added
 * and removed from any thread.
 */
ucs_status_t tc_write_lane_create(ucp_worker_h worker, tc_write_lane_h *lane_p);

/** Drops a reference; the last unregisters the handler and frees the lane. */
void tc_write_lane_destroy(tc_write_lane_h lane);

/** The configured mode (UCX_TC_WRITE_LANE); AUTO is resolved per endpoint
 * by tc_write_lane_resolve(). */
tc_write_lane_mode_t tc_write_lane_mode(tc_write_lane_h lane);

/**
 * The lane writes to @a ep take: TC_WRITE_LANE_RMA or TC_WRITE_LANE_AM.
 * Reads the endpoint's info; callers keep the answer per endpoint.
 */
tc_write_lane_mode_t tc_write_lane_resolve(tc_write_lane_h lane, ucp_ep_h ep);

/**
 * "rma posix/memory.0", "am tcp/lo.0": the lane and transport writes to
 * @a ep take, for reports.
 */
void tc_write_lane_describe(tc_write_lane_h lane, ucp_ep_h ep, char *out, size_t max);

/**
 * Let the senders in @a senders write [base, base+len) through the AM lane:
 * a set of @a num_senders bits, bit i of word i / 64 for sender id i (a
 * job's rank, of any job size), copied; NULL admits any sender. Every
 * other write is rejected, counted and logged once per reason. Regions must
 * not overlap.
 *
 * *@a key_p is the region's key: writers name the region by it (it goes to
 * them with the rkey), so a write meant for a region that has ended is
 * told from one for a region that never was, and never lands in a later
 * region that the allocator placed at the same address. Keys are never
 * reused on a lane.
 */
ucs_status_t tc_write_lane_allow(tc_write_lane_h lane, void *base, size_t len,
                                 const uint64_t *senders, size_t num_senders,
                                 uint64_t *key_p);

/** Replace the senders of the region at @a base (as tc_write_lane_allow
 * takes them). The group does not call
 * it: a departed member's late writes land in its own row, which no view
 * after it reads, and rejecting them would log failures as attacks. */
ucs_status_t tc_write_lane_set_senders(tc_write_lane_h lane, const void *base,
                                       const uint64_t *senders, size_t num_senders);

/**
 * Writes that name sender @a sender are believed only when they come in on
 * @a ep, the receiver's endpoint to that sender's worker (or another one
 * bound to it): UCP matches the endpoints two workers create to each other
 * by worker address into one pair, and gives an active message sent with
 * UCP_AM_SEND_FLAG_REPLY the receiver's endpoint of that pair as its reply
 * endpoint. A write that comes in elsewhere is rejected as "forged-sender",
 * counted and logged once. Each user of the lane binds the endpoints it
 * creates (up to 4 per sender) before it lets that sender write, and
 * unbinds them before it closes them. Sender ids are one namespace per
 * worker (its users name the same process by the same id).
 */
ucs_status_t tc_write_lane_bind_sender(tc_write_lane_h lane, uint32_t sender, ucp_ep_h ep);

/** Undo tc_write_lane_bind_sender(); no-op if @a ep is not bound. */
void tc_write_lane_unbind_sender(tc_write_lane_h lane, uint32_t sender, ucp_ep_h ep);

/** Whether @a ep (an active message's reply endpoint) is bound to @a sender:
 * for other users of UCP_AM_SEND_FLAG_REPLY messages that must know who
 * sent them. */
int tc_write_lane_is_sender(tc_write_lane_h lane, uint32_t sender, ucp_ep_h ep);

/** No one may write the region at @a base any more. Writes for it that
 * arrive later are dropped and counted as late (UCS_LOG_LEVEL_DEBUG): on the
 * AM lane, a peer's flush completes when its data left, not when our
 * handler ran, so its last writes may follow our teardown. */
void tc_write_lane_forbid(tc_write_lane_h lane, const void *base);

/**
 * Write @a len bytes from @a src to @a raddr at the peer of @a ep on lane
 * @a lane_kind (tc_write_lane_resolve's answer for @a ep): ucp_put_nbx with
 * @a rkey, or an active message from sender @a sender with @a header,
 * which must live until the request completes, naming the region by
 * @a region_key (its key at the peer). Returns what ucp_put_nbx returns:
 * NULL when done, a request, or an error pointer.
 */
ucs_status_ptr_t tc_write_lane_write(tc_write_lane_h lane, tc_write_lane_mode_t lane_kind,
                                     ucp_ep_h ep, uint32_t sender, const void *src,
                                     size_t len, uint64_t raddr, ucp_rkey_h rkey,
                                     uint64_t region_key, const ucp_request_param_t *param,
                                     tc_write_header_t *header);

/** Counts of the AM lane's receiver since create. */
void tc_write_lane_query(tc_write_lane_h lane, tc_write_lane_stats_t *stats);

END_C_DECLS

#endif
