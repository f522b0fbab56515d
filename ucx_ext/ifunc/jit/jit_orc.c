/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Portable jams compiled with LLVM 14's ORC LLJIT, through LLVM's C API
 * (the interface and its promises: jit.h). Built as libtwochains_jit.so.
 *
 * Invariants:
 *  - one LLJIT per process, one JITDylib (the main one). Every module is
 *    rewritten before it is added so that nothing of it can clash with or
 *    bind to another: its entry gets a name unique in the process
 *    (__tc_jit_<n>), its other definitions become internal, and each
 *    external it declares is replaced by the address the resolver gave for
 *    it, a constant. The JITDylib defines only the library calls code
 *    generation may emit (memcpy, memmove, memset): no generator searches
 *    the process, so a symbol nobody allowed is a link error, never a
 *    silent binding;
 *  - each module has its own resource tracker: release frees its code;
 *  - the host is detected once (CPU and features), the code is for it.
 */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE   /* pipe2 */
#endif
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/jit/jit.h"
#include "ifunc/jit/jit_confine.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* How long a dry run may take before its module counts as one that loops */
#define TC_JIT_DRY_RUN_MS 30000

struct tc_jit {
    LLVMOrcLLJITRef    lljit;
    LLVMTargetMachineRef pass_tm;   /* the host's, for confine's optimisation */
    LLVMOrcJITDylibRef dylib;
    uint64_t           next_id;
    char               *triple;
};

struct tc_jit_code {
    LLVMOrcResourceTrackerRef tracker;
    void                      *entry;
};

/* Library calls that code generation emits for memory intrinsics: the one
 * set of externals no module declares, so no resolver sees them */
static const char *const tc_jit_codegen_calls[] = {"memcpy", "memmove", "memset"};

static void tc_jit_error_text(LLVMErrorRef err, const char *what, char *out, size_t len)
{
    char *msg = LLVMGetErrorMessage(err);   /* consumes err */

    snprintf(out, len, "%s: %s", what, msg);
    LLVMDisposeErrorMessage(msg);
}

/* LLVM's default handler ends the process on an error diagnostic (a bitcode
 * reader's, for a module that does not parse): a peer's bytes must never do
 * that, so the context keeps the first message for the reject's detail */
typedef struct tc_jit_diag {
    char text[160];
} tc_jit_diag_t;

static void tc_jit_diag_handler(LLVMDiagnosticInfoRef info, void *arg)
{
    tc_jit_diag_t *diag = arg;
    char *msg;

    if ((diag->text[0] == '\0') && (LLVMGetDiagInfoSeverity(info) == LLVMDSError)) {
        msg = LLVMGetDiagInfoDescription(info);
        snprintf(diag->text, sizeof(diag->text), "%s", msg);
        LLVMDisposeMessage(msg);
    }
}

static void tc_jit_init_target(void)
{
#if defined(__x86_64__)
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeX86AsmParser();   /* inline assembly of a module (trust, verify) */
#elif defined(__aarch64__)
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64Target();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeAArch64AsmPrinter();
    LLVMInitializeAArch64AsmParser();
#else
#  error "the portable JIT knows x86_64 and aarch64"
#endif
}

static LLVMErrorRef tc_jit_define_absolute(tc_jit_t *jit, const char *name, void *addr)
{
    LLVMJITCSymbolMapPair pair;

    pair.Name                     = LLVMOrcLLJITMangleAndIntern(jit->lljit, name);
    pair.Sym.Address              = (LLVMOrcJITTargetAddress)(uintptr_t)addr;
    pair.Sym.Flags.GenericFlags   = LLVMJITSymbolGenericFlagsExported |
                                    LLVMJITSymbolGenericFlagsCallable;
    pair.Sym.Flags.TargetFlags    = 0;
    return LLVMOrcJITDylibDefine(jit->dylib, LLVMOrcAbsoluteSymbols(&pair, 1));
}

