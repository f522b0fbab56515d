/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The checks of what another member wrote into our memory, as the
 * production code runs them (the functions the fuzz targets in test/fuzz
 * drive): an SMC slot header, an RDMC descriptor, a leader's view-change
 * decision, the view exchange's lengths. Each case is a value an honest
 * member writes (taken) beside the nearest one it cannot (refused); the
 * refused ones below are what the fuzzers found accepted before.
 */
#include "common.h"

#include "large/large.hpp"
#include "membership/view_change.hpp"
#include "membership/view_exchange.hpp"
#include "smc/receiver.hpp"

#include <climits>
#include <vector>

namespace {

using tc::smc::check_slot_header;
using tc::smc::rdmc_descriptor;
using tc::smc::slot_header;
using tc::smc::slot_limits;

/* index 10 expected, the sender says it sent 40, max_payload 1024, a
 * window of 32, with RDMC */
constexpr slot_limits kLimits{10, 40, 1024, 32, true};

const char *check(const slot_header &h, const slot_limits &l = kLimits)
{
    int64_t count = -1;
    return check_slot_header(h, l, count);
}

TEST(peer_checks, honest_slot_headers_are_taken)
{
    int64_t count = -1;
    EXPECT_EQ(nullptr, check_slot_header({100, 0, 10}, kLimits, count));
    EXPECT_EQ(1, count);
    EXPECT_EQ(nullptr, check({100, tc::smc::SLOT_FLAG_JAM, 10}));
    EXPECT_EQ(nullptr, check({sizeof(rdmc_descriptor), tc::smc::SLOT_FLAG_RDMC, 10}));
    EXPECT_EQ(nullptr, check({sizeof(rdmc_descriptor),
                              tc::smc::SLOT_FLAG_RDMC | tc::smc::SLOT_FLAG_JAM, 10}));
    EXPECT_EQ(nullptr, check_slot_header({5, tc::smc::SLOT_FLAG_NULL, 10}, kLimits, count));
    EXPECT_EQ(5, count);
}

TEST(peer_checks, a_null_run_that_is_also_a_message_is_refused)
{
    /* accepted before: the receiver then accepted an RDMC transfer for a
     * slot delivery skips, and held its buffer for good */
    EXPECT_NE(nullptr, check({sizeof(rdmc_descriptor),
                              tc::smc::SLOT_FLAG_NULL | tc::smc::SLOT_FLAG_RDMC, 10}));
    EXPECT_NE(nullptr, check({1, tc::smc::SLOT_FLAG_NULL | tc::smc::SLOT_FLAG_JAM, 10}));
}

TEST(peer_checks, a_slot_with_flags_no_sender_writes_is_refused)
{
    EXPECT_NE(nullptr, check({100, 1u << 7, 10}));
    EXPECT_NE(nullptr, check({100, 0x80000000u | tc::smc::SLOT_FLAG_JAM, 10}));
}

TEST(peer_checks, an_rdmc_slot_in_a_group_without_rdmc_is_refused)
{
    slot_limits no_rdmc = kLimits;
    no_rdmc.large       = false;
    EXPECT_EQ(nullptr, check({100, 0, 10}, no_rdmc));
    /* accepted before, and delivered as a 16-byte message */
    EXPECT_NE(nullptr, check({sizeof(rdmc_descriptor), tc::smc::SLOT_FLAG_RDMC, 10}, no_rdmc));
}

TEST(peer_checks, slot_headers_out_of_range_are_refused)
{
    EXPECT_NE(nullptr, check({100, 0, 11}));                         /* another index */
    EXPECT_NE(nullptr, check({1025, 0, 10}));                        /* past max_payload */
    EXPECT_NE(nullptr, check({64, tc::smc::SLOT_FLAG_RDMC, 10}));    /* not a descriptor */
    EXPECT_NE(nullptr, check({0, tc::smc::SLOT_FLAG_NULL, 10}));     /* a run of nothing */
    EXPECT_NE(nullptr, check({33, tc::smc::SLOT_FLAG_NULL, 10}));    /* past the window */
    EXPECT_NE(nullptr, check({31, tc::smc::SLOT_FLAG_NULL, 10}));    /* past what it sent */
    EXPECT_EQ(nullptr, check({30, tc::smc::SLOT_FLAG_NULL, 10}));
}

TEST(peer_checks, a_transfer_an_earlier_slot_named_is_refused)
{
    /* transfers 0..4 taken, 5 accepted, a root with 3 buffers */
    const int64_t taken = 5, accepted = 5, ahead = 3;
    EXPECT_EQ(nullptr, tc::check_rdmc_descriptor({64, 5}, 1 << 20, taken, accepted, ahead));
    EXPECT_EQ(nullptr, tc::check_rdmc_descriptor({64, 7}, 1 << 20, taken, accepted, ahead));
    /* accepted before: two slots naming one transfer were delivered, the
     * second as an empty message, or it waited for data that had gone */
    EXPECT_NE(nullptr, tc::check_rdmc_descriptor({64, 4}, 1 << 20, taken, accepted, ahead));
    EXPECT_NE(nullptr, tc::check_rdmc_descriptor({64, 8}, 1 << 20, taken, accepted, ahead));
    EXPECT_NE(nullptr, tc::check_rdmc_descriptor({0, 5}, 1 << 20, taken, accepted, ahead));
    EXPECT_NE(nullptr,
              tc::check_rdmc_descriptor({(1 << 20) + 1, 5}, 1 << 20, taken, accepted, ahead));
    EXPECT_NE(nullptr, tc::check_rdmc_descriptor({64, -1}, 1 << 20, 0, 0, ahead));
}

/* a view of rows 0..4 of a creation view of 6 (row 5 left earlier), seen
 * by row 1, which received 10 of each of 3 sender columns */
struct decision_case {
    tc::member_mask      view{6};
    std::vector<int64_t> received{10, 10, 10};
    tc::membership::trim_decision d;

