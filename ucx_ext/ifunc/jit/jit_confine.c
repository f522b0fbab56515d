/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The `confine` checker and rewriter of a Portable module (LLVM 14, C API),
 * run by the JIT (jit_orc.c) on a peer's module before it binds externals
 * and compiles. What the rewritten code may do, and how it is held to it:
 *
 * Check (a module that breaks one is refused, TC_IFUNC_REJECT_CONFINE,
 * with the first cause in the detail):
 *  - calls: only direct calls to functions the module defines, intrinsics
 *    of a fixed list (pure arithmetic and math, memory intrinsics, which are
 *    checked like accesses, hints), and externals of the allow-list: the
 *    memory calls memcpy/memmove/memset (checked), value-only libm
 *    functions, and the names the receiver vouches for (confine->allow).
 *    No indirect call, inline assembly, invoke, callbr, indirectbr,
 *    va_arg, alias or ifunc; no other external function, whatever it is;
 *  - data: an external global must be an object the resolver knows with
 *    its size (a ried's variable); every local is a fixed-size alloca of
 *    the entry block (no VLA, no stacksave).
 *
 * Rewrite (the receiver's code around the jam: confine.c):
 *  - every load, store, atomic and memory intrinsic is checked before it
 *    happens: the address, frozen (so that no poison or undef lets the
 *    optimiser drop the check, and the access uses the value checked), must
 *    lie with its whole size in one region. If the pointer is visibly based
 *    on one object (the payload or target argument of the entry, a global,
 *    a local) the region is that object; otherwise any of the run's regions
 *    or the module's objects. Stores go only to writable ones: the payload
 *    and constants are read only;
 *  - every local that has an address lives on a shadow stack, a region of
 *    the runner, so no computed address reaches a return address; the
 *    native stack holds only what the code generator spills;
 *  - fuel: one unit at every function entry and every entry of a loop
 *    header (the target of a depth-first back edge, so every cycle of the
 *    control flow pays); below zero the run traps. The units are those of
 *    the shipped IR, counted before optimisation, so members running one
 *    module count alike;
 *  - depth: every function entry checks the native stack pointer against a
 *    floor the runner set, and the shadow frame against its region;
 *  - a trap is a call of the runner's noreturn trap function (it unwinds
 *    to the runner by longjmp): every `unreachable`, llvm.trap included,
 *    becomes one after optimisation, so no path falls off a function.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/jit/jit_confine.h"
#include "ifunc/wire/confine_abi.h"

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TC_CONFINE_MAX_OBJECTS 512
#define TC_CONFINE_MAX_ALIGN   64

/* value-only libm functions (no pointer argument, no global state); each
 * also with the float suffix */
static const char *const tc_confine_libm[] = {
    "acos", "asin", "atan", "atan2", "cos", "sin", "tan", "cosh", "sinh", "tanh",
    "acosh", "asinh", "atanh", "exp", "exp2", "expm1", "log", "log2", "log10",
    "log1p", "logb", "pow", "sqrt", "cbrt", "hypot", "fabs", "floor", "ceil",
    "trunc", "round", "rint", "nearbyint", "fmod", "remainder", "fmin", "fmax",
    "fdim", "fma", "copysign", "erf", "erfc", "tgamma", "ldexp", "scalbn",
    "ilogb", "nextafter", "lround", "llround", "lrint", "llrint"
};

static const char *const tc_confine_mem_calls[] = {"memcpy", "memmove", "memset"};

/* intrinsics a confined module may call, by name prefix: arithmetic, math,
 * hints, and the memory ones (checked like accesses) */
static const char *const tc_confine_intrinsics[] = {
    "llvm.abs.", "llvm.smax.", "llvm.smin.", "llvm.umax.", "llvm.umin.",
    "llvm.ctpop.", "llvm.ctlz.", "llvm.cttz.", "llvm.bswap.", "llvm.bitreverse.",
    "llvm.fshl.", "llvm.fshr.", "llvm.sadd.", "llvm.uadd.", "llvm.ssub.", "llvm.usub.",
    "llvm.smul.with", "llvm.umul.with", "llvm.fabs.", "llvm.sqrt.", "llvm.fma.",
    "llvm.fmuladd.", "llvm.minnum.", "llvm.maxnum.", "llvm.minimum.", "llvm.maximum.",
    "llvm.copysign.", "llvm.floor.", "llvm.ceil.", "llvm.trunc.", "llvm.rint.",
    "llvm.nearbyint.", "llvm.round.", "llvm.roundeven.", "llvm.lround.", "llvm.llround.",
    "llvm.lrint.", "llvm.llrint.", "llvm.sin.", "llvm.cos.", "llvm.exp.", "llvm.exp2.",
    "llvm.log.", "llvm.log2.", "llvm.log10.", "llvm.pow.", "llvm.powi.",
    "llvm.fptosi.sat.", "llvm.fptoui.sat.", "llvm.vector.reduce.", "llvm.assume",
    "llvm.expect.", "llvm.dbg.", "llvm.lifetime.", "llvm.experimental.noalias.scope.decl",
    "llvm.is.constant.", "llvm.objectsize.", "llvm.sideeffect", "llvm.donothing",
    "llvm.trap", "llvm.memcpy.", "llvm.memmove.", "llvm.memset."
};

typedef struct tc_confine_object {
    LLVMValueRef value;      /* a global: defined, or external with a known size */
    uint64_t     size;
    int          writable;
} tc_confine_object_t;

typedef enum {
    TC_CONFINE_MEM_NONE,
    TC_CONFINE_MEM_COPY,     /* (dst, src, len): memcpy, memmove */
    TC_CONFINE_MEM_SET       /* (dst, value, len) */
} tc_confine_mem_kind_t;

typedef struct tc_confine_pass {
    LLVMModuleRef         mod;
    LLVMContextRef        ctx;
    LLVMTargetDataRef     td;
    LLVMBuilderRef        b;
    const tc_jit_confine_t *opts;
    LLVMTypeRef           i8p, i32, i64, void_t;
    LLVMTypeRef           trap_ty, current_ty, guard_ty, any_ty, any4_ty, enter_ty, fuel_ty;
    LLVMTypeRef           push_ty;
    LLVMValueRef          trap_fn, current_fn;   /* the runner's, as constants */
    LLVMValueRef          guard_fn, any_rd_fn, any_wr_fn, enter_fn, fuel_fn, push_fn;
    LLVMValueRef          main_fn;
    tc_confine_object_t   objects[TC_CONFINE_MAX_OBJECTS];
    unsigned              num_objects;
    char                  *detail;
    size_t                detail_len;
} tc_confine_pass_t;

/* what a function's checks read once, at its entry */
typedef struct tc_confine_fn {
    LLVMValueRef fn;
    LLVMValueRef ctx;
    LLVMValueRef fuel;   /* its fuel, in a local the optimiser keeps in a
                            register: the context's is written back before a
                            call of the module and at a return, read after */
    LLVMValueRef lo[2][TC_CONFINE_REGIONS];     /* [write][region] */
    LLVMValueRef size[2][TC_CONFINE_REGIONS];
} tc_confine_fn_t;

static int tc_confine_name_is(LLVMValueRef v, const char *name)
{
    size_t len;
    const char *n = LLVMGetValueName2(v, &len);

    return (strlen(name) == len) && (memcmp(n, name, len) == 0);
}

static int tc_confine_name_in(const char *name, size_t len, const char *const *list,
                              size_t count, int float_too)
{
    size_t i, l;

    for (i = 0; i < count; ++i) {
        l = strlen(list[i]);
        if (((l == len) && (memcmp(name, list[i], len) == 0)) ||
            (float_too && (l + 1 == len) && (memcmp(name, list[i], l) == 0) &&
             (name[l] == 'f'))) {
            return 1;
        }
    }
    return 0;
}

static tc_confine_mem_kind_t tc_confine_mem_call_kind(LLVMValueRef callee)
{
    size_t len;
    const char *n = LLVMGetValueName2(callee, &len);

    if (((len >= 12) && (memcmp(n, "llvm.memcpy.", 12) == 0)) ||
        ((len >= 13) && (memcmp(n, "llvm.memmove.", 13) == 0)) ||
        tc_confine_name_is(callee, "memcpy") || tc_confine_name_is(callee, "memmove")) {
        return TC_CONFINE_MEM_COPY;
    }
    if (((len >= 12) && (memcmp(n, "llvm.memset.", 12) == 0)) ||
        tc_confine_name_is(callee, "memset")) {
        return TC_CONFINE_MEM_SET;
    }
    return TC_CONFINE_MEM_NONE;
}

static tc_ifunc_reject_t tc_confine_refuse(tc_confine_pass_t *p, const char *what,
                                           LLVMValueRef where)
{
    size_t len      = 0;
    const char *fn  = "";

    if (where != NULL) {
        fn = LLVMGetValueName2(LLVMGetBasicBlockParent(LLVMGetInstructionParent(where)),
                               &len);
    }
    snprintf(p->detail, p->detail_len, "%s%s%.*s", what,
             (len != 0) ? " in " : "", (int)len, fn);
    return TC_IFUNC_REJECT_CONFINE;
}

/* ---- the check ---- */

static tc_ifunc_reject_t tc_confine_check_callee(tc_confine_pass_t *p, LLVMValueRef call,
                                                 LLVMValueRef callee)
{
    char what[200];
    size_t len, i;
    const char *name;

    if (LLVMIsAInlineAsm(callee)) {
        return tc_confine_refuse(p, "inline assembly", call);
    }
    callee = LLVMIsAConstantExpr(callee) &&
             (LLVMGetConstOpcode(callee) == LLVMBitCast) ? LLVMGetOperand(callee, 0) : callee;
    if (!LLVMIsAFunction(callee)) {
        return tc_confine_refuse(p, "an indirect call", call);
    }
    if (!LLVMIsDeclaration(callee)) {
        return TC_IFUNC_REJECT_NONE;   /* the module's own */
    }
    name = LLVMGetValueName2(callee, &len);
    if (LLVMGetIntrinsicID(callee) != 0) {
        for (i = 0; i < sizeof(tc_confine_intrinsics) / sizeof(tc_confine_intrinsics[0]);
             ++i) {
            if ((len >= strlen(tc_confine_intrinsics[i])) &&
                (memcmp(name, tc_confine_intrinsics[i], strlen(tc_confine_intrinsics[i])) ==
                 0)) {
                return TC_IFUNC_REJECT_NONE;
            }
        }
        snprintf(what, sizeof(what), "intrinsic '%.*s' is not on the confine list",
                 (int)((len < 80) ? len : 80), name);
        return tc_confine_refuse(p, what, call);
    }
    if (tc_confine_name_in(name, len, tc_confine_mem_calls, 3, 0) ||
        tc_confine_name_in(name, len, tc_confine_libm,
                           sizeof(tc_confine_libm) / sizeof(tc_confine_libm[0]), 1) ||
        tc_confine_name_in(name, len, p->opts->allow, p->opts->num_allow, 0)) {
        return TC_IFUNC_REJECT_NONE;
    }
    snprintf(what, sizeof(what), "a call to '%.*s', not on the confine allow-list",
             (int)((len < 80) ? len : 80), name);
    return tc_confine_refuse(p, what, call);
}

/* Whether every pointer @a inst uses is of address space 0 */
static int tc_confine_flat_operands(LLVMValueRef inst)
{
    int i, n = LLVMGetNumOperands(inst);
    LLVMTypeRef ty;

    for (i = 0; i < n; ++i) {
        ty = LLVMTypeOf(LLVMGetOperand(inst, i));
        if (LLVMGetTypeKind(ty) == LLVMVectorTypeKind) {
            ty = LLVMGetElementType(ty);
        }
        if ((LLVMGetTypeKind(ty) == LLVMPointerTypeKind) &&
            (LLVMGetPointerAddressSpace(ty) != 0) &&
            !((LLVMGetInstructionOpcode(inst) == LLVMCall) && (i == n - 1))) {
            return 0;
        }
    }
    return 1;
}

static tc_ifunc_reject_t tc_confine_check_fn(tc_confine_pass_t *p, LLVMValueRef fn)
{
    LLVMBasicBlockRef bb, entry = LLVMGetEntryBasicBlock(fn);
    LLVMValueRef inst;
    LLVMOpcode op;
    tc_ifunc_reject_t reason;

    if (LLVMIsFunctionVarArg(LLVMGlobalGetValueType(fn))) {
        return tc_confine_refuse(p, "a variadic function", LLVMGetFirstInstruction(entry));
    }
    for (bb = entry; bb != NULL; bb = LLVMGetNextBasicBlock(bb)) {
        for (inst = LLVMGetFirstInstruction(bb); inst != NULL;
             inst = LLVMGetNextInstruction(inst)) {
            op = LLVMGetInstructionOpcode(inst);
            switch (op) {
            case LLVMInvoke:
            case LLVMCallBr:
            case LLVMIndirectBr:
            case LLVMLandingPad:
            case LLVMResume:
            case LLVMCleanupPad:
            case LLVMCatchPad:
            case LLVMCatchSwitch:
            case LLVMCatchRet:
            case LLVMCleanupRet:
            case LLVMVAArg:
                return tc_confine_refuse(p, (op == LLVMIndirectBr) ? "an indirect branch" :
                                            (op == LLVMVAArg)      ? "va_arg" :
                                            (op == LLVMCallBr)     ? "callbr (asm goto)" :
                                                                     "exception handling",
                                         inst);
            case LLVMAlloca:
                if ((bb != entry) || !LLVMIsConstant(LLVMGetOperand(inst, 0))) {
                    return tc_confine_refuse(p, "a stack allocation of variable size", inst);
                }
                if (LLVMGetAlignment(inst) > TC_CONFINE_MAX_ALIGN) {
                    return tc_confine_refuse(p, "a local aligned past 64 bytes", inst);
                }
                break;
            case LLVMCall:
                reason = tc_confine_check_callee(p, inst, LLVMGetCalledValue(inst));
                if (reason != TC_IFUNC_REJECT_NONE) {
                    return reason;
                }
                if (!tc_confine_flat_operands(inst)) {
                    return tc_confine_refuse(p, "a pointer of another address space", inst);
                }
                break;
            case LLVMLoad:
            case LLVMStore:
            case LLVMAtomicRMW:
            case LLVMAtomicCmpXchg:
                /* x86's address spaces 256-258 are gs-, fs- and ss-relative:
                 * a checked offset would be an unchecked address */
                if (!tc_confine_flat_operands(inst)) {
                    return tc_confine_refuse(p, "an access through another address space",
                                             inst);
                }
                break;
            default:
                break;
            }
        }
    }
    return TC_IFUNC_REJECT_NONE;
}

static tc_ifunc_reject_t tc_confine_add_object(tc_confine_pass_t *p, LLVMValueRef gv,
                                               uint64_t size, int writable)
{
    if (p->num_objects == TC_CONFINE_MAX_OBJECTS) {
        snprintf(p->detail, p->detail_len, "more than %u globals",
                 TC_CONFINE_MAX_OBJECTS);
        return TC_IFUNC_REJECT_CONFINE;
    }
    p->objects[p->num_objects].value    = gv;
    p->objects[p->num_objects].size     = size;
    p->objects[p->num_objects].writable = writable;
    ++p->num_objects;
    return TC_IFUNC_REJECT_NONE;
}

static tc_ifunc_reject_t tc_confine_check(tc_confine_pass_t *p, const char *entry,
                                          tc_jit_resolve_fn_t resolve, void *arg)
{
    LLVMValueRef gv, fn;
    tc_jit_symbol_t sym;
    tc_ifunc_reject_t reason;
    char name[256], why[96];
    const char *n;
    size_t len;

    if ((LLVMGetFirstGlobalAlias(p->mod) != NULL) ||
        (LLVMGetFirstGlobalIFunc(p->mod) != NULL)) {
        snprintf(p->detail, p->detail_len, "a global alias or ifunc");
        return TC_IFUNC_REJECT_CONFINE;
    }
    for (gv = LLVMGetFirstGlobal(p->mod); gv != NULL; gv = LLVMGetNextGlobal(gv)) {
        n = LLVMGetValueName2(gv, &len);
        if ((len >= 5) && (memcmp(n, "llvm.", 5) == 0)) {
            if (tc_confine_name_is(gv, "llvm.global_ctors") ||
                tc_confine_name_is(gv, "llvm.global_dtors")) {
                snprintf(p->detail, p->detail_len, "a constructor or destructor");
                return TC_IFUNC_REJECT_CONFINE;
            }
            continue;
        }
        if (!LLVMIsDeclaration(gv)) {
            reason = tc_confine_add_object(p, gv,
                                           LLVMStoreSizeOfType(p->td,
                                                               LLVMGlobalGetValueType(gv)),
                                           !LLVMIsGlobalConstant(gv));
        } else {
            /* a receiver's variable: only a ried's, whose size we know */
            if (len >= sizeof(name)) {
                snprintf(p->detail, p->detail_len, "an external of %zu bytes", len);
                return TC_IFUNC_REJECT_CONFINE;
            }
            memcpy(name, n, len);
            name[len] = '\0';
            memset(&sym, 0, sizeof(sym));
            why[0] = '\0';
            if ((resolve(arg, name, &sym, why, sizeof(why)) == NULL) ||
                (sym.kind != TC_JIT_SYMBOL_OBJECT) || (sym.size == 0)) {
                snprintf(p->detail, p->detail_len, "external data '%s' is not a "
                         "variable of a registered package's ried %s", name, why);
                return TC_IFUNC_REJECT_CONFINE;
            }
            reason = tc_confine_add_object(p, gv, sym.size, sym.writable);
        }
        if (reason != TC_IFUNC_REJECT_NONE) {
            return reason;
        }
    }
    for (fn = LLVMGetFirstFunction(p->mod); fn != NULL; fn = LLVMGetNextFunction(fn)) {
        if (LLVMIsDeclaration(fn)) {
            /* named at all (called, or its address taken as data): allowed */
            reason = tc_confine_check_callee(p, NULL, fn);
            if (reason != TC_IFUNC_REJECT_NONE) {
                return reason;
            }
            continue;
        }
        if (tc_confine_name_is(fn, entry)) {
            p->main_fn = fn;
        }
        reason = tc_confine_check_fn(p, fn);
        if (reason != TC_IFUNC_REJECT_NONE) {
            return reason;
        }
    }
    if (p->main_fn == NULL) {
        snprintf(p->detail, p->detail_len, "the module does not define '%s'", entry);
        return TC_IFUNC_REJECT_BITCODE;
    }
    if (LLVMCountParams(p->main_fn) != 3) {
        snprintf(p->detail, p->detail_len, "'%s' does not take (payload, size, "
                 "target)", entry);
        return TC_IFUNC_REJECT_CONFINE;
    }
    return TC_IFUNC_REJECT_NONE;
}

/* ---- the runner's helpers, defined in the module ---- */

static LLVMValueRef tc_confine_const_fn(tc_confine_pass_t *p, void *addr, LLVMTypeRef ty)
{
    return LLVMConstIntToPtr(LLVMConstInt(p->i64, (uint64_t)(uintptr_t)addr, 0),
                             LLVMPointerType(ty, 0));
}

static void tc_confine_build_trap(tc_confine_pass_t *p, LLVMValueRef ctx,
                                  tc_ifunc_trap_t why)
{
    LLVMValueRef args[2] = {ctx, LLVMConstInt(p->i32, why, 0)};
    LLVMValueRef call    = LLVMBuildCall2(p->b, p->trap_ty, p->trap_fn, args, 2, "");

    LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
                             LLVMCreateEnumAttribute(p->ctx,
                                                     LLVMGetEnumAttributeKindForName(
                                                             "noreturn", 8), 0));
    LLVMBuildUnreachable(p->b);
}

