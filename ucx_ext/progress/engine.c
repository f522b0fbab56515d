/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The shared progress engine.
 *
 * Threads: one thread drives an engine at a time (the caller through
 * tc_progress/tc_progress_until, or the engine's own thread). Pollers may be
 * added and removed from any thread, including from inside a poller.
 *
 * Invariants:
 *  - the loop takes no lock: it reads each slot's state with one atomic load
 *    (and, off every TC_PROGRESS_QUIET_EVERY-th loop, its quiet flag);
 *  - engine->seq is odd exactly while a loop runs; a remover on another
 *    thread marks the slot DEAD and waits until the loop it may have raced
 *    with has ended (seq moved), so after remove returns the callback neither
 *    runs nor will run. This is Dekker's pattern: each side stores, then
 *    loads the other's word, and needs a full fence in between. The loop,
 *    which runs millions of times a second, would pay two locked
 *    instructions per pass (a third of a ping-pong's time); so where the
 *    kernel has membarrier(2) the remover, which is rare, pays instead: its
 *    membarrier is a full fence on every thread of the process, and the
 *    loop's side is a plain store;
 *  - add/remove serialize on engine->lock, which the loop never takes.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include <base/debug.h>
#include <twochains/config.h>
#include <twochains/progress.h>

#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef enum {
    TC_POLLER_FREE,
    TC_POLLER_ACTIVE,
    TC_POLLER_DEAD     /* removed by another thread, waiting for the loop */
} tc_poller_state_t;

typedef struct tc_poller_slot {
    int            state;   /* tc_poller_state_t, accessed atomically */
    int            quiet;   /* called every TC_PROGRESS_QUIET_EVERY loops (atomic) */
    tc_poller_cb_t cb;
    void           *arg;
} tc_poller_slot_t;

struct tc_progress_engine {
    ucp_worker_h     worker;
    tc_waiter_t      waiter;
    unsigned         max_pollers;
    tc_poller_slot_t *slots;
    unsigned         high;          /* 1 + highest slot ever used (atomic) */
    pthread_mutex_t  lock;          /* serializes add/remove */
    uint64_t         seq;           /* odd while a loop runs (atomic) */
    pthread_t        driver;        /* thread of the current/last loop */

    /* own progress thread */
    pthread_t        thread;
    int              thread_running;
    int              thread_stop;   /* atomic */

    /* statistics: written by the driver only, read by anyone */
    uint64_t         loops;
    uint64_t         idle_loops;
    uint64_t         events;
    uint64_t         idle_ns;       /* CPU time spent waiting while idle */

    /* the idle streak being measured */
    int              idle_streak;
    double           idle_start;
};

static pthread_once_t tc_engine_barrier_once = PTHREAD_ONCE_INIT;
static int            tc_engine_asymmetric;   /* membarrier registered */

static void tc_engine_barrier_init(void)
{
    long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0);

    tc_engine_asymmetric =
        (cmds > 0) && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
        (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0);
    ucs_debug("progress engine: poller removal fences with %s",
              tc_engine_asymmetric ? "membarrier(2)" : "locked instructions in the loop");
}

/* The remover's half of the fence pair (see the top of the file) */
static void tc_engine_remote_fence(void)
{
    if (!tc_engine_asymmetric ||
        (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0) != 0)) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    }
}

