/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The runner of confined code (security `confine`): what a jam the JIT
 * rewrote (jit_confine.c) calls, and the frame that runs it.
 *
 * Invariants:
 *  - a run's context (confine_abi.h) lives in the runner's frame, in no
 *    region: the jam gets it from tc_confine_current() and cannot store to
 *    it. The regions are the payload (read only), the target's declared
 *    size, a group's state and the thread's shadow stack, fixed for the run;
 *  - a trap jumps back to the run's frame (__builtin_longjmp). Confined code holds no lock,
 *    owns no resource and calls only what it may (memcpy, libm, the
 *    receiver's vouched functions, which return before the next check), so
 *    unwinding it loses nothing;
 *  - runs nest (a vouched function may poll): each keeps the previous run's
 *    context and restores it, and a nested run's shadow stack is what its
 *    parent has not used;
 *  - the shadow stack is per thread, allocated on the first run and freed
 *    when the thread exits.
 */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE   /* dladdr1, dl_iterate_phdr, pthread_getattr_np */
#endif
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/confine/confine.h"
#include "ifunc/code/package.h"
#include "ifunc/config/ifunc_config.h"
#include "ifunc/jit/jit.h"
#include "ifunc/receiver/receiver.h"
#include "ifunc/wire/confine_abi.h"

#include <base/debug.h>

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tc_confine_run {
    tc_confine_ctx_t      ctx;    /* first: the jam's pointer is the run's */
    void                  *jump[5]; /* __builtin_setjmp's: frame, resume, stack */
    int                   why;    /* the trap, set before the jump */
    struct tc_confine_run *prev;
} tc_confine_run_t;

_Static_assert(offsetof(tc_confine_ctx_t, fuel) == TC_CONFINE_OFF_FUEL, "ABI");
_Static_assert(offsetof(tc_confine_ctx_t, shadow_sp) == TC_CONFINE_OFF_SHADOW_SP, "ABI");
_Static_assert(offsetof(tc_confine_ctx_t, stack_floor) == TC_CONFINE_OFF_STACK_FLOOR, "ABI");
_Static_assert(offsetof(tc_confine_ctx_t, rd) == TC_CONFINE_OFF_RD, "ABI");
_Static_assert(offsetof(tc_confine_ctx_t, wr) == TC_CONFINE_OFF_WR, "ABI");

/* initial-exec: every function of a confined jam asks for its run's
 * context; a __tls_get_addr call each time cost more than the jam */
#define TC_CONFINE_TLS __thread __attribute__((tls_model("initial-exec")))

/* What a thread's runs share, set up by its first run: the configuration
 * read once, the shadow stack, where its native stack ends */
typedef struct tc_confine_thread {
    int       ready;       /* 1: set up; -1: could not be (no memory) */
    uint8_t   *shadow;
    size_t    shadow_size;
    uintptr_t stack_lo;    /* the lowest native stack address a jam may near */
    int64_t   fuel;
    size_t    stack_bytes;
} tc_confine_thread_t;

static TC_CONFINE_TLS tc_confine_run_t    *tc_confine_current_run;
static TC_CONFINE_TLS tc_confine_thread_t tc_confine_thread;

static pthread_key_t  tc_confine_key;
static pthread_once_t tc_confine_key_once = PTHREAD_ONCE_INIT;

static const char *const tc_ifunc_trap_names[] = {
    [TC_IFUNC_TRAP_NONE]        = "none",
    [TC_IFUNC_TRAP_MEMORY]      = "memory",
    [TC_IFUNC_TRAP_FUEL]        = "fuel",
    [TC_IFUNC_TRAP_STACK]       = "stack",
    [TC_IFUNC_TRAP_UNREACHABLE] = "unreachable"
};

_Static_assert(sizeof(tc_ifunc_trap_names) / sizeof(tc_ifunc_trap_names[0]) ==
               TC_IFUNC_TRAP_LAST, "a name for every trap");

const char *tc_ifunc_trap_name(tc_ifunc_trap_t trap)
{
    return ((unsigned)trap < TC_IFUNC_TRAP_LAST) ? tc_ifunc_trap_names[trap] : "?";
}

/* ---- what confined code calls ---- */

static tc_confine_ctx_t *tc_confine_current(void)
{
    return &tc_confine_current_run->ctx;
}

/* __builtin_setjmp/__builtin_longjmp (the compiler's non-local goto, as
 * its setjmp-longjmp exceptions use): a run saves three words, where
 * setjmp saved every callee-saved register each time (a third of the
 * run's fixed cost) */
static void __attribute__((noreturn, noinline)) tc_confine_trap(tc_confine_ctx_t *ctx,
                                                                int32_t why)
{
    tc_confine_run_t *run = (tc_confine_run_t*)ctx;

    run->why = (why > 0) ? why : TC_IFUNC_TRAP_MEMORY;
    __builtin_longjmp(run->jump, 1);
}

const tc_jit_confine_t *tc_confine_jit_options(void)
{
    static tc_jit_confine_t opts;
    const tc_ifunc_config_t *config = tc_ifunc_config_get();

    /* the configuration is read once per process: so is this */
    opts.current   = (void*)tc_confine_current;
    opts.trap      = (void*)tc_confine_trap;
    opts.allow     = (const char *const*)config->confine_allow.names;
    opts.num_allow = config->confine_allow.count;
    return &opts;
}

/* ---- what a ried's symbol is ---- */

typedef struct {
    uintptr_t addr;
    int       found, writable;
} tc_confine_phdr_query_t;

static int tc_confine_phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    tc_confine_phdr_query_t *q = arg;
    uintptr_t lo, hi;
    int in_load = 0, writable = 0, relro = 0;
    unsigned i;

    (void)size;
    for (i = 0; i < info->dlpi_phnum; ++i) {
        lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
        hi = lo + info->dlpi_phdr[i].p_memsz;
        if ((q->addr < lo) || (q->addr >= hi)) {
            continue;
        }
        if (info->dlpi_phdr[i].p_type == PT_LOAD) {
            in_load  = 1;
            writable = !!(info->dlpi_phdr[i].p_flags & PF_W);
        } else if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
            relro = 1;   /* read only once relocated */
        }
    }
    if (!in_load) {
        return 0;
    }
    q->found    = 1;
    q->writable = writable && !relro;
    return 1;
}