static void tc_confine_fn_attr(tc_confine_pass_t *p, LLVMValueRef fn, const char *attr)
{
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(p->ctx,
                                                    LLVMGetEnumAttributeKindForName(
                                                            attr, strlen(attr)), 0));
}

static LLVMValueRef tc_confine_helper(tc_confine_pass_t *p, const char *name, LLVMTypeRef ty,
                                      int inline_always)
{
    LLVMValueRef fn = LLVMAddFunction(p->mod, name, ty);

    LLVMSetLinkage(fn, LLVMInternalLinkage);
    tc_confine_fn_attr(p, fn, "nounwind");
    if (inline_always) {
        tc_confine_fn_attr(p, fn, "alwaysinline");
    }
    return fn;
}

/* i64 at ctx + off */
static LLVMValueRef tc_confine_ctx_word(tc_confine_pass_t *p, LLVMValueRef ctx, unsigned off)
{
    LLVMValueRef idx  = LLVMConstInt(p->i64, off, 0);
    LLVMValueRef addr = LLVMBuildGEP2(p->b, LLVMInt8TypeInContext(p->ctx), ctx, &idx, 1, "");

    return LLVMBuildBitCast(p->b, addr, LLVMPointerType(p->i64, 0), "");
}

/* [a, a + n) within [lo, lo + size) */
static LLVMValueRef tc_confine_in(tc_confine_pass_t *p, LLVMValueRef a, LLVMValueRef n,
                                  LLVMValueRef lo, LLVMValueRef size)
{
    /* n <= size && off <= size - n: for a constant n both halves but the
     * offset's are invariant, and a loop keeps one compare per access */
    LLVMValueRef off  = LLVMBuildSub(p->b, a, lo, "");
    LLVMValueRef fits = LLVMBuildICmp(p->b, LLVMIntULE, n, size, "");
    LLVMValueRef c    = LLVMBuildICmp(p->b, LLVMIntULE, off, LLVMBuildSub(p->b, size, n, ""),
                                      "");

    return LLVMBuildAnd(p->b, fits, c, "");
}

