/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The RDMC engine's verdicts on peers (protocol in engine.hpp): a word no
 * honest peer writes is its fault on the second look in a row, and a member
 * blamed once has its words read no more and gets nothing more of ours.
 * Internal to the engine.
 */
#pragma once

#include "rdmc/engine.hpp"

#include <array>
#include <cstdint>
#include <vector>

namespace tc::rdmc {

/* The peer words we check, each with its own count of bad looks. */
enum class word_kind : uint8_t { offer, ready, arrived, count };

class peer_faults {
public:
    peer_faults(const engine_params &p, engine_stats &stats, uint64_t &callback_errors);

    bool faulty(int peer) const { return faulty_[peer]; }

    /* @a peer's word of @a kind holds what it cannot have written, on this
     * look. Its fault on the second look in a row; true once blamed. */
    bool bad_look(int peer, word_kind kind, const char *what)
    {
        uint8_t &looks = bad_looks_[peer][static_cast<size_t>(kind)];
        if (++looks < 2) {
            return false;
        }
        blame(peer, what);
        return true;
    }
    void good_look(int peer, word_kind kind)
    {
        bad_looks_[peer][static_cast<size_t>(kind)] = 0;
    }

    void blame(int peer, const char *what);

private:
    const engine_params &p_;
    engine_stats        &stats_;
    uint64_t            &callback_errors_;
    std::vector<uint8_t> faulty_;        /* by member: blamed, not read */
    std::vector<std::array<uint8_t, static_cast<size_t>(word_kind::count)>> bad_looks_;
};

} // namespace tc::rdmc
