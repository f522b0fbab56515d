/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * What the public-API probe and its ifuncs agree on: the payload pattern
 * and the receiver's target arguments. Inline and free of library calls,
 * so the ifuncs that use it need no external symbol.
 */
#ifndef SWEEP_PATTERN_H_
#define SWEEP_PATTERN_H_

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t runs;
    uint64_t bytes;
    uint64_t bad;        /* payload bytes off the pattern, wrong globals */
    char     text[64];
} sweep_target_t;

/* byte i of an n-byte payload: depends on both, so a frame of another size
 * or a shifted one does not match */
static inline uint8_t sweep_byte(size_t i, size_t n)
{
    return (uint8_t)(i * 131u + n * 7u + (i >> 8));
}

static inline void sweep_fill(void *payload, size_t n)
{
    size_t i;

    for (i = 0; i < n; ++i) {
        ((uint8_t*)payload)[i] = sweep_byte(i, n);
    }
}

static inline uint64_t sweep_mismatches(const void *payload, size_t n)
{
    uint64_t bad = 0;
    size_t i;

    for (i = 0; i < n; ++i) {
        bad += (((const uint8_t*)payload)[i] != sweep_byte(i, n));
    }
    return bad;
}

#endif
