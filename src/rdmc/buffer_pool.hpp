/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The RDMC engine's pool: p.buffers buffers of max_message bytes in one
 * region every member maps, and what each buffer holds now (invariants in
 * transfer_state.hpp). Internal to the engine.
 */
#pragma once

#include "rdmc/engine.hpp"
#include "rdmc/transfer_state.hpp"
#include "sst/region.hpp"

#include <memory>
#include <vector>

namespace tc::rdmc {

class buffer_pool {
public:
    explicit buffer_pool(const engine_params &p) : p_(p), slots_(p.buffers) {}

    /* where the engine's regions are created (engine_regions.hpp) */
    std::unique_ptr<sst::mirrored_region> &owned_region() { return pool_; }
    sst::mirrored_region &region() const { return *pool_; }

    slot &operator[](size_t s) { return slots_[s]; }
    const slot &operator[](size_t s) const { return slots_[s]; }
    size_t size() const { return slots_.size(); }

    std::byte *slot_base(int s) const
    {
        return pool_->base() + static_cast<size_t>(s) * p_.max_message;
    }

    int free_slot() const
    {
        for (size_t i = 0; i < slots_.size(); ++i) {
            if (slots_[i].state == slot_state::free) {
                return static_cast<int>(i);
            }
        }
        return -1;
    }

    void maybe_free(int s)
    {
        if (slots_[s].state == slot_state::busy && slots_[s].done && !slots_[s].held) {
            slots_[s] = slot{};
        }
    }

private:
    const engine_params                   &p_;
    std::vector<slot>                     slots_;
    std::unique_ptr<sst::mirrored_region> pool_;
};

} // namespace tc::rdmc
