/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Wait policies: how a thread that found nothing to do spends the time until
 * a remote store (a put into a mailbox, an SST row) becomes visible.
 */
#ifndef TWOCHAINS_WAIT_H_
#define TWOCHAINS_WAIT_H_

#include <ucs/type/status.h>
#include <ucs/sys/compiler_def.h>
#include <stdint.h>

BEGIN_C_DECLS

typedef enum tc_wait_policy {
    TC_WAIT_BUSY,   /**< spin on loads */
    TC_WAIT_PAUSE,  /**< spin with x86 `pause` / Arm `yield` */
    TC_WAIT_WFE,    /**< Arm WFE on an exclusive monitor, x86 `umwait` with
                         WAITPKG; otherwise falls back to PAUSE and says so */
    TC_WAIT_SLEEP,  /**< bounded exponential backoff with nanosleep, for
                         oversubscribed machines and tests */
    TC_WAIT_ADAPTIVE, /**< the default: spin (pause) for a learned part of
                         UCX_TC_SPIN_TIME, and not at all while this process
                         already has as many spinning engine threads as its
                         affinity mask has cores; then yield; then the sleep
                         policy's backoff. The budget halves after a spin
                         that found nothing and grows back when work came
                         soon after: a core that is ours keeps its spin,
                         an oversubscribed one gives it up */
    TC_WAIT_LAST
} tc_wait_policy_t;

/** Names as accepted by UCX_TC_WAIT_POLICY, indexed by tc_wait_policy_t. */
extern const char *tc_wait_policy_names[];

/**
 * Per-thread waiting state. Not shared between threads.
 */
typedef struct tc_waiter {
    tc_wait_policy_t requested;  /**< what the user asked for */
    tc_wait_policy_t effective;  /**< what runs on this CPU */
    const char       *mechanism; /**< e.g. "umwait", "wfe", "pause (no WAITPKG)" */
    uint64_t         sleep_min_ns;
    uint64_t         sleep_max_ns;
    uint64_t         backoff_ns; /**< current sleep step, sleep policy only */
    unsigned         spins;      /**< idle steps since the last reset */
    uint64_t         spin_ns;    /**< adaptive: the most an idle streak spins */
    uint64_t         budget_ns;  /**< adaptive: what the next streak spins */
    uint64_t         streak_ns;  /**< adaptive: when the idle streak began */
    int              spinning;   /**< adaptive: counted among the spinners */
    unsigned         yields;     /**< adaptive: yields in this idle streak */
} tc_waiter_t;

/**
 * Initialize a waiter for @a policy with the sleep bounds from the
 * configuration (UCX_TC_SLEEP_MIN/MAX). Falls back when the CPU lacks the
 * instruction; the fallback is logged once at diag level and named in
 * @a waiter->mechanism.
 */
ucs_status_t tc_waiter_init(tc_waiter_t *waiter, tc_wait_policy_t policy);

/**
 * One bounded idle step, after a poll found nothing. @a watch, when not NULL,
 * is an address whose change should end the step early (monitored by WFE and
 * umwait). Bounded: returns within UCX_TC_SLEEP_MAX (sleep) or ~100 us (wfe).
 */
void tc_waiter_idle(tc_waiter_t *waiter, const volatile void *watch);

/** Idle steps an adaptive streak spins before it looks at the clock, the
 *  crowd or the other spinners: a reply on its way costs nothing more. */
#define TC_WAIT_ADAPTIVE_QUICK_STEPS 16

/** The adaptive policy's verdict on the machine: 1 while it has more
 *  runnable tasks than cores online (then nobody spins), else 0. */
int tc_waiter_machine_crowded(void);

/** The adaptive policy learns from how an idle streak ended (tc_waiter_reset). */
void tc_waiter_streak_end(tc_waiter_t *waiter);

/** Work was found: the next idle step starts from the shortest wait. */
static inline void tc_waiter_reset(tc_waiter_t *waiter)
{
    if ((waiter->effective == TC_WAIT_ADAPTIVE) &&
        (waiter->spins >= TC_WAIT_ADAPTIVE_QUICK_STEPS)) {
        tc_waiter_streak_end(waiter);
    }
    waiter->spins      = 0;
    waiter->backoff_ns = waiter->sleep_min_ns;
}

/**
 * Wait until *@a addr != @a old or @a timeout_s passes.
 * @return UCS_OK when the value changed, UCS_ERR_TIMED_OUT otherwise.
 */
ucs_status_t tc_waiter_wait_change(tc_waiter_t *waiter,
                                   const volatile uint64_t *addr,
                                   uint64_t old, double timeout_s);

/** Parse a policy name; UCS_ERR_INVALID_PARAM for an unknown name. */
ucs_status_t tc_wait_policy_parse(const char *name, tc_wait_policy_t *policy_p);

END_C_DECLS

#endif
