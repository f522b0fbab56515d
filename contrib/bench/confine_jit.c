/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * confine_jit: what security `confine` costs at a receiver, in one process.
 *  - compile: each jam's module compiled as `verify` compiles it (its own
 *    package's, tc_ifunc_portable_prepare) and checked, rewritten and
 *    compiled confined (as a stranger's module), the time of each;
 *  - run: the same payload through the verify-compiled entry (a direct call,
 *    as the poll makes it) and through the confined entry (tc_confine_run,
 *    as the poll makes it: regions set, a setjmp, fuel), interleaved in
 *    rounds, which goes first alternating: per round, ns per call of each,
 *    and the memory accesses one call makes (counted from its payload).
 * One JSON object per point; contrib/bench/confine.sh drives it.
 *
 * Usage: confine_jit PKG_PREFIX PKG_NAME ROUNDS CALLS
 */
#include "ifunc/confine/confine.h"
#include "ifunc/portable/portable.h"
#include "ifunc/receiver/receiver.h"

#include <twochains/ifunc.h>
#include <twochains/jam.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tckv_store.h"   /* the state tckv jams run against */

#define PAYLOAD_BYTES 1024

static double now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* A payload each jam does real work on, and the loads and stores one call
 * of it makes (what a check guards) */
static size_t make_payload(const char *jam, uint8_t *p, unsigned *accesses)
{
    uint64_t *w = (uint64_t*)p;
    unsigned i;

    memset(p, 0, PAYLOAD_BYTES);
    if (strcmp(jam, "indirect_put") == 0) {
        for (i = 0; i < 64; ++i) {
            w[2 * i]     = (i * 37) % 1024;   /* index */
            w[2 * i + 1] = i;                 /* value */
        }
        *accesses = 64 * 3 + 1;                /* two loads and a store per pair */
        return 64 * 16;
    }
    if (strncmp(jam, "kv_", 3) == 0) {
        w[0] = 17;     /* key */
        w[1] = 5;      /* value, delta or expected */
        w[2] = 9;      /* desired */
        *accesses = 9; /* the replica, the payload, the entry, the counters */
        return (strcmp(jam, "kv_cas") == 0) ? 24 : 16;
    }
    if (strcmp(jam, "ping") == 0) {
        w[0]      = 42;
        *accesses = 4;
        return 8;
    }
    for (i = 0; i < 128; ++i) {
        w[i] = i + 1;
    }
    *accesses = 128 + 4;   /* server_side_sum: every value, two counters */
    return 128 * 8;
}

static double time_native(tc_jam_main_fn_t fn, void *payload, size_t size, void *target,
                          unsigned calls)
{
    double start = now_ns();
    unsigned i;

    for (i = 0; i < calls; ++i) {
        fn(payload, size, target);
    }
    return (now_ns() - start) / calls;
}

static double time_confined(tc_ifunc_rx_t *rx, const void *entry, void *payload,
                            size_t size, unsigned calls)
{
    double start = now_ns();
    unsigned i;

    for (i = 0; i < calls; ++i) {
        (void)tc_confine_run(rx, entry, payload, size);
    }
    return (now_ns() - start) / calls;
}

int main(int argc, char **argv)
{
    static uint8_t payload[PAYLOAD_BYTES] __attribute__((aligned(64)));
    static uint8_t state[8192] __attribute__((aligned(64)));
    static char text[4096] __attribute__((aligned(64)));
    const tc_portable_code_t *own[64], *confined[64];
    const tc_ifunc_portable_bc_t *bc;
    const tc_ifunc_element_t *e;
    tc_ifunc_stats_t stats;
    tc_jam_replica_t replica;
    tc_ifunc_rx_t rx;
    unsigned rounds, calls, r, i, accesses;
    double verify_ns, confined_ns;
    char detail[192];
    uint8_t *module;
    tc_ifunc_pkg_h pkg;
    size_t size;
    int kv;

    if (argc != 5) {
        fprintf(stderr, "usage: %s PKG_PREFIX PKG_NAME ROUNDS CALLS\n", argv[0]);
        return 2;
    }
    rounds = (unsigned)atoi(argv[3]);
    calls  = (unsigned)atoi(argv[4]);
    kv     = (strcmp(argv[2], "tckv") == 0);
    if ((tc_ifunc_pkg_load(argv[1], argv[2], &pkg) != UCS_OK) ||
        (tc_ifunc_portable_prepare(pkg, 60.0) != UCS_OK) || (pkg->num_elements > 64)) {
        fprintf(stderr, "confine_jit: cannot load and compile %s\n", argv[2]);
        return 1;
    }
    for (i = 0; i < pkg->num_elements; ++i) {
        e           = &pkg->elements[i];
        bc          = tc_ifunc_elem_portable(e, tc_portable_host_triple());
        own[i]      = tc_portable_find(bc->bc_hash, NULL);
        confined[i] = NULL;
        module      = tc_portable_read_module(bc->path, bc->bc_hash, &size, detail,
                                              sizeof(detail));
        if ((own[i] == NULL) || (module == NULL)) {
            fprintf(stderr, "confine_jit: %s: no module\n", e->name);
            return 1;
        }
        snprintf(detail, sizeof(detail), "%s_main", e->name);
        confined[i] = tc_portable_compile_confined(module, size, detail, 60.0, detail,
                                                   sizeof(detail));
        free(module);
        printf("{\"point\":\"compile\",\"jam\":\"%s\",\"bc_bytes\":%zu,\"verify_ms\":%.3f,"
               "\"confined_ms\":%.3f,\"confined\":\"%s\"}\n", e->name, size,
               own[i]->compile_s * 1e3,
               (confined[i] != NULL) ? confined[i]->compile_s * 1e3 : 0.0,
               (confined[i] != NULL) ? "yes" : detail);
    }

    memset(&rx, 0, sizeof(rx));
    memset(&stats, 0, sizeof(stats));
    rx.stats = &stats;
    if (kv) {
        memset(&replica, 0, sizeof(replica));
        replica.state      = state;
        replica.state_size = sizeof(tckv_state_t);
        rx.target_args     = &replica;
        rx.target_size     = sizeof(replica);
        rx.state           = state;
        rx.state_size      = replica.state_size;
    } else {
        rx.target_args = text;
        rx.target_size = sizeof(text);
    }
    for (r = 0; r < rounds; ++r) {
        for (i = 0; i < pkg->num_elements; ++i) {
            e = &pkg->elements[i];
            if (confined[i] == NULL) {
                continue;
            }
            size = make_payload(e->name, payload, &accesses);
            time_native((tc_jam_main_fn_t)own[i]->entry.code, payload, size, rx.target_args,
                        calls / 10 + 1);
            time_confined(&rx, confined[i]->entry.code, payload, size, calls / 10 + 1);
            if (r % 2) {
                confined_ns = time_confined(&rx, confined[i]->entry.code, payload, size,
                                            calls);
                verify_ns   = time_native((tc_jam_main_fn_t)own[i]->entry.code, payload,
                                          size, rx.target_args, calls);
            } else {
                verify_ns   = time_native((tc_jam_main_fn_t)own[i]->entry.code, payload,
                                          size, rx.target_args, calls);
                confined_ns = time_confined(&rx, confined[i]->entry.code, payload, size,
                                            calls);
            }
            printf("{\"point\":\"run\",\"round\":%u,\"jam\":\"%s\",\"payload\":%zu,"
                   "\"accesses\":%u,\"verify_ns\":%.2f,\"confined_ns\":%.2f}\n", r, e->name,
                   size, accesses, verify_ns, confined_ns);
        }
    }
    for (i = 1; i < TC_IFUNC_TRAP_LAST; ++i) {
        if (stats.confine_traps[i] != 0) {
            fprintf(stderr, "confine_jit: %" PRIu64 " runs trapped (%s)\n",
                    stats.confine_traps[i], tc_ifunc_trap_name(i));
            return 1;
        }
    }
    tc_ifunc_pkg_unload(pkg);
    return 0;
}
