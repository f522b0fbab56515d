/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * greet: an ifunc in the style of the public Two-Chains API with a writable
 * global, a helper function and a libc call, like the public hello.c. Every
 * frame must see the global at its initial value (the jam contract: a
 * per-message copy), also when the receiver runs it from its code cache.
 */
#include <stdint.h>
#include <stdio.h>

#include "sweep_pattern.h"

size_t greet_base = 42;

static uint64_t triangle(uint64_t n)
{
    return (n < 2) ? n : n + triangle(n - 1);
}

size_t greet_payload_get_max_size(void *source_args, size_t source_args_size)
{
    (void)source_args;
    return source_args_size;
}

int greet_payload_init(void *payload, size_t payload_size, void *source_args,
                       size_t source_args_size)
{
    size_t i, n = (source_args_size < payload_size) ? source_args_size : payload_size;

    for (i = 0; i < n; ++i) {
        ((uint8_t*)payload)[i] = ((const uint8_t*)source_args)[i];
    }
    return 0;
}

void greet_main(void *payload, size_t payload_size, void *target_args)
{
    sweep_target_t *t = target_args;

    greet_base += payload_size;            /* 42 + size, if it started fresh */
    if (greet_base != 42 + payload_size) {
        ++t->bad;
    }
    snprintf(t->text, sizeof(t->text), "greet %zu %llu", greet_base,
             (unsigned long long)triangle(payload_size % 32));
    t->bad += sweep_mismatches(payload, payload_size);
    ++t->runs;
}
