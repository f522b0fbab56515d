/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * confine_probe: the hostile corpus (test/packages/tchostile) against a
 * receiver in security `confine`, across two real processes started by
 * twochains-run. Rank 1 sends every case as a Portable frame (rank 0 does
 * not have the package: every module is a stranger's), each case followed
 * by the legitimate tch_ok. Rank 0 runs one frame at a time and prints what
 * became of it ("refused confine", "trap memory", "ran", ...), then checks
 * that nothing outside what it granted changed: the bytes past the target's
 * declared size, a global of its own whose address the sender knows, the
 * file system. Every tch_ok must have run, with its exact sum. It prints
 * "confine_probe rank R: OK" only if every check passed.
 *
 * Usage: confine_probe [-m portable|portable-cached] [-r ROUNDS] [-t TIMEOUT_S]
 */
#include <twochains/ifunc.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tchostile.h"

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define CANARY       0xa5
#define SECRET_VALUE 0x5ec12e75ec12e7ull
#define FORGE_KEY    0x1234567890abcdefull

typedef struct {
    const char *jam;
    const char *expect;   /* what rank 0 must see */
} hostile_case_t;

static const hostile_case_t cases[] = {
    {"tch_payload_pointer", "trap memory"},
    {"tch_read_past", "trap memory"},
    {"tch_forged_global", "trap memory"},
    {"tch_system", "refused confine"},
    {"tch_syscall", "refused confine"},
    {"tch_indirect", "refused confine"},
    {"tch_spin", "trap fuel"},
    {"tch_recurse", "trap stack"},
    {"tch_index_overflow", "trap memory"},
    {"tch_state_by_one", "trap memory"},
#if defined(__x86_64__)
    {"tch_segment", "refused confine"},
#else
    {"tch_segment", "trap memory"},
#endif
};
#define NUM_CASES (sizeof(cases) / sizeof(cases[0]))

/* a global of the receiver's: what a forged address aims at */
volatile uint64_t confine_probe_secret = SECRET_VALUE;

static int g_rank, g_fail;

#define CHECK(_cond, ...) \
    do { \
        if (!(_cond)) { \
            printf("confine_probe rank %d: FAIL: ", g_rank); \
            printf(__VA_ARGS__); \
            printf("\n"); \
            g_fail = 1; \
        } \
    } while (0)

static void args_of(size_t c, uint64_t secret_addr, tch_args_t *a)
{
    memset(a, 0, sizeof(*a));
    a->a = c + 1;   /* tch_ok's words: a, b, c, d */
    a->b = 1000;
    if (strcmp(cases[c].jam, "tch_payload_pointer") == 0) {
        a->a = secret_addr;
    } else if (strcmp(cases[c].jam, "tch_read_past") == 0) {
        a->a = 1 << 20;
    } else if (strcmp(cases[c].jam, "tch_forged_global") == 0) {
        a->a = secret_addr ^ FORGE_KEY;
        a->b = FORGE_KEY;
    } else if (strcmp(cases[c].jam, "tch_indirect") == 0) {
        a->a = secret_addr;   /* data, not code: would crash if called */
    } else if (strcmp(cases[c].jam, "tch_recurse") == 0) {
        a->a = 1ull << 40;
    } else if (strcmp(cases[c].jam, "tch_index_overflow") == 0) {
        a->a = (1ull << 61) + (1ull << 20);   /* * 8 wraps to 8 MiB */
    } else if (strcmp(cases[c].jam, "tch_state_by_one") == 0) {
        a->a = 1;
    } else if (strcmp(cases[c].jam, "tch_segment") == 0) {
        a->a = 0x28;   /* where x86-64 keeps the stack protector's canary */
    }
}

/* What the last frame became, from the receiver's counters */
static const char *outcome(const tc_ifunc_stats_t *before, const tc_ifunc_stats_t *after,
                           char *buf, size_t len)
{
    unsigned i;

    for (i = 1; i < TC_IFUNC_REJECT_LAST; ++i) {
        if (after->rejects[i] != before->rejects[i]) {
            snprintf(buf, len, "refused %s", tc_ifunc_reject_name(i));
            return buf;
        }
    }
    for (i = 1; i < TC_IFUNC_TRAP_LAST; ++i) {
        if (after->confine_traps[i] != before->confine_traps[i]) {
            snprintf(buf, len, "trap %s", tc_ifunc_trap_name(i));
            return buf;
        }
    }
    snprintf(buf, len, (after->confine_runs != before->confine_runs) ? "ran" :
                       "ran unconfined");
    return buf;
}

int main(int argc, char **argv)
{
    tc_ifunc_mode_t mode = TC_IFUNC_MODE_PORTABLE;
    tc_ifunc_mailbox_params_t params = {0};
    uint8_t target_mem[2 * TCH_TARGET_SIZE] __attribute__((aligned(64)));
    tch_target_t *target = (tch_target_t *)(void *)target_mem;
    uint64_t secret_addrs[2], my_secret = (uint64_t)(uintptr_t)&confine_probe_secret;
    uint64_t expect_sum = 0, expect_runs = 0;
    tc_ifunc_stats_t before, after;
    tc_ifunc_msg_h msg;
    tc_ifunc_pkg_h pkg = NULL;
    tc_ifunc_mailbox_h mbox;
    tc_bootstrap_h boot;
    tc_ifunc_ucp_t ucp;
    tch_args_t args;
    ucs_status_t status;
    uint32_t id, ok_id;
    double timeout = 60, deadline;
    char prefix[1024], what[64];
    int opt, rounds = 1, r;
    size_t c, k, frame;

    while ((opt = getopt(argc, argv, "m:r:t:")) != -1) {
        switch (opt) {
        case 'm':
            mode = (strcmp(optarg, "portable-cached") == 0) ? TC_IFUNC_MODE_PORTABLE_CACHED :
                                                               TC_IFUNC_MODE_PORTABLE;
            break;
        case 'r': rounds = atoi(optarg); break;
        case 't': timeout = atof(optarg); break;
        default: return 2;
        }
    }
    if ((tc_bootstrap_create_from_env(&boot) != UCS_OK) || (tc_bootstrap_size(boot) != 2) ||
        (tc_ifunc_ucp_init(&ucp) != UCS_OK)) {
        return 2;
    }
    g_rank = tc_bootstrap_rank(boot);
    (void)unlink("/tmp/tchostile-system-ran");
    memset(target_mem, CANARY, sizeof(target_mem));
    memset(target, 0, TCH_TARGET_SIZE);

    params.field_mask = TC_IFUNC_MAILBOX_PARAM_FIELD_SECURITY |
                        TC_IFUNC_MAILBOX_PARAM_FIELD_FLAGS;
    params.security   = TC_IFUNC_SECURITY_CONFINE;
    params.flags      = TC_IFUNC_MAILBOX_FLAG_NO_POLLER;
    if (g_rank == 0) {
        params.field_mask |= TC_IFUNC_MAILBOX_PARAM_FIELD_TARGET_ARGS |
                             TC_IFUNC_MAILBOX_PARAM_FIELD_TARGET_SIZE;
        params.target_args = target;
        params.target_size = TCH_TARGET_SIZE;
    } else {
        snprintf(prefix, sizeof(prefix), "%s/test/twochains-pkgs", TC_BUILDDIR);
        if (tc_ifunc_pkg_load(prefix, "tchostile", &pkg) != UCS_OK) {
            return 2;
        }
    }
    status = tc_ifunc_mailbox_create(ucp.context, ucp.engine, boot, &params, &mbox);
    if ((status != UCS_OK) ||
        (tc_bootstrap_allgather(boot, &my_secret, sizeof(my_secret), secret_addrs) !=
         UCS_OK)) {
        printf("confine_probe rank %d: setup: %s\n", g_rank, ucs_status_string(status));
        return 2;
    }
    printf("confine_probe rank %d: transport %s, security %s, %zu cases x %d\n", g_rank,
           tc_ifunc_mailbox_transport(mbox, 1 - g_rank),
           tc_ifunc_security_names[tc_ifunc_mailbox_security(mbox)], NUM_CASES, rounds);
    fflush(stdout);

    if (g_rank == 1) {
        CHECK(tc_ifunc_pkg_element(pkg, "tch_ok", &ok_id) == UCS_OK, "no tch_ok");
        for (r = 0; r < rounds; ++r) {
            for (c = 0; c < NUM_CASES; ++c) {
                for (k = 0; k < 2; ++k) {
                    args_of(c, secret_addrs[0], &args);
                    CHECK(tc_ifunc_pkg_element(pkg, k ? "tch_ok" : cases[c].jam, &id) ==
                          UCS_OK, "no jam %s", cases[c].jam);
                    status = tc_ifunc_msg_create(mbox, pkg, k ? ok_id : id, mode, &args,
                                                 sizeof(args), &msg);
                    CHECK(status == UCS_OK, "message %s: %s", cases[c].jam,
                          ucs_status_string(status));
                    if (status != UCS_OK) {
                        break;
                    }
                    deadline = now_s() + timeout;
                    while (((status = tc_ifunc_send(mbox, 0, msg)) == UCS_ERR_NO_RESOURCE) &&
                           (now_s() < deadline)) {
                        tc_progress(ucp.engine);
                    }
                    CHECK(status == UCS_OK, "send %s: %s", cases[c].jam,
                          ucs_status_string(status));
                    CHECK(tc_ifunc_msg_wait(msg) == UCS_OK, "send did not complete");
                    tc_ifunc_msg_free(msg);
                }
            }
        }
        CHECK(tc_ifunc_mailbox_flush(mbox, timeout) == UCS_OK, "flush");
    } else {
        frame    = 0;
        deadline = now_s() + timeout;
        while ((frame < 2 * NUM_CASES * (size_t)rounds) && (now_s() < deadline)) {
            tc_ifunc_mailbox_stats(mbox, &before);
            if (tc_ifunc_poll(mbox, 1) == 0) {
                tc_progress(ucp.engine);
                continue;
            }
            tc_ifunc_mailbox_stats(mbox, &after);
            c = (frame / 2) % NUM_CASES;
            outcome(&before, &after, what, sizeof(what));
            if (frame % 2) {
                args_of(c, secret_addrs[0], &args);
                expect_sum += args.a + args.b + args.c + args.d;
                ++expect_runs;
                CHECK(strcmp(what, "ran") == 0, "tch_ok after %s: %s", cases[c].jam, what);
            } else {
                if (frame < 2 * NUM_CASES) {
                    printf("confine_probe: %-20s %s\n", cases[c].jam, what);
                }
                CHECK(strcmp(what, cases[c].expect) == 0, "%s: %s, expected %s",
                      cases[c].jam, what, cases[c].expect);
            }
            ++frame;
        }
        CHECK(frame == 2 * NUM_CASES * (size_t)rounds, "%zu frames of %zu arrived", frame,
              2 * NUM_CASES * (size_t)rounds);
        CHECK(target->sum == expect_sum, "target sum %" PRIu64 ", expected %" PRIu64,
              target->sum, expect_sum);
        CHECK(target->runs == expect_runs, "tch_ok ran %" PRIu64 " times, expected %" PRIu64,
              target->runs, expect_runs);
        CHECK(target->last == 0, "a hostile jam wrote the target's last: %" PRIx64,
              target->last);
        for (k = TCH_TARGET_SIZE; k < sizeof(target_mem); ++k) {
            CHECK(target_mem[k] == CANARY, "byte %zu past the target changed", k);
        }
        CHECK(confine_probe_secret == SECRET_VALUE, "the secret changed: %" PRIx64,
              confine_probe_secret);
        CHECK(access("/tmp/tchostile-system-ran", F_OK) != 0, "system() ran");
        tc_ifunc_mailbox_stats(mbox, &after);
        tc_ifunc_stats_print(&after, stdout, "[stats rank 0] ");
    }
    tc_ifunc_mailbox_barrier(mbox);
    tc_ifunc_mailbox_destroy(mbox);
    if (pkg != NULL) {
        tc_ifunc_pkg_unload(pkg);
    }
    tc_ifunc_ucp_cleanup(&ucp);
    tc_bootstrap_destroy(boot);
    if (!g_fail) {
        printf("confine_probe rank %d: OK\n", g_rank);
    }
    fflush(stdout);
    return g_fail;
}
