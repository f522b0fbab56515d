/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Wait policies. A tc_waiter_t belongs to one thread; the only state shared
 * between threads is the adaptive policy's count of spinning engine threads.
 * Every idle step is bounded, so a caller that also checks a deadline or a
 * stop flag between steps never hangs.
 *
 * The adaptive policy (the default) is what MPI libraries do when a node is
 * oversubscribed: spin while a reply is likely soon and a core is ours,
 * then give the core away. A spinner that holds a core another thread or
 * process needs does not wait for a store, it delays it: on 2 cores with 3
 * processes, pure spinning was 70-330x slower than backing off.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#define _GNU_SOURCE   /* sched_getaffinity, CPU_COUNT */

#include "wait_arch.h"

#include <base/debug.h>
#include <twochains/config.h>
#include <twochains/wait.h>

#include <string.h>
#include <strings.h>
#include <time.h>
#include <sched.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

/* Bound of one umwait step in TSC cycles (~100 us at 2-4 GHz), so a stop
 * flag or deadline is noticed promptly even if the watched line stays. */
#define TC_WAIT_MONITOR_CYCLES  (300ull * 1000)

/* Spin steps the sleep policy tries before its first sleep: a reply that
 * arrives within a few microseconds costs no syscall. */
#define TC_WAIT_SLEEP_SPINS     64

/* Engine threads of this process spinning in the adaptive policy now, and
 * the cores this process may run on (its affinity mask when the last waiter
 * was made): more spinners than cores only take the core from the thread
 * that has the work. */
static unsigned tc_wait_spinners;
static unsigned tc_wait_cores  = 1;
static unsigned tc_wait_online = 1;   /* the machine's, for the crowd */

/* In the adaptive policy's spin phase, the clock is read every this many
 * steps: a step is one pause (tens of ns), a clock read about as much. */
#define TC_WAIT_SPIN_CLOCK_STEPS 16

static unsigned tc_wait_allowed_cores(void)
{
    cpu_set_t set;
    long online;

    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        return (CPU_COUNT(&set) > 0) ? (unsigned)CPU_COUNT(&set) : 1;
    }
    online = sysconf(_SC_NPROCESSORS_ONLN);
    return (online > 0) ? (unsigned)online : 1;
}

static unsigned tc_wait_online_cores(void)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return (online > 0) ? (unsigned)online : 1;
}

