/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The runner of confined code and what the JIT gives a confined module
 * (confine.c).
 */
#ifndef TC_IFUNC_CONFINE_H_
#define TC_IFUNC_CONFINE_H_

#include "ifunc/receiver/receiver.h"

#include <twochains/ifunc.h>

#include <ucs/sys/compiler_def.h>

BEGIN_C_DECLS

/* ---- security confine (confine.c) ---- */

struct tc_jit_symbol;
struct tc_jit_confine;

/* Run a confined module's @a entry with the regions of @a rx (its target's
 * declared size, a group's state) and @a payload, read only; counts the run
 * and its trap in rx->stats, logs each trap reason once */
tc_ifunc_trap_t tc_confine_run(tc_ifunc_rx_t *rx, const void *entry, void *payload,
                               size_t payload_size);

/* What the JIT gives a confined module: the runner's calls, the allow-list */
const struct tc_jit_confine *tc_confine_jit_options(void);

/* What the symbol at @a addr is: a function, or an object with its size and
 * whether its mapping is writable */
void tc_confine_symbol_info(void *addr, struct tc_jit_symbol *sym);

/* A confined module's externals (tc_jit_resolve_fn_t): a ried's symbol, or a
 * function of the process; never the process's data */
void *tc_confine_resolve(void *arg, const char *name, struct tc_jit_symbol *sym, char *why,
                         size_t why_len);

END_C_DECLS

#endif
