/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * replicated_kv: a replicated key-value store whose put, increment and
 * compare-and-swap are jams (the tckv package), sent through a group's total
 * order with tc_group_send_jam and run at every member against the
 * tckv_state_t it registered as the group's jam state.
 *
 * Every member also records what it delivered: a hash chain over each jam
 * event (view, sequence, sender, element, payload, status), and a reference
 * state that replays the delivered commands through tckv_apply(), the
 * commands' plain-C definition. At the end it prints
 *
 *   result digest D reference R chain C run N errors E view V status S
 *
 * where D is the digest of the state the jams built and R that of the
 * reference; exit 0 when D == R and the group closed cleanly. A joiner (-j)
 * gets the state and the codes with the state transfer, and the reference
 * and chain from the sponsor (the state callbacks), so all three go on from
 * the same cut.
 *
 * Usage: replicated_kv -P PKG_PREFIX [-c COUNT] [-r RATE]
 *                      [-m local|injected|cached|portable]
 *                      [-J PORT] [-j HOST:PORT] [-w N] [-K N] [-D MS] [-u]
 *   -c  commands this member sends (default 2000), at RATE per second (4000)
 *   -J  admit joiners on PORT + rank;  -j  join the group at HOST:PORT
 *   -w  before closing, wait (at most 60 s, progressing the group) until N
 *       joiners are members: a group closes when all its members close, so
 *       a member that must see a joiner waits for it
 *   -K  this member kills itself (SIGKILL) after sending N commands
 *   -D  wait MS milliseconds (progressing the group) before the first command
 *   -u  do not declare tckv as the group's jam package (then a member whose
 *       build differs is not refused at creation: it leaves at the first
 *       code it cannot run)
 *
 * Build against a build tree (see contrib/quickstart.sh):
 *   cc replicated_kv.c -I<src>/ucx_ext/api -I<build>/ucx_ext/api -I<src>/src/api \
 *      -I<src>/test/packages/tckv -L<build>/src/.libs -L<build>/ucx_ext/.libs \
 *      -ltwochains_group -ltwochains $(pkg-config --cflags --libs ucx)
 */
#include <twochains/group.h>
#include <twochains/ifunc.h>

#include "tckv_store.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    tckv_state_t state;       /* the group's jam state: what the jams build */
    tckv_state_t reference;   /* the delivered commands replayed by tckv_apply */
    uint64_t     chain;       /* FNV-1a over every jam event */
    uint64_t     run;
    uint64_t     errors;
    int64_t      view;
    uint64_t     pkg_id;
    uint32_t     elements[3]; /* element id of each tckv_command */
} replica_t;

/* what travels to a joiner besides the library's state and codes */
typedef struct {
    tckv_state_t reference;
    uint64_t     chain;
    uint64_t     run;
    uint64_t     errors;
} replica_log_t;

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
    replica_t *r = arg;
    int cmd;

    if (e->view != r->view) {
        r->view = e->view;
        printf("view %ld\n", (long)e->view);
    }
    fnv(&r->chain, &e->view, sizeof(e->view));
    fnv(&r->chain, &e->seq, sizeof(e->seq));
    fnv(&r->chain, &e->sender, sizeof(e->sender));
    fnv(&r->chain, &e->element, sizeof(e->element));
    fnv(&r->chain, &e->status, sizeof(e->status));
    fnv(&r->chain, e->payload, e->payload_size);
    if (e->reject != TC_IFUNC_REJECT_NONE) {
        printf("jam seq %ld rejected: %s\n", (long)e->seq, tc_ifunc_reject_name(e->reject));
        return;
    }
    ++r->run;
    r->errors += (e->status != 0);
    for (cmd = TCKV_PUT; cmd <= TCKV_CAS; ++cmd) {
        if ((e->pkg_id == r->pkg_id) && (e->element == r->elements[cmd])) {
            if (tckv_apply(&r->reference, (enum tckv_command)cmd, e->payload,
                           e->payload_size) != e->status) {
                printf("jam seq %ld: status %d, the reference says otherwise\n",
                       (long)e->seq, e->status);
            }
            return;
        }
    }
}

