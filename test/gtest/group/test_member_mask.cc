/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Membership masks of any width (core/member_mask.hpp), and the views'
 * survivors and leader over them: a group of up to 64 pays one SST word per
 * mask, larger ones a word per 64 members, and bits a peer wrote past the
 * group's size are ignored.
 */
#include "common.h"

#include "core/member_mask.hpp"
#include "core/row.hpp"
#include "core/view_map.hpp"

#include <vector>

namespace {

using tc::member_mask;

TEST(member_mask, words_per_row)
{
    EXPECT_EQ(1u, member_mask::words_for(1));
    EXPECT_EQ(1u, member_mask::words_for(3));
    EXPECT_EQ(1u, member_mask::words_for(64));
    EXPECT_EQ(2u, member_mask::words_for(65));
    EXPECT_EQ(2u, member_mask::words_for(70));
    EXPECT_EQ(4u, member_mask::words_for(256));
}

/* a group of 3 lays out the row it always had: one word per mask */
TEST(member_mask, a_small_group_row_is_as_before)
{
    tc::sst::layout three, seventy;
    const auto c3  = tc::row_columns::lay_out(three, 3, 3);
    const auto c70 = tc::row_columns::lay_out(seventy, 70, 70);
    EXPECT_EQ(1u, c3.suspected.count);
    EXPECT_EQ(1u, c3.leaving.count);
    EXPECT_EQ(2u, c70.suspected.count);
    EXPECT_EQ(2u, c70.leaving.count);
    /* 16 one-word columns and 2 x 3 counters: 22 words, in 3 cache lines */
    EXPECT_EQ(192u, three.row_bytes());
}

TEST(member_mask, set_test_or_and_any_across_words)
{
    member_mask a(70), b(70);
    EXPECT_FALSE(a.any());
    a.set(3);
    a.set(66);
    a.set(70);    /* past the group: ignored */
    a.set(-1);
    EXPECT_TRUE(a.test(3));
    EXPECT_TRUE(a.test(66));
    EXPECT_FALSE(a.test(65));
    EXPECT_FALSE(a.test(70));
    EXPECT_EQ(uint64_t{1} << 2, a.word(1));
    b.set(66);
    EXPECT_TRUE(a.intersects(b));
    EXPECT_TRUE(b.subset_of(a));
    EXPECT_FALSE(a.subset_of(b));
    b |= a;
    EXPECT_TRUE(b == a);
    member_mask c(70);
    c.set(69);
    EXPECT_FALSE(c.intersects(a));
    c &= a;
    EXPECT_FALSE(c.any());
    a.reset(66);
    EXPECT_FALSE(a.test(66));
    EXPECT_TRUE(a.any());
}

TEST(member_mask, a_peers_bits_past_the_group_are_ignored)
{
    /* one read per word, and what lies past row 69 is dropped */
    const std::vector<int64_t> row = {0, -1};   /* all of word 1 set */
    member_mask m(70);
    int reads = 0;
    m.load([&](size_t i) {
        ++reads;
        return row[i];
    });
    EXPECT_EQ(2, reads);
    EXPECT_EQ((uint64_t{1} << 6) - 1, m.word(1));
    for (int r = 64; r < 70; ++r) {
        EXPECT_TRUE(m.test(r)) << r;
    }
    EXPECT_FALSE(m.test(63));
    member_mask full(64);
    full.load([](size_t) { return int64_t{-1}; });
    EXPECT_EQ(~uint64_t{0}, full.word(0));
}

TEST(member_mask, survivors_and_leader_over_two_words)
{
    tc::view creation;
    creation.epoch = 1;
    for (int r = 0; r < 70; ++r) {
        creation.members.push_back(100 + r);
    }
    creation.senders = creation.members;
    tc::view_map map(creation, 100);
    EXPECT_EQ(2u, map.mask().word_count());
    EXPECT_EQ((uint64_t{1} << 6) - 1, map.mask().word(1));
    member_mask suspected(70);
    suspected.set(66);
    suspected.set(0);
    EXPECT_EQ(1, map.leader(suspected));
    const auto rows = map.survivors(suspected);
    EXPECT_EQ(68u, rows.size());
    EXPECT_EQ(rows.end(), std::find(rows.begin(), rows.end(), 66));
    map.enter(map.next_view(rows));
    EXPECT_FALSE(map.mask().test(66));
    EXPECT_TRUE(map.mask().test(69));
    EXPECT_FALSE(suspected.subset_of(map.mask()));
    EXPECT_FALSE(suspected.intersects(map.mask()));
}

} // namespace
