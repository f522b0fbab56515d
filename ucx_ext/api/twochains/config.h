/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * UCX_TC_* configuration, parsed with UCX's own config parser so that the
 * variables behave like every other UCX_ variable (units, "auto", warnings
 * about unknown UCX_TC_ names).
 */
#ifndef TWOCHAINS_CONFIG_H_
#define TWOCHAINS_CONFIG_H_

#include <twochains/wait.h>
#include <twochains/lane.h>
#include <ucs/type/status.h>
#include <ucs/sys/compiler_def.h>
#include <stdio.h>

BEGIN_C_DECLS

/** Environment prefix of every Two-Chains variable: UCX_TC_<NAME>. */
#define TC_CONFIG_ENV_PREFIX   "UCX_"
#define TC_CONFIG_TABLE_PREFIX "TC_"

typedef struct tc_config {
    /* progress engine */
    tc_wait_policy_t wait_policy;      /**< UCX_TC_WAIT_POLICY */
    double           spin_time;        /**< UCX_TC_SPIN_TIME, seconds */
    double           sleep_min;        /**< UCX_TC_SLEEP_MIN, seconds */
    double           sleep_max;        /**< UCX_TC_SLEEP_MAX, seconds */
    unsigned         max_pollers;      /**< UCX_TC_MAX_POLLERS */
    /* bootstrap */
    char             *bootstrap;       /**< UCX_TC_BOOTSTRAP: auto|tcp|pmix|single */
    char             *root;            /**< UCX_TC_ROOT: host:port of rank 0 */
    int              rank;             /**< UCX_TC_RANK, -1 when unset */
    int              size;             /**< UCX_TC_SIZE, 0 when unset */
    int              listen_fd;        /**< UCX_TC_LISTEN_FD, -1 when unset */
    double           boot_timeout;     /**< UCX_TC_BOOTSTRAP_TIMEOUT, seconds */
    tc_write_lane_mode_t write_lane;   /**< UCX_TC_WRITE_LANE */
    char             *job_key;         /**< UCX_TC_JOB_KEY, "" when unset */
    char             *job_key_file;    /**< UCX_TC_JOB_KEY_FILE, "" when unset */
    unsigned         handshake_max;    /**< UCX_TC_HANDSHAKE_MAX */
    unsigned         handshake_max_per_source; /**< UCX_TC_HANDSHAKE_MAX_PER_SOURCE */
} tc_config_t;

/**
 * Parse UCX_TC_* from the environment into @a config. Errors in a value are
 * reported by UCX's parser and returned; release with @ref tc_config_release.
 */
ucs_status_t tc_config_read(tc_config_t *config);

/** Release what @ref tc_config_read allocated. */
void tc_config_release(tc_config_t *config);

/**
 * Print every UCX_TC_* variable with its value (and, with @a with_doc, its
 * one-line documentation), in the format of `ucx_info -c`.
 */
void tc_config_print(FILE *stream, int with_doc);

END_C_DECLS

#endif