static void tc_confine_define_helpers(tc_confine_pass_t *p)
{
    LLVMTypeRef guard_args[5] = {p->i8p, p->i64, p->i64, p->i64, p->i64};
    LLVMTypeRef any4_args[3 + 2 * TC_CONFINE_REGIONS];
    LLVMTypeRef push_args[3]  = {p->i8p, p->i64, p->i64};
    LLVMTypeRef trap_args[2]  = {p->i8p, p->i32};
    LLVMTypeRef one_ctx[1]    = {p->i8p};
    LLVMBasicBlockRef bb, ok, trap, next;
    LLVMValueRef fn, v, c, lo, size, sp, objects;
    unsigned w, r, i;

    any4_args[0] = p->i8p;
    for (i = 1; i < 3 + 2 * TC_CONFINE_REGIONS; ++i) {
        any4_args[i] = p->i64;
    }

    p->trap_ty    = LLVMFunctionType(p->void_t, trap_args, 2, 0);
    p->current_ty = LLVMFunctionType(p->i8p, NULL, 0, 0);
    p->guard_ty   = LLVMFunctionType(p->void_t, guard_args, 5, 0);
    p->any_ty     = LLVMFunctionType(p->void_t, guard_args, 3, 0);
    p->any4_ty    = LLVMFunctionType(p->void_t, any4_args, 3 + 2 * TC_CONFINE_REGIONS, 0);
    p->enter_ty   = LLVMFunctionType(p->void_t, one_ctx, 1, 0);
    p->fuel_ty    = LLVMFunctionType(p->void_t,
                                     (LLVMTypeRef[]){p->i8p, LLVMPointerType(p->i64, 0)}, 2,
                                     0);
    p->push_ty    = LLVMFunctionType(p->i64, push_args, 3, 0);
    p->trap_fn    = tc_confine_const_fn(p, p->opts->trap, p->trap_ty);
    p->current_fn = tc_confine_const_fn(p, p->opts->current, p->current_ty);

    /* __tc_guard(ctx, a, n, lo, size): one known region */
    fn = p->guard_fn = tc_confine_helper(p, "__tc_confine_guard", p->guard_ty, 1);
    bb   = LLVMAppendBasicBlockInContext(p->ctx, fn, "");
    ok   = LLVMAppendBasicBlockInContext(p->ctx, fn, "ok");
    trap = LLVMAppendBasicBlockInContext(p->ctx, fn, "trap");
    LLVMPositionBuilderAtEnd(p->b, bb);
    c = tc_confine_in(p, LLVMGetParam(fn, 1), LLVMGetParam(fn, 2), LLVMGetParam(fn, 3),
                      LLVMGetParam(fn, 4));
    LLVMBuildCondBr(p->b, c, ok, trap);
    LLVMPositionBuilderAtEnd(p->b, ok);
    LLVMBuildRetVoid(p->b);
    LLVMPositionBuilderAtEnd(p->b, trap);
    tc_confine_build_trap(p, LLVMGetParam(fn, 0), TC_IFUNC_TRAP_MEMORY);

    /* __tc_confine_objects_{rd,wr}(ctx, a, n): the module's objects (its
     * globals, the rieds' variables it names), else a trap; and
     * __tc_confine_any_{rd,wr}(ctx, a, n, lo, size x 4): the run's regions,
     * in the order given (inline: their bounds are the function's, read at
     * its entry), then the objects */
    for (w = 0; w < 2; ++w) {
        fn = tc_confine_helper(p, w ? "__tc_confine_objects_wr" : "__tc_confine_objects_rd",
                               p->any_ty, 0);
        objects = fn;
        ok   = LLVMAppendBasicBlockInContext(p->ctx, fn, "ok");
        trap = LLVMAppendBasicBlockInContext(p->ctx, fn, "trap");
        bb   = LLVMAppendBasicBlockInContext(p->ctx, fn, "");
        LLVMMoveBasicBlockBefore(bb, ok);
        LLVMPositionBuilderAtEnd(p->b, bb);
        for (i = 0; i < p->num_objects; ++i) {
            if (w && !p->objects[i].writable) {
                continue;
            }
            lo   = LLVMConstPtrToInt(p->objects[i].value, p->i64);
            size = LLVMConstInt(p->i64, p->objects[i].size, 0);
            c    = tc_confine_in(p, LLVMGetParam(fn, 1), LLVMGetParam(fn, 2), lo, size);
            next = LLVMAppendBasicBlockInContext(p->ctx, fn, "");
            LLVMMoveBasicBlockBefore(next, ok);
            LLVMBuildCondBr(p->b, c, ok, next);
            LLVMPositionBuilderAtEnd(p->b, next);
        }
        LLVMBuildBr(p->b, trap);
        LLVMPositionBuilderAtEnd(p->b, ok);
        LLVMBuildRetVoid(p->b);
        LLVMPositionBuilderAtEnd(p->b, trap);
        tc_confine_build_trap(p, LLVMGetParam(fn, 0), TC_IFUNC_TRAP_MEMORY);

        fn = tc_confine_helper(p, w ? "__tc_confine_any_wr" : "__tc_confine_any_rd",
                               p->any4_ty, 1);
        if (w) {
            p->any_wr_fn = fn;
        } else {
            p->any_rd_fn = fn;
        }
        ok   = LLVMAppendBasicBlockInContext(p->ctx, fn, "ok");
        bb   = LLVMAppendBasicBlockInContext(p->ctx, fn, "");
        LLVMMoveBasicBlockBefore(bb, ok);
        LLVMPositionBuilderAtEnd(p->b, bb);
        for (r = 0; r < TC_CONFINE_REGIONS; ++r) {
            c    = tc_confine_in(p, LLVMGetParam(fn, 1), LLVMGetParam(fn, 2),
                                 LLVMGetParam(fn, 3 + 2 * r), LLVMGetParam(fn, 4 + 2 * r));
            next = LLVMAppendBasicBlockInContext(p->ctx, fn, "");
            LLVMMoveBasicBlockBefore(next, ok);
            LLVMBuildCondBr(p->b, c, ok, next);
            LLVMPositionBuilderAtEnd(p->b, next);
        }
        LLVMBuildCall2(p->b, p->any_ty, objects,
                       (LLVMValueRef[]){LLVMGetParam(fn, 0), LLVMGetParam(fn, 1),
                                        LLVMGetParam(fn, 2)}, 3, "");
        LLVMBuildBr(p->b, ok);
        LLVMPositionBuilderAtEnd(p->b, ok);
        LLVMBuildRetVoid(p->b);
    }

    /* __tc_fuel(ctx, counter): one unit of a function's counter;
     * __tc_enter(ctx): one unit of the run's and the native stack's floor */
    for (w = 0; w < 2; ++w) {
        fn = tc_confine_helper(p, w ? "__tc_confine_enter" : "__tc_confine_fuel",
                               w ? p->enter_ty : p->fuel_ty, 1);
        if (w) {
            p->enter_fn = fn;
        } else {
            p->fuel_fn = fn;
        }
        bb   = LLVMAppendBasicBlockInContext(p->ctx, fn, "");
        ok   = LLVMAppendBasicBlockInContext(p->ctx, fn, "ok");
        trap = LLVMAppendBasicBlockInContext(p->ctx, fn, "trap");
        LLVMPositionBuilderAtEnd(p->b, bb);
        v = w ? tc_confine_ctx_word(p, LLVMGetParam(fn, 0), TC_CONFINE_OFF_FUEL) :
                LLVMGetParam(fn, 1);
        c = LLVMBuildSub(p->b, LLVMBuildLoad2(p->b, p->i64, v, ""),
                         LLVMConstInt(p->i64, 1, 0), "");
        LLVMBuildStore(p->b, c, v);
        c = LLVMBuildICmp(p->b, LLVMIntSLT, c, LLVMConstInt(p->i64, 0, 0), "");
        LLVMBuildCondBr(p->b, c, trap, ok);
        LLVMPositionBuilderAtEnd(p->b, trap);
        tc_confine_build_trap(p, LLVMGetParam(fn, 0), TC_IFUNC_TRAP_FUEL);
        LLVMPositionBuilderAtEnd(p->b, ok);
        if (!w) {
            LLVMBuildRetVoid(p->b);
            continue;
        }
        next = LLVMAppendBasicBlockInContext(p->ctx, fn, "ret");
        trap = LLVMAppendBasicBlockInContext(p->ctx, fn, "deep");
        sp   = LLVMBuildCall2(p->b, LLVMFunctionType(p->i8p, NULL, 0, 0),
                              LLVMGetIntrinsicDeclaration(
                                      p->mod, LLVMLookupIntrinsicID("llvm.stacksave", 14),
                                      NULL, 0),
                              NULL, 0, "");
        c    = LLVMBuildICmp(p->b, LLVMIntULT, LLVMBuildPtrToInt(p->b, sp, p->i64, ""),
                             LLVMBuildLoad2(p->b, p->i64,
                                            tc_confine_ctx_word(p, LLVMGetParam(fn, 0),
                                                                TC_CONFINE_OFF_STACK_FLOOR),
                                            ""), "");
        LLVMBuildCondBr(p->b, c, trap, next);
        LLVMPositionBuilderAtEnd(p->b, trap);
        tc_confine_build_trap(p, LLVMGetParam(fn, 0), TC_IFUNC_TRAP_STACK);
        LLVMPositionBuilderAtEnd(p->b, next);
        LLVMBuildRetVoid(p->b);
    }

    /* __tc_push(ctx, sp, bytes): a shadow frame below sp, 64-byte aligned */
    fn = p->push_fn = tc_confine_helper(p, "__tc_confine_push", p->push_ty, 1);
    bb   = LLVMAppendBasicBlockInContext(p->ctx, fn, "");
    ok   = LLVMAppendBasicBlockInContext(p->ctx, fn, "ok");
    trap = LLVMAppendBasicBlockInContext(p->ctx, fn, "trap");
    LLVMPositionBuilderAtEnd(p->b, bb);
    lo = LLVMBuildLoad2(p->b, p->i64,
                        tc_confine_ctx_word(p, LLVMGetParam(fn, 0),
                                            TC_CONFINE_OFF_WR + 16 * TC_CONFINE_REGION_SHADOW),
                        "");
    sp = LLVMGetParam(fn, 1);
    /* room: sp - lo >= bytes + 64 (sp >= lo always: the runner's invariant) */
    c = LLVMBuildICmp(p->b, LLVMIntUGE, LLVMBuildSub(p->b, sp, lo, ""),
                      LLVMBuildAdd(p->b, LLVMGetParam(fn, 2),
                                   LLVMConstInt(p->i64, TC_CONFINE_MAX_ALIGN, 0), ""), "");
    LLVMBuildCondBr(p->b, c, ok, trap);
    LLVMPositionBuilderAtEnd(p->b, trap);
    tc_confine_build_trap(p, LLVMGetParam(fn, 0), TC_IFUNC_TRAP_STACK);
    LLVMPositionBuilderAtEnd(p->b, ok);
    v = LLVMBuildAnd(p->b, LLVMBuildSub(p->b, sp, LLVMGetParam(fn, 2), ""),
                     LLVMConstInt(p->i64, ~(uint64_t)(TC_CONFINE_MAX_ALIGN - 1), 0), "");
    LLVMBuildStore(p->b, v, tc_confine_ctx_word(p, LLVMGetParam(fn, 0),
                                                TC_CONFINE_OFF_SHADOW_SP));
    LLVMBuildRet(p->b, v);
}

