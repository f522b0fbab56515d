/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Creating the RDMC engine's regions (engine_regions.hpp).
 *
 * Threads: the thread that creates the engine, collectively with the
 * other ranks.
 */
#include "rdmc/engine_regions.hpp"

#include <algorithm>
#include <vector>

namespace tc::rdmc {

/* The engine's regions, created collectively in this order by members
 * and non-members alike (a non-member shares nothing and gets none):
 * the control words, one part per writer, and the pool. */
ucs_status_t create_regions(ucp_node &node, const engine_params &p,
                               size_t control_part_bytes, size_t pool_bytes,
                               std::unique_ptr<sst::mirrored_region> &control,
                               std::unique_ptr<sst::mirrored_region> &pool)
{
    std::vector<int> writers(p.members.size());
    for (size_t m = 0; m < writers.size(); ++m) {
        writers[m] = static_cast<int>(m);
    }
    /* at least a cache line each: UCX maps no empty region */
    ucs_status_t status = sst::mirrored_region::create(
            node, p.members, std::max<size_t>(control_part_bytes, 64), writers, control);
    if (status == UCS_OK) {
        status = sst::mirrored_region::create(node, p.members,
                                          std::max<size_t>(pool_bytes, 64), pool);
    }
    return status;
}

ucs_status_t take_part_as_outsider(ucp_node &node, const engine_params &p)
{
    std::unique_ptr<sst::mirrored_region> none;
    return create_regions(node, p, 0, 0, none, none);
}

} // namespace tc::rdmc
