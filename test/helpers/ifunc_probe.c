/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * ifunc_probe: Two-Chains across real processes, started by twochains-run.
 * Ranks 1..N-1 send every selected tcbench jam in every selected mode to
 * rank 0 (a single rank sends to itself); rank 0 runs them and checks the
 * effects exactly: the server-side sum equals the sum of everything sent,
 * every element of the indirect_put array holds the last value sent to it,
 * out-of-range puts, ping and sum call counts, the calls_libc text. It
 * prints "ifunc_probe: OK" and exits 0 only if every check passed and no
 * frame was rejected.
 *
 * Usage: ifunc_probe [-n FRAMES]
 *                    [-m local,injected,cached,mixed,portable,portable-cached]
 *                    [-j indirect_put,server_side_sum,ping,calls_libc]
 *                    [-d DEPTH] [-S SLOT] [-p copy|inplace] [-s SECURITY]
 *                    [-g fence|trailer] [-c (checksum)] [-N (receiver has no
 *                    package: trust mode, linked from frame symbols)]
 *                    [-P PACKAGE_PREFIX] [-t TIMEOUT_S] [-e (expect stalls)]
 *                    [-L (calls_libc payloads up to 3 KiB)]
 *                    [-R (report: count torn/rejected frames instead of failing)]
 */
#include <twochains/ifunc.h>

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tcbench.h"

#define MAX_MODES 6     /* local, injected, cached, mixed, portable, portable-cached */
#define MIXED     3
#define NUM_JAMS  4

static const char *jam_names[NUM_JAMS] = {"calls_libc", "indirect_put", "ping",
                                          "server_side_sum"};
static const char *mode_names[MAX_MODES] = {"local", "injected", "cached", "mixed",
                                            "portable", "portable-cached"};
/* the message mode of each selectable one but mixed */
static const tc_ifunc_mode_t mode_of[MAX_MODES] = {
    TC_IFUNC_MODE_LOCAL, TC_IFUNC_MODE_INJECTED, TC_IFUNC_MODE_CACHED, TC_IFUNC_MODE_LAST,
    TC_IFUNC_MODE_PORTABLE, TC_IFUNC_MODE_PORTABLE_CACHED};

typedef struct {
    int      frames;
    int      modes[MAX_MODES];
    int      jams[NUM_JAMS];
    unsigned depth, slot;
    int      placement, security, signal, checksum, nopkg, expect_stalls, report;
    double   timeout;
    char     prefix[1024];
} opts_t;

static int g_rank = -1;
static int g_fail;
static int g_large;     /* -L: calls_libc payloads up to ~3 KiB */

#define TEXT_CAP  (g_large ? 3200u : 64u)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define CHECK(_cond, ...) \
    do { \
        if (!(_cond)) { \
            printf("ifunc_probe rank %d: FAILED: ", g_rank); \
            printf(__VA_ARGS__); \
            printf("\n"); \
            fflush(stdout); \
            ++g_fail; \
        } \
    } while (0)

/* ---- what a sender sends: pure functions of (sender, mode, frame) ---- */

static unsigned sum_count(int i)
{
    return 1 + (unsigned)(i % 8);
}

static int64_t sum_value(int s, int m, int i, unsigned j)
{
    return (int64_t)s * 1000003 - (int64_t)m * 7919 + (int64_t)i * 7 + j;
}

static unsigned put_count(int i)
{
    return 1 + (unsigned)(i % 5);
}

/* indexes of sender s live in its own partition of the array */
static void put_pair(int size, int s, int m, int i, unsigned j, tcbench_put_t *p)
{
    unsigned part = TCBENCH_ARRAY_LEN / (unsigned)size;

    if ((j == 3) && (i % 3 == 0)) {
        p->index = TCBENCH_ARRAY_LEN + (unsigned)i;   /* out of range: counted */
    } else {
        p->index = (uint64_t)s * part + ((unsigned)i * 13 + j * 5 + (unsigned)m) % part;
    }
    p->value = ((int64_t)s << 40) | ((int64_t)m << 32) | ((int64_t)i << 8) | j;
}

