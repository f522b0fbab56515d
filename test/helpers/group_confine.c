/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * group_confine: a replicated key-value store (tckv jams, Portable frames)
 * in a group whose members run with UCX_TC_IFUNC_SECURITY=confine, and one
 * member (-H RANK) that also sends the hostile corpus (tchostile, a package
 * the group did not declare and the others do not have), each case between
 * two of its commands. Every member keeps a hash chain over every jam event
 * (sequence, sender, element, status, reject) and a reference state it
 * applies the tckv commands to; it prints
 *   "group_confine rank R: chain C digest D reference F run N rejected J"
 * and the hostile member prints each case's status. A run passes when the
 * test sees one chain and one digest at every member, equal to the
 * reference: the members agreed on every hostile outcome and the group kept
 * delivering.
 *
 * Usage: group_confine -P PKG_PREFIX [-c COUNT] [-H HOSTILE_RANK]
 */
#include <twochains/group.h>
#include <twochains/ifunc.h>
#include <twochains/jam.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tchostile.h"
#include "tckv_store.h"

static const char *const hostile_jams[] = {
    "tch_payload_pointer", "tch_read_past", "tch_forged_global", "tch_system",
    "tch_syscall", "tch_indirect", "tch_spin", "tch_recurse", "tch_index_overflow",
    "tch_state_by_one", "tch_state_overrun", "tch_ok"};
#define NUM_HOSTILE (sizeof(hostile_jams) / sizeof(hostile_jams[0]))

static volatile uint64_t group_confine_secret = 0x5ec12e7;

typedef struct {
    tckv_state_t state;       /* the group's jam state */
    tckv_state_t reference;
    uint64_t     chain, run, rejected;
    uint64_t     kv_pkg, hostile_pkg;
    uint32_t     kv_inc, hostile_ids[NUM_HOSTILE];
    int          hostile_here;
} member_t;

static void fnv(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t i;

    for (i = 0; i < n; ++i) {
        *h = (*h ^ b[i]) * 1099511628211ull;
    }
}

static void jam_ran(const tc_group_jam_event_t *e, void *arg)
{
    member_t *m = arg;
    unsigned i;

    fnv(&m->chain, &e->seq, sizeof(e->seq));
    fnv(&m->chain, &e->sender, sizeof(e->sender));
    fnv(&m->chain, &e->pkg_id, sizeof(e->pkg_id));
    fnv(&m->chain, &e->element, sizeof(e->element));
    fnv(&m->chain, &e->status, sizeof(e->status));
    fnv(&m->chain, &e->reject, sizeof(e->reject));
    m->run      += (e->reject == TC_IFUNC_REJECT_NONE);
    m->rejected += (e->reject != TC_IFUNC_REJECT_NONE);
    if ((e->pkg_id == m->kv_pkg) && (e->reject == TC_IFUNC_REJECT_NONE)) {
        if (tckv_apply(&m->reference, TCKV_INC, e->payload, e->payload_size) != e->status) {
            printf("group_confine: seq %ld: status %d, the reference says otherwise\n",
                   (long)e->seq, e->status);
        }
    }
    if (m->hostile_here && (e->pkg_id == m->hostile_pkg)) {
        for (i = 0; i < NUM_HOSTILE; ++i) {
            if (m->hostile_ids[i] == e->element) {
                printf("group_confine: %-20s status %d reject %s\n", hostile_jams[i],
                       e->status, tc_ifunc_reject_name(e->reject));
            }
        }
    }
}