static uint64_t tc_wait_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The machine is crowded when more tasks are runnable than it has cores
 * online (/proc/loadavg's running count, every process included: a
 * neighbour's CPU hog counts too) AND the looking thread itself waited for
 * a CPU for more than TC_WAIT_CROWD_DELAY_SHARE of the time since its last
 * look (run_delay in /proc/thread-self/schedstat). The second half tells a
 * neighbour that takes our cores (same priority: we wait a third of the time
 * and more) from one the scheduler keeps off them (a niced hog: about 1 %):
 * yielding to the niced one only hands it the core and costs us
 * milliseconds at p99.9. Once crowded, the count alone keeps the verdict.
 * Without schedstat the count alone decides. Looked at
 * by one thread at a time, every TC_WAIT_CROWD_CHECK_NS while it is not, and
 * TC_WAIT_CROWD_HOLD_NS after it was: the spinners it stops make it look
 * calm again. */
#define TC_WAIT_CROWD_CHECK_NS    (2ull * 1000 * 1000)
#define TC_WAIT_CROWD_HOLD_NS     (100ull * 1000 * 1000)
#define TC_WAIT_CROWD_DELAY_SHARE 0.1

static uint64_t tc_wait_crowd_next_ns;
static int      tc_wait_crowded;
static int      tc_wait_crowd_seen;   /* the previous look found it crowded */

/* The first line of a small /proc file into @a buf (NUL-terminated) */
static int tc_wait_read_proc(const char *path, char *buf, size_t size)
{
    ssize_t len;
    int fd;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    len = read(fd, buf, size - 1);
    close(fd);
    if (len <= 0) {
        return 0;
    }
    buf[len] = '\0';
    return 1;
}

static int tc_wait_read_running(unsigned *running_p)
{
    char buf[128];

    return tc_wait_read_proc("/proc/loadavg", buf, sizeof(buf)) &&
           (sscanf(buf, "%*f %*f %*f %u/", running_p) == 1);
}

/* This thread's time waiting on a run queue, in ns */
static int tc_wait_read_run_delay(uint64_t *delay_p)
{
    char buf[96];

    return tc_wait_read_proc("/proc/thread-self/schedstat", buf, sizeof(buf)) &&
           (sscanf(buf, "%*u %lu", delay_p) == 1);
}

/* Did this thread wait for a CPU more than its share since its last look? */
static int tc_wait_thread_delayed(uint64_t now)
{
    static __thread uint64_t last_ns, last_delay;
    uint64_t delay;
    int delayed;

    if (!tc_wait_read_run_delay(&delay)) {
        return 1;                  /* no schedstat: the run count decides */
    }
    delayed = (last_ns != 0) && (now > last_ns) &&
              ((double)(delay - last_delay) >
               TC_WAIT_CROWD_DELAY_SHARE * (double)(now - last_ns));
    last_ns    = now;
    last_delay = delay;
    return delayed;
}

static int tc_wait_machine_crowded(uint64_t now)
{
    uint64_t next = __atomic_load_n(&tc_wait_crowd_next_ns, __ATOMIC_RELAXED);
    unsigned running;
    int over, crowded, delayed;

    if ((now < next) ||
        !__atomic_compare_exchange_n(&tc_wait_crowd_next_ns, &next,
                                     now + TC_WAIT_CROWD_CHECK_NS, 0, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED)) {
        return __atomic_load_n(&tc_wait_crowded, __ATOMIC_RELAXED);
    }
    /* two looks in a row: one look also counts whatever else happened to
     * be running at that moment (a shell, a kernel worker) */
    /* the delay is sampled at every look; once crowded, the count alone
     * keeps it so (the waits it starts are no delay) */
    delayed = tc_wait_thread_delayed(now) ||
              __atomic_load_n(&tc_wait_crowded, __ATOMIC_RELAXED);
    over    = delayed && tc_wait_read_running(&running) &&
              (running > __atomic_load_n(&tc_wait_online, __ATOMIC_RELAXED));
    crowded = over && __atomic_load_n(&tc_wait_crowd_seen, __ATOMIC_RELAXED);
    __atomic_store_n(&tc_wait_crowd_seen, over, __ATOMIC_RELAXED);
    __atomic_store_n(&tc_wait_crowded, crowded, __ATOMIC_RELAXED);
    if (crowded) {
        __atomic_store_n(&tc_wait_crowd_next_ns, now + TC_WAIT_CROWD_HOLD_NS,
                         __ATOMIC_RELAXED);
    }
    return crowded;
}

int tc_waiter_machine_crowded(void)
{
    return __atomic_load_n(&tc_wait_crowded, __ATOMIC_RELAXED);
}

static void tc_waiter_stop_spinning(tc_waiter_t *waiter)
{
    __atomic_sub_fetch(&tc_wait_spinners, 1, __ATOMIC_RELAXED);
    waiter->spinning = 0;
}

/* Work came within the spin: the budget was right, let it grow back to the
 * most. Work came later: spinning that long would have caught it, unless
 * it is more than the most. */
void tc_waiter_streak_end(tc_waiter_t *waiter)
{
    uint64_t waited;

    if (waiter->spinning) {
        tc_waiter_stop_spinning(waiter);
        waiter->budget_ns = 2 * waiter->budget_ns + 1000;
        if (waiter->budget_ns > waiter->spin_ns) {
            waiter->budget_ns = waiter->spin_ns;
        }
        return;
    }
    if (waiter->streak_ns == 0) {
        return;
    }
    waited = tc_wait_now_ns() - waiter->streak_ns;
    if ((waited < waiter->spin_ns) && (waited > waiter->budget_ns) &&
        !__atomic_load_n(&tc_wait_crowded, __ATOMIC_RELAXED)) {
        waiter->budget_ns = waited;
    }
}

ucs_status_t tc_wait_policy_parse(const char *name, tc_wait_policy_t *policy_p)
{
    int i;

    for (i = 0; i < TC_WAIT_LAST; ++i) {
        if (!strcasecmp(name, tc_wait_policy_names[i])) {
            *policy_p = (tc_wait_policy_t)i;
            return UCS_OK;
        }
    }
    ucs_error("unknown wait policy '%s' (adaptive, busy, pause, wfe or sleep)", name);
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
    waiter->spin_ns      = (uint64_t)(config.spin_time * 1e9);
    waiter->budget_ns    = waiter->spin_ns;
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
    case TC_WAIT_ADAPTIVE:
        __atomic_store_n(&tc_wait_cores, tc_wait_allowed_cores(), __ATOMIC_RELAXED);
        __atomic_store_n(&tc_wait_online, tc_wait_online_cores(), __ATOMIC_RELAXED);
        waiter->mechanism = "spin (pause), then yield, then nanosleep backoff";
        break;
    default:
        break;
    }

    tc_waiter_reset(waiter);
    return UCS_OK;
}