static LLVMOrcLLJITBuilderRef tc_jit_host_builder(char *err, size_t err_len)
{
    char *triple   = LLVMGetDefaultTargetTriple();
    char *cpu      = LLVMGetHostCPUName();
    char *features = LLVMGetHostCPUFeatures();
    LLVMOrcLLJITBuilderRef builder = NULL;
    LLVMTargetMachineRef tm;
    LLVMTargetRef target;
    char *msg = NULL;

    if (LLVMGetTargetFromTriple(triple, &target, &msg)) {
        snprintf(err, err_len, "no target for %s: %s", triple, msg);
        LLVMDisposeMessage(msg);
        goto out;
    }
    tm = LLVMCreateTargetMachine(target, triple, cpu, features, LLVMCodeGenLevelDefault,
                                 LLVMRelocPIC, LLVMCodeModelSmall);
    if (tm == NULL) {
        snprintf(err, err_len, "no target machine for %s (%s)", triple, cpu);
        goto out;
    }
    builder = LLVMOrcCreateLLJITBuilder();
    /* takes the target machine, and the builder takes the JTMB */
    LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(
            builder, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm));
out:
    LLVMDisposeMessage(triple);
    LLVMDisposeMessage(cpu);
    LLVMDisposeMessage(features);
    return builder;
}

static LLVMTargetMachineRef tc_jit_host_machine(void)
{
    char *triple   = LLVMGetDefaultTargetTriple();
    char *cpu      = LLVMGetHostCPUName();
    char *features = LLVMGetHostCPUFeatures();
    LLVMTargetMachineRef tm = NULL;
    LLVMTargetRef target;
    char *msg = NULL;

    if (!LLVMGetTargetFromTriple(triple, &target, &msg)) {
        tm = LLVMCreateTargetMachine(target, triple, cpu, features, LLVMCodeGenLevelDefault,
                                     LLVMRelocPIC, LLVMCodeModelSmall);
    } else {
        LLVMDisposeMessage(msg);
    }
    LLVMDisposeMessage(triple);
    LLVMDisposeMessage(cpu);
    LLVMDisposeMessage(features);
    return tm;
}

static ucs_status_t tc_jit_create(tc_jit_t **jit_p, char *err, size_t err_len)
{
    LLVMOrcLLJITBuilderRef builder;
    LLVMErrorRef lerr;
    tc_jit_t *jit;
    unsigned i;

    tc_jit_init_target();
    jit = calloc(1, sizeof(*jit));
    if (jit == NULL) {
        snprintf(err, err_len, "no memory");
        return UCS_ERR_NO_MEMORY;
    }
    /* the host CPU and its features, position-independent code: an external
     * is reached through a GOT entry next to the code, so it may be anywhere
     * in the address space (with the static model aarch64's ADRP reaches
     * only +-4 GiB). LLJIT's object layer: RuntimeDyld with a section
     * memory manager, read+write while linking, read+execute after (W^X) */
    builder = tc_jit_host_builder(err, err_len);
    if (builder == NULL) {
        goto err_free;
    }
    lerr = LLVMOrcCreateLLJIT(&jit->lljit, builder);   /* takes the builder */
    if (lerr != NULL) {
        tc_jit_error_text(lerr, "creating the ORC LLJIT", err, err_len);
        goto err_free;
    }
    jit->pass_tm = tc_jit_host_machine();
    if (jit->pass_tm == NULL) {
        snprintf(err, err_len, "no target machine for this host");
        goto err_jit;
    }
    jit->dylib  = LLVMOrcLLJITGetMainJITDylib(jit->lljit);
    jit->triple = strdup(LLVMOrcLLJITGetTripleString(jit->lljit));
    if (jit->triple == NULL) {
        snprintf(err, err_len, "no memory");
        goto err_jit;
    }
    for (i = 0; i < sizeof(tc_jit_codegen_calls) / sizeof(tc_jit_codegen_calls[0]); ++i) {
        lerr = tc_jit_define_absolute(jit, tc_jit_codegen_calls[i],
                                      (i == 0) ? (void*)memcpy :
                                      (i == 1) ? (void*)memmove : (void*)memset);
        if (lerr != NULL) {
            tc_jit_error_text(lerr, "defining the code generator's calls", err, err_len);
            goto err_triple;
        }
    }
    *jit_p = jit;
    return UCS_OK;

err_triple:
    free(jit->triple);
err_jit:
    if (jit->pass_tm != NULL) {
        LLVMDisposeTargetMachine(jit->pass_tm);
    }
    LLVMConsumeError(LLVMOrcDisposeLLJIT(jit->lljit));
err_free:
    free(jit);
    return UCS_ERR_UNSUPPORTED;
}

