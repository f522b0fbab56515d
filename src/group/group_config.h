/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The replication layer's UCX_TC_* knobs: SMC mode, batch and flush
 * deadline, heartbeats, suspicion, the group timeout and the most members
 * a group holds. Their table lives
 * with the layer that reads them (group_config.c) and is registered with
 * UCX, so `twochains-info -c` lists it beside the runtime's.
 */
#ifndef TC_GROUP_CONFIG_H_
#define TC_GROUP_CONFIG_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

BEGIN_C_DECLS

typedef struct tc_group_config {
    unsigned smc_mode;         /* UCX_TC_SMC_MODE: 0 urgent, 1 batched */
    unsigned smc_batch;        /* UCX_TC_SMC_BATCH: B */
    double   smc_flush;        /* UCX_TC_SMC_FLUSH_US: T, seconds */
    double   heartbeat;        /* UCX_TC_HEARTBEAT_INTERVAL, seconds */
    double   suspect_timeout;  /* UCX_TC_SUSPECT_TIMEOUT, seconds */
    double   group_timeout;    /* UCX_TC_GROUP_TIMEOUT, seconds */
    unsigned max_members;      /* UCX_TC_GROUP_MAX_MEMBERS */
    unsigned audit_rows;       /* UCX_TC_GROUP_AUDIT_ROWS */
} tc_group_config_t;

/* Parse the table from the environment; errors are UCX's parser's, logged
 * by it. Nothing to release: the fields own no memory. */
ucs_status_t tc_group_config_read(tc_group_config_t *config);

END_C_DECLS

#endif