static void text_payload(int s, int m, int i, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "rank %d mode %d frame %d", s, m, i);
    size_t want;

    if (g_large) {
        want = 64 + ((size_t)i * 997 + (size_t)m * 31) % (len - 80);
        for (; n < want; ++n) {
            buf[n] = (char)('a' + (n * 7 + (size_t)s) % 26);
        }
        buf[n] = '\0';
    }
}

/* mixed mode: frame i uses this jam and frame type */
static int mixed_jam(const opts_t *o, int i)
{
    int n = 0, k, pick;

    for (k = 0; k < NUM_JAMS; ++k) {
        n += o->jams[k];
    }
    pick = i % n;
    for (k = 0; k < NUM_JAMS; ++k) {
        if (o->jams[k] && (pick-- == 0)) {
            return k;
        }
    }
    return 0;
}

static tc_ifunc_mode_t mixed_mode(int i)
{
    return (tc_ifunc_mode_t)((i / 3) % 3);
}

/* Build the source args of frame (s, m, i) of jam j into buf */
static size_t make_args(int size, int jam, int s, int m, int i, void *buf)
{
    unsigned j, n;

    switch (jam) {
    case 0:
        text_payload(s, m, i, buf, TEXT_CAP);
        return strlen(buf) + 1;
    case 1:
        n = put_count(i);
        for (j = 0; j < n; ++j) {
            put_pair(size, s, m, i, j, (tcbench_put_t*)buf + j);
        }
        return n * sizeof(tcbench_put_t);
    case 2:
        ((tcbench_ping_t*)buf)->seq = ((uint64_t)s << 32) | (unsigned)i;
        return sizeof(tcbench_ping_t);
    default:
        n = sum_count(i);
        for (j = 0; j < n; ++j) {
            ((int64_t*)buf)[j] = sum_value(s, m, i, j);
        }
        return n * sizeof(int64_t);
    }
}

/* ---- the receiver's expectations ---- */

typedef struct {
    int64_t  sum;
    uint64_t sum_calls;
    uint64_t pings;
    uint64_t put_rejected;
    uint64_t frames;
    int64_t  array[TCBENCH_ARRAY_LEN];
    uint8_t  touched[TCBENCH_ARRAY_LEN];
} expect_t;

static void expect_frame(expect_t *e, int size, int jam, int s, int m, int i)
{
    tcbench_put_t p;
    unsigned j;

    ++e->frames;
    switch (jam) {
    case 1:
        for (j = 0; j < put_count(i); ++j) {
            put_pair(size, s, m, i, j, &p);
            if (p.index < TCBENCH_ARRAY_LEN) {
                e->array[p.index]   = p.value;
                e->touched[p.index] = 1;
            } else {
                ++e->put_rejected;
            }
        }
        break;
    case 2:
        ++e->pings;
        break;
    case 3:
        for (j = 0; j < sum_count(i); ++j) {
            e->sum += sum_value(s, m, i, j);
        }
        ++e->sum_calls;
        break;
    default:
        break;
    }
}

/* Frames one sender sends, in its order; cb per frame */
typedef int (*frame_cb_t)(void *arg, int jam, int m, tc_ifunc_mode_t mode, int i);

static int for_each_frame(const opts_t *o, frame_cb_t cb, void *arg)
{
    int m, jam, i, rc;

    for (m = 0; m < MAX_MODES; ++m) {
        if (!o->modes[m]) {
            continue;
        }
        if (m != MIXED) {
            for (jam = 0; jam < NUM_JAMS; ++jam) {
                for (i = 0; o->jams[jam] && (i < o->frames); ++i) {
                    rc = cb(arg, jam, m, mode_of[m], i);
                    if (rc != 0) {
                        return rc;
                    }
                }
            }
        } else {
            for (i = 0; i < o->frames; ++i) {
                rc = cb(arg, mixed_jam(o, i), m, mixed_mode(i), i);
                if (rc != 0) {
                    return rc;
                }
            }
        }
    }
    return 0;
}

typedef struct {
    expect_t *e;
    int      size;
    int      s;
} expect_arg_t;

static int expect_cb(void *arg, int jam, int m, tc_ifunc_mode_t mode, int i)
{
    expect_arg_t *a = arg;

    expect_frame(a->e, a->size, jam, a->s, m, i);
    return 0;
}