static void tc_jit_destroy(tc_jit_t *jit)
{
    LLVMConsumeError(LLVMOrcDisposeLLJIT(jit->lljit));
    LLVMDisposeTargetMachine(jit->pass_tm);
    free(jit->triple);
    free(jit);
}

static const char *tc_jit_host_triple(const tc_jit_t *jit)
{
    return jit->triple;
}

static int tc_jit_is_llvm_name(const char *name)
{
    return strncmp(name, "llvm.", 5) == 0;
}

/* Bind the external @a value (a declaration named as the module names it)
 * to the address the resolver gives: every use becomes that address as a
 * constant, and the declaration goes. Code generation then builds the
 * address in a register (no relocation to resolve, so no range to respect:
 * with a GOT or PC-relative reference RuntimeDyld's aarch64 code reached
 * only nearby symbols), and the JIT never binds a name of the module */
static tc_ifunc_reject_t tc_jit_bind_external(LLVMValueRef value,
                                              tc_jit_resolve_fn_t resolve, void *arg,
                                              char *detail, size_t detail_len)
{
    char name[256], why[96];
    size_t len;
    const char *n = LLVMGetValueName2(value, &len);
    LLVMContextRef ctx;
    LLVMValueRef addr_const;
    void *addr;

    if (len >= sizeof(name)) {
        snprintf(detail, detail_len, "an external name of %zu bytes", len);
        return TC_IFUNC_REJECT_EXTERNAL;
    }
    memcpy(name, n, len);
    name[len] = '\0';
    why[0]    = '\0';
    addr      = resolve(arg, name, NULL, why, sizeof(why));
    if (addr == NULL) {
        snprintf(detail, detail_len, "external '%s' %s", name,
                 (why[0] != '\0') ? why : "is unresolved");
        return TC_IFUNC_REJECT_EXTERNAL;
    }
    ctx        = LLVMGetTypeContext(LLVMTypeOf(value));
    addr_const = LLVMConstIntToPtr(LLVMConstInt(LLVMInt64TypeInContext(ctx),
                                                (uint64_t)(uintptr_t)addr, 0),
                                   LLVMTypeOf(value));
    LLVMReplaceAllUsesWith(value, addr_const);
    return TC_IFUNC_REJECT_NONE;
}

/* Writable globals a module may keep (each made fresh at every call) */
#define TC_JIT_MAX_WRITABLE 64

/* The jam contract: every message sees the jam's writable globals as they
 * were shipped (an Injected frame gets a fresh copy of its data). Compiled
 * code keeps one instance of them, so the entry starts by copying each one
 * from a private constant holding its initial value. */
static void tc_jit_fresh_globals(LLVMModuleRef mod, LLVMValueRef main_fn,
                                 LLVMValueRef *writable, unsigned count)
{
    LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(mod));
    LLVMValueRef init;
    LLVMTypeRef type;
    unsigned i, align;

    LLVMPositionBuilderBefore(b, LLVMGetFirstInstruction(LLVMGetEntryBasicBlock(main_fn)));
    for (i = 0; i < count; ++i) {
        type  = LLVMGlobalGetValueType(writable[i]);
        align = LLVMGetAlignment(writable[i]);
        align = (align != 0) ? align : 1;
        init  = LLVMAddGlobal(mod, type, "__tc_jit_initial");
        LLVMSetInitializer(init, LLVMGetInitializer(writable[i]));
        LLVMSetGlobalConstant(init, 1);
        LLVMSetLinkage(init, LLVMPrivateLinkage);
        LLVMSetAlignment(init, align);
        LLVMBuildMemCpy(b, writable[i], align, init, align, LLVMSizeOf(type));
    }
    LLVMDisposeBuilder(b);
}

