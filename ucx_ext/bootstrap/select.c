/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The choice of bootstrap backend from UCX_TC_* variables (and PMIX_RANK),
 * above the backends it names (single in core/, tcp/, pmix/) so that the
 * generic core names none; and the PMIx backend's stand-in when PMIx is
 * not built, which points at the other choices.
 *
 * Threads: called by any thread, once per handle it creates; keeps
 * nothing (the configuration is read and released on each call).
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include <bootstrap/core/bootstrap_int.h>

#include <twochains/config.h>

#include <ucs/debug/log_def.h>
#include <stdlib.h>
#include <strings.h>
#include <unistd.h>

/* --- PMIx, when not built ----------------------------------------------- */

#ifndef TC_HAVE_PMIX
ucs_status_t tc_bootstrap_pmix_create(tc_bootstrap_h *boot_p)
{
    ucs_error("the PMIx bootstrap is not built: install libpmix-dev (PMIx >= 4) "
              "and rerun configure, or choose another UCX_TC_BOOTSTRAP");
    return UCS_ERR_UNSUPPORTED;
}
#endif

/* --- from the environment ------------------------------------------------ */

ucs_status_t tc_bootstrap_create_from_env(tc_bootstrap_h *boot_p)
{
    tc_config_t config;
    ucs_status_t status;
    int use_tcp;

    status = tc_config_read(&config);
    if (status != UCS_OK) {
        return status;              /* the parser named the bad variable */
    }

    if (config.size < 0) {
        ucs_error("UCX_TC_SIZE=%d is negative", config.size);
        status = UCS_ERR_INVALID_PARAM;
        goto out;
    }

    /* A PMIx launcher (mpirun, prterun, srun --mpi=pmix) sets PMIX_RANK;
     * twochains-run sets UCX_TC_SIZE, which wins. */
    if (!strcasecmp(config.bootstrap, "pmix") ||
        (!strcasecmp(config.bootstrap, "auto") && (config.size == 0) &&
         (getenv("PMIX_RANK") != NULL))) {
        status = tc_bootstrap_pmix_create(boot_p);
        goto out;
    }

    if (!strcasecmp(config.bootstrap, "auto")) {
        use_tcp = (config.size > 1);
    } else if (!strcasecmp(config.bootstrap, "tcp")) {
        use_tcp = 1;
    } else if (!strcasecmp(config.bootstrap, "single")) {
        use_tcp = 0;
    } else {
        ucs_error("UCX_TC_BOOTSTRAP=%s is not one of auto, tcp, single, pmix",
                  config.bootstrap);
        status = UCS_ERR_INVALID_PARAM;
        goto out;
    }

    if (!use_tcp) {
        if (config.size > 1) {
            ucs_error("UCX_TC_BOOTSTRAP=single but UCX_TC_SIZE=%d",
                      config.size);
            status = UCS_ERR_INVALID_PARAM;
            goto out;
        }
        if (config.rank > 0) {
            ucs_error("UCX_TC_RANK=%d is out of range for a single-member "
                      "bootstrap", config.rank);
            status = UCS_ERR_INVALID_PARAM;
            goto out;
        }
        status = tc_bootstrap_single_create(boot_p);
        goto out;
    }

    if (config.size < 1) {
        ucs_error("the tcp bootstrap needs UCX_TC_SIZE >= 1");
        status = UCS_ERR_INVALID_PARAM;
        goto out;
    }
    if (config.rank < 0) {
        ucs_error("UCX_TC_SIZE=%d but UCX_TC_RANK is not set", config.size);
        status = UCS_ERR_INVALID_PARAM;
        goto out;
    }
    if (config.rank >= config.size) {
        ucs_error("UCX_TC_RANK=%d is out of range for UCX_TC_SIZE=%d",
                  config.rank, config.size);
        status = UCS_ERR_INVALID_PARAM;
        goto out;
    }
    if ((config.root[0] == '\0') &&
        ((config.rank != 0) || (config.listen_fd < 0))) {
        ucs_error("UCX_TC_SIZE=%d but UCX_TC_ROOT (host:port of rank 0) is "
                  "not set", config.size);
        status = UCS_ERR_INVALID_PARAM;
        goto out;
    }

    status = tc_bootstrap_tcp_create(config.root,
                                     (config.rank == 0) ? config.listen_fd : -1,
                                     config.rank, config.size,
                                     config.boot_timeout, boot_p);

out:
    /* An inherited listening socket is ours: nobody else will accept on it,
     * and leaving it open would queue late connections forever. */
    if ((config.listen_fd >= 0) && (config.rank == 0)) {
        close(config.listen_fd);
    }
    tc_config_release(&config);
    return status;
}
