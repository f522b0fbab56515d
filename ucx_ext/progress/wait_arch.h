/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Per-architecture idle instructions for the wait policies.
 */
#ifndef TC_PROGRESS_WAIT_ARCH_H_
#define TC_PROGRESS_WAIT_ARCH_H_

#include <ucs/sys/compiler_def.h>
#include <stdint.h>

#if defined(__x86_64__)
#  include <cpuid.h>
#  include <x86intrin.h>

static UCS_F_ALWAYS_INLINE void tc_arch_pause(void)
{
    __builtin_ia32_pause();
}

/* CPUID.(EAX=7,ECX=0):ECX bit 5 */
static inline int tc_arch_has_monitor_wait(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        return 0;
    }
    return !!(c & (1u << 5));
}

/* Arm the monitor on @watch, recheck, then sleep in C0.1 until the line is
 * written or ~@cycles TSC ticks pass. */
__attribute__((target("waitpkg"))) static inline void
tc_arch_monitor_wait(const volatile void *watch, uint64_t cycles)
{
    _umonitor((void*)(uintptr_t)watch);
    _umwait(1 /* C0.1: fast wake-up */, __rdtsc() + cycles);
}

#  define TC_ARCH_WFE_NAME      "umwait"
#  define TC_ARCH_WFE_FALLBACK  "pause (this CPU has no WAITPKG/umwait)"

#elif defined(__aarch64__)

static UCS_F_ALWAYS_INLINE void tc_arch_pause(void)
{
    __asm__ volatile("yield" ::: "memory");
}

static inline int tc_arch_has_monitor_wait(void)
{
    return 1; /* WFE is architectural on ARMv8 */
}

/* Load-exclusive arms the global monitor on the line; a store by another
 * agent clears it and generates the event that ends WFE. Linux's event
 * stream (100 us) bounds the wait even if no store ever comes. */
static inline void tc_arch_monitor_wait(const volatile void *watch,
                                        uint64_t cycles)
{
    uint64_t tmp;
    (void)cycles;
    __asm__ volatile("sevl\n\twfe\n\tldxrb %w0, [%1]\n\twfe"
                     : "=&r"(tmp) : "r"(watch) : "memory");
}

#  define TC_ARCH_WFE_NAME      "wfe"
#  define TC_ARCH_WFE_FALLBACK  "yield"

#else

static UCS_F_ALWAYS_INLINE void tc_arch_pause(void)
{
    __asm__ volatile("" ::: "memory");
}

static inline int tc_arch_has_monitor_wait(void)
{
    return 0;
}

static inline void tc_arch_monitor_wait(const volatile void *watch,
                                        uint64_t cycles)
{
    (void)watch;
    (void)cycles;
}

#  define TC_ARCH_WFE_NAME      "none"
#  define TC_ARCH_WFE_FALLBACK  "compiler barrier (no pause instruction known)"

#endif

#endif