/* Check and rewrite a parsed module (see the invariants at the top) */
static tc_ifunc_reject_t tc_jit_rewrite(tc_jit_t *jit, LLVMModuleRef mod,
                                        const char *entry, const char *unique,
                                        tc_jit_resolve_fn_t resolve, void *arg,
                                        const tc_jit_confine_t *confine,
                                        char *detail, size_t detail_len)
{
    const char *mod_triple = LLVMGetTarget(mod);
    size_t arch_len        = tc_jit_triple_arch_len(jit->triple);
    LLVMValueRef fn, gv, next, main_fn = NULL, writable[TC_JIT_MAX_WRITABLE];
    unsigned num_writable = 0;
    tc_ifunc_reject_t reason;
    const char *name;
    size_t len;

    if ((tc_jit_triple_arch_len(mod_triple) != arch_len) ||
        (strncmp(mod_triple, jit->triple, arch_len) != 0)) {
        snprintf(detail, detail_len, "a module for '%s' on a '%s' host", mod_triple,
                 jit->triple);
        return TC_IFUNC_REJECT_TRIPLE;
    }
    if (LLVMGetModuleInlineAsm(mod, &len) != NULL && len != 0) {
        snprintf(detail, detail_len, "module-level inline assembly");
        return TC_IFUNC_REJECT_BITCODE;
    }
    if (confine != NULL) {
        /* checked and rewritten while its externals still have names */
        reason = tc_jit_confine_rewrite(mod, entry, confine, resolve, arg, detail,
                                        detail_len);
        if (reason != TC_IFUNC_REJECT_NONE) {
            return reason;
        }
    }

    for (gv = LLVMGetFirstGlobal(mod); gv != NULL; gv = next) {
        next = LLVMGetNextGlobal(gv);
        name = LLVMGetValueName2(gv, &len);
        if (tc_jit_is_llvm_name(name)) {
            continue;
        }
        if (LLVMIsDeclaration(gv)) {
            reason = tc_jit_bind_external(gv, resolve, arg, detail, detail_len);
            if (reason != TC_IFUNC_REJECT_NONE) {
                return reason;
            }
            LLVMDeleteGlobal(gv);
        } else if (LLVMIsThreadLocal(gv)) {
            snprintf(detail, detail_len, "thread-local global '%.*s'", (int)len, name);
            return TC_IFUNC_REJECT_BITCODE;
        } else if (!LLVMIsGlobalConstant(gv)) {
            if (num_writable == TC_JIT_MAX_WRITABLE) {
                snprintf(detail, detail_len, "more than %u writable globals",
                         TC_JIT_MAX_WRITABLE);
                return TC_IFUNC_REJECT_BITCODE;
            }
            LLVMSetLinkage(gv, LLVMInternalLinkage);
            writable[num_writable++] = gv;
        } else {
            LLVMSetLinkage(gv, LLVMInternalLinkage);
        }
    }

    for (fn = LLVMGetFirstFunction(mod); fn != NULL; fn = next) {
        next = LLVMGetNextFunction(fn);
        name = LLVMGetValueName2(fn, &len);
        if (LLVMGetIntrinsicID(fn) != 0) {
            continue;   /* lowered inline, or to memcpy/memmove/memset */
        }
        if (LLVMIsDeclaration(fn)) {
            reason = tc_jit_bind_external(fn, resolve, arg, detail, detail_len);
            if (reason != TC_IFUNC_REJECT_NONE) {
                return reason;
            }
            LLVMDeleteFunction(fn);
        } else if ((strlen(entry) == len) && (memcmp(name, entry, len) == 0)) {
            main_fn = fn;
        } else {
            LLVMSetLinkage(fn, LLVMInternalLinkage);
        }
    }
    if (main_fn == NULL) {
        snprintf(detail, detail_len, "the module does not define '%s'", entry);
        return TC_IFUNC_REJECT_BITCODE;
    }
    if (num_writable != 0) {
        if (LLVMCountBasicBlocks(main_fn) == 0) {
            snprintf(detail, detail_len, "'%s' has no body", entry);
            return TC_IFUNC_REJECT_BITCODE;
        }
        tc_jit_fresh_globals(mod, main_fn, writable, num_writable);
    }
    LLVMSetValueName2(main_fn, unique, strlen(unique));
    LLVMSetLinkage(main_fn, LLVMExternalLinkage);
    LLVMSetVisibility(main_fn, LLVMDefaultVisibility);
    return TC_IFUNC_REJECT_NONE;
}

