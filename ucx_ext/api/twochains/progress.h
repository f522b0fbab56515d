/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The shared progress engine: one per ucp_worker. Each loop calls
 * ucp_worker_progress() and then every registered poller (mailbox rings, SST
 * predicates, RDMC state machines). Both Two-Chains and the replication layer
 * register here; neither owns a polling thread of its own.
 *
 * UCX has no public hook to add a poller inside ucp_worker_progress(), which
 * is why this engine owns the loop.
 */
#ifndef TWOCHAINS_PROGRESS_H_
#define TWOCHAINS_PROGRESS_H_

#include <twochains/wait.h>
#include <ucp/api/ucp.h>
#include <stdint.h>

BEGIN_C_DECLS

typedef struct tc_progress_engine *tc_progress_engine_h;

/**
 * A poller: handle what is ready, without blocking, and return how many
 * events it handled (0 when idle). It may add or remove pollers, itself
 * included.
 */
typedef unsigned (*tc_poller_cb_t)(void *arg);

enum tc_progress_params_field {
    TC_PROGRESS_PARAM_FIELD_WAIT_POLICY = UCS_BIT(0),
    TC_PROGRESS_PARAM_FIELD_MAX_POLLERS = UCS_BIT(1)
};

typedef struct tc_progress_params {
    uint64_t         field_mask;  /**< tc_progress_params_field bits */
    tc_wait_policy_t wait_policy; /**< default: UCX_TC_WAIT_POLICY */
    unsigned         max_pollers; /**< default: UCX_TC_MAX_POLLERS */
} tc_progress_params_t;

typedef struct tc_progress_stats {
    uint64_t         loops;       /**< progress loops run */
    uint64_t         idle_loops;  /**< loops in which nothing happened */
    uint64_t         events;      /**< sum of what pollers and UCX reported */
    double           idle_cpu_s;  /**< CPU seconds spent waiting while idle */
    tc_wait_policy_t policy;      /**< effective wait policy */
    const char       *mechanism;  /**< how the policy waits on this CPU */
} tc_progress_stats_t;

/**
 * Create an engine for @a worker. @a worker may be NULL for an engine that
 * only runs pollers (used by tests).
 */
ucs_status_t tc_progress_engine_create(ucp_worker_h worker,
                                       const tc_progress_params_t *params,
                                       tc_progress_engine_h *engine_p);

/** Stops the progress thread if it runs. Pollers must be removed first. */
void tc_progress_engine_destroy(tc_progress_engine_h engine);

ucp_worker_h tc_progress_engine_worker(tc_progress_engine_h engine);

/**
 * Register a poller. May be called from any thread, also from inside a poller
 * while the engine runs. @a id_p receives the handle for removal.
 * @return UCS_ERR_EXCEEDS_LIMIT when max_pollers are registered.
 */
ucs_status_t tc_progress_poller_add(tc_progress_engine_h engine,
                                    tc_poller_cb_t cb, void *arg, int *id_p);

/**
 * Unregister a poller. When it returns, the callback is not running and will
 * not run again, so @a arg may be freed; except when called from a poller
 * on the engine's own thread, where the current call simply finishes.
 */
ucs_status_t tc_progress_poller_remove(tc_progress_engine_h engine, int id);

/** A quiet poller is called only every this many loops. */
#define TC_PROGRESS_QUIET_EVERY 4

/**
 * Mark poller @a id quiet (@a quiet != 0: it has nothing to do until
 * something it watches changes) or not. The loop calls a quiet poller only
 * every TC_PROGRESS_QUIET_EVERY loops, so many idle pollers (e.g. the idle
 * shards of a node) cost a loop little more than a look at the slot table.
 * Any thread may call it, e.g. an application call that gives the poller
 * work; the next loop then calls it.
 */
ucs_status_t tc_progress_poller_set_quiet(tc_progress_engine_h engine, int id, int quiet);

/**
 * One loop: ucp_worker_progress() and every poller. Caller-driven mode.
 * Only one thread drives an engine at a time.
 * @return number of events (0: nothing happened).
 */
unsigned tc_progress(tc_progress_engine_h engine);

/**
 * Drive the engine, waiting with its policy between idle loops, until
 * @a done(@a arg) returns non-zero or @a timeout_s passes.
 * @return UCS_OK or UCS_ERR_TIMED_OUT.
 */
ucs_status_t tc_progress_until(tc_progress_engine_h engine,
                               int (*done)(void *arg), void *arg,
                               double timeout_s);

/** Start a thread, owned by the engine, that drives it with its policy. */
ucs_status_t tc_progress_thread_start(tc_progress_engine_h engine);

/** Stop and join the progress thread. UCS_ERR_INVALID_PARAM if none runs. */
ucs_status_t tc_progress_thread_stop(tc_progress_engine_h engine);

void tc_progress_stats_get(tc_progress_engine_h engine,
                           tc_progress_stats_t *stats);

END_C_DECLS

#endif
