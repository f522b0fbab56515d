/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The UCX_TC_* table of the replication layer, registered with UCX like
 * ucx_ext/config.c and parsed once at load time (UCX warns about UCX_
 * variables no parsed table used, and applications call ucp_init() before
 * they create a group).
 *
 * Threads: tc_group_config_read may be called from any thread.
 */
#include "group/group_config.h"

#include <ucs/sys/preprocessor.h>
#include <ucs/config/parser.h>
#include <stddef.h>

static const char *tc_smc_mode_names[] = {"urgent", "batched", NULL};

static ucs_config_field_t tc_group_config_table[] = {
    {"SMC_MODE", "urgent",
     "Small-message multicast mode of new groups: urgent (push every message\n"
     "and every receive report at once) or batched (push committed slots and\n"
     "receive reports in batches).",
     ucs_offsetof(tc_group_config_t, smc_mode), UCS_CONFIG_TYPE_ENUM(tc_smc_mode_names)},

    {"SMC_BATCH", "64",
     "Batched mode: push once this many committed messages are pending.",
     ucs_offsetof(tc_group_config_t, smc_batch), UCS_CONFIG_TYPE_UINT},

    {"SMC_FLUSH_US", "50us",
     "Batched mode: push a partial batch once its oldest message waited this\n"
     "long (0: on every pass of the progress engine).",
     ucs_offsetof(tc_group_config_t, smc_flush), UCS_CONFIG_TYPE_TIME},

    {"HEARTBEAT_INTERVAL", "10ms",
     "Replication groups: how often a member pushes its heartbeat through the SST.",
     ucs_offsetof(tc_group_config_t, heartbeat), UCS_CONFIG_TYPE_TIME},

    {"SUSPECT_TIMEOUT", "1s",
     "Replication groups: a member whose heartbeat has not moved for this long\n"
     "is suspected, the group wedges and installs a view without it.",
     ucs_offsetof(tc_group_config_t, suspect_timeout), UCS_CONFIG_TYPE_TIME},

    {"GROUP_TIMEOUT", "30s",
     "Replication groups: a blocking call (a send waiting for the window, flush,\n"
     "close) fails with UCS_ERR_TIMED_OUT after this long without progress\n"
     "anywhere in the group (nothing sent, received or delivered).",
     ucs_offsetof(tc_group_config_t, group_timeout), UCS_CONFIG_TYPE_TIME},

    {"GROUP_MAX_MEMBERS", "256",
     "Replication groups: the most members a group may hold, checked when it\n"
     "is created and when a member sponsors a joiner; a joiner also refuses an\n"
     "admission that lists more. Each membership mask (suspected, leaving)\n"
     "takes ceil(members / 64) words of every member's SST row.",
     ucs_offsetof(tc_group_config_t, max_members), UCS_CONFIG_TYPE_UINT},

    {"GROUP_AUDIT_ROWS", "16",
     "Replication groups: how many peers' SST rows a member audits per\n"
     "heartbeat, round robin. Every word of an audited row is checked against\n"
     "what it can legally be, and a member whose row holds an impossible value\n"
     "twice in a row is suspected. A group of N members audits each row every\n"
     "ceil((N - 1) / this) heartbeats; 0 is taken as 1.",
     ucs_offsetof(tc_group_config_t, audit_rows), UCS_CONFIG_TYPE_UINT},

    {NULL}
};

UCS_CONFIG_REGISTER_TABLE(tc_group_config_table, "Two-Chains groups", "TC_",
                          tc_group_config_t, &ucs_config_global_list)

ucs_status_t tc_group_config_read(tc_group_config_t *config)
{
    return ucs_config_parser_fill_opts(config, tc_group_config_table, "UCX_", "TC_", 0);
}

UCS_STATIC_INIT
{
    tc_group_config_t config;

    (void)tc_group_config_read(&config);
}