static double tc_clock(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Busy-type policies burn the CPU while idle, so wall time is CPU time and
 * the cheap vDSO clock suffices; the sleep policy gives the CPU away and
 * needs the thread's real CPU clock (a syscall, but it sleeps anyway). */
static clockid_t tc_engine_idle_clock(const tc_progress_engine_h engine)
{
    /* adaptive spins first: the wake-up after a short wait, the common
     * case, must not pay for a syscall (its sleeps count as CPU here) */
    return (engine->waiter.effective == TC_WAIT_SLEEP) ?
           CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
}

static void tc_engine_idle_begin(tc_progress_engine_h engine)
{
    if (!engine->idle_streak) {
        engine->idle_streak = 1;
        engine->idle_start  = tc_clock(tc_engine_idle_clock(engine));
    }
}

static void tc_engine_idle_end(tc_progress_engine_h engine)
{
    double spent;

    if (!engine->idle_streak) {
        return;
    }
    spent = tc_clock(tc_engine_idle_clock(engine)) - engine->idle_start;
    __atomic_store_n(&engine->idle_ns, engine->idle_ns + (uint64_t)(spent * 1e9),
                     __ATOMIC_RELAXED);
    engine->idle_streak = 0;
    tc_waiter_reset(&engine->waiter);
}

/* One step of a driving loop: progress, and wait with the policy if idle. */
static unsigned tc_engine_step(tc_progress_engine_h engine)
{
    unsigned events = tc_progress(engine);

    if (events != 0) {
        tc_engine_idle_end(engine);
    } else {
        tc_engine_idle_begin(engine);
        tc_waiter_idle(&engine->waiter, NULL);
    }
    return events;
}

ucs_status_t tc_progress_engine_create(ucp_worker_h worker,
                                       const tc_progress_params_t *params,
                                       tc_progress_engine_h *engine_p)
{
    tc_wait_policy_t policy;
    tc_progress_engine_h engine;
    tc_config_t config;
    ucs_status_t status;

    status = tc_config_read(&config);
    if (status != UCS_OK) {
        goto err;
    }

    (void)pthread_once(&tc_engine_barrier_once, tc_engine_barrier_init);
    engine = calloc(1, sizeof(*engine));
    if (engine == NULL) {
        ucs_error("failed to allocate progress engine");
        status = UCS_ERR_NO_MEMORY;
        goto err_release_config;
    }

    policy              = config.wait_policy;
    engine->max_pollers = config.max_pollers;
    if (params != NULL) {
        if (params->field_mask & TC_PROGRESS_PARAM_FIELD_WAIT_POLICY) {
            policy = params->wait_policy;
        }
        if (params->field_mask & TC_PROGRESS_PARAM_FIELD_MAX_POLLERS) {
            engine->max_pollers = params->max_pollers;
        }
    }

    if (engine->max_pollers == 0) {
        ucs_error("progress engine needs room for at least one poller");
        status = UCS_ERR_INVALID_PARAM;
        goto err_free;
    }

    status = tc_waiter_init(&engine->waiter, policy);
    if (status != UCS_OK) {
        goto err_free;
    }

    engine->slots = calloc(engine->max_pollers, sizeof(*engine->slots));
    if (engine->slots == NULL) {
        ucs_error("failed to allocate %u poller slots", engine->max_pollers);
        status = UCS_ERR_NO_MEMORY;
        goto err_free;
    }

    pthread_mutex_init(&engine->lock, NULL);
    engine->worker = worker;
    engine->driver = pthread_self();
    tc_config_release(&config);

    ucs_debug("progress engine %p worker %p wait policy %s (%s) max pollers %u",
              engine, worker, tc_wait_policy_names[engine->waiter.effective],
              engine->waiter.mechanism, engine->max_pollers);
    *engine_p = engine;
    return UCS_OK;

err_free:
    free(engine);
err_release_config:
    tc_config_release(&config);
err:
    return status;
}

void tc_progress_engine_destroy(tc_progress_engine_h engine)
{
    unsigned i;

    if (engine == NULL) {
        return;
    }
    if (engine->thread_running) {
        tc_progress_thread_stop(engine);
    }
    for (i = 0; i < engine->high; ++i) {
        if (engine->slots[i].state == TC_POLLER_ACTIVE) {
            ucs_warn("progress engine %p destroyed with poller %u still "
                     "registered", engine, i);
        }
    }
    tc_waiter_reset(&engine->waiter);   /* leaves the adaptive spinners' count */
    pthread_mutex_destroy(&engine->lock);
    free(engine->slots);
    free(engine);
}

ucp_worker_h tc_progress_engine_worker(tc_progress_engine_h engine)
{
    return engine->worker;
}

ucs_status_t tc_progress_poller_add(tc_progress_engine_h engine,
                                    tc_poller_cb_t cb, void *arg, int *id_p)
{
    tc_poller_slot_t *slot;
    unsigned i;

    if (cb == NULL) {
        ucs_error("progress engine %p: NULL poller callback", engine);
        return UCS_ERR_INVALID_PARAM;
    }

    pthread_mutex_lock(&engine->lock);
    for (i = 0; i < engine->max_pollers; ++i) {
        slot = &engine->slots[i];
        if (__atomic_load_n(&slot->state, __ATOMIC_RELAXED) == TC_POLLER_FREE) {
            slot->cb  = cb;
            slot->arg = arg;
            __atomic_store_n(&slot->quiet, 0, __ATOMIC_RELAXED);
            __atomic_store_n(&slot->state, TC_POLLER_ACTIVE, __ATOMIC_SEQ_CST);
            if (i + 1 > engine->high) {
                __atomic_store_n(&engine->high, i + 1, __ATOMIC_RELEASE);
            }
            pthread_mutex_unlock(&engine->lock);
            ucs_trace("progress engine %p: added poller %u %p(%p)", engine, i,
                      cb, arg);
            *id_p = (int)i;
            return UCS_OK;
        }
    }
    pthread_mutex_unlock(&engine->lock);

    ucs_error("progress engine %p: all %u poller slots in use "
              "(UCX_TC_MAX_POLLERS)", engine, engine->max_pollers);
    return UCS_ERR_EXCEEDS_LIMIT;
}

ucs_status_t tc_progress_poller_set_quiet(tc_progress_engine_h engine, int id, int quiet)
{
    if ((id < 0) || ((unsigned)id >= engine->max_pollers) ||
        (__atomic_load_n(&engine->slots[id].state, __ATOMIC_RELAXED) != TC_POLLER_ACTIVE)) {
        ucs_error("progress engine %p: invalid poller id %d", engine, id);
        return UCS_ERR_INVALID_PARAM;
    }
    __atomic_store_n(&engine->slots[id].quiet, quiet != 0, __ATOMIC_RELAXED);
    return UCS_OK;
}

ucs_status_t tc_progress_poller_remove(tc_progress_engine_h engine, int id)
{
    tc_poller_slot_t *slot;
    pthread_t driver;
    uint64_t seq;

    if ((id < 0) || ((unsigned)id >= engine->max_pollers)) {
        ucs_error("progress engine %p: invalid poller id %d", engine, id);
        return UCS_ERR_INVALID_PARAM;
    }

    slot = &engine->slots[id];
    pthread_mutex_lock(&engine->lock);
    if (__atomic_load_n(&slot->state, __ATOMIC_RELAXED) != TC_POLLER_ACTIVE) {
        pthread_mutex_unlock(&engine->lock);
        ucs_error("progress engine %p: poller %d is not registered", engine, id);
        return UCS_ERR_NO_ELEM;
    }
    __atomic_store_n(&slot->state, TC_POLLER_DEAD, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&engine->lock);

    /* Grace period: a loop that started before the DEAD store may still be
     * calling this poller. Skip the wait only on the driving thread, where
     * that loop is our own caller. */
    driver = __atomic_load_n(&engine->driver, __ATOMIC_RELAXED);
    if (pthread_equal(driver, pthread_self())) {
        seq = 0;   /* the loop in progress, if any, is our caller */
    } else {
        tc_engine_remote_fence();
        seq = __atomic_load_n(&engine->seq, __ATOMIC_SEQ_CST);
    }
    if (seq & 1) {
        while (__atomic_load_n(&engine->seq, __ATOMIC_SEQ_CST) == seq) {
            sched_yield();
        }
    }

    __atomic_store_n(&slot->state, TC_POLLER_FREE, __ATOMIC_RELEASE);
    ucs_trace("progress engine %p: removed poller %d", engine, id);
    return UCS_OK;
}

unsigned tc_progress(tc_progress_engine_h engine)
{
    unsigned events = 0;
    tc_poller_slot_t *slot;
    unsigned i, high;
    uint64_t seq;
    int quiet_turn;

    /* one driver at a time: only it writes seq */
    __atomic_store_n(&engine->driver, pthread_self(), __ATOMIC_RELAXED);
    seq = __atomic_load_n(&engine->seq, __ATOMIC_RELAXED);
    if (ucs_likely(tc_engine_asymmetric)) {
        __atomic_store_n(&engine->seq, seq + 1, __ATOMIC_RELAXED);
        __atomic_signal_fence(__ATOMIC_SEQ_CST);   /* the remover's membarrier */
    } else {
        __atomic_store_n(&engine->seq, seq + 1, __ATOMIC_SEQ_CST);
    }

    if (engine->worker != NULL) {
        events += ucp_worker_progress(engine->worker);
    }

    high       = __atomic_load_n(&engine->high, __ATOMIC_ACQUIRE);
    quiet_turn = (__atomic_load_n(&engine->loops, __ATOMIC_RELAXED) %
                  TC_PROGRESS_QUIET_EVERY) == 0;
    for (i = 0; i < high; ++i) {
        slot = &engine->slots[i];
        if ((__atomic_load_n(&slot->state, __ATOMIC_SEQ_CST) == TC_POLLER_ACTIVE) &&
            (quiet_turn || !__atomic_load_n(&slot->quiet, __ATOMIC_RELAXED))) {
            events += slot->cb(slot->arg);
        }
    }

    /* the callbacks' accesses before the even seq a remover waits for */
    __atomic_store_n(&engine->seq, seq + 2, __ATOMIC_RELEASE);

    __atomic_store_n(&engine->loops, engine->loops + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&engine->events, engine->events + events, __ATOMIC_RELAXED);
    if (events == 0) {
        __atomic_store_n(&engine->idle_loops, engine->idle_loops + 1,
                         __ATOMIC_RELAXED);
    }
    return events;
}

ucs_status_t tc_progress_until(tc_progress_engine_h engine,
                               int (*done)(void *arg), void *arg,
                               double timeout_s)
{
    double deadline = tc_clock(CLOCK_MONOTONIC) + timeout_s;
    unsigned idle   = 0;

    while (!done(arg)) {
        if (tc_engine_step(engine) != 0) {
            idle = 0;
            continue;
        }
        /* the clock is cheap but not free: look at it every few idle steps,
         * and at every step of the sleep policy, whose steps are long */
        if ((++idle % 64 == 0) || (engine->waiter.effective == TC_WAIT_SLEEP) ||
            (engine->waiter.effective == TC_WAIT_ADAPTIVE)) {
            if (tc_clock(CLOCK_MONOTONIC) > deadline) {
                tc_engine_idle_end(engine);
                return done(arg) ? UCS_OK : UCS_ERR_TIMED_OUT;
            }
        }
    }
    tc_engine_idle_end(engine);
    return UCS_OK;
}

static void *tc_progress_thread_main(void *arg)
{
    tc_progress_engine_h engine = arg;

    ucs_debug("progress engine %p: thread started", engine);
    while (!__atomic_load_n(&engine->thread_stop, __ATOMIC_ACQUIRE)) {
        tc_engine_step(engine);
    }
    tc_engine_idle_end(engine);
    ucs_debug("progress engine %p: thread stopped", engine);
    return NULL;
}

ucs_status_t tc_progress_thread_start(tc_progress_engine_h engine)
{
    int ret;

    if (engine->thread_running) {
        ucs_error("progress engine %p: progress thread already runs", engine);
        return UCS_ERR_ALREADY_EXISTS;
    }

    __atomic_store_n(&engine->thread_stop, 0, __ATOMIC_RELEASE);
    ret = pthread_create(&engine->thread, NULL, tc_progress_thread_main, engine);
    if (ret != 0) {
        ucs_error("progress engine %p: pthread_create failed: %s", engine,
                  strerror(ret));
        return UCS_ERR_IO_ERROR;
    }
    engine->thread_running = 1;
    return UCS_OK;
}

ucs_status_t tc_progress_thread_stop(tc_progress_engine_h engine)
{
    if (!engine->thread_running) {
        ucs_error("progress engine %p: no progress thread runs", engine);
        return UCS_ERR_INVALID_PARAM;
    }
    __atomic_store_n(&engine->thread_stop, 1, __ATOMIC_RELEASE);
    pthread_join(engine->thread, NULL);
    engine->thread_running = 0;
    return UCS_OK;
}

void tc_progress_stats_get(tc_progress_engine_h engine,
                           tc_progress_stats_t *stats)
{
    stats->loops      = __atomic_load_n(&engine->loops, __ATOMIC_RELAXED);
    stats->idle_loops = __atomic_load_n(&engine->idle_loops, __ATOMIC_RELAXED);
    stats->events     = __atomic_load_n(&engine->events, __ATOMIC_RELAXED);
    stats->idle_cpu_s = __atomic_load_n(&engine->idle_ns, __ATOMIC_RELAXED) * 1e-9;
    stats->policy     = engine->waiter.effective;
    stats->mechanism  = engine->waiter.mechanism;
}
