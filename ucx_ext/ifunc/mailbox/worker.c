/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * A UCP context, a single-threaded worker and a progress engine, for C
 * programs that do not bring their own (the C counterpart of the C++ owners
 * in src/common/ucp_handles.hpp).
 *
 * Threads: init and cleanup on the thread that will drive the engine.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include <twochains/ifunc.h>

#include <base/debug.h>

#include <string.h>

ucs_status_t tc_ifunc_ucp_init(tc_ifunc_ucp_t *ucp)
{
    ucp_worker_params_t wparams = {0};
    ucp_params_t params         = {0};
    ucp_config_t *config;
    ucs_status_t status;

    memset(ucp, 0, sizeof(*ucp));
    status = ucp_config_read(NULL, NULL, &config);
    if (status != UCS_OK) {
        goto err;
    }
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features   = UCP_FEATURE_RMA | UCP_FEATURE_AM;   /* puts, and the write lane */
    status = ucp_init(&params, config, &ucp->context);
    ucp_config_release(config);
    if (status != UCS_OK) {
        ucs_error("ucp_init failed: %s", ucs_status_string(status));
        goto err;
    }

    wparams.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = UCS_THREAD_MODE_SINGLE;
    status = ucp_worker_create(ucp->context, &wparams, &ucp->worker);
    if (status != UCS_OK) {
        ucs_error("ucp_worker_create failed: %s", ucs_status_string(status));
        goto err_cleanup;
    }

    status = tc_progress_engine_create(ucp->worker, NULL, &ucp->engine);
    if (status != UCS_OK) {
        goto err_worker;
    }
    return UCS_OK;

err_worker:
    ucp_worker_destroy(ucp->worker);
err_cleanup:
    ucp_cleanup(ucp->context);
err:
    memset(ucp, 0, sizeof(*ucp));
    return status;
}

void tc_ifunc_ucp_cleanup(tc_ifunc_ucp_t *ucp)
{
    if (ucp->engine != NULL) {
        tc_progress_engine_destroy(ucp->engine);
    }
    if (ucp->worker != NULL) {
        ucp_worker_destroy(ucp->worker);
    }
    if (ucp->context != NULL) {
        ucp_cleanup(ucp->context);
    }
    memset(ucp, 0, sizeof(*ucp));
}
