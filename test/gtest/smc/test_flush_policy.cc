/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The batched sender's flush policy (src/smc/flush_policy.hpp) as the pure
 * function it is: every rule, and the order in which they apply.
 */
#include "smc/flush_policy.hpp"

#include <gtest/gtest.h>

using tc::smc::flush_cause;
using tc::smc::flush_decision;
using tc::smc::flush_inputs;

namespace {

/* 3 pending of B = 8, T = 50 us, oldest waited 10 us, a commit since the
 * previous pass, nothing requested: wait */
flush_inputs waiting()
{
    return {3, 8, 50e-6, 10e-6, false, false};
}

} // namespace

TEST(flush_policy, a_partial_young_batch_with_commits_waits)
{
    EXPECT_FALSE(flush_decision(waiting()).has_value());
}

TEST(flush_policy, a_request_pushes_at_once)
{
    auto in      = waiting();
    in.requested = true;
    EXPECT_EQ(flush_cause::explicit_call, flush_decision(in));
}

TEST(flush_policy, b_pending_push_as_full)
{
    auto in    = waiting();
    in.pending = 8;
    EXPECT_EQ(flush_cause::full, flush_decision(in));
    in.pending = 9;
    EXPECT_EQ(flush_cause::full, flush_decision(in));
    in.pending = 7;
    EXPECT_FALSE(flush_decision(in).has_value());
}

TEST(flush_policy, the_oldest_waiting_t_pushes_on_the_deadline)
{
    auto in            = waiting();
    in.oldest_waited_s = 50e-6;
    EXPECT_EQ(flush_cause::deadline, flush_decision(in));
    in.oldest_waited_s = 49e-6;
    EXPECT_FALSE(flush_decision(in).has_value());
}

TEST(flush_policy, a_zero_deadline_pushes_on_every_pass)
{
    auto in       = waiting();
    in.deadline_s = 0;
    in.oldest_waited_s = 0;
    EXPECT_EQ(flush_cause::deadline, flush_decision(in));
}

TEST(flush_policy, no_commit_since_the_previous_pass_pushes_as_idle)
{
    auto in = waiting();
    in.idle = true;
    EXPECT_EQ(flush_cause::idle, flush_decision(in));
}

TEST(flush_policy, the_rules_apply_in_order)
{
    /* everything true at once: the request wins, then full, then deadline */
    flush_inputs in{8, 8, 50e-6, 60e-6, true, true};
    EXPECT_EQ(flush_cause::explicit_call, flush_decision(in));
    in.requested = false;
    EXPECT_EQ(flush_cause::full, flush_decision(in));
    in.pending = 1;
    EXPECT_EQ(flush_cause::deadline, flush_decision(in));
    in.oldest_waited_s = 0;
    EXPECT_EQ(flush_cause::idle, flush_decision(in));
}
