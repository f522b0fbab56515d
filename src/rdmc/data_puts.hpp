/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The RDMC engine's block puts in flight: at most one per peer, whose write
 * header lives until its request completes, and their number. Internal to
 * the engine.
 */
#pragma once

#include "rdmc/transfer_state.hpp"

#include <ucp/api/ucp.h>

#include <vector>

namespace tc::rdmc {

struct data_puts {
    explicit data_puts(int n) : by_peer(static_cast<size_t>(n)) {}

    /* Frees the completed requests; a put that failed sets @a failed. */
    unsigned reap(bool &failed);
    /* Cancels and frees those still in flight (the engine goes away). */
    void cancel(ucp_worker_h worker);

    std::vector<data_put> by_peer;
    unsigned              in_flight = 0;
};

} // namespace tc::rdmc