    decision_case()
    {
        for (int r = 0; r < 5; ++r) {
            view.set(r);
        }
        d.trim    = {10, 7, 0};
        d.leaving = tc::member_mask(6);
    }
    const char *check() const
    {
        return tc::membership::check_decision(d, view, 1, received);
    }
};

TEST(peer_checks, a_decision_a_leader_could_make_is_taken)
{
    decision_case c;
    c.d.leaving.set(3);
    c.d.leaving.set(4);   /* 3 of 5 stay */
    c.d.admit = 1 + 2;
    EXPECT_EQ(nullptr, c.check());
}

TEST(peer_checks, a_decision_that_leaves_a_minority_is_refused)
{
    /* accepted before: every follower that found itself leaving went, and
     * the leader's minority installed the next view */
    decision_case c;
    for (int r : {1, 2, 3}) {
        c.d.leaving.set(r);   /* 2 of 5 stay */
    }
    EXPECT_NE(nullptr, c.check());
    decision_case half;
    half.view.reset(4);   /* 4 members, 2 leave: half is not more than half */
    half.d.leaving.set(2);
    half.d.leaving.set(3);
    EXPECT_NE(nullptr, half.check());
}

TEST(peer_checks, decisions_out_of_range_are_refused)
{
    decision_case c;
    c.d.leaving.set(5);   /* not in the view */
    EXPECT_NE(nullptr, c.check());
    c         = decision_case();
    c.d.admit = 1 + 5;    /* through a row outside the view */
    EXPECT_NE(nullptr, c.check());
    c         = decision_case();
    c.d.admit = 7;        /* past the rows */
    EXPECT_NE(nullptr, c.check());
    c = decision_case();
    c.d.leaving.set(2);
    c.d.admit = 1 + 2;    /* through a member that leaves */
    EXPECT_NE(nullptr, c.check());
    c            = decision_case();
    c.d.trim[1] = -1;
    EXPECT_NE(nullptr, c.check());
    c            = decision_case();
    c.d.trim[2] = 11;     /* past what row 1 received */
    EXPECT_NE(nullptr, c.check());
    c.d.leaving.set(1);   /* unless row 1 leaves */
    EXPECT_EQ(nullptr, c.check());
}

TEST(peer_checks, view_exchange_lengths_are_bounded_and_their_sum_checked)
{
    std::vector<size_t> lens(3);
    size_t total = 0;
    const std::vector<int64_t> ok{8192, 0, 100};
    EXPECT_EQ(-1, tc::membership::check_round_lengths(ok, 8192, lens.data(), total));
    EXPECT_EQ(8292u, total);
    EXPECT_EQ(100u, lens[2]);
    const std::vector<int64_t> past{8192, 8193, 1};
    EXPECT_EQ(1, tc::membership::check_round_lengths(past, 8192, lens.data(), total));
    const std::vector<int64_t> negative{1, 1, -1};
    EXPECT_EQ(2, tc::membership::check_round_lengths(negative, 8192, lens.data(), total));
    const std::vector<int64_t> wraps{INT64_MAX, INT64_MAX, 2};
    EXPECT_EQ(2, tc::membership::check_round_lengths(wraps, SIZE_MAX, lens.data(), total));
}

} // namespace