/* ---- the rewrite ---- */

/* The object @a ptr is visibly based on: the value under its GEPs and casts */
static LLVMValueRef tc_confine_base(LLVMValueRef v)
{
    unsigned depth;

    for (depth = 0; depth < 64; ++depth) {
        if (LLVMIsAGetElementPtrInst(v) || LLVMIsABitCastInst(v) ||
            LLVMIsAAddrSpaceCastInst(v)) {
            v = LLVMGetOperand(v, 0);
        } else if (LLVMIsAConstantExpr(v) &&
                   ((LLVMGetConstOpcode(v) == LLVMGetElementPtr) ||
                    (LLVMGetConstOpcode(v) == LLVMBitCast) ||
                    (LLVMGetConstOpcode(v) == LLVMAddrSpaceCast))) {
            v = LLVMGetOperand(v, 0);
        } else {
            break;
        }
    }
    return v;
}

/* Check [ptr, ptr + n) before @a inst, which then uses the checked value
 * (operand @a op_index) */
static void tc_confine_guard_access(tc_confine_pass_t *p, tc_confine_fn_t *f,
                                    LLVMValueRef inst, unsigned op_index, LLVMValueRef n,
                                    int write)
{
    LLVMValueRef ptr  = LLVMGetOperand(inst, op_index);
    LLVMValueRef base = tc_confine_base(ptr);
    LLVMValueRef lo = NULL, size = NULL, frozen, addr, args[5];
    unsigned i, region = TC_CONFINE_REGIONS;

    LLVMPositionBuilderBefore(p->b, inst);
    frozen = LLVMBuildFreeze(p->b, ptr, "");
    LLVMSetOperand(inst, op_index, frozen);
    addr = LLVMBuildPtrToInt(p->b, frozen, p->i64, "");
    n    = LLVMBuildFreeze(p->b, n, "");

    if (LLVMIsAArgument(base) && (f->fn == p->main_fn)) {
        if (base == LLVMGetParam(p->main_fn, 0)) {
            region = TC_CONFINE_REGION_PAYLOAD;
        } else if (base == LLVMGetParam(p->main_fn, 2)) {
            region = TC_CONFINE_REGION_TARGET;
        }
        if (region == TC_CONFINE_REGION_PAYLOAD) {
            /* the runner passes the region's bounds as these arguments:
             * the optimiser then sees the offset as the index */
            lo   = LLVMBuildPtrToInt(p->b, LLVMGetParam(p->main_fn, 0), p->i64, "");
            size = write ? LLVMConstInt(p->i64, 0, 0) : LLVMGetParam(p->main_fn, 1);
        } else if (region != TC_CONFINE_REGIONS) {
            lo   = LLVMBuildPtrToInt(p->b, LLVMGetParam(p->main_fn, 2), p->i64, "");
            size = f->size[write][region];
        }
    } else if (LLVMIsAGlobalVariable(base)) {
        for (i = 0; i < p->num_objects; ++i) {
            if (p->objects[i].value == base) {
                lo   = LLVMConstPtrToInt(base, p->i64);
                size = LLVMConstInt(p->i64, (!write || p->objects[i].writable) ?
                                            p->objects[i].size : 0, 0);
                break;
            }
        }
    } else if (LLVMIsAAllocaInst(base) &&
               (LLVMGetBasicBlockParent(LLVMGetInstructionParent(base)) == f->fn)) {
        lo   = LLVMBuildPtrToInt(p->b, base, p->i64, "");
        size = LLVMConstInt(p->i64,
                            LLVMStoreSizeOfType(p->td, LLVMGetAllocatedType(base)) *
                            LLVMConstIntGetZExtValue(LLVMGetOperand(base, 0)), 0);
    }
    args[0] = f->ctx;
    args[1] = addr;
    args[2] = n;
    if (lo != NULL) {
        args[3] = lo;
        args[4] = size;
        LLVMBuildCall2(p->b, p->guard_ty, p->guard_fn, args, 5, "");
    } else {
        /* the regions an unknown pointer most likely points into first */
        static const unsigned order[TC_CONFINE_REGIONS] = {
            TC_CONFINE_REGION_STATE, TC_CONFINE_REGION_TARGET, TC_CONFINE_REGION_SHADOW,
            TC_CONFINE_REGION_PAYLOAD};
        LLVMValueRef all[3 + 2 * TC_CONFINE_REGIONS] = {f->ctx, addr, n};
        for (i = 0; i < TC_CONFINE_REGIONS; ++i) {
            all[3 + 2 * i] = f->lo[write][order[i]];
            all[4 + 2 * i] = f->size[write][order[i]];
        }
        LLVMBuildCall2(p->b, p->any4_ty, write ? p->any_wr_fn : p->any_rd_fn, all,
                       3 + 2 * TC_CONFINE_REGIONS, "");
    }
}

