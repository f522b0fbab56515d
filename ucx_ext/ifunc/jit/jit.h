/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The receiver's compiler of Portable jams: LLVM bitcode in, the host's
 * machine code out (ORC LLJIT, jit_orc.c). It lives in a module of its own,
 * libtwochains_jit.so, linked with libLLVM-14 and loaded (ifunc/portable/portable.c) on the
 * first Portable frame or prepare call, so that a process that never sees
 * one never maps LLVM. This header is the whole interface between the two;
 * no LLVM type crosses it.
 *
 * What compile promises (each failure is a reject reason and a detail that
 * names the cause):
 *  - the bytes compiled are the caller's, which the caller has already
 *    copied out of peer-writable memory and hashed (copy, verify, run);
 *  - TC_JIT_COMPILE_F_UNTRUSTED (a peer's module): everything below runs
 *    first in a child process; a module on which LLVM aborts, crashes or
 *    runs past 30 s is TC_IFUNC_REJECT_BITCODE and the receiver goes on;
 *  - TC_IFUNC_REJECT_BITCODE: the bytes do not parse, or the module does not
 *    define @a entry, or has thread-local globals, module-level assembly,
 *    or more than 64 writable globals;
 *  - writable globals start every call as they were shipped (the jam
 *    contract: a fresh copy per message): the entry first copies them from
 *    private constants. One instance per compiled module, so such a jam
 *    must not run on two threads at once;
 *  - TC_IFUNC_REJECT_TRIPLE: the module is for another architecture;
 *  - TC_IFUNC_REJECT_EXTERNAL: an external the module names (a function or
 *    a global it declares) that @a resolve refuses -- unresolved, or not on
 *    the allow-list; or a library call that code generation adds and the
 *    JIT does not provide. The module never links against anything else:
 *    the JIT has no generator that searches the process;
 *  - the code is placed by the JIT's memory manager, written while
 *    read+write and made read+execute before it runs (W^X);
 *  - only @a entry is callable from outside: every other definition of the
 *    module is made internal, so two jams with equal helper names, or two
 *    versions of one jam, never bind to each other.
 *
 * Threads: create/destroy once per process; compile and release from one
 * thread at a time (the compile thread); entry points are called from any.
 */
#ifndef TC_IFUNC_JIT_H_
#define TC_IFUNC_JIT_H_

#include <twochains/ifunc.h>

#include <stddef.h>

BEGIN_C_DECLS

typedef struct tc_jit      tc_jit_t;
typedef struct tc_jit_code tc_jit_code_t;

/* What an external is (confine needs a variable's size and whether it may
 * be written) */
typedef enum tc_jit_symbol_kind {
    TC_JIT_SYMBOL_UNKNOWN,
    TC_JIT_SYMBOL_FUNCTION,
    TC_JIT_SYMBOL_OBJECT
} tc_jit_symbol_kind_t;

typedef struct tc_jit_symbol {
    tc_jit_symbol_kind_t kind;
    size_t               size;       /* an object's bytes (its ELF symbol's size) */
    int                  writable;   /* in a writable mapping, not RELRO */
} tc_jit_symbol_t;

/* Address of external @a name for a jam, or NULL with the reason written
 * into @a why ("not on the allow-list", "unresolved"); @a sym (may be
 * NULL) what it is */
typedef void *(*tc_jit_resolve_fn_t)(void *arg, const char *name, tc_jit_symbol_t *sym,
                                     char *why, size_t why_len);

/* Compile confined (UCX_TC_IFUNC_SECURITY=confine): the checker refuses
 * what jit_confine.c lists (TC_IFUNC_REJECT_CONFINE) and the code is
 * rewritten to check every access against the run's regions, to burn fuel
 * and to trap into the runner (confine_abi.h, confine.c) */
typedef struct tc_jit_confine {
    void              *current;    /* tc_confine_ctx_t *(*)(void): the run's context */
    void              *trap;       /* noreturn void (*)(tc_confine_ctx_t*, int32_t) */
    const char *const *allow;      /* external functions the receiver vouches for */
    unsigned          num_allow;
} tc_jit_confine_t;

enum tc_jit_compile_flags {
    /* a peer's bytes: compiled first in a child process (a dry run), so
     * that a module on which LLVM aborts, crashes or loops is a reject
     * ('bitcode'), not the end of the receiver */
    TC_JIT_COMPILE_F_UNTRUSTED = 1u << 0
};

#define TC_JIT_OPS_VERSION 2u
#define TC_JIT_OPS_SYMBOL  "tc_jit_orc_ops"
#define TC_JIT_MODULE_NAME "libtwochains_jit.so"

typedef struct tc_jit_ops {
    unsigned version;   /* TC_JIT_OPS_VERSION */

    /* @a err: why not (no target for this host, ...) */
    ucs_status_t (*create)(tc_jit_t **jit_p, char *err, size_t err_len);
    void (*destroy)(tc_jit_t *jit);

    /* The triple the JIT compiles for, e.g. "x86_64-unknown-linux-gnu" */
    const char *(*host_triple)(const tc_jit_t *jit);

    /* @a confine: NULL, or compile confined; @a flags: tc_jit_compile_flags */
    tc_ifunc_reject_t (*compile)(tc_jit_t *jit, const void *bitcode, size_t size,
                                 const char *entry, tc_jit_resolve_fn_t resolve,
                                 void *resolve_arg, const tc_jit_confine_t *confine,
                                 unsigned flags, tc_jit_code_t **code_p, char *detail,
                                 size_t detail_len);

    /* tc_jam_main_fn_t of compiled code */
    void *(*entry)(const tc_jit_code_t *code);

    /* Free the code's memory; nothing may run it any more */
    void (*release)(tc_jit_t *jit, tc_jit_code_t *code);
} tc_jit_ops_t;

/* The architecture part of a target triple ("x86_64", "aarch64"), the only
 * part two triples of one Linux host may differ in besides the vendor */
static inline size_t tc_jit_triple_arch_len(const char *triple)
{
    size_t n = 0;

    while ((triple[n] != '\0') && (triple[n] != '-')) {
        ++n;
    }
    return n;
}

END_C_DECLS

#endif
