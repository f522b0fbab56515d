/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * A set of a group's rows (creation-view member indices) for any group
 * size: bit r in word r / 64. In the SST a mask is words_for(rows) int64
 * columns side by side in each row (the suspected and leaving columns), so
 * a group of up to 64 members pays one word per mask as it always did, and
 * a group of 256 four; a mask's words go out together in one put.
 *
 * Invariants:
 *  - a mask never holds a bit at or past its row count: set() ignores such
 *    rows, and load() drops the bits a peer wrote there;
 *  - a peer's mask is read once, word by word (each word one atomic load,
 *    as every SST read), into a private copy, and every decision about it
 *    uses that copy, so a check and its use see the same bits even while
 *    the peer overwrites its row;
 *  - sizing happens once per view; test/set/or/and/any/intersects/compare
 *    and load never allocate (they run on engine passes).
 */
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tc {

class member_mask {
public:
    member_mask() = default;
    explicit member_mask(int rows) : words_(words_for(rows), 0), rows_(rows) {}

    /* int64 SST columns a mask over @a rows takes */
    static constexpr size_t words_for(int rows)
    {
        return rows <= 0 ? 0 : (static_cast<size_t>(rows) + 63) / 64;
    }

    int rows() const { return rows_; }
    size_t word_count() const { return words_.size(); }
    uint64_t word(size_t i) const { return words_[i]; }

    bool test(int row) const
    {
        return row >= 0 && row < rows_ &&
               ((words_[static_cast<size_t>(row) / 64] >> (row % 64)) & 1);
    }
    void set(int row)
    {
        if (row >= 0 && row < rows_) {
            words_[static_cast<size_t>(row) / 64] |= uint64_t{1} << (row % 64);
        }
    }
    void reset(int row)
    {
        if (row >= 0 && row < rows_) {
            words_[static_cast<size_t>(row) / 64] &= ~(uint64_t{1} << (row % 64));
        }
    }
    void clear() { std::fill(words_.begin(), words_.end(), 0); }

    bool any() const
    {
        return std::any_of(words_.begin(), words_.end(), [](uint64_t w) { return w != 0; });
    }
    bool intersects(const member_mask &o) const
    {
        const size_t n = std::min(words_.size(), o.words_.size());
        for (size_t i = 0; i < n; ++i) {
            if (words_[i] & o.words_[i]) {
                return true;
            }
        }
        return false;
    }
    /* every row of this mask is in @a o */
    bool subset_of(const member_mask &o) const
    {
        for (size_t i = 0; i < words_.size(); ++i) {
            if (words_[i] & ~(i < o.words_.size() ? o.words_[i] : 0)) {
                return false;
            }
        }
        return true;
    }
    member_mask &operator|=(const member_mask &o)
    {
        const size_t n = std::min(words_.size(), o.words_.size());
        for (size_t i = 0; i < n; ++i) {
            words_[i] |= o.words_[i];
        }
        drop_bits_past_rows();
        return *this;
    }
    member_mask &operator&=(const member_mask &o)
    {
        for (size_t i = 0; i < words_.size(); ++i) {
            words_[i] &= (i < o.words_.size()) ? o.words_[i] : 0;
        }
        return *this;
    }
    bool operator==(const member_mask &o) const
    {
        return rows_ == o.rows_ && words_ == o.words_;
    }

    /* Take words_for(rows()) words from @a load_word(i) (one read each:
     * the caller's atomic SST load), dropping bits past the row count. */
    template<class LoadWord> void load(LoadWord &&load_word)
    {
        for (size_t i = 0; i < words_.size(); ++i) {
            words_[i] = static_cast<uint64_t>(load_word(i));
        }
        drop_bits_past_rows();
    }

private:
    void drop_bits_past_rows()
    {
        const int tail = rows_ % 64;
        if (tail != 0 && !words_.empty()) {
            words_.back() &= (uint64_t{1} << tail) - 1;
        }
    }

    std::vector<uint64_t> words_;
    int                   rows_ = 0;
};

} // namespace tc