static LLVMValueRef tc_confine_size_of(tc_confine_pass_t *p, LLVMTypeRef ty)
{
    return LLVMConstInt(p->i64, LLVMStoreSizeOfType(p->td, ty), 0);
}

/* a loop header: the target of an edge back to a block on the depth-first
 * stack. @a order: the blocks; marks: 0 new, 1 on the stack, 2 done */
static int tc_confine_bb_index(LLVMBasicBlockRef *blocks, unsigned n, LLVMBasicBlockRef bb)
{
    unsigned i;

    for (i = 0; i < n; ++i) {
        if (blocks[i] == bb) {
            return (int)i;
        }
    }
    return -1;
}

static int tc_confine_fuel_loops(tc_confine_pass_t *p, tc_confine_fn_t *f)
{
    unsigned n = LLVMCountBasicBlocks(f->fn), top = 0, i, s;
    LLVMBasicBlockRef *blocks = calloc(n, sizeof(*blocks));
    unsigned *stack = calloc(n, sizeof(*stack)), *next_succ = calloc(n, sizeof(*next_succ));
    unsigned char *mark = calloc(n, 1), *header = calloc(n, 1);
    LLVMValueRef term, first;
    int succ, ok = 0;

    if ((blocks == NULL) || (stack == NULL) || (next_succ == NULL) || (mark == NULL) ||
        (header == NULL)) {
        goto out;
    }
    LLVMGetBasicBlocks(f->fn, blocks);
    stack[top++] = 0;
    mark[0]      = 1;
    while (top != 0) {
        i    = stack[top - 1];
        term = LLVMGetBasicBlockTerminator(blocks[i]);
        s    = next_succ[i]++;
        if ((term == NULL) || (s >= LLVMGetNumSuccessors(term))) {
            mark[i] = 2;
            --top;
            continue;
        }
        succ = tc_confine_bb_index(blocks, n, LLVMGetSuccessor(term, s));
        if (succ < 0) {
            continue;
        }
        if (mark[succ] == 1) {
            header[succ] = 1;
        } else if (mark[succ] == 0) {
            mark[succ]   = 1;
            stack[top++] = (unsigned)succ;
        }
    }
    for (i = 0; i < n; ++i) {
        if (!header[i]) {
            continue;
        }
        first = LLVMGetFirstInstruction(blocks[i]);
        while ((first != NULL) && LLVMIsAPHINode(first)) {
            first = LLVMGetNextInstruction(first);
        }
        LLVMPositionBuilderBefore(p->b, first);
        LLVMBuildCall2(p->b, p->fuel_ty, p->fuel_fn, (LLVMValueRef[]){f->ctx, f->fuel}, 2,
                       "");
    }
    ok = 1;
out:
    free(blocks);
    free(stack);
    free(next_succ);
    free(mark);
    free(header);
    return ok;
}

