/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The worker of a UCP context, for ucp_poll_ifunc: over transports that
 * emulate puts (tcp in UCX 1.13) a put lands only when the TARGET
 * progresses its worker, and ucp_poll_ifunc is given only the context, as
 * in the public API. The public fork implements the call inside UCP, where
 * a context knows its workers; we are outside UCP and public UCP has no
 * call from a context to its workers. So this file wraps ucp_worker_create
 * and ucp_worker_destroy, as profiling libraries wrap MPI calls, and
 * remembers which workers each context has.
 *
 * The wrappers are used when this library precedes libucp in the program's
 * symbol lookup order, as it does for programs linked with
 * `pkg-config --libs twochains` (-ltwochains before -lucp); otherwise UCP's
 * own functions are called, nothing is recorded, and ucp_poll_ifunc does
 * not progress (the program must, as it must with the public fork).
 *
 * Threads: creation and destruction under a lock, each moving a generation
 * counter; the lookup of a context's only worker takes the lock only when
 * the generation moved or the context is another than last time.
 */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE
#endif
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/compat/ucp_ifunc_int.h"

#include <base/debug.h>

#include <dlfcn.h>
#include <pthread.h>

#define TC_CONTEXT_WORKERS_MAX 256   /* recorded workers, all contexts */

typedef ucs_status_t (*tc_worker_create_fn_t)(ucp_context_h, const ucp_worker_params_t*,
                                              ucp_worker_h*);
typedef void (*tc_worker_destroy_fn_t)(ucp_worker_h);

typedef struct {
    ucp_context_h context;
    ucp_worker_h  worker;
} tc_context_worker_t;

static pthread_mutex_t     tc_context_workers_lock = PTHREAD_MUTEX_INITIALIZER;
static tc_context_worker_t tc_context_workers[TC_CONTEXT_WORKERS_MAX];
static unsigned            tc_context_workers_count;
static int                 tc_context_workers_full_warned;
static unsigned            tc_context_workers_generation = 1;

static void *tc_context_workers_next(const char *name)
{
    void *fn = dlsym(RTLD_NEXT, name);

    if (fn == NULL) {
        ucs_error("ifunc: %s not found after libtwochains: %s", name, dlerror());
    }
    return fn;
}

ucs_status_t ucp_worker_create(ucp_context_h context, const ucp_worker_params_t *params,
                               ucp_worker_h *worker_p)
{
    static tc_worker_create_fn_t next;
    ucs_status_t status;

    if (next == NULL) {
        next = (tc_worker_create_fn_t)tc_context_workers_next("ucp_worker_create");
        if (next == NULL) {
            return UCS_ERR_UNSUPPORTED;
        }
    }
    status = next(context, params, worker_p);
    if (status != UCS_OK) {
        return status;
    }
    pthread_mutex_lock(&tc_context_workers_lock);
    if (tc_context_workers_count < TC_CONTEXT_WORKERS_MAX) {
        tc_context_workers[tc_context_workers_count].context = context;
        tc_context_workers[tc_context_workers_count].worker  = *worker_p;
        ++tc_context_workers_count;
        __atomic_add_fetch(&tc_context_workers_generation, 1, __ATOMIC_RELEASE);
    } else if (!tc_context_workers_full_warned) {
        tc_context_workers_full_warned = 1;
        ucs_diag("ifunc: more than %u UCP workers: ucp_poll_ifunc progresses none of "
                 "the later ones", TC_CONTEXT_WORKERS_MAX);
    }
    pthread_mutex_unlock(&tc_context_workers_lock);
    return UCS_OK;
}

void ucp_worker_destroy(ucp_worker_h worker)
{
    static tc_worker_destroy_fn_t next;
    unsigned i;

    pthread_mutex_lock(&tc_context_workers_lock);
    for (i = 0; i < tc_context_workers_count; ++i) {
        if (tc_context_workers[i].worker == worker) {
            tc_context_workers[i] = tc_context_workers[--tc_context_workers_count];
            __atomic_add_fetch(&tc_context_workers_generation, 1, __ATOMIC_RELEASE);
            break;
        }
    }
    pthread_mutex_unlock(&tc_context_workers_lock);
    if (next == NULL) {
        next = (tc_worker_destroy_fn_t)tc_context_workers_next("ucp_worker_destroy");
        if (next == NULL) {
            return;
        }
    }
    next(worker);
}

ucp_worker_h tc_context_only_worker(ucp_context_h context)
{
    static __thread ucp_context_h last_context;
    static __thread ucp_worker_h  last_worker;
    static __thread unsigned      last_generation;
    unsigned generation = __atomic_load_n(&tc_context_workers_generation,
                                          __ATOMIC_ACQUIRE);
    ucp_worker_h worker = NULL;
    unsigned i, found = 0;

    if ((generation == last_generation) && (context == last_context)) {
        return last_worker;
    }
    pthread_mutex_lock(&tc_context_workers_lock);
    generation = tc_context_workers_generation;
    for (i = 0; i < tc_context_workers_count; ++i) {
        if (tc_context_workers[i].context == context) {
            worker = tc_context_workers[i].worker;
            ++found;
        }
    }
    pthread_mutex_unlock(&tc_context_workers_lock);
    last_context    = context;
    last_worker     = (found == 1) ? worker : NULL;
    last_generation = generation;
    return last_worker;
}
