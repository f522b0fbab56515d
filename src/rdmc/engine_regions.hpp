/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The RDMC engine's shared memory: the control words and the pool, created
 * collectively by members and non-members alike. Internal to the engine.
 */
#pragma once

#include "rdmc/engine.hpp"
#include "sst/region.hpp"

#include <memory>

namespace tc::rdmc {

/* The engine's regions, created collectively in this order by members
 * and non-members alike (a non-member shares nothing and gets none):
 * the control words, one part per writer, and the pool. */
ucs_status_t create_regions(ucp_node &node, const engine_params &p,
                               size_t control_part_bytes, size_t pool_bytes,
                               std::unique_ptr<sst::mirrored_region> &control,
                               std::unique_ptr<sst::mirrored_region> &pool);

/* A non-member's part in the collective creation: it shares nothing. */
ucs_status_t take_part_as_outsider(ucp_node &node, const engine_params &p);

} // namespace tc::rdmc