static tc_ifunc_reject_t tc_confine_fn(tc_confine_pass_t *p, LLVMValueRef fn)
{
    LLVMBasicBlockRef bb, entry = LLVMGetEntryBasicBlock(fn);
    LLVMValueRef inst, callee, first = LLVMGetFirstInstruction(entry), *original;
    unsigned num_original = 0, k;
    LLVMValueRef sp0 = NULL, frame = NULL, args[3], slot, enter, fuel_word, len;
    tc_confine_fn_t f = {.fn = fn};
    tc_confine_mem_kind_t kind;
    uint64_t frame_size = 0, off, bytes, align;
    unsigned w, r, num_allocas = 0;
    LLVMValueRef *allocas;
    LLVMOpcode op;

    for (bb = entry; bb != NULL; bb = LLVMGetNextBasicBlock(bb)) {
        for (inst = LLVMGetFirstInstruction(bb); inst != NULL;
             inst = LLVMGetNextInstruction(inst)) {
            ++num_original;
        }
    }
    original = calloc(num_original + 1, sizeof(*original));
    if (original == NULL) {
        snprintf(p->detail, p->detail_len, "no memory");
        return TC_IFUNC_REJECT_RESOURCE;
    }
    num_original = 0;
    for (bb = entry; bb != NULL; bb = LLVMGetNextBasicBlock(bb)) {
        for (inst = LLVMGetFirstInstruction(bb); inst != NULL;
             inst = LLVMGetNextInstruction(inst)) {
            original[num_original++] = inst;
        }
    }

    /* the prologue, before everything of the function */
    LLVMPositionBuilderBefore(p->b, first);
    f.ctx = LLVMBuildCall2(p->b, p->current_ty, p->current_fn, NULL, 0, "confine.ctx");
    enter = LLVMBuildCall2(p->b, p->enter_ty, p->enter_fn, &f.ctx, 1, "");
    for (w = 0; w < 2; ++w) {
        for (r = 0; r < TC_CONFINE_REGIONS; ++r) {
            off          = (w ? TC_CONFINE_OFF_WR : TC_CONFINE_OFF_RD) + 16 * r;
            f.lo[w][r]   = LLVMBuildLoad2(p->b, p->i64, tc_confine_ctx_word(p, f.ctx, off),
                                          "");
            f.size[w][r] = LLVMBuildLoad2(p->b, p->i64,
                                          tc_confine_ctx_word(p, f.ctx, off + 8), "");
        }
    }
    for (inst = first; inst != NULL; inst = LLVMGetNextInstruction(inst)) {
        if (LLVMIsAAllocaInst(inst)) {
            ++num_allocas;
        }
    }
    allocas = calloc(num_allocas + 1, sizeof(*allocas));
    if (allocas == NULL) {
        free(original);
        snprintf(p->detail, p->detail_len, "no memory");
        return TC_IFUNC_REJECT_RESOURCE;
    }

    /* every access, checked; every trap, the runner's (over the
     * instructions of the module, not those of the prologue or the checks) */
    num_allocas = 0;
    for (k = 0; k < num_original; ++k) {
        {
            inst = original[k];
            op   = LLVMGetInstructionOpcode(inst);
            if (op == LLVMLoad) {
                tc_confine_guard_access(p, &f, inst, 0,
                                        tc_confine_size_of(p, LLVMTypeOf(inst)), 0);
            } else if (op == LLVMStore) {
                tc_confine_guard_access(p, &f, inst, 1,
                                        tc_confine_size_of(p, LLVMTypeOf(
                                                LLVMGetOperand(inst, 0))), 1);
            } else if (op == LLVMAtomicRMW) {
                tc_confine_guard_access(p, &f, inst, 0,
                                        tc_confine_size_of(p, LLVMTypeOf(inst)), 1);
            } else if (op == LLVMAtomicCmpXchg) {
                tc_confine_guard_access(p, &f, inst, 0,
                                        tc_confine_size_of(p, LLVMTypeOf(
                                                LLVMGetOperand(inst, 1))), 1);
            } else if (op == LLVMAlloca) {
                allocas[num_allocas++] = inst;
            } else if (op == LLVMCall) {
                callee = LLVMGetCalledValue(inst);
                if (!LLVMIsAFunction(callee)) {
                    continue;   /* ours: constants of the runner */
                }
                kind = tc_confine_mem_call_kind(callee);
                if (kind != TC_CONFINE_MEM_NONE) {
                    len = LLVMGetOperand(inst, 2);
                    if (LLVMTypeOf(len) != p->i64) {
                        LLVMPositionBuilderBefore(p->b, inst);
                        len = LLVMBuildZExtOrBitCast(p->b, len, p->i64, "");
                    }
                    tc_confine_guard_access(p, &f, inst, 0, len, 1);
                    if (kind == TC_CONFINE_MEM_COPY) {
                        tc_confine_guard_access(p, &f, inst, 1, len, 0);
                    }
                } else if (tc_confine_name_is(callee, "llvm.trap")) {
                    LLVMPositionBuilderBefore(p->b, inst);
                    LLVMBuildCall2(p->b, p->trap_ty, p->trap_fn,
                                   (LLVMValueRef[]){f.ctx,
                                                    LLVMConstInt(p->i32,
                                                                 TC_IFUNC_TRAP_UNREACHABLE,
                                                                 0)}, 2, "");
                    LLVMInstructionEraseFromParent(inst);
                } else if ((LLVMGetIntrinsicID(callee) != 0) &&
                           (strncmp(LLVMGetValueName2(callee, &(size_t){0}), "llvm.lifetime.",
                                    14) == 0)) {
                    LLVMInstructionEraseFromParent(inst);   /* their objects move */
                }
            }
        }
    }

    /* locals move to a shadow frame */
    if (num_allocas != 0) {
        LLVMPositionBuilderBefore(p->b, first);
        for (r = 0; r < num_allocas; ++r) {
            align = LLVMGetAlignment(allocas[r]);
            align = (align == 0) ? 16 : align;
            bytes = LLVMStoreSizeOfType(p->td, LLVMGetAllocatedType(allocas[r])) *
                    LLVMConstIntGetZExtValue(LLVMGetOperand(allocas[r], 0));
            frame_size = (frame_size + align - 1) & ~(align - 1);
            frame_size += (bytes != 0) ? bytes : 1;
        }
        sp0     = LLVMBuildLoad2(p->b, p->i64,
                                 tc_confine_ctx_word(p, f.ctx, TC_CONFINE_OFF_SHADOW_SP), "");
        args[0] = f.ctx;
        args[1] = sp0;
        args[2] = LLVMConstInt(p->i64, frame_size, 0);
        frame   = LLVMBuildCall2(p->b, p->push_ty, p->push_fn, args, 3, "confine.frame");
        for (off = 0, r = 0; r < num_allocas; ++r) {
            align = LLVMGetAlignment(allocas[r]);
            align = (align == 0) ? 16 : align;
            bytes = LLVMStoreSizeOfType(p->td, LLVMGetAllocatedType(allocas[r])) *
                    LLVMConstIntGetZExtValue(LLVMGetOperand(allocas[r], 0));
            off   = (off + align - 1) & ~(align - 1);
            slot  = LLVMBuildIntToPtr(p->b,
                                      LLVMBuildAdd(p->b, frame, LLVMConstInt(p->i64, off, 0),
                                                   ""), LLVMTypeOf(allocas[r]), "");
            off  += (bytes != 0) ? bytes : 1;
            LLVMReplaceAllUsesWith(allocas[r], slot);
            LLVMInstructionEraseFromParent(allocas[r]);
        }
        for (bb = entry; bb != NULL; bb = LLVMGetNextBasicBlock(bb)) {
            inst = LLVMGetBasicBlockTerminator(bb);
            if ((inst != NULL) && (LLVMGetInstructionOpcode(inst) == LLVMRet)) {
                LLVMPositionBuilderBefore(p->b, inst);
                LLVMBuildStore(p->b, sp0,
                               tc_confine_ctx_word(p, f.ctx, TC_CONFINE_OFF_SHADOW_SP));
            }
        }
    }
    free(allocas);

    /* the function's fuel in a local (ours: no access of the jam reaches it) */
    LLVMPositionBuilderBefore(p->b, f.ctx);
    f.fuel = LLVMBuildAlloca(p->b, p->i64, "confine.fuel");
    LLVMPositionBuilderBefore(p->b, LLVMGetNextInstruction(enter));
    fuel_word = tc_confine_ctx_word(p, f.ctx, TC_CONFINE_OFF_FUEL);
    LLVMBuildStore(p->b, LLVMBuildLoad2(p->b, p->i64, fuel_word, ""), f.fuel);
    for (k = 0; k < num_original; ++k) {
        inst = original[k];
        op   = LLVMGetInstructionOpcode(inst);
        if ((op == LLVMCall) && LLVMIsAFunction(LLVMGetCalledValue(inst)) &&
            !LLVMIsDeclaration(LLVMGetCalledValue(inst))) {
            LLVMPositionBuilderBefore(p->b, inst);
            LLVMBuildStore(p->b, LLVMBuildLoad2(p->b, p->i64, f.fuel, ""), fuel_word);
            LLVMPositionBuilderBefore(p->b, LLVMGetNextInstruction(inst));
            LLVMBuildStore(p->b, LLVMBuildLoad2(p->b, p->i64, fuel_word, ""), f.fuel);
        } else if (op == LLVMRet) {
            LLVMPositionBuilderBefore(p->b, inst);
            LLVMBuildStore(p->b, LLVMBuildLoad2(p->b, p->i64, f.fuel, ""), fuel_word);
        }
    }
    free(original);
    if (!tc_confine_fuel_loops(p, &f)) {
        snprintf(p->detail, p->detail_len, "no memory");
        return TC_IFUNC_REJECT_RESOURCE;
    }
    return TC_IFUNC_REJECT_NONE;
}

