/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Assertions and small helpers in UCX's shape. UCX does not install
 * ucs/debug/assert.h, so the extension carries its own. Assertions check
 * invariants of our own state, never user or wire input.
 */
#ifndef TC_BASE_DEBUG_H_
#define TC_BASE_DEBUG_H_

#include <ucs/sys/preprocessor.h>
#include <ucs/debug/log_def.h>
#include <stdlib.h>

#define tc_assert_always(_cond) \
    do { \
        if (ucs_unlikely(!(_cond))) { \
            ucs_fatal("assertion failed: %s", #_cond); \
        } \
    } while (0)

#ifdef NDEBUG
#  define tc_assert(_cond) do { (void)sizeof(_cond); } while (0)
#else
#  define tc_assert(_cond) tc_assert_always(_cond)
#endif

/* ucs_fatal is not exported by the installed headers in a usable form on
 * every UCX >= 1.13, so log at error level and abort. */
#ifndef ucs_fatal
#  define ucs_fatal(_fmt, ...) \
    do { \
        ucs_log_fatal_error("%s:%d " _fmt, __FILE__, __LINE__, ## __VA_ARGS__); \
        abort(); \
    } while (0)
#endif

#endif
