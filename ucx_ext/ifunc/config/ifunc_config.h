/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The process-wide configuration of the receive and send paths (UCX_TC_IFUNC_*),
 * read once (ifunc_config.c).
 */
#ifndef TC_IFUNC_CONFIG_H_
#define TC_IFUNC_CONFIG_H_

#include <twochains/ifunc.h>

#include <ucs/sys/compiler_def.h>

BEGIN_C_DECLS

/* ---- configuration (ifunc_config.c) ---- */

/* The process-wide configuration, read once */
const tc_ifunc_config_t *tc_ifunc_config_get(void);

/* UCS_OK if a receiver may run with @a security and @a placement; else
 * logs why (in-place code runs in memory its sender can still write, so
 * only trust may place it there) and returns UCS_ERR_INVALID_PARAM */
ucs_status_t tc_ifunc_policy_check(tc_ifunc_security_t security,
                                   tc_ifunc_placement_t placement);

/* UCX_IFUNC_LIB_DIR, the public API's search path (NULL or "" if unset) */
const char *tc_ifunc_lib_dir(void);

END_C_DECLS

#endif
