/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * A set of ranks (or member ids) of any job size: one bit per rank, in
 * words that grow on insert, so a set over a shard of 3 in a job of 4,096
 * costs what its largest rank needs and no fixed mask caps the job. Its
 * words are the bit layout the C write lane takes (bit i of word i / 64).
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace tc {

class rank_set {
public:
    rank_set() = default;
    rank_set(std::initializer_list<int> ranks)
    {
        for (int r : ranks) {
            insert(r);
        }
    }

    /* negative ranks are ignored: they name no one */
    void insert(int rank)
    {
        if (rank < 0) {
            return;
        }
        const auto word = static_cast<size_t>(rank) / 64;
        if (word >= words_.size()) {
            words_.resize(word + 1, 0);
        }
        words_[word] |= uint64_t{1} << (rank % 64);
    }

    bool contains(int rank) const
    {
        const auto word = static_cast<size_t>(rank) / 64;
        return rank >= 0 && word < words_.size() && ((words_[word] >> (rank % 64)) & 1);
    }

    const uint64_t *words() const { return words_.data(); }
    /* the bits words() holds */
    size_t bits() const { return words_.size() * 64; }

private:
    std::vector<uint64_t> words_;
};

} // namespace tc