static void tc_confine_pass_init(tc_confine_pass_t *p, LLVMModuleRef mod,
                                 const tc_jit_confine_t *opts, char *detail,
                                 size_t detail_len)
{
    memset(p, 0, sizeof(*p));
    p->mod        = mod;
    p->ctx        = LLVMGetModuleContext(mod);
    p->td         = LLVMGetModuleDataLayout(mod);
    p->opts       = opts;
    p->detail     = detail;
    p->detail_len = detail_len;
    p->i8p        = LLVMPointerType(LLVMInt8TypeInContext(p->ctx), 0);
    p->i32        = LLVMInt32TypeInContext(p->ctx);
    p->i64        = LLVMInt64TypeInContext(p->ctx);
    p->void_t     = LLVMVoidTypeInContext(p->ctx);
}

tc_ifunc_reject_t tc_jit_confine_rewrite(LLVMModuleRef mod, const char *entry,
                                         const tc_jit_confine_t *opts,
                                         tc_jit_resolve_fn_t resolve, void *arg,
                                         char *detail, size_t detail_len)
{
    tc_confine_pass_t p;
    tc_ifunc_reject_t reason;
    LLVMValueRef fn, *fns;
    unsigned n = 0, i;

    tc_confine_pass_init(&p, mod, opts, detail, detail_len);
    reason = tc_confine_check(&p, entry, resolve, arg);
    if (reason != TC_IFUNC_REJECT_NONE) {
        return reason;
    }
    for (fn = LLVMGetFirstFunction(mod); fn != NULL; fn = LLVMGetNextFunction(fn)) {
        n += !LLVMIsDeclaration(fn);
    }
    fns = calloc(n + 1, sizeof(*fns));
    if (fns == NULL) {
        snprintf(detail, detail_len, "no memory");
        return TC_IFUNC_REJECT_RESOURCE;
    }
    n = 0;
    for (fn = LLVMGetFirstFunction(mod); fn != NULL; fn = LLVMGetNextFunction(fn)) {
        if (!LLVMIsDeclaration(fn)) {
            fns[n++] = fn;
        }
    }
    p.b = LLVMCreateBuilderInContext(p.ctx);
    tc_confine_define_helpers(&p);
    for (i = 0; (i < n) && (reason == TC_IFUNC_REJECT_NONE); ++i) {
        reason = tc_confine_fn(&p, fns[i]);
    }
    LLVMDisposeBuilder(p.b);
    free(fns);
    return reason;
}