void tc_confine_symbol_info(void *addr, tc_jit_symbol_t *sym)
{
    tc_confine_phdr_query_t q = {(uintptr_t)addr, 0, 0};
    const ElfW(Sym) *esym     = NULL;
    Dl_info info;

    memset(sym, 0, sizeof(*sym));
    if (!dladdr1(addr, &info, (void**)&esym, RTLD_DL_SYMENT) || (esym == NULL)) {
        return;
    }
    if (ELF64_ST_TYPE(esym->st_info) == STT_FUNC) {
        sym->kind = TC_JIT_SYMBOL_FUNCTION;
        return;
    }
    if (ELF64_ST_TYPE(esym->st_info) != STT_OBJECT) {
        return;
    }
    dl_iterate_phdr(tc_confine_phdr_cb, &q);
    if (q.found) {
        sym->kind     = TC_JIT_SYMBOL_OBJECT;
        sym->size     = esym->st_size;
        sym->writable = q.writable;
    }
}

/* A confined module's externals (tc_jit_resolve_fn_t): a ried's symbol,
 * with what it is, or a function of the process, whose name the checker
 * allowed already (jit_confine.c); data of the process never */
void *tc_confine_resolve(void *arg, const char *name, tc_jit_symbol_t *sym, char *why,
                         size_t why_len)
{
    tc_jit_symbol_t info;
    void *addr;

    (void)arg;
    addr = tc_ifunc_ried_symbol(name);
    if (addr != NULL) {
        if (sym != NULL) {
            tc_confine_symbol_info(addr, sym);
        }
        return addr;
    }
    addr = dlsym(RTLD_DEFAULT, name);
    if (addr == NULL) {
        snprintf(why, why_len, "is not in the process");
        return NULL;
    }
    tc_confine_symbol_info(addr, &info);
    if (info.kind != TC_JIT_SYMBOL_FUNCTION) {
        snprintf(why, why_len, "is data of the process, not of a ried");
        return NULL;
    }
    if (sym != NULL) {
        *sym = info;
    }
    return addr;
}

/* ---- the run ---- */

static void tc_confine_thread_exit(void *shadow)
{
    free(shadow);
}

static void tc_confine_make_key(void)
{
    (void)pthread_key_create(&tc_confine_key, tc_confine_thread_exit);
}

