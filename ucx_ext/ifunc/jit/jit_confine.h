/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The `confine` checker and rewriter (jit_confine.c), inside the JIT module:
 * what it refuses and what the rewritten code does are at the top of
 * jit_confine.c; the run context it reads is confine_abi.h.
 */
#ifndef TC_IFUNC_JIT_CONFINE_H_
#define TC_IFUNC_JIT_CONFINE_H_

#include "ifunc/jit/jit.h"

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

/* Check @a mod (its entry @a entry) and rewrite it in place, before its
 * externals are bound: TC_IFUNC_REJECT_NONE, or why not (CONFINE: refused
 * by the checker, with the cause in @a detail) */
tc_ifunc_reject_t tc_jit_confine_rewrite(LLVMModuleRef mod, const char *entry,
                                         const tc_jit_confine_t *opts,
                                         tc_jit_resolve_fn_t resolve, void *arg,
                                         char *detail, size_t detail_len);

/* After the externals are bound: optimise (the checks inline and fold
 * where provable), then make every `unreachable` a trap */
tc_ifunc_reject_t tc_jit_confine_finish(LLVMModuleRef mod, LLVMTargetMachineRef tm,
                                        const tc_jit_confine_t *opts, char *detail,
                                        size_t detail_len);

#endif
