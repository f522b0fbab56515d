/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * libFuzzer target for the check of a leader's view-change decision
 * (membership::check_decision, src/membership/view_change.cpp): the trim
 * per sender column, whom it admits and who leaves, as a follower (or a new
 * leader) reads them once from the leader's SST row.
 *
 * The input shapes a group (creation rows up to 200, so masks of several
 * words; the view's rows; this member's row; the sender columns and what
 * this member received of each) and a decision a leader could have made
 * for it; the decision's SST words (trims, admit, leaving) are then patched
 * a few bytes at a time and read back the way read_decision reads them --
 * so the fuzzer starts inside the valid space.
 *
 * The promises checked, whenever the check accepts: who leaves is in the
 * view and leaves more than half of it (a minority never installs a view);
 * whom it admits is 0 or 1 + a row of the view that stays (looked up in a
 * heap array of exactly the creation rows, so AddressSanitizer catches a
 * row past it); no trim is negative, and unless this member leaves none is
 * past what it received; and the decision the leader could have made is
 * never refused.
 */
#include "fuzz_common.hpp"
#include "membership/view_change.hpp"

#include <algorithm>
#include <vector>

using namespace tc;
using membership::trim_decision;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz::bytes_in in(data, size);
    const int rows    = 1 + in.u8() % 200;
    const int columns = 1 + in.u8() % 64;

    /* the view: each creation row in it unless the input drops it */
    member_mask view(rows);
    std::vector<int> view_rows;
    const uint8_t drop = in.u8();
    for (int r = 0; r < rows; ++r) {
        if (((r * 7 + drop) % 5) != 0 || r == 0) {
            view.set(r);
            view_rows.push_back(r);
        }
    }
    const int me = view_rows[in.u8() % view_rows.size()];
    /* what this member received of each column's sender; INT64_MAX for a
     * column with no sender in the view */
    std::vector<int64_t> received(static_cast<size_t>(columns));
    for (auto &r : received) {
        r = (in.u8() % 8 == 0) ? INT64_MAX : in.u16();
    }

    /* the decision a leader could make: a minority of the view leaves, the
     * sponsor of the joiner (if any) stays, the trims within what we have */
    trim_decision honest;
    honest.leaving = member_mask(rows);
    const size_t may_leave = (view_rows.size() - 1) / 2;
    const uint8_t leave    = in.u8();
    for (size_t i = 0, left = 0; i < view_rows.size() && left < may_leave; ++i) {
        if (((i + leave) % 3) == 0 && view_rows[i] != view_rows.front()) {
            honest.leaving.set(view_rows[i]);
            ++left;
        }
    }
    const uint8_t admit = in.u8();
    for (size_t i = 0; i < view_rows.size() && (admit & 1); ++i) {
        const int sponsor = view_rows[(i + admit / 2) % view_rows.size()];
        if (!honest.leaving.test(sponsor)) {
            honest.admit = 1 + sponsor;
            break;
        }
    }
    for (int64_t r : received) {
        const int64_t most = std::min<int64_t>(r, 65535);
        honest.trim.push_back(most - in.u8() % (most + 1));
    }

    /* its SST words, patched, read back as read_decision does */
    std::vector<int64_t> words(honest.trim);
    words.push_back(honest.admit);
    for (size_t i = 0; i < honest.leaving.word_count(); ++i) {
        words.push_back(static_cast<int64_t>(honest.leaving.word(i)));
    }
    const std::vector<int64_t> sent = words;
    for (unsigned k = in.u8() % 4; k != 0; --k) {
        const size_t at = in.u16() % (words.size() * sizeof(int64_t));
        reinterpret_cast<uint8_t*>(words.data())[at] ^= in.u8();
    }
    const bool untouched = words == sent;
    trim_decision d;
    d.trim.assign(words.begin(), words.begin() + columns);
    d.admit   = words[static_cast<size_t>(columns)];
    d.leaving = member_mask(rows);
    d.leaving.load([&](size_t i) { return words[static_cast<size_t>(columns) + 1 + i]; });

    if (membership::check_decision(d, view, me, received) != nullptr) {
        REQUIRE(!untouched);
        return 0;
    }
    /* per creation row, exactly: in the view, staying */
    const auto stays = std::make_unique<bool[]>(static_cast<size_t>(rows));
    int view_count = 0, staying = 0;
    for (int r = 0; r < rows; ++r) {
        REQUIRE(!d.leaving.test(r) || view.test(r));
        stays[r] = view.test(r) && !d.leaving.test(r);
        view_count += view.test(r);
        staying += stays[r];
    }
    REQUIRE(2 * staying > view_count);
    REQUIRE(d.admit >= 0 && d.admit <= rows);
    if (d.admit > 0) {
        REQUIRE(stays[d.admit - 1]);
    }
    REQUIRE(d.trim.size() == received.size());
    for (size_t o = 0; o < d.trim.size(); ++o) {
        REQUIRE(d.trim[o] >= 0);
        REQUIRE(d.leaving.test(me) || d.trim[o] <= received[o]);
    }
    return 0;
}
