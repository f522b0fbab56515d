/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * libFuzzer target for the view exchange's lengths
 * (membership::check_round_lengths, src/membership/view_exchange.cpp):
 * each rank's length word, as the survivors of a failure read it from the
 * rank's row in one round of their allgather.
 *
 * The input gives the slot size (the real one, 8192, most of the time),
 * the number of ranks, and per rank a length near a valid one (a small
 * offset from a length in the slot, or the slot's end) or, when its
 * selector says so, any 64-bit word -- so the fuzzer starts inside the
 * valid space and reaches the bounds and the sum's overflow.
 *
 * The promises checked: accepted lengths are exactly the words, each
 * within the slot, summing to the total without wrapping; gathering them
 * (as the round does) from rows of exactly the slot's bytes into one
 * allocation of the total reads and writes only inside both (heap copies,
 * so AddressSanitizer catches the rest); a refusal names a rank whose word
 * is negative or past the slot, or where the sum would wrap, and every
 * rank before it is one that could be taken.
 */
#include "fuzz_common.hpp"
#include "membership/view_exchange.hpp"

#include <algorithm>
#include <vector>

using namespace tc;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz::bytes_in in(data, size);
    const uint8_t pick = in.u8();
    const size_t slot  = (pick & 0xc0) == 0xc0 ? static_cast<size_t>(in.u64()) :
                         (pick & 0x80) ? 1 + in.u16() % 512 : 8192;
    const size_t ranks = 1 + in.u8() % 64;
    std::vector<int64_t> words(ranks);
    for (auto &w : words) {
        const uint8_t how = in.u8();
        if (how < 0x10) {
            w = static_cast<int64_t>(in.u64());   /* any word */
        } else if (how < 0x20) {
            /* at the slot's end */
            w = static_cast<int64_t>(slot - (how & 3));
        } else {
            /* near a length the slot holds */
            const uint64_t base = (slot < 65536) ? in.u16() % (slot + 1) : in.u16();
            w = static_cast<int64_t>(base) + static_cast<int8_t>(how) % 4;
        }
    }
    std::vector<size_t> lens(ranks, SIZE_MAX);
    size_t total  = SIZE_MAX;
    const int bad = membership::check_round_lengths(words, slot, lens.data(), total);

    if (bad >= 0) {
        REQUIRE(static_cast<size_t>(bad) < ranks);
        size_t sum = 0;
        for (int r = 0; r < bad; ++r) {
            REQUIRE(words[r] >= 0 && static_cast<uint64_t>(words[r]) <= slot);
            REQUIRE(!__builtin_add_overflow(sum, static_cast<size_t>(words[r]), &sum));
        }
        size_t with = 0;
        REQUIRE(words[bad] < 0 || static_cast<uint64_t>(words[bad]) > slot ||
                __builtin_add_overflow(sum, static_cast<size_t>(words[bad]), &with));
        return 0;
    }
    size_t sum = 0;
    for (size_t r = 0; r < ranks; ++r) {
        REQUIRE(words[r] >= 0 && lens[r] == static_cast<size_t>(words[r]) && lens[r] <= slot);
        REQUIRE(!__builtin_add_overflow(sum, lens[r], &sum));
    }
    REQUIRE(total == sum);
    if (slot > 65536 || total > 64 * 65536) {
        return 0;   /* bounded, but not worth allocating here */
    }
    /* the gather, from each rank's slot of exactly the slot's bytes */
    std::vector<std::byte> row(slot, std::byte{0x33});
    auto out  = std::make_unique_for_overwrite<std::byte[]>(std::max<size_t>(total, 1));
    size_t at = 0;
    for (size_t r = 0; r < ranks; ++r) {
        const auto from = fuzz::exact_copy(row.data(), slot);
        if (lens[r] != 0) {
            std::memcpy(out.get() + at, from.get(), lens[r]);
        }
        at += lens[r];
    }
    REQUIRE(at == total);
    return 0;
}
