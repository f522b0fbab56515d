/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * portable_jit: what a Portable jam costs at its receiver, in one process.
 *  - compile: each jam of a package compiled from its module for this host
 *    (tc_ifunc_portable_prepare), the time of each compile, and once the
 *    time to load LLVM and create the JIT (the first compile's extra);
 *  - run: the compiled jam against the package's own machine code (its
 *    Local Function library, cc -O2), the same payload, interleaved in
 *    rounds: per round, ns per call of each.
 * One JSON object per point; contrib/bench/portable.sh drives it.
 *
 * Usage: portable_jit PKG_PREFIX PKG_NAME ROUNDS CALLS
 */
#include "ifunc/portable/portable.h"

#include <twochains/ifunc.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PAYLOAD_BYTES 1024   /* 64 index/value pairs, 128 values, or text */

static double now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* A payload each tcbench / tckv jam accepts and does real work on */
static size_t make_payload(const char *jam, uint8_t *p)
{
    uint64_t *w = (uint64_t*)p;
    unsigned i;

    memset(p, 0, PAYLOAD_BYTES);
    if (strcmp(jam, "calls_libc") == 0) {
        memset(p, 'x', 100);
        return 101;
    }
    if (strcmp(jam, "indirect_put") == 0) {
        for (i = 0; i < 64; ++i) {
            w[2 * i]     = (i * 37) % 1024;   /* index */
            w[2 * i + 1] = i;                 /* value */
        }
        return 64 * 16;
    }
    for (i = 0; i < 128; ++i) {
        w[i] = i + 1;
    }
    return (strncmp(jam, "kv_", 3) == 0) ? 32 : 128 * 8;
}

static double time_calls(tc_jam_main_fn_t fn, void *payload, size_t size, void *target,
                         unsigned calls)
{
    double start = now_ns();
    unsigned i;

    for (i = 0; i < calls; ++i) {
        fn(payload, size, target);
    }
    return (now_ns() - start) / calls;
}

int main(int argc, char **argv)
{
    static uint8_t payload[PAYLOAD_BYTES] __attribute__((aligned(64)));
    static char target[4096] __attribute__((aligned(64)));
    const tc_ifunc_portable_bc_t *bc;
    const tc_portable_code_t *code;
    const tc_ifunc_element_t *e;
    tc_jam_main_fn_t compiled;
    unsigned rounds, calls, r, i;
    double setup_s = 0, local_ns, compiled_ns;
    tc_ifunc_pkg_h pkg;
    size_t size;

    if (argc != 5) {
        fprintf(stderr, "usage: %s PKG_PREFIX PKG_NAME ROUNDS CALLS\n", argv[0]);
        return 2;
    }
    rounds = (unsigned)atoi(argv[3]);
    calls  = (unsigned)atoi(argv[4]);
    if ((tc_ifunc_pkg_load(argv[1], argv[2], &pkg) != UCS_OK) ||
        (tc_ifunc_portable_prepare(pkg, 60.0) != UCS_OK)) {
        fprintf(stderr, "portable_jit: cannot load and compile %s\n", argv[2]);
        return 1;
    }
    for (i = 0; i < pkg->num_elements; ++i) {
        e    = &pkg->elements[i];
        bc   = tc_ifunc_elem_portable(e, tc_portable_host_triple());
        code = (bc != NULL) ? tc_portable_find(bc->bc_hash, &setup_s) : NULL;
        if (code == NULL) {
            fprintf(stderr, "portable_jit: %s has no compiled module\n", e->name);
            return 1;
        }
        printf("{\"point\":\"compile\",\"jam\":\"%s\",\"triple\":\"%s\",\"bc_bytes\":%u,"
               "\"compile_ms\":%.3f}\n", e->name, bc->triple, bc->bc_size,
               code->compile_s * 1e3);
    }
    printf("{\"point\":\"jit_setup\",\"ms\":%.3f}\n", setup_s * 1e3);

    for (r = 0; r < rounds; ++r) {
        for (i = 0; i < pkg->num_elements; ++i) {
            e        = &pkg->elements[i];
            bc       = tc_ifunc_elem_portable(e, tc_portable_host_triple());
            compiled = (tc_jam_main_fn_t)(void*)tc_portable_find(bc->bc_hash,
                                                                 NULL)->entry.code;
            size     = make_payload(e->name, payload);
            /* warm both, then alternate which goes first */
            time_calls(e->local->main, payload, size, target, calls / 10 + 1);
            time_calls(compiled, payload, size, target, calls / 10 + 1);
            if (r % 2) {
                compiled_ns = time_calls(compiled, payload, size, target, calls);
                local_ns    = time_calls(e->local->main, payload, size, target, calls);
            } else {
                local_ns    = time_calls(e->local->main, payload, size, target, calls);
                compiled_ns = time_calls(compiled, payload, size, target, calls);
            }
            printf("{\"point\":\"run\",\"round\":%u,\"jam\":\"%s\",\"payload\":%zu,"
                   "\"local_ns\":%.2f,\"compiled_ns\":%.2f}\n", r, e->name, size,
                   local_ns, compiled_ns);
        }
    }
    tc_ifunc_pkg_unload(pkg);
    return 0;
}
