/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Reaping and cancelling the RDMC engine's block puts.
 *
 * Threads: the engine's (the thread that drives the node's progress).
 */
#include "rdmc/data_puts.hpp"

#include <ucs/debug/log_def.h>

namespace tc::rdmc {

unsigned data_puts::reap(bool &failed)
{
    unsigned done = 0;
    for (auto &f : by_peer) {
        if (f.request == nullptr) {
            continue;
        }
        ucs_status_t status = ucp_request_check_status(f.request);
        if (status == UCS_INPROGRESS) {
            continue;
        }
        if (status != UCS_OK) {
            ucs_error("rdmc: block put completed with error: %s", ucs_status_string(status));
            failed = true;
        }
        ucp_request_free(f.request);
        --f.owner->puts_in_flight;
        --in_flight;
        f = {};
        ++done;
    }
    return done;
}

void data_puts::cancel(ucp_worker_h worker)
{
    for (auto &f : by_peer) {
        if (f.request != nullptr) {
            ucp_request_cancel(worker, f.request);
            ucp_request_free(f.request);
        }
    }
}

} // namespace tc::rdmc