/* ---- sending ---- */

typedef struct {
    tc_ifunc_mailbox_h mbox;
    tc_ifunc_pkg_h     pkg;
    uint32_t           ids[NUM_JAMS];
    tc_ifunc_msg_h     msgs[NUM_JAMS][TC_IFUNC_MODE_LAST];  /* per jam and mode */
    int                size, rank, dest;
    double             deadline;
} send_arg_t;

static int send_cb(void *arg, int jam, int m, tc_ifunc_mode_t mode, int i)
{
    send_arg_t *a = arg;
    uint8_t buf[4096];
    tc_ifunc_msg_h *msg = &a->msgs[jam][mode];
    ucs_status_t status;
    size_t len;

    len = make_args(a->size, jam, a->rank, m, i, buf);
    if (*msg == NULL) {
        /* capacity: the largest payload this jam can have */
        uint8_t big[4096];
        size_t cap = (jam == 0) ? TEXT_CAP :
                     (jam == 1) ? 5 * sizeof(tcbench_put_t) :
                     (jam == 3) ? 8 * sizeof(int64_t) : len;
        memset(big, 0, sizeof(big));
        status = tc_ifunc_msg_create(a->mbox, a->pkg, a->ids[jam], mode, big, cap,
                                     msg);
        if (status != UCS_OK) {
            printf("ifunc_probe rank %d: msg_create(%s, %s): %s\n", a->rank,
                   jam_names[jam], tc_ifunc_mode_names[mode], ucs_status_string(status));
            return -1;
        }
    }
    status = tc_ifunc_msg_reinit(*msg, buf, len);
    if (status != UCS_OK) {
        printf("ifunc_probe rank %d: msg_reinit: %s\n", a->rank, ucs_status_string(status));
        return -1;
    }
    for (unsigned tries = 1;; ++tries) {
        status = tc_ifunc_send(a->mbox, a->dest, *msg);
        if ((status == UCS_OK) || (status == UCS_INPROGRESS)) {
            return 0;
        }
        if (status != UCS_ERR_NO_RESOURCE) {
            printf("ifunc_probe rank %d: send: %s\n", a->rank, ucs_status_string(status));
            return -1;
        }
        tc_progress(tc_ifunc_mailbox_engine(a->mbox));
        if ((tries % 1024 == 0) && (now_s() > a->deadline)) {
            printf("ifunc_probe rank %d: no credits until the deadline\n", a->rank);
            return -1;
        }
    }
}

/* ---- main ---- */

static int parse_list(const char *arg, const char **names, int n, int *flags)
{
    char copy[256], *tok, *save = NULL;
    int k, found;

    memset(flags, 0, n * sizeof(*flags));
    snprintf(copy, sizeof(copy), "%s", arg);
    for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        for (k = 0, found = 0; k < n; ++k) {
            if (strcmp(tok, names[k]) == 0) {
                flags[k] = found = 1;
            }
        }
        if (!found) {
            fprintf(stderr, "unknown name '%s'\n", tok);
            return -1;
        }
    }
    return 0;
}

static int parse_enum(const char *arg, const char **names)
{
    int k;

    for (k = 0; names[k] != NULL; ++k) {
        if (strcmp(arg, names[k]) == 0) {
            return k;
        }
    }
    fprintf(stderr, "unknown value '%s'\n", arg);
    exit(2);
}

typedef struct {
    tc_ifunc_mailbox_h mbox;
    uint64_t           expected;
} done_arg_t;

static int all_arrived(void *arg)
{
    done_arg_t *d = arg;
    tc_ifunc_stats_t st;
    uint64_t run = 0;
    int kind;

    tc_ifunc_mailbox_stats(d->mbox, &st);
    for (kind = 0; kind < TC_IFUNC_FRAME_KIND_LAST; ++kind) {
        run += st.frames[kind];
    }
    return run + st.rejects_total >= d->expected;
}

typedef struct {
    tc_ifunc_pkg_h pkg;
    void           *ried;
} symbols_t;

