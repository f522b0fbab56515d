/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The process's table of Portable modules compiled for this host and the
 * compile thread that fills it (portable.c); the architectures a mailbox
 * knows.
 */
#ifndef TC_IFUNC_PORTABLE_H_
#define TC_IFUNC_PORTABLE_H_

#include "ifunc/code/code_cache.h"
#include "ifunc/code/package.h"

#include <twochains/ifunc.h>
#include <twochains/jam_format.h>

#include <ucs/sys/compiler_def.h>
#include <stdint.h>

BEGIN_C_DECLS

/* Architectures whose modules a mailbox knows (published at creation) */
typedef enum {
    TC_IFUNC_ARCH_UNKNOWN,
    TC_IFUNC_ARCH_X86_64,
    TC_IFUNC_ARCH_AARCH64,
    TC_IFUNC_ARCH_LAST
} tc_ifunc_arch_t;

/* A module of Portable frames compiled for this host (portable.c): one per
 * bitcode hash per process */
typedef enum {
    TC_PORTABLE_COMPILING,
    TC_PORTABLE_READY,
    TC_PORTABLE_FAILED
} tc_portable_state_t;

typedef struct tc_portable_code {
    tc_code_entry_t         entry;       /* what rings name for Cached frames:
                                            code = the compiled entry, entry_rel 0,
                                            no writable globals */
    uint64_t                hash;        /* FNV-1a 64 of the bitcode */
    int                     state;       /* tc_portable_state_t, release-stored once
                                            final by the compile thread */
    tc_ifunc_reject_t       reason;      /* FAILED: why, for every frame naming it */
    char                    detail[192];
    double                  compile_s;
    int                     counted;     /* compile_s is in a mailbox's stats */
    int                     own;         /* from our own package's file (what
                                            `verify` may run), not a peer's bytes */
    int                     confined;    /* compiled confined: runs through
                                            tc_confine_run (confine.c) */
    struct tc_jit_code      *jit_code;
    unsigned                users;       /* polls running it now (eviction waits) */
    int                     prepared;    /* pinned by tc_ifunc_portable_prepare */
    /* the job's inputs, freed once compiled: a private copy of the module
     * (trust), or the path of our own package's module (verify) */
    uint8_t                 *bitcode;
    size_t                  bitcode_size;
    char                    *path;
    char                    entry_name[TC_JAM_NAME_MAX + 8];
    struct tc_portable_code *next_job;
} tc_portable_code_t;

/* dispatch's "the module is still compiling": not a reject, the ring waits
 * (a carrier: TC_IFUNC_EXEC_PENDING, the same value) */
#define TC_IFUNC_PORTABLE_WAIT TC_IFUNC_REJECT_LAST

/* Modules by where their bytes came from and how they were compiled: a
 * module is found only in the table of its kind */
typedef enum {
    TC_PORTABLE_TABLE_PEER,      /* a peer's bytes, compiled as they are (trust) */
    TC_PORTABLE_TABLE_OWN,       /* our own packages' files (what verify runs) */
    TC_PORTABLE_TABLE_CONFINED,  /* a peer's bytes, checked and confined */
    TC_PORTABLE_TABLES
} tc_portable_table_t;

/* ---- the table (portable.c) ---- */

/* This host's, and the triple of an architecture as twochains-pkg names it */
tc_ifunc_arch_t tc_portable_host_arch(void);
const char *tc_portable_arch_triple(tc_ifunc_arch_t arch);

/* The triple whose modules this host runs */
const char *tc_portable_host_triple(void);

/* The module file @a path, which must hash to @a hash: malloc'ed bytes, or
 * NULL with why in @a detail */
uint8_t *tc_portable_read_module(const char *path, uint64_t hash, size_t *size_p,
                                 char *detail, size_t detail_len);

/* The compiled module of @a hash, NULL unless ready, not held (benchmarks
 * that compile fewer modules than the bound); @a jit_setup_s (may be
 * NULL): the time the first compile spent loading LLVM and creating the
 * JIT, which no module's compile_s includes (benchmarks) */
const tc_portable_code_t *tc_portable_find(uint64_t hash, double *jit_setup_s);

/* Compile @a bitcode confined outside any frame (benchmarks, the checker's
 * fuzzer) and wait for it: the entry, pinned for the process's life, or
 * NULL with the reject reason and detail in @a detail */
const tc_portable_code_t *tc_portable_compile_confined(const void *bitcode, size_t size,
                                                       const char *entry_name,
                                                       double timeout_s, char *detail,
                                                       size_t detail_len);

/* The entry of @a hash in the table @a which, or (@a taken_p not NULL) a
 * new COMPILING one queued with @a setup's inputs (portable.c says more);
 * held (@a hold) until tc_portable_put */
tc_portable_code_t *
tc_portable_get(uint64_t hash, tc_portable_table_t which, const tc_portable_code_t *setup,
                int *taken_p, int hold, uint64_t *evictions, char *detail, size_t detail_len);

/* Let go of an entry tc_portable_get held */
void tc_portable_put(tc_portable_code_t *entry);

/* tc_portable_get of a new entry of @a setup's table, held; the inputs of
 * @a setup that the table did not take are freed */
tc_portable_code_t *tc_portable_get_or_free(uint64_t hash, tc_portable_code_t *setup,
                                            uint64_t *evictions, char *detail,
                                            size_t detail_len);

/* Element @a e's own module for this host, if its hash is @a hash: the
 * only code `verify` runs */
tc_ifunc_reject_t tc_portable_own_check(const tc_ifunc_pkg_h pkg,
                                        const tc_ifunc_element_t *e, uint64_t hash,
                                        const tc_ifunc_portable_bc_t **bc_p,
                                        char *detail, size_t detail_len);

/* What a new entry for element @a e's own module needs (verify mode) */
tc_ifunc_reject_t tc_portable_own_setup(const tc_ifunc_pkg_h pkg,
                                        const tc_ifunc_element_t *e, uint64_t hash,
                                        tc_portable_code_t *setup, char *detail,
                                        size_t detail_len);

/* The state of @a entry once final, or COMPILING after @a timeout_s */
int tc_portable_wait(tc_portable_code_t *entry, double timeout_s);

END_C_DECLS

#endif