int main(int argc, char **argv)
{
    const char *prefix = NULL;
    long count = 200, k;
    int hostile = -1, opt, rank, n, members[64];
    tc_ifunc_pkg_h kv, bad = NULL;
    tc_group_params_t p;
    tc_bootstrap_h boot;
    tc_node_h node;
    tc_group_h group;
    ucs_status_t status;
    member_t *m = calloc(1, sizeof(*m));
    tckv_inc_t inc;
    tch_args_t args;
    unsigned i;

    while ((opt = getopt(argc, argv, "P:c:H:")) != -1) {
        switch (opt) {
        case 'P': prefix = optarg; break;
        case 'c': count = atol(optarg); break;
        case 'H': hostile = atoi(optarg); break;
        default: return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if ((m == NULL) || (prefix == NULL) || (tc_ifunc_pkg_load(prefix, "tckv", &kv) != UCS_OK) ||
        (tc_ifunc_pkg_element(kv, "kv_inc", &m->kv_inc) != UCS_OK) ||
        (tc_bootstrap_create_from_env(&boot) != UCS_OK) ||
        (tc_node_create(boot, &node) != UCS_OK)) {
        return 2;
    }
    m->kv_pkg = tc_ifunc_pkg_id(kv);
    m->chain  = 1469598103934665603ull;
    rank      = tc_bootstrap_rank(boot);
    if (rank == hostile) {
        if (tc_ifunc_pkg_load(prefix, "tchostile", &bad) != UCS_OK) {
            return 2;
        }
        m->hostile_here = 1;
        m->hostile_pkg  = tc_ifunc_pkg_id(bad);
        for (i = 0; i < NUM_HOSTILE; ++i) {
            if (tc_ifunc_pkg_element(bad, hostile_jams[i], &m->hostile_ids[i]) != UCS_OK) {
                return 2;
            }
        }
    }
    for (n = 0; (n < tc_bootstrap_size(boot)) && (n < 64); ++n) {
        members[n] = n;
    }
    memset(&p, 0, sizeof(p));
    p.members           = members;
    p.member_count      = n;
    p.max_payload       = 16384;   /* a Portable frame carries its module */
    p.window            = 16;
    p.jam_packages      = &kv;
    p.jam_package_count = 1;
    p.jam_state         = &m->state;
    p.jam_state_size    = sizeof(m->state);
    p.jam_mode          = TC_IFUNC_MODE_PORTABLE;
    p.jam_ran           = jam_ran;
    p.jam_arg           = m;
    status = tc_group_create(node, &p, &group);
    if (status != UCS_OK) {
        printf("group_confine rank %d: create: %s\n", rank, ucs_status_string(status));
        return 1;
    }
    for (k = 0; (k < count) && (status == UCS_OK); ++k) {
        inc.key   = (uint64_t)(rank * 7 + k) % TCKV_KEYS;
        inc.delta = k + 1;
        status    = tc_group_send_jam(group, kv, m->kv_inc, &inc, sizeof(inc));
        if ((status == UCS_OK) && (rank == hostile) && (k < (long)NUM_HOSTILE)) {
            memset(&args, 0, sizeof(args));
            args.a = (uint64_t)(uintptr_t)&group_confine_secret;   /* ours: no one grants it */
            args.b = 0;
            if (strcmp(hostile_jams[k], "tch_read_past") == 0) {
                args.a = 1 << 20;
            } else if (strcmp(hostile_jams[k], "tch_recurse") == 0) {
                args.a = 1ull << 40;
            } else if (strcmp(hostile_jams[k], "tch_index_overflow") == 0) {
                args.a = (1ull << 61) + (1ull << 20);
            } else if (strcmp(hostile_jams[k], "tch_state_by_one") == 0) {
                args.a = 1;
            } else if (strcmp(hostile_jams[k], "tch_ok") == 0) {
                args.a = 5;
            }
            status = tc_group_send_jam(group, bad, m->hostile_ids[k], &args, sizeof(args));
        }
    }
    if (status == UCS_OK) {
        status = tc_group_close(group);
    }
    printf("group_confine rank %d: chain %016llx digest %016llx reference %016llx run %llu "
           "rejected %llu status %s\n", rank, (unsigned long long)m->chain,
           (unsigned long long)tckv_digest(&m->state),
           (unsigned long long)tckv_digest(&m->reference), (unsigned long long)m->run,
           (unsigned long long)m->rejected, ucs_status_string(status));
    tc_group_destroy(group);
    tc_node_destroy(node);
    tc_bootstrap_destroy(boot);
    if (bad != NULL) {
        tc_ifunc_pkg_unload(bad);
    }
    tc_ifunc_pkg_unload(kv);
    free(m);
    return (status == UCS_OK) ? 0 : 1;
}