static void *sym(const symbols_t *s, const char *name)
{
    void *p = (s->pkg != NULL) ? tc_ifunc_pkg_symbol(s->pkg, name) : dlsym(s->ried, name);

    if (p == NULL) {
        printf("ifunc_probe: symbol %s not found\n", name);
        exit(3);
    }
    return p;
}

static void check_receiver(const opts_t *o, const symbols_t *syms, int size,
                           const char *target_text)
{
    expect_t *e = calloc(1, sizeof(*e));
    const int64_t *array = sym(syms, "tcbench_array");
    const char *copy     = sym(syms, "tcbench_copy");
    char line[TCBENCH_TEXT_LEN];
    expect_arg_t a;
    int s, k, sum = 0, cm, ci, cs;
    static const int weights[4] = {1, 10, 100, 1000};
    unsigned bad = 0;

    for (s = (size == 1) ? 0 : 1; s < size; ++s) {
        a.e = e; a.size = size; a.s = s;
        for_each_frame(o, expect_cb, &a);
    }
    CHECK(*(int64_t*)sym(syms, "tcbench_accumulator") == e->sum,
          "server-side sum %" PRId64 ", sent %" PRId64,
          *(int64_t*)sym(syms, "tcbench_accumulator"), e->sum);
    CHECK(*(uint64_t*)sym(syms, "tcbench_sum_calls") == e->sum_calls,
          "sum calls %" PRIu64 ", sent %" PRIu64,
          *(uint64_t*)sym(syms, "tcbench_sum_calls"), e->sum_calls);
    CHECK(*(uint64_t*)sym(syms, "tcbench_ping_count") == e->pings,
          "pings %" PRIu64 ", sent %" PRIu64, *(uint64_t*)sym(syms, "tcbench_ping_count"),
          e->pings);
    CHECK(*(uint64_t*)sym(syms, "tcbench_put_rejected") == e->put_rejected,
          "out-of-range puts %" PRIu64 ", sent %" PRIu64,
          *(uint64_t*)sym(syms, "tcbench_put_rejected"), e->put_rejected);
    for (k = 0; k < (int)TCBENCH_ARRAY_LEN; ++k) {
        if (array[k] != (e->touched[k] ? e->array[k] : 0)) {
            if (bad++ < 3) {
                CHECK(0, "tcbench_array[%d] = %" PRIx64 ", expected %" PRIx64, k,
                      array[k], e->touched[k] ? e->array[k] : 0);
            }
        }
    }
    CHECK(bad == 0, "%u array elements wrong", bad);
    if (o->jams[0] && (e->frames > 0)) {
        /* the last calls_libc text: well formed, and its summary line right */
        CHECK(sscanf(copy, "rank %d mode %d frame %d", &cs, &cm, &ci) == 3,
              "tcbench_copy is '%.60s'", copy);
        for (k = 0; copy[k] != '\0'; ++k) {
            sum += weights[k % 4] * (unsigned char)copy[k];
        }
        snprintf(line, sizeof(line), "two-chains: got \"%s\" (%zu bytes, sum %d)", copy,
                 strlen(copy) + 1, sum);
        /* a ping that ran later wrote its reply count over the first 8 bytes */
        CHECK(((memcmp(line, target_text, 8) == 0) ||
               (memcmp(target_text, &e->pings, 8) == 0)) &&
              (strcmp(line + 8, target_text + 8) == 0),
              "calls_libc wrote '%s', expected '%s'", target_text + 8, line + 8);
    }
    printf("ifunc_probe rank %d: checked %" PRIu64 " frames: sum %" PRId64 ", %" PRIu64
           " pings, %" PRIu64 " out-of-range puts\n", g_rank, e->frames, e->sum,
           e->pings, e->put_rejected);
    free(e);
}

