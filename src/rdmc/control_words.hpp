/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The RDMC control words as one member sees them (layout in
 * transfer_state.hpp): peers' parts read in place, our own part written
 * here and put to the others through one pusher, which counts the puts;
 * and the word the hostile-member tests keep (fault_injection). Internal
 * to the engine.
 */
#pragma once

#include "rdmc/peer_faults.hpp"
#include "rdmc/transfer_state.hpp"
#include "sst/region.hpp"

#include <memory>
#include <optional>
#include <utility>

namespace tc::rdmc {

class control_words {
public:
    using word_at = control_layout::word_at;

    control_words(ucp_node &node, const engine_params &p, int me, const peer_faults &faults)
        : p_(p), me_(me), faults_(faults), pusher_(node)
    {
    }

    /* where the engine's regions are created (engine_regions.hpp) */
    std::unique_ptr<sst::mirrored_region> &owned_region() { return control_; }
    sst::pusher &pusher() { return pusher_; }
    const sst::pusher &pusher() const { return pusher_; }

    /* a peer's word: one load (the caller checks it before use) */
    int64_t word(word_at w) const { return sst::load_word(control_->part(w.part) + w.offset); }
    std::byte *own_word(word_at w) const
    {
        if (w.part != me_) {
            invariant_broken("a write to another member's control words");
        }
        return control_->part(me_) + w.offset;
    }

    /* our word @a w, at @a member only (arrived counts are per receiver) */
    ucs_status_t put_word(int member, word_at w, int64_t value)
    {
        (void)own_word(w);
        value = kept_lie(w, value);
        if (faults_.faulty(member)) {
            return UCS_OK;   /* nothing more of ours goes to a member we blamed */
        }
        const auto &r = control_->remote(member, me_);
        return pusher_.put_copy(p_.members[member], &value, sizeof(value), r.address + w.offset,
                                r, sst::put_purpose::counter);
    }

    ucs_status_t put_word_to_all(word_at w, int64_t value)
    {
        sst::store_word(own_word(w), kept_lie(w, value));
        return control_->push_all(pusher_, me_, w.offset, sizeof(value), sst::put_purpose::counter);
    }

    void keep(word_at w, int64_t value) { lie_.emplace(w, value); }

private:
    /* the hostile-member tests' word, where they keep one (fault_injection) */
    int64_t kept_lie(word_at w, int64_t value) const
    {
        return (lie_ && lie_->first.offset == w.offset) ? lie_->second : value;
    }

    const engine_params                         &p_;
    int                                         me_;
    const peer_faults                           &faults_;
    sst::pusher                                 pusher_;
    std::unique_ptr<sst::mirrored_region>       control_;
    std::optional<std::pair<word_at, int64_t>>  lie_;  /* fault_injection only */
};

} // namespace tc::rdmc