static void tc_waiter_backoff(tc_waiter_t *waiter)
{
    struct timespec ts;

    ts.tv_sec  = waiter->backoff_ns / 1000000000ull;
    ts.tv_nsec = waiter->backoff_ns % 1000000000ull;
    nanosleep(&ts, NULL);
    waiter->backoff_ns *= 2;
    if (waiter->backoff_ns > waiter->sleep_max_ns) {
        waiter->backoff_ns = waiter->sleep_max_ns;
    }
}

static void tc_waiter_sleep(tc_waiter_t *waiter)
{
    if (waiter->spins < TC_WAIT_SLEEP_SPINS) {
        ++waiter->spins;
        sched_yield();
        return;
    }

    tc_waiter_backoff(waiter);
}

/* Spin for the budget while a core is ours, then yield, then back off. The
 * first TC_WAIT_ADAPTIVE_QUICK_STEPS steps of a streak (the common case of
 * a reply on its way) only spin: no pause, no clock, no shared counter. Then the
 * streak joins the spinners if a core is free for it, and looks at the
 * clock and the crowd every TC_WAIT_SPIN_CLOCK_STEPS steps. */
static void tc_waiter_adaptive(tc_waiter_t *waiter, const volatile void *watch)
{
    uint64_t now;

    if (waiter->spins < TC_WAIT_ADAPTIVE_QUICK_STEPS) {
        if (waiter->spins++ == 0) {
            waiter->streak_ns = 0;
            waiter->yields    = 0;
        }
        if ((waiter->budget_ns != 0) &&
            !__atomic_load_n(&tc_wait_crowded, __ATOMIC_RELAXED)) {
            /* a step is a whole progress loop already; a pause on top only
             * notices the reply later (tens of ns on this AMD host: the
             * pinned pair was 1.2x busy's latency, 0.7x its message rate) */
            ucs_compiler_fence();
            return;
        }
        waiter->spins = TC_WAIT_ADAPTIVE_QUICK_STEPS;   /* no spin: yield now */
    } else if (waiter->spins++ == TC_WAIT_ADAPTIVE_QUICK_STEPS) {
        if ((waiter->budget_ns != 0) &&
            !__atomic_load_n(&tc_wait_crowded, __ATOMIC_RELAXED)) {
            if (__atomic_add_fetch(&tc_wait_spinners, 1, __ATOMIC_RELAXED) <=
                __atomic_load_n(&tc_wait_cores, __ATOMIC_RELAXED)) {
                waiter->spinning = 1;
            } else {
                __atomic_sub_fetch(&tc_wait_spinners, 1, __ATOMIC_RELAXED);
            }
        }
    }
    if (waiter->spinning) {
        if ((waiter->spins % TC_WAIT_SPIN_CLOCK_STEPS) != 1) {
            tc_arch_pause();
            return;
        }
        now = tc_wait_now_ns();
        if (waiter->streak_ns == 0) {
            waiter->streak_ns = now;
        }
        if (tc_wait_machine_crowded(now)) {
            tc_waiter_stop_spinning(waiter);   /* not our core to spin on */
        } else if (now - waiter->streak_ns < waiter->budget_ns) {
            if ((watch != NULL) && tc_arch_has_monitor_wait()) {
                tc_arch_monitor_wait(watch, TC_WAIT_MONITOR_CYCLES / 64);
            } else {
                tc_arch_pause();
            }
            return;
        } else {
            tc_waiter_stop_spinning(waiter);   /* the budget is spent, in vain */
            waiter->budget_ns /= 2;
        }
    }
    now = tc_wait_now_ns();
    if (waiter->streak_ns == 0) {
        waiter->streak_ns = now;
    }
    (void)tc_wait_machine_crowded(now);   /* keeps the verdict current */
    if (waiter->yields < TC_WAIT_SLEEP_SPINS) {
        ++waiter->yields;
        sched_yield();
        return;
    }
    tc_waiter_backoff(waiter);
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
    case TC_WAIT_ADAPTIVE:
        tc_waiter_adaptive(waiter, watch);
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
            waiter->effective == TC_WAIT_WFE || waiter->effective == TC_WAIT_ADAPTIVE) {
            if (tc_wait_now() > deadline) {
                tc_waiter_reset(waiter);
                return UCS_ERR_TIMED_OUT;
            }
        }
        tc_waiter_idle(waiter, addr);
    }
    tc_waiter_reset(waiter);
    return UCS_OK;
}