int main(int argc, char **argv)
{
    opts_t o = {.frames = 50, .modes = {1, 1, 1, 1}, .jams = {1, 1, 1, 1},
                .placement = -1, .security = -1, .signal = -1, .timeout = 60};
    tc_ifunc_mailbox_params_t params = {0};
    union { uint64_t align; char text[TCBENCH_TEXT_LEN]; } target;
    symbols_t syms = {NULL, NULL};
    tc_ifunc_stats_t st;
    tc_ifunc_mailbox_h mbox;
    tc_bootstrap_h boot;
    tc_ifunc_ucp_t ucp;
    send_arg_t sa;
    done_arg_t done;
    ucs_status_t status;
    char path[1200];
    int opt, size, k, t, receiver;

    snprintf(o.prefix, sizeof(o.prefix), "%s/test/twochains-pkgs", TC_BUILDDIR);
    while ((opt = getopt(argc, argv, "n:m:j:d:S:p:s:g:cNP:t:eRL")) != -1) {
        switch (opt) {
        case 'n': o.frames = atoi(optarg); break;
        case 'm': if (parse_list(optarg, mode_names, MAX_MODES, o.modes)) return 2; break;
        case 'j': if (parse_list(optarg, jam_names, NUM_JAMS, o.jams)) return 2; break;
        case 'd': o.depth = (unsigned)atoi(optarg); break;
        case 'S': o.slot = (unsigned)atoi(optarg); break;
        case 'p': o.placement = parse_enum(optarg, tc_ifunc_placement_names); break;
        case 's': o.security = parse_enum(optarg, tc_ifunc_security_names); break;
        case 'g': o.signal = parse_enum(optarg, tc_ifunc_signal_names); break;
        case 'c': o.checksum = 1; break;
        case 'N': o.nopkg = 1; break;
        case 'P': snprintf(o.prefix, sizeof(o.prefix), "%s", optarg); break;
        case 't': o.timeout = atof(optarg); break;
        case 'e': o.expect_stalls = 1; break;
        case 'R': o.report = 1; break;
        case 'L': g_large = 1; break;
        default: return 2;
        }
    }

    if (tc_bootstrap_create_from_env(&boot) != UCS_OK) {
        return 2;
    }
    g_rank   = tc_bootstrap_rank(boot);
    size     = tc_bootstrap_size(boot);
    receiver = (g_rank == 0);
    if (tc_ifunc_ucp_init(&ucp) != UCS_OK) {
        return 2;
    }

    if (o.nopkg && receiver) {
        snprintf(path, sizeof(path), "%s/lib/libtcbench_ried_tcbench_state.so", o.prefix);
        syms.ried = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
        if (syms.ried == NULL) {
            printf("ifunc_probe: dlopen %s: %s\n", path, dlerror());
            return 2;
        }
    } else if (tc_ifunc_pkg_load(o.prefix, "tcbench", &syms.pkg) != UCS_OK) {
        return 2;
    }

    params.field_mask = TC_IFUNC_MAILBOX_PARAM_FIELD_TARGET_ARGS |
                        TC_IFUNC_MAILBOX_PARAM_FIELD_TARGET_SIZE;
    params.target_args = target.text;
    params.target_size = sizeof(target);   /* what a confined jam may write */
    memset(&target, 0, sizeof(target));
#define SET(_field, _bit, _value) \
    do { params._field = (_value); params.field_mask |= TC_IFUNC_MAILBOX_PARAM_FIELD_##_bit; } while (0)
    if (o.depth)          SET(ring_depth, RING_DEPTH, o.depth);
    if (o.slot)           SET(slot_size, SLOT_SIZE, o.slot);
    if (o.placement >= 0) SET(placement, PLACEMENT, (tc_ifunc_placement_t)o.placement);
    if (o.security >= 0)  SET(security, SECURITY, (tc_ifunc_security_t)o.security);
    if (o.signal >= 0)    SET(signal, SIGNAL, (tc_ifunc_signal_t)o.signal);
    if (o.checksum)       SET(flags, FLAGS, TC_IFUNC_MAILBOX_FLAG_CHECKSUM);
#undef SET
    status = tc_ifunc_mailbox_create(ucp.context, ucp.engine, boot, &params, &mbox);
    if (status != UCS_OK) {
        printf("ifunc_probe rank %d: mailbox: %s\n", g_rank, ucs_status_string(status));
        return 2;
    }
    printf("ifunc_probe rank %d/%d: transport %s, security %s, placement %s, signal %s\n",
           g_rank, size, tc_ifunc_mailbox_transport(mbox, 0),
           tc_ifunc_security_names[tc_ifunc_mailbox_security(mbox)],
           tc_ifunc_placement_names[tc_ifunc_mailbox_placement(mbox)],
           tc_ifunc_signal_names[tc_ifunc_mailbox_signal(mbox)]);
    fflush(stdout);
    tc_ifunc_mailbox_barrier(mbox);

    memset(&sa, 0, sizeof(sa));
    if (!receiver || (size == 1)) {
        sa.mbox     = mbox;
        sa.pkg      = syms.pkg;
        sa.size     = size;
        sa.rank     = g_rank;
        sa.dest     = 0;
        sa.deadline = now_s() + o.timeout;
        for (k = 0; k < NUM_JAMS; ++k) {
            CHECK(tc_ifunc_pkg_element(syms.pkg, jam_names[k], &sa.ids[k]) == UCS_OK,
                  "no jam %s", jam_names[k]);
        }
        CHECK(for_each_frame(&o, send_cb, &sa) == 0, "sending failed");
        CHECK(tc_ifunc_mailbox_flush(mbox, o.timeout) == UCS_OK, "flush failed");
    }
    if (receiver) {
        expect_t *e = calloc(1, sizeof(*e));
        expect_arg_t a = {e, size, 0};
        for (a.s = (size == 1) ? 0 : 1; a.s < size; ++a.s) {
            for_each_frame(&o, expect_cb, &a);
        }
        done.mbox     = mbox;
        done.expected = e->frames;
        free(e);
        status = tc_progress_until(ucp.engine, all_arrived, &done, o.timeout);
        CHECK(status == UCS_OK, "only some of %" PRIu64 " frames arrived", done.expected);
    }
    tc_ifunc_mailbox_barrier(mbox);

    tc_ifunc_mailbox_stats(mbox, &st);
    snprintf(path, sizeof(path), "[stats rank %d] ", g_rank);
    tc_ifunc_stats_print(&st, stdout, path);
    if (receiver && o.report) {
        /* measure, do not assume: how many frames arrived torn */
        printf("ifunc_probe: soundness of signal %s over %s: %" PRIu64 " frames, %" PRIu64
               " rejected (checksum %" PRIu64 ", truncated %" PRIu64 ", size %" PRIu64
               "): %s\n", tc_ifunc_signal_names[tc_ifunc_mailbox_signal(mbox)],
               tc_ifunc_mailbox_transport(mbox, size - 1), done.expected,
               st.rejects_total, st.rejects[TC_IFUNC_REJECT_CHECKSUM],
               st.rejects[TC_IFUNC_REJECT_TRUNCATED], st.rejects[TC_IFUNC_REJECT_SIZE],
               (st.rejects_total == 0) ? "no torn frame seen" : "UNSOUND here");
    } else if (receiver) {
        CHECK(st.rejects_total == 0, "%" PRIu64 " frames rejected", st.rejects_total);
        for (k = 1; k < TC_IFUNC_TRAP_LAST; ++k) {
            CHECK(st.confine_traps[k] == 0, "%" PRIu64 " confined runs trapped (%s)",
                  st.confine_traps[k], tc_ifunc_trap_name(k));
        }
        CHECK((o.security != TC_IFUNC_SECURITY_CONFINE) || (st.confine_runs == done.expected),
              "%" PRIu64 " of %" PRIu64 " frames ran confined", st.confine_runs,
              done.expected);
        check_receiver(&o, &syms, size, target.text);
    }
    if (o.expect_stalls && (!receiver || (size == 1))) {
        CHECK(st.credit_stalls > 0, "no credit stall with ring depth %u", o.depth);
    }

    for (k = 0; k < NUM_JAMS; ++k) {
        for (t = 0; t < TC_IFUNC_MODE_LAST; ++t) {
            tc_ifunc_msg_free(sa.msgs[k][t]);
        }
    }
    tc_ifunc_mailbox_destroy(mbox);
    if (syms.pkg != NULL) {
        tc_ifunc_pkg_unload(syms.pkg);
    }
    tc_ifunc_ucp_cleanup(&ucp);
    tc_bootstrap_destroy(boot);
    if (g_fail == 0) {
        printf("ifunc_probe rank %d: OK\n", g_rank);
    }
    fflush(stdout);
    return g_fail ? 1 : 0;
}