/* The verifier's verdict; its message, even an empty one, is ours to free */
static tc_ifunc_reject_t tc_jit_verify(LLVMModuleRef mod, const char *what, char *detail,
                                       size_t detail_len)
{
    char *msg        = NULL;
    LLVMBool invalid = LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg);

    if (invalid) {
        snprintf(detail, detail_len, "%s: %s", what, (msg != NULL) ? msg : "");
    }
    LLVMDisposeMessage(msg);
    return invalid ? TC_IFUNC_REJECT_BITCODE : TC_IFUNC_REJECT_NONE;
}

/* Parse, check and rewrite @a bitcode into a module of @a ctx, ready for
 * code generation (*@a mod_p, the caller's), or why not */
static tc_ifunc_reject_t tc_jit_module(tc_jit_t *jit, LLVMContextRef ctx, const void *bitcode,
                                       size_t size, const char *entry, const char *unique,
                                       tc_jit_resolve_fn_t resolve, void *resolve_arg,
                                       const tc_jit_confine_t *confine, LLVMModuleRef *mod_p,
                                       char *detail, size_t detail_len)
{
    tc_jit_diag_t diag = {""};
    LLVMModuleRef mod  = NULL;
    LLVMMemoryBufferRef buf;
    tc_ifunc_reject_t reason;

    LLVMContextSetDiagnosticHandler(ctx, tc_jit_diag_handler, &diag);
    /* LLVM reads the buffer in place: @a bitcode is the caller's private copy */
    buf = LLVMCreateMemoryBufferWithMemoryRange(bitcode, size, "tc-portable-jam", 0);
    if (LLVMParseBitcodeInContext2(ctx, buf, &mod)) {
        snprintf(detail, detail_len, "%zu bytes that are not LLVM 14 bitcode (%s)", size,
                 (diag.text[0] != '\0') ? diag.text : "no reason given");
        LLVMDisposeMemoryBuffer(buf);
        return TC_IFUNC_REJECT_BITCODE;
    }
    LLVMDisposeMemoryBuffer(buf);
    reason = tc_jit_rewrite(jit, mod, entry, unique, resolve, resolve_arg, confine,
                            detail, detail_len);
    if (reason == TC_IFUNC_REJECT_NONE) {
        reason = tc_jit_verify(mod, "invalid module", detail, detail_len);
    }
    if ((reason == TC_IFUNC_REJECT_NONE) && (confine != NULL)) {
        reason = tc_jit_confine_finish(mod, jit->pass_tm, confine, detail, detail_len);
        if (reason == TC_IFUNC_REJECT_NONE) {
            reason = tc_jit_verify(mod, "confine: the rewritten module is invalid", detail,
                                   detail_len);
        }
    }
    if (reason != TC_IFUNC_REJECT_NONE) {
        LLVMDisposeModule(mod);
        return reason;
    }
    *mod_p = mod;
    return TC_IFUNC_REJECT_NONE;
}

/* What a dry run reports through its pipe */
typedef struct tc_jit_dry_report {
    tc_ifunc_reject_t reason;
    char              detail[192];
} tc_jit_dry_report_t;