/* After optimisation: every `unreachable` not right after a trap call
 * becomes one (the optimiser turns what it proves undefined into
 * unreachable, and machine code would fall through it) */
static void tc_confine_trap_unreachables(tc_confine_pass_t *p)
{
    LLVMValueRef fn, term, prev, callee, ctx;
    LLVMBasicBlockRef bb;

    p->b = LLVMCreateBuilderInContext(p->ctx);
    p->trap_ty    = LLVMFunctionType(p->void_t, (LLVMTypeRef[]){p->i8p, p->i32}, 2, 0);
    p->current_ty = LLVMFunctionType(p->i8p, NULL, 0, 0);
    p->trap_fn    = tc_confine_const_fn(p, p->opts->trap, p->trap_ty);
    p->current_fn = tc_confine_const_fn(p, p->opts->current, p->current_ty);
    for (fn = LLVMGetFirstFunction(p->mod); fn != NULL; fn = LLVMGetNextFunction(fn)) {
        for (bb = LLVMIsDeclaration(fn) ? NULL : LLVMGetEntryBasicBlock(fn); bb != NULL;
             bb = LLVMGetNextBasicBlock(bb)) {
            term = LLVMGetBasicBlockTerminator(bb);
            if ((term == NULL) || (LLVMGetInstructionOpcode(term) != LLVMUnreachable)) {
                continue;
            }
            prev   = LLVMGetPreviousInstruction(term);
            callee = ((prev != NULL) && (LLVMGetInstructionOpcode(prev) == LLVMCall)) ?
                     LLVMGetCalledValue(prev) : NULL;
            if ((callee != NULL) && LLVMIsAConstantExpr(callee) &&
                (LLVMGetConstOpcode(callee) == LLVMIntToPtr) &&
                (LLVMConstIntGetZExtValue(LLVMGetOperand(callee, 0)) ==
                 (uint64_t)(uintptr_t)p->opts->trap)) {
                continue;
            }
            LLVMPositionBuilderBefore(p->b, term);
            ctx = LLVMBuildCall2(p->b, p->current_ty, p->current_fn, NULL, 0, "");
            LLVMBuildCall2(p->b, p->trap_ty, p->trap_fn,
                           (LLVMValueRef[]){ctx, LLVMConstInt(p->i32,
                                                              TC_IFUNC_TRAP_UNREACHABLE,
                                                              0)}, 2, "");
        }
    }
    LLVMDisposeBuilder(p->b);
}

tc_ifunc_reject_t tc_jit_confine_finish(LLVMModuleRef mod, LLVMTargetMachineRef tm,
                                        const tc_jit_confine_t *opts, char *detail,
                                        size_t detail_len)
{
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    tc_confine_pass_t p;
    LLVMErrorRef err;
    char *msg;

    /* the checks inlined and hoisted where the optimiser can prove them */
    err = LLVMRunPasses(mod, "default<O2>", tm, po);
    LLVMDisposePassBuilderOptions(po);
    if (err != NULL) {
        msg = LLVMGetErrorMessage(err);
        snprintf(detail, detail_len, "optimising the confined module: %s", msg);
        LLVMDisposeErrorMessage(msg);
        return TC_IFUNC_REJECT_BITCODE;
    }
    tc_confine_pass_init(&p, mod, opts, detail, detail_len);
    tc_confine_trap_unreachables(&p);
    return TC_IFUNC_REJECT_NONE;
}
