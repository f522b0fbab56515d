/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * tchostile: jams that a receiver in security `confine` must refuse or stop
 * (test/helpers/confine_probe.c), and one that it must run. The receiver
 * grants its target (target_args, TCH_TARGET_SIZE bytes) and nothing else of
 * its own; every jam takes a tch_args_t payload.
 */
#ifndef TCHOSTILE_H_
#define TCHOSTILE_H_

#include <stddef.h>
#include <stdint.h>

#define TCH_TARGET_SIZE 64u   /* what the receiver declares */

typedef struct tch_target {
    uint64_t sum;      /* tch_ok adds its payload's words */
    uint64_t runs;     /* tch_ok runs */
    uint64_t last;     /* what tch_read_past read, if it ever could */
    uint8_t  area[40];
} tch_target_t;

typedef struct tch_args {
    uint64_t a, b, c, d;
} tch_args_t;

#endif