/* A peer's module first goes through everything the compile does, up to
 * machine code, in a child process: LLVM ends the process on some malformed
 * bitcode (report_fatal_error in its bitstream reader) and may crash or
 * loop on odd IR, and what a peer sends must never stop the receiver. The
 * compile is deterministic: a module the child compiled, the parent does */
static tc_ifunc_reject_t tc_jit_dry_run(tc_jit_t *jit, const void *bitcode, size_t size,
                                        const char *entry, tc_jit_resolve_fn_t resolve,
                                        void *resolve_arg, const tc_jit_confine_t *confine,
                                        char *detail, size_t detail_len)
{
    tc_jit_dry_report_t report;
    LLVMMemoryBufferRef obj;
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    struct pollfd pfd;
    int fds[2], status;
    size_t got = 0;
    ssize_t n;
    char *msg;
    pid_t pid;

    if (pipe2(fds, O_CLOEXEC) != 0) {
        snprintf(detail, detail_len, "no pipe for the dry run: %s", strerror(errno));
        return TC_IFUNC_REJECT_RESOURCE;
    }
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        snprintf(detail, detail_len, "no process for the dry run: %s", strerror(errno));
        return TC_IFUNC_REJECT_RESOURCE;
    }
    if (pid == 0) {
        /* the child: the compile thread alone, LLVM's only user. A crash
         * ends it, whatever handler the process had (UCX's, a fuzzer's) */
        signal(SIGSEGV, SIG_DFL);
        signal(SIGBUS, SIG_DFL);
        signal(SIGILL, SIG_DFL);
        signal(SIGFPE, SIG_DFL);
        signal(SIGABRT, SIG_DFL);
        memset(&report, 0, sizeof(report));
        ctx           = LLVMContextCreate();
        report.reason = tc_jit_module(jit, ctx, bitcode, size, entry, "__tc_jit_dry", resolve,
                                      resolve_arg, confine, &mod, report.detail,
                                      sizeof(report.detail));
        if (report.reason == TC_IFUNC_REJECT_NONE) {
            if (LLVMTargetMachineEmitToMemoryBuffer(jit->pass_tm, mod, LLVMObjectFile, &msg,
                                                    &obj)) {
                snprintf(report.detail, sizeof(report.detail), "code generation: %s", msg);
                report.reason = TC_IFUNC_REJECT_BITCODE;
            }
        }
        n = write(fds[1], &report, sizeof(report));
        _exit((n == (ssize_t)sizeof(report)) ? 0 : 1);
    }
    close(fds[1]);
    pfd.fd     = fds[0];
    pfd.events = POLLIN;
    while (got < sizeof(report)) {
        if (poll(&pfd, 1, TC_JIT_DRY_RUN_MS) <= 0) {
            break;   /* it loops (or the poll failed): it is killed below */
        }
        n = read(fds[0], (char*)&report + got, sizeof(report) - got);
        if (n <= 0) {
            break;   /* it died */
        }
        got += (size_t)n;
    }
    close(fds[0]);
    if (got < sizeof(report)) {
        kill(pid, SIGKILL);
    }
    while ((waitpid(pid, &status, 0) < 0) && (errno == EINTR)) {
    }
    if (got < sizeof(report)) {
        snprintf(detail, detail_len, "the module %s LLVM's compile (a dry run in a child "
                 "process: %s %d)", WIFSIGNALED(status) ? "crashed" : "did not finish",
                 WIFSIGNALED(status) ? "signal" : "status",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        return TC_IFUNC_REJECT_BITCODE;
    }
    report.detail[sizeof(report.detail) - 1] = '\0';
    if ((unsigned)report.reason >= TC_IFUNC_REJECT_LAST) {
        report.reason = TC_IFUNC_REJECT_BITCODE;
    }
    snprintf(detail, detail_len, "%s", report.detail);
    return report.reason;
}

