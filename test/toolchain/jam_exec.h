/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Test receiver for injectable jams, in C11 so the same code runs natively
 * inside the GoogleTest process and cross-compiled under qemu-aarch64.
 *
 * It reads a package manifest the way the runtime will (fgets + sscanf),
 * loads each jam file, dlopens the rieds, resolves every external symbol in
 * GOT order with dlsym, and runs a jam the way a receiver does: copy the span
 * to a fresh mapping, store the GOT table address in the slot, make it
 * executable (RWX, or RW then RX), call span + entry_offset.
 */
#ifndef TC_TEST_JAM_EXEC_H_
#define TC_TEST_JAM_EXEC_H_

#include <stddef.h>
#include <stdint.h>

#include <twochains/jam_format.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TC_TEST_MAX_ELEMENTS  32
#define TC_TEST_MAX_EXTERNALS 64
#define TC_TEST_MAX_RIEDS     8
#define TC_TEST_PATH_MAX      1024

typedef struct tc_test_element {
    tc_jam_manifest_element_t rec;  /* the manifest's record, as the toolchain parses it */
    char     externals[TC_TEST_MAX_EXTERNALS][128];
    uint8_t  *span;                 /* from the jam file, slot zeroed */
    void     *got[TC_TEST_MAX_EXTERNALS];  /* resolved in this process */
} tc_test_element_t;

typedef struct tc_test_pkg {
    char              package[64];
    char              arch[16];
    uint64_t          build_id;
    uint32_t          num_elements;
    tc_test_element_t elements[TC_TEST_MAX_ELEMENTS];
    uint32_t          num_rieds;
    void              *rieds[TC_TEST_MAX_RIEDS];   /* dlopen handles */
} tc_test_pkg_t;

typedef enum {
    TC_TEST_MAP_RWX,   /* one RWX mapping */
    TC_TEST_MAP_RX     /* written RW, then mprotect'ed read+execute */
} tc_test_map_mode_t;

/* One placed copy of a span, ready to run. */
typedef struct tc_test_exec {
    void    *map;
    size_t  map_len;
    uint8_t *span;       /* map + offset */
    const tc_test_element_t *elem;
} tc_test_exec_t;

/* Load a package from its manifest; 0 on success, else err is filled. */
int tc_test_pkg_load(const char *manifest_path, tc_test_pkg_t *pkg,
                     char *err, size_t errlen);
void tc_test_pkg_unload(tc_test_pkg_t *pkg);

const tc_test_element_t *tc_test_pkg_element(const tc_test_pkg_t *pkg,
                                             const char *name);
/* dlsym over the package's rieds, then the whole process */
void *tc_test_pkg_symbol(const tc_test_pkg_t *pkg, const char *name);

/* Copy @a elem's span to a fresh mapping, at @a offset (16-aligned) into it. */
int tc_test_exec_place(const tc_test_element_t *elem, tc_test_map_mode_t mode,
                       size_t offset, tc_test_exec_t *exec,
                       char *err, size_t errlen);
void tc_test_exec_run(const tc_test_exec_t *exec, void *payload,
                      size_t payload_size, void *target_args);
void tc_test_exec_release(tc_test_exec_t *exec);

/*
 * Scenarios: each runs several messages of one jam, each message in a fresh
 * mapping at a new address, and checks the effects exactly. Returns the
 * number of failed checks; their descriptions are appended to @a report.
 */
typedef int (*tc_test_scenario_fn_t)(tc_test_pkg_t *pkg, tc_test_map_mode_t mode,
                                     char *report, size_t report_len);

int tc_test_scenario_indirect_put(tc_test_pkg_t *pkg, tc_test_map_mode_t mode,
                                  char *report, size_t report_len);
int tc_test_scenario_server_side_sum(tc_test_pkg_t *pkg, tc_test_map_mode_t mode,
                                     char *report, size_t report_len);
int tc_test_scenario_ping(tc_test_pkg_t *pkg, tc_test_map_mode_t mode,
                          char *report, size_t report_len);
int tc_test_scenario_calls_libc(tc_test_pkg_t *pkg, tc_test_map_mode_t mode,
                                char *report, size_t report_len);
/* package wglobal: jam-defined writable globals are per message */
int tc_test_scenario_wglobal(tc_test_pkg_t *pkg, tc_test_map_mode_t mode,
                             char *report, size_t report_len);

/* package gotforms: the less common GOT access forms */
int tc_test_scenario_gotforms(tc_test_pkg_t *pkg, tc_test_map_mode_t mode,
                              char *report, size_t report_len);

/* package gotforms: a jump table and a floating-point constant */
int tc_test_scenario_switchy(tc_test_pkg_t *pkg, tc_test_map_mode_t mode,
                             char *report, size_t report_len);

typedef struct tc_test_scenario {
    const char            *name;      /* the jam it exercises */
    tc_test_scenario_fn_t fn;
} tc_test_scenario_t;

/* NULL-terminated table of all scenarios */
extern const tc_test_scenario_t tc_test_scenarios[];

#ifdef __cplusplus
}
#endif

#endif /* TC_TEST_JAM_EXEC_H_ */