/* This thread's setup, on its first run */
static int tc_confine_thread_setup(tc_confine_thread_t *th)
{
    const tc_ifunc_config_t *config = tc_ifunc_config_get();
    size_t size = (config->confine_shadow < 4096) ? 4096 : config->confine_shadow;
    pthread_attr_t attr;
    void *addr;
    size_t len;

    pthread_once(&tc_confine_key_once, tc_confine_make_key);
    size        = (size + 63) & ~(size_t)63;
    th->shadow  = aligned_alloc(64, size);
    if (th->shadow == NULL) {
        th->ready = -1;
        return -1;
    }
    (void)pthread_setspecific(tc_confine_key, th->shadow);
    th->shadow_size = size;
    th->fuel        = (config->confine_fuel > INT64_MAX) ? INT64_MAX :
                                                           (int64_t)config->confine_fuel;
    th->stack_bytes = config->confine_stack;
    th->stack_lo    = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstack(&attr, &addr, &len) == 0) {
            th->stack_lo = (uintptr_t)addr + 64 * 1024;   /* its guard, and slack */
        }
        pthread_attr_destroy(&attr);
    }
    th->ready = 1;
    return 1;
}

static void tc_confine_region(tc_confine_ctx_t *ctx, unsigned r, const void *lo,
                              size_t size, int writable)
{
    ctx->rd[r].lo   = (uintptr_t)lo;
    ctx->rd[r].size = (lo != NULL) ? size : 0;
    ctx->wr[r].lo   = ctx->rd[r].lo;
    ctx->wr[r].size = writable ? ctx->rd[r].size : 0;
}

/* The run itself: its own frame, so that the setjmp's locals are only the
 * arguments, read before the jump */
static __attribute__((noinline)) int
tc_confine_call(tc_confine_run_t *run, tc_jam_main_fn_t fn, void *payload,
                size_t payload_size, void *target_args)
{
    run->why = TC_IFUNC_TRAP_NONE;
    if (__builtin_setjmp(run->jump) == 0) {
        fn(payload, payload_size, target_args);
    }
    return run->why;
}

tc_ifunc_trap_t tc_confine_run(tc_ifunc_rx_t *rx, const void *entry, void *payload,
                               size_t payload_size)
{
    tc_confine_thread_t *th = &tc_confine_thread;
    tc_confine_run_t run;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0), floor, lo, hi;
    tc_ifunc_trap_t why;

    if (ucs_unlikely(th->ready <= 0) &&
        ((th->ready < 0) || (tc_confine_thread_setup(th) < 0))) {
        why = TC_IFUNC_TRAP_STACK;
        goto out;
    }
    run.ctx.fuel        = th->fuel;
    floor               = (here > th->stack_bytes) ? here - th->stack_bytes : 0;
    run.ctx.stack_floor = (floor > th->stack_lo) ? floor : th->stack_lo;
    /* a nested run gets what its parent has not used of the shadow stack */
    lo = (uintptr_t)th->shadow;
    hi = (tc_confine_current_run != NULL) ? tc_confine_current_run->ctx.shadow_sp :
                                            lo + th->shadow_size;
    hi &= ~(uintptr_t)63;
    run.ctx.shadow_sp = hi;
    tc_confine_region(&run.ctx, TC_CONFINE_REGION_PAYLOAD, payload, payload_size, 0);
    tc_confine_region(&run.ctx, TC_CONFINE_REGION_TARGET, rx->target_args,
                      rx->target_size, 1);
    tc_confine_region(&run.ctx, TC_CONFINE_REGION_STATE, rx->state, rx->state_size, 1);
    tc_confine_region(&run.ctx, TC_CONFINE_REGION_SHADOW, (void*)lo, hi - lo, 1);

    run.prev               = tc_confine_current_run;
    tc_confine_current_run = &run;
    why = (tc_ifunc_trap_t)tc_confine_call(&run, (tc_jam_main_fn_t)entry, payload,
                                           payload_size, rx->target_args);
    tc_confine_current_run = run.prev;
out:
    rx->last_trap = why;
    ++rx->stats->confine_runs;
    if (why != TC_IFUNC_TRAP_NONE) {
        why = ((unsigned)why < TC_IFUNC_TRAP_LAST) ? why : TC_IFUNC_TRAP_MEMORY;
        ++rx->stats->confine_traps[why];
        if (!(rx->trap_warned & (1u << why))) {
            rx->trap_warned |= 1u << why;
            ucs_warn("ifunc: a confined jam ended early: trap '%s' (further '%s' traps are "
                     "only counted)", tc_ifunc_trap_name(why), tc_ifunc_trap_name(why));
        }
    }
    return why;
}