static tc_ifunc_reject_t tc_jit_compile(tc_jit_t *jit, const void *bitcode, size_t size,
                                        const char *entry, tc_jit_resolve_fn_t resolve,
                                        void *resolve_arg, const tc_jit_confine_t *confine,
                                        unsigned flags, tc_jit_code_t **code_p, char *detail,
                                        size_t detail_len)
{
    LLVMOrcThreadSafeContextRef tsc;
    LLVMOrcThreadSafeModuleRef tsm;
    LLVMOrcJITTargetAddress addr;
    tc_ifunc_reject_t reason;
    LLVMModuleRef mod = NULL;
    LLVMErrorRef lerr;
    tc_jit_code_t *code;
    char unique[40];

    if (flags & TC_JIT_COMPILE_F_UNTRUSTED) {
        reason = tc_jit_dry_run(jit, bitcode, size, entry, resolve, resolve_arg, confine,
                                detail, detail_len);
        if (reason != TC_IFUNC_REJECT_NONE) {
            return reason;
        }
    }
    code = calloc(1, sizeof(*code));
    if (code == NULL) {
        snprintf(detail, detail_len, "no memory");
        return TC_IFUNC_REJECT_RESOURCE;
    }
    tsc = LLVMOrcCreateNewThreadSafeContext();
    snprintf(unique, sizeof(unique), "__tc_jit_%" PRIu64, jit->next_id++);
    reason = tc_jit_module(jit, LLVMOrcThreadSafeContextGetContext(tsc), bitcode, size, entry,
                           unique, resolve, resolve_arg, confine, &mod, detail, detail_len);
    if (reason != TC_IFUNC_REJECT_NONE) {
        goto out;
    }

    code->tracker = LLVMOrcJITDylibCreateResourceTracker(jit->dylib);
    tsm           = LLVMOrcCreateNewThreadSafeModule(mod, tsc);   /* owns mod */
    lerr          = LLVMOrcLLJITAddLLVMIRModuleWithRT(jit->lljit, code->tracker, tsm);
    if (lerr != NULL) {
        /* the JIT took the module even so: it is not ours to dispose of */
        tc_jit_error_text(lerr, "adding the module", detail, detail_len);
        reason = TC_IFUNC_REJECT_BITCODE;
        goto out_tracker;
    }
    /* the lookup compiles: code generation and linking happen here */
    lerr = LLVMOrcLLJITLookup(jit->lljit, &addr, unique);
    if (lerr != NULL) {
        tc_jit_error_text(lerr, "compiling", detail, detail_len);
        reason = (strstr(detail, "not found") != NULL) ? TC_IFUNC_REJECT_EXTERNAL :
                                                         TC_IFUNC_REJECT_BITCODE;
        goto out_tracker;
    }
    code->entry = (void*)(uintptr_t)addr;
    *code_p     = code;
    reason      = TC_IFUNC_REJECT_NONE;
    goto out;

out_tracker:
    LLVMConsumeError(LLVMOrcResourceTrackerRemove(code->tracker));
    LLVMOrcReleaseResourceTracker(code->tracker);
out:
    LLVMOrcDisposeThreadSafeContext(tsc);   /* the module, if added, holds its own */
    if (reason != TC_IFUNC_REJECT_NONE) {
        free(code);
    }
    return reason;
}

static void *tc_jit_entry(const tc_jit_code_t *code)
{
    return code->entry;
}

static void tc_jit_release(tc_jit_t *jit, tc_jit_code_t *code)
{
    (void)jit;
    LLVMConsumeError(LLVMOrcResourceTrackerRemove(code->tracker));
    LLVMOrcReleaseResourceTracker(code->tracker);
    free(code);
}

const tc_jit_ops_t tc_jit_orc_ops = {
    .version     = TC_JIT_OPS_VERSION,
    .create      = tc_jit_create,
    .destroy     = tc_jit_destroy,
    .host_triple = tc_jit_host_triple,
    .compile     = tc_jit_compile,
    .entry       = tc_jit_entry,
    .release     = tc_jit_release
};