static ucs_status_t get_state(void **data_p, size_t *size_p, void *arg)
{
    const replica_t *r = arg;
    replica_log_t *log = malloc(sizeof(*log));

    if (log == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    log->reference = r->reference;
    log->chain     = r->chain;
    log->run       = r->run;
    log->errors    = r->errors;
    *data_p        = log;
    *size_p        = sizeof(*log);
    return UCS_OK;
}

static void set_state(const void *data, size_t size, void *arg)
{
    replica_t *r = arg;
    replica_log_t log;

    if (size == sizeof(log)) {
        memcpy(&log, data, sizeof(log));
        r->reference = log.reference;
        r->chain     = log.chain;
        r->run       = log.run;
        r->errors    = log.errors;
    }
    printf("state received: %llu commands so far, digest %016llx\n",
           (unsigned long long)r->state.commands,
           (unsigned long long)tckv_digest(&r->state));
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int past(void *arg)
{
    return now_s() >= *(const double*)arg;
}

typedef struct {
    tc_group_h group;
    int        initial_size;  /* ids below it are the creators' */
    int        joiners;       /* wanted */
} joiners_wait_t;

/* a joiner's id is above every id a view had before it */
static int joiners_in_view(void *arg)
{
    const joiners_wait_t *w = arg;
    int ids[256], count, i, joined = 0;

    (void)tc_group_view_get(w->group, ids, 256, &count);
    for (i = 0; (i < count) && (i < 256); ++i) {
        joined += (ids[i] >= w->initial_size);
    }
    return joined >= w->joiners;
}

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x  = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x  = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* command k of this member: keys from a small range, so that members
 * collide and some compare-and-swaps find another value */
static ucs_status_t send_command(tc_group_h group, tc_ifunc_pkg_h pkg, const replica_t *r,
                                 int rank, long k)
{
    const uint64_t x = mix(((uint64_t)rank << 40) ^ (uint64_t)k);
    const uint64_t key = (x >> 8) % 64;
    union {
        tckv_put_t put;
        tckv_inc_t inc;
        tckv_cas_t cas;
    } u;
    size_t size;
    int cmd = (int)(x % 3);

    switch (cmd) {
    case TCKV_PUT:
        u.put = (tckv_put_t){key, (int64_t)((x >> 20) & 0xffff)};
        size  = sizeof(u.put);
        break;
    case TCKV_INC:
        u.inc = (tckv_inc_t){key, (int64_t)((x >> 24) % 7) - 3};
        size  = sizeof(u.inc);
        break;
    default:
        /* what this member has seen: another member may change it first;
         * every 16th expects a value the key never holds, and fails */
        u.cas = (tckv_cas_t){key, r->state.keys[key].value + ((k % 16 == 15) ? 1000000 : 0),
                             r->state.keys[key].value + 1};
        size  = sizeof(u.cas);
        break;
    }
    return tc_group_send_jam(group, pkg, r->elements[cmd], &u, size);
}

int main(int argc, char **argv)
{
    static replica_t r;
    static const char *names[] = {"kv_put", "kv_inc", "kv_cas"};
    long count = 2000, rate = 4000, kill_after = -1, delay_ms = 0, k;
    joiners_wait_t joiners = {NULL, 0, 0};
    const char *contact = NULL, *pkg_prefix = NULL, *mode = "cached";
    int port = 0, opt, members[64], n, rank, cmd, declare = 1;
    tc_group_jam_stats_t jams;
    tc_group_params_t p;
    tc_ifunc_pkg_h pkg;
    tc_bootstrap_h boot;
    tc_node_h node;
    tc_group_h group = NULL;
    ucs_status_t status;
    uint64_t digest, reference;
    double next;

    while ((opt = getopt(argc, argv, "P:c:r:m:J:j:w:K:D:u")) != -1) {
        switch (opt) {
        case 'P': pkg_prefix = optarg; break;
        case 'c': count = atol(optarg); break;
        case 'r': rate = atol(optarg); break;
        case 'm': mode = optarg; break;
        case 'J': port = atoi(optarg); break;
        case 'j': contact = optarg; break;
        case 'w': joiners.joiners = atoi(optarg); break;
        case 'K': kill_after = atol(optarg); break;
        case 'u': declare = 0; break;
        case 'D': delay_ms = atol(optarg); break;
        default: return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if ((pkg_prefix == NULL) || (rate <= 0)) {
        fprintf(stderr, "usage: %s -P PKG_PREFIX [-c COUNT] [-r RATE] "
                "[-m local|injected|cached|portable] [-J PORT] [-j HOST:PORT] [-w N] [-K N] [-D MS] [-u]\n",
                argv[0]);
        return 2;
    }
    status = tc_ifunc_pkg_load(pkg_prefix, "tckv", &pkg);
    if (status != UCS_OK) {
        fprintf(stderr, "cannot load package tckv from %s: %s\n", pkg_prefix,
                ucs_status_string(status));
        return 1;
    }
    r.pkg_id = tc_ifunc_pkg_id(pkg);
    for (cmd = TCKV_PUT; cmd <= TCKV_CAS; ++cmd) {
        if (tc_ifunc_pkg_element(pkg, names[cmd], &r.elements[cmd]) != UCS_OK) {
            fprintf(stderr, "package tckv has no %s\n", names[cmd]);
            return 1;
        }
    }
    r.chain = 1469598103934665603ull;
    if ((tc_bootstrap_create_from_env(&boot) != UCS_OK) ||
        (tc_node_create(boot, &node) != UCS_OK)) {
        return 1;
    }
    rank = tc_bootstrap_rank(boot);
    for (n = 0; (n < tc_bootstrap_size(boot)) && (n < 64); ++n) {
        members[n] = n;
    }
    memset(&p, 0, sizeof(p));
    p.members        = members;
    p.member_count   = n;
    p.max_payload    = 512;    /* a Cached or Local command; code goes over it once */
    p.window         = 32;
    p.join_port      = (uint16_t)((port > 0) ? port + rank : 0);
    p.get_state      = get_state;
    p.set_state      = set_state;
    p.state_arg      = &r;
    p.jam_packages      = declare ? &pkg : NULL;
    p.jam_package_count = declare;
    p.jam_state      = &r.state;
    p.jam_state_size = sizeof(r.state);
    p.jam_mode       = !strcmp(mode, "local")    ? TC_IFUNC_MODE_LOCAL :
                       !strcmp(mode, "injected") ? TC_IFUNC_MODE_INJECTED :
                       !strcmp(mode, "portable") ? TC_IFUNC_MODE_PORTABLE :
                                                   TC_IFUNC_MODE_CACHED;
    p.jam_ran        = jam_ran;
    p.jam_arg        = &r;
    /* an Injected frame carries the code every time: it needs the room */
    p.max_payload    = (p.jam_mode == TC_IFUNC_MODE_LOCAL) ? 128 : 512;
    status = (contact != NULL) ? tc_group_join(node, &p, contact, &group) :
                                 tc_group_create(node, &p, &group);
    if (status != UCS_OK) {
        printf("%s failed: %s\n", contact ? "join" : "create", ucs_status_string(status));
        return 1;
    }
    printf("ready (%s)\n", mode);

    next = now_s() + (double)delay_ms * 1e-3;
    tc_progress_until(tc_node_engine(node), past, &next, 10.0 + (double)delay_ms * 1e-3);
    for (k = 0; (k < count) && (status == UCS_OK); ++k) {
        if (k == kill_after) {
            printf("killing myself after %ld commands\n", k);
            raise(SIGKILL);
        }
        status = send_command(group, pkg, &r, rank, k);
        next += 1.0 / (double)rate;
        tc_progress_until(tc_node_engine(node), past, &next, 10.0);
    }
    if ((status == UCS_OK) && (joiners.joiners > 0)) {
        joiners.group        = group;
        joiners.initial_size = n;
        if (tc_progress_until(tc_node_engine(node), joiners_in_view, &joiners, 60.0) !=
            UCS_OK) {
            printf("fewer than %d joiners in the view after 60 s\n", joiners.joiners);
        }
    }
    if (status == UCS_OK) {
        status = tc_group_close(group);
    }
    tc_group_jam_stats_get(group, &jams);
    digest    = tckv_digest(&r.state);
    reference = tckv_digest(&r.reference);
    printf("result digest %016llx reference %016llx chain %016llx run %llu errors %llu "
           "view %ld status %s%s\n", (unsigned long long)digest,
           (unsigned long long)reference, (unsigned long long)r.chain,
           (unsigned long long)r.run, (unsigned long long)r.errors, (long)r.view,
           ucs_status_string(status), jams.left ? " (left the group)" : "");
    fflush(stdout);
    /* the view is not the bootstrap's any more: no collective teardown */
    _exit(((status == UCS_OK) && (digest == reference)) ? 0 : 1);
}
