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
 *  - a trap longjmps back to the run's frame. Confined code holds no lock,
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

#include "confine_abi.h"
#include "ifunc_int.h"
#include "jit.h"

#include <base/debug.h>

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

typedef struct tc_confine_run {
    tc_confine_ctx_t      ctx;    /* first: the jam's pointer is the run's */
    jmp_buf               jump;
    struct tc_confine_run *prev;
} tc_confine_run_t;

_Static_assert(offsetof(tc_confine_ctx_t, fuel) == TC_CONFINE_OFF_FUEL, "ABI");
_Static_assert(offsetof(tc_confine_ctx_t, shadow_sp) == TC_CONFINE_OFF_SHADOW_SP, "ABI");
_Static_assert(offsetof(tc_confine_ctx_t, stack_floor) == TC_CONFINE_OFF_STACK_FLOOR, "ABI");
_Static_assert(offsetof(tc_confine_ctx_t, rd) == TC_CONFINE_OFF_RD, "ABI");
_Static_assert(offsetof(tc_confine_ctx_t, wr) == TC_CONFINE_OFF_WR, "ABI");

static __thread tc_confine_run_t *tc_confine_current_run;
static __thread uint8_t          *tc_confine_shadow;
static __thread size_t           tc_confine_shadow_size;
static __thread uintptr_t        tc_confine_thread_stack_lo;   /* 0: not known yet */

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

static void __attribute__((noreturn)) tc_confine_trap(tc_confine_ctx_t *ctx, int32_t why)
{
    longjmp(((tc_confine_run_t*)ctx)->jump, (why > 0) ? why : TC_IFUNC_TRAP_MEMORY);
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

/* ---- the run ---- */

static void tc_confine_thread_exit(void *shadow)
{
    free(shadow);
}

static void tc_confine_make_key(void)
{
    (void)pthread_key_create(&tc_confine_key, tc_confine_thread_exit);
}

/* The lowest address of this thread's stack that we may let a jam near */
static uintptr_t tc_confine_stack_lo(void)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;

    if (tc_confine_thread_stack_lo == 0) {
        tc_confine_thread_stack_lo = 1;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
                tc_confine_thread_stack_lo = (uintptr_t)addr + 64 * 1024;   /* guard, slack */
            }
            pthread_attr_destroy(&attr);
        }
    }
    return tc_confine_thread_stack_lo;
}

static ucs_status_t tc_confine_shadow_get(void)
{
    size_t size = tc_ifunc_config_get()->confine_shadow;

    if (tc_confine_shadow != NULL) {
        return UCS_OK;
    }
    pthread_once(&tc_confine_key_once, tc_confine_make_key);
    size = (size < 4096) ? 4096 : size;
    tc_confine_shadow = aligned_alloc(64, (size + 63) & ~(size_t)63);
    if (tc_confine_shadow == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    tc_confine_shadow_size = (size + 63) & ~(size_t)63;
    (void)pthread_setspecific(tc_confine_key, tc_confine_shadow);
    return UCS_OK;
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
    int why = setjmp(run->jump);

    if (why == 0) {
        fn(payload, payload_size, target_args);
    }
    return why;
}

tc_ifunc_trap_t tc_confine_run(tc_ifunc_rx_t *rx, const void *entry, void *payload,
                               size_t payload_size)
{
    const tc_ifunc_config_t *config = tc_ifunc_config_get();
    tc_confine_run_t run;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0), floor, lo, hi;
    tc_ifunc_trap_t why;

    if (tc_confine_shadow_get() != UCS_OK) {
        why = TC_IFUNC_TRAP_STACK;
        goto out;
    }
    memset(&run.ctx, 0, sizeof(run.ctx));
    run.ctx.fuel = (config->confine_fuel > INT64_MAX) ? INT64_MAX :
                                                        (int64_t)config->confine_fuel;
    floor = (here > config->confine_stack) ? here - config->confine_stack : 0;
    lo    = tc_confine_stack_lo();
    run.ctx.stack_floor = (floor > lo) ? floor : lo;
    /* a nested run gets what its parent has not used of the shadow stack */
    lo = (uintptr_t)tc_confine_shadow;
    hi = (tc_confine_current_run != NULL) ? tc_confine_current_run->ctx.shadow_sp :
                                            lo + tc_confine_shadow_size;
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
