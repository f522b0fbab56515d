/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * What confined code (jit_confine.c rewrites it) and its runner (confine.c)
 * share: the run context's layout, read by the inserted checks at fixed
 * offsets, and the trap codes. No LLVM type here.
 *
 * Invariants:
 *  - a run's context is the runner's memory, in no region: a jam reaches it
 *    only through __tc_confine_current(), and every store of the jam is
 *    checked against the write regions, so it cannot alter its own bounds,
 *    fuel or stack floors;
 *  - regions are [lo, lo + size); size 0 is "nothing". The read regions are
 *    a superset of the write regions (the payload is read-only);
 *  - the regions are fixed for the whole run: checks may read them once per
 *    function entry.
 */
#ifndef TC_IFUNC_CONFINE_ABI_H_
#define TC_IFUNC_CONFINE_ABI_H_

#include <twochains/ifunc.h>   /* tc_ifunc_trap_t: why a run ended early */

#include <stdint.h>

/* the regions a run grants, by index */
enum {
    TC_CONFINE_REGION_PAYLOAD, /* the frame's payload: read only */
    TC_CONFINE_REGION_TARGET,  /* what target_args points to, its declared size */
    TC_CONFINE_REGION_STATE,   /* a group's registered state */
    TC_CONFINE_REGION_SHADOW,  /* the jam's stack: every local that has an address */
    TC_CONFINE_REGIONS
};

typedef struct tc_confine_region {
    uint64_t lo;
    uint64_t size;
} tc_confine_region_t;

typedef struct tc_confine_ctx {
    int64_t             fuel;         /* units left: a run traps below zero */
    uint64_t            shadow_sp;    /* the shadow stack grows down to its region's lo */
    uint64_t            stack_floor;  /* the native stack may not go below */
    uint64_t            reserved;
    tc_confine_region_t rd[TC_CONFINE_REGIONS];
    tc_confine_region_t wr[TC_CONFINE_REGIONS];
} tc_confine_ctx_t;

/* offsets the rewritten code uses (checked by the runner at compile time) */
#define TC_CONFINE_OFF_FUEL        0
#define TC_CONFINE_OFF_SHADOW_SP   8
#define TC_CONFINE_OFF_STACK_FLOOR 16
#define TC_CONFINE_OFF_RD          32
#define TC_CONFINE_OFF_WR          (32 + 16 * TC_CONFINE_REGIONS)

#endif
