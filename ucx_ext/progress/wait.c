/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Wait policies. A tc_waiter_t belongs to one thread; nothing here is shared.
 * Every idle step is bounded, so a caller that also checks a deadline or a
 * stop flag between steps never hangs.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "wait_arch.h"

#include <base/debug.h>
#include <twochains/config.h>
#include <twochains/wait.h>

#include <string.h>
#include <strings.h>
#include <time.h>
#include <sched.h>

/* Bound of one umwait step in TSC cycles (~100 us at 2-4 GHz), so a stop
 * flag or deadline is noticed promptly even if the watched line stays. */
#define TC_WAIT_MONITOR_CYCLES  (300ull * 1000)

/* Spin steps the sleep policy tries before its first sleep: a reply that
 * arrives within a few microseconds costs no syscall. */
#define TC_WAIT_SLEEP_SPINS     64

ucs_status_t tc_wait_policy_parse(const char *name, tc_wait_policy_t *policy_p)
{
    int i;

    for (i = 0; i < TC_WAIT_LAST; ++i) {
        if (!strcasecmp(name, tc_wait_policy_names[i])) {
            *policy_p = (tc_wait_policy_t)i;
            return UCS_OK;
        }
    }
    ucs_error("unknown wait policy '%s' (busy, pause, wfe or sleep)", name);
    return UCS_ERR_INVALID_PARAM;
}

ucs_status_t tc_waiter_init(tc_waiter_t *waiter, tc_wait_policy_t policy)
{
    static int fallback_logged = 0;
    tc_config_t config;
    ucs_status_t status;

    if ((int)policy < 0 || policy >= TC_WAIT_LAST) {
        ucs_error("invalid wait policy %d", (int)policy);
        return UCS_ERR_INVALID_PARAM;
    }

    status = tc_config_read(&config);
    if (status != UCS_OK) {
        return status;
    }

    memset(waiter, 0, sizeof(*waiter));
    waiter->requested    = policy;
    waiter->effective    = policy;
    waiter->sleep_min_ns = (uint64_t)(config.sleep_min * 1e9);
    waiter->sleep_max_ns = (uint64_t)(config.sleep_max * 1e9);
    tc_config_release(&config);

    if (waiter->sleep_min_ns == 0) {
        waiter->sleep_min_ns = 1;
    }
    if (waiter->sleep_max_ns < waiter->sleep_min_ns) {
        waiter->sleep_max_ns = waiter->sleep_min_ns;
    }

    switch (policy) {
    case TC_WAIT_BUSY:
        waiter->mechanism = "load spin";
        break;
    case TC_WAIT_PAUSE:
        waiter->mechanism = TC_ARCH_WFE_FALLBACK;
#if defined(__x86_64__)
        waiter->mechanism = "pause";
#endif
        break;
    case TC_WAIT_WFE:
        if (tc_arch_has_monitor_wait()) {
            waiter->mechanism = TC_ARCH_WFE_NAME;
        } else {
            waiter->effective = TC_WAIT_PAUSE;
            waiter->mechanism = TC_ARCH_WFE_FALLBACK;
            if (!fallback_logged) {
                fallback_logged = 1;
                ucs_diag("wait policy wfe falls back to %s", waiter->mechanism);
            }
        }
        break;
    case TC_WAIT_SLEEP:
        waiter->mechanism = "nanosleep backoff";
        break;
    default:
        break;
    }

    tc_waiter_reset(waiter);
    return UCS_OK;
}

static void tc_waiter_sleep(tc_waiter_t *waiter)
{
    struct timespec ts;

    if (waiter->spins < TC_WAIT_SLEEP_SPINS) {
        ++waiter->spins;
        sched_yield();
        return;
    }

    ts.tv_sec  = waiter->backoff_ns / 1000000000ull;
    ts.tv_nsec = waiter->backoff_ns % 1000000000ull;
    nanosleep(&ts, NULL);

    waiter->backoff_ns *= 2;
    if (waiter->backoff_ns > waiter->sleep_max_ns) {
        waiter->backoff_ns = waiter->sleep_max_ns;
    }
}

void tc_waiter_idle(tc_waiter_t *waiter, const volatile void *watch)
{
    switch (waiter->effective) {
    case TC_WAIT_BUSY:
        ucs_compiler_fence();
        break;
    case TC_WAIT_PAUSE:
        tc_arch_pause();
        break;
    case TC_WAIT_WFE:
        if (watch != NULL) {
            tc_arch_monitor_wait(watch, TC_WAIT_MONITOR_CYCLES);
        } else {
            tc_arch_pause();
        }
        break;
    case TC_WAIT_SLEEP:
        tc_waiter_sleep(waiter);
        break;
    default:
        tc_assert_always(0);
    }
}

static double tc_wait_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

ucs_status_t tc_waiter_wait_change(tc_waiter_t *waiter,
                                   const volatile uint64_t *addr,
                                   uint64_t old, double timeout_s)
{
    double deadline = tc_wait_now() + timeout_s;
    unsigned step   = 0;

    tc_waiter_reset(waiter);
    while (__atomic_load_n(addr, __ATOMIC_ACQUIRE) == old) {
        /* reading the clock every step would dominate the busy policies */
        if ((++step % 256) == 0 || waiter->effective == TC_WAIT_SLEEP ||
            waiter->effective == TC_WAIT_WFE) {
            if (tc_wait_now() > deadline) {
                return UCS_ERR_TIMED_OUT;
            }
        }
        tc_waiter_idle(waiter, addr);
    }
    return UCS_OK;
}
