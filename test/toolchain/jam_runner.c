/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * jam_runner MANIFEST MODE SCENARIO...: runs the jam execution scenarios of
 * jam_exec.c in this process; cross-compiled for aarch64 and run under
 * qemu-aarch64 by test_toolchain. MODE is rwx or rx. Prints one line per
 * scenario, "ok <name>" or "FAIL <name>" with details; exits non-zero on
 * any failure.
 */
#include <stdio.h>
#include <string.h>

#include "jam_exec.h"

int main(int argc, char **argv)
{
    static tc_test_pkg_t pkg;
    static char report[16384];
    tc_test_map_mode_t mode;
    char err[512];
    int failed = 0;

    if (argc < 4) {
        fprintf(stderr, "usage: %s MANIFEST rwx|rx SCENARIO...\n", argv[0]);
        return 2;
    }
    mode = (strcmp(argv[2], "rx") == 0) ? TC_TEST_MAP_RX : TC_TEST_MAP_RWX;
    if (tc_test_pkg_load(argv[1], &pkg, err, sizeof(err)) != 0) {
        printf("FAIL load: %s\n", err);
        return 1;
    }
    for (int i = 3; i < argc; ++i) {
        const tc_test_scenario_t *s = tc_test_scenarios;
        while ((s->name != NULL) && (strcmp(s->name, argv[i]) != 0)) {
            ++s;
        }
        if (s->name == NULL) {
            printf("FAIL %s: unknown scenario\n", argv[i]);
            ++failed;
            continue;
        }
        report[0] = '\0';
        if (s->fn(&pkg, mode, report, sizeof(report)) != 0) {
            printf("FAIL %s (%s)\n%s", s->name, argv[2], report);
            ++failed;
        } else {
            printf("ok %s (%s)\n", s->name, argv[2]);
        }
    }
    tc_test_pkg_unload(&pkg);
    return failed ? 1 : 0;
}
