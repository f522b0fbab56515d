/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The UCX_TC_RDMC_* table, registered with UCX like ucx_ext/config.c (so
 * `LD_PRELOAD=libtwochains_group.so ucx_info -cf` lists it) and parsed once
 * at load time: UCX warns about UCX_ variables that no parsed table used,
 * and applications call ucp_init() before they create an RDMC engine.
 *
 * Threads: tc_rdmc_config_block may be called from any thread.
 */
#include <ucs/sys/preprocessor.h>
#include <ucs/config/parser.h>
#include <ucs/type/status.h>
#include <stddef.h>

typedef struct tc_rdmc_config {
    size_t block;
} tc_rdmc_config_t;

static ucs_config_field_t tc_rdmc_config_table[] = {
    {"BLOCK", "1m",
     "RDMC block size: messages move as blocks of this many bytes, one put each,\n"
     "relayed along the schedule as soon as they arrive (engine_params.block_size\n"
     "overrides it). Every member of an engine must use the same value.",
     ucs_offsetof(tc_rdmc_config_t, block), UCS_CONFIG_TYPE_MEMUNITS},

    {NULL}
};

UCS_CONFIG_REGISTER_TABLE(tc_rdmc_config_table, "Two-Chains RDMC", "TC_RDMC_",
                          tc_rdmc_config_t, &ucs_config_global_list)

ucs_status_t tc_rdmc_config_block(size_t *block_p);

ucs_status_t tc_rdmc_config_block(size_t *block_p)
{
    tc_rdmc_config_t config;
    ucs_status_t status;

    status = ucs_config_parser_fill_opts(&config, tc_rdmc_config_table, "UCX_",
                                         "TC_RDMC_", 0);
    if (status != UCS_OK) {
        return status; /* the parser named the variable */
    }
    *block_p = config.block;
    ucs_config_parser_release_opts(&config, tc_rdmc_config_table);
    return UCS_OK;
}

UCS_STATIC_INIT
{
    size_t block;

    (void)tc_rdmc_config_block(&block);
}
