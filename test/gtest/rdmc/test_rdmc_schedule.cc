/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * RDMC schedules, without a network: the simulator runs every kind over a
 * sweep of member counts (powers of two and not, up to 1024), roots and
 * block counts (1, 7, 1000, 9973, ...), and checks the step-count formulas.
 * The simulator itself is checked against schedules broken on purpose.
 */
#include "common.h"

#include "rdmc/schedule.hpp"

#include <chrono>
#include <cstdio>

namespace {

using namespace tc::rdmc;

const schedule_kind kAllKinds[] = {schedule_kind::binomial, schedule_kind::sequential,
                                   schedule_kind::chain, schedule_kind::tree};

int ceil_log2(int n)
{
    int l = 0;
    while ((1 << l) < n) {
        ++l;
    }
    return l;
}

void expect_valid(schedule_kind kind, int n, int root, int64_t k)
{
    auto s = schedule::create(kind, n, root, k);
    ASSERT_TRUE(s) << schedule_name(kind) << " n=" << n << " k=" << k;
    /* small cases: also ask every member about every step */
    const bool exhaustive = static_cast<int64_t>(n) * s->steps() <= 200000;
    auto r = schedule_check(*s, exhaustive);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(schedule_steps(kind, n, k), r.steps);
    EXPECT_EQ(static_cast<int64_t>(n - 1) * k, r.transfers);
}

TEST(rdmc_schedule, step_count_formulas)
{
    for (int n : {2, 3, 4, 5, 7, 8, 9, 100, 1024}) {
        const int L = ceil_log2(n);
        for (int64_t k : {1, 7, 1000}) {
            EXPECT_EQ(k + L - 1, schedule_steps(schedule_kind::binomial, n, k)) << n;
            EXPECT_EQ((n - 1) * k, schedule_steps(schedule_kind::sequential, n, k));
            EXPECT_EQ(k + n - 2, schedule_steps(schedule_kind::chain, n, k));
            EXPECT_EQ(L * k, schedule_steps(schedule_kind::tree, n, k));
        }
    }
    EXPECT_EQ(0, schedule_steps(schedule_kind::binomial, 1, 5));
}

TEST(rdmc_schedule, every_kind_small_members_every_root)
{
    for (auto kind : kAllKinds) {
        for (int n = 1; n <= 20; ++n) {
            for (int root = 0; root < n; root += (n > 6 ? 5 : 1)) {
                for (int64_t k : {1, 2, 3, 5, 7, 13, 64}) {
                    SCOPED_TRACE(std::string(schedule_name(kind)) + " n=" + std::to_string(n) +
                                 " root=" + std::to_string(root) + " k=" + std::to_string(k));
                    expect_valid(kind, n, root, k);
                    if (HasFatalFailure()) {
                        return;
                    }
                }
            }
        }
    }
}

TEST(rdmc_schedule, sweep_up_to_1024_members_and_9973_blocks)
{
    const auto t0 = std::chrono::steady_clock::now();
    struct point {
        int     n;
        int64_t k;
    };
    std::vector<point> points;
    for (int n : {31, 33, 63, 64, 65, 100, 127, 128, 129, 255, 257, 511, 512, 513, 1000, 1023,
                  1024}) {
        for (int64_t k : {1, 7, 64}) {
            points.push_back({n, k});
        }
    }
    for (int n : {2, 3, 5, 8, 12, 17, 33, 100}) {
        points.push_back({n, 1000});
    }
    for (int n : {2, 3, 5, 8, 17}) {
        points.push_back({n, 9973});
    }
    for (const auto &p : points) {
        for (auto kind : kAllKinds) {
            SCOPED_TRACE(std::string(schedule_name(kind)) + " n=" + std::to_string(p.n) +
                         " k=" + std::to_string(p.k));
            expect_valid(kind, p.n, p.n / 3, p.k);
            if (HasFatalFailure()) {
                return;
            }
        }
    }
    /* the largest case the design targets, for the pipeline */
    expect_valid(schedule_kind::binomial, 1000, 999, 1000);
    expect_valid(schedule_kind::binomial, 1024, 0, 10000);
    std::printf("sweep: %zu points x 4 kinds + 2 large binomial cases in %.2f s\n", points.size(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

TEST(rdmc_schedule, binomial_keeps_every_member_busy_in_steady_state)
{
    /* N = 8, k = 64: in steps l .. k-1 every non-root member sends and receives */
    auto s = schedule::create(schedule_kind::binomial, 8, 0, 64);
    for (int64_t step = 3; step < 64; ++step) {
        for (int m = 1; m < 8; ++m) {
            auto a = s->at(m, step);
            EXPECT_TRUE(a.recv.valid()) << "member " << m << " step " << step;
        }
    }
}

/* --- the simulator catches broken schedules ----------------------------- */

/* A schedule given as a table of edges, so that flaws are easy to write. */
class table_schedule : public schedule {
public:
    table_schedule(int n, int64_t k, std::vector<std::vector<transfer_edge>> steps,
                   std::vector<transfer_edge> hidden = {})
        : schedule(schedule_kind::sequential, n, 0, k), table_(std::move(steps)),
          hidden_(std::move(hidden))
    {
        steps_ = static_cast<int64_t>(table_.size());
    }

protected:
    step_actions at_relative(int rel, int64_t step) const override
    {
        step_actions a;
        for (const auto &e : table_[step]) {
            if (e.from == rel) {
                a.send = {e.to, e.block};
            }
            if (e.to == rel) {
                a.recv = {e.from, e.block};
            }
        }
        /* a receive the sender does not know about (step 0 only) */
        for (const auto &e : hidden_) {
            if (step == 0 && e.to == rel) {
                a.recv = {e.from, e.block};
            }
        }
        return a;
    }

    void active_relative(int64_t step, std::vector<int> &rels) const override
    {
        for (const auto &e : table_[step]) {
            rels.push_back(e.from);
        }
    }

private:
    std::vector<std::vector<transfer_edge>> table_;
    std::vector<transfer_edge>              hidden_;
};

TEST(rdmc_schedule, simulator_rejects_broken_schedules)
{
    using steps = std::vector<std::vector<transfer_edge>>;
    /* 3 members, 2 blocks; the valid one: 0->1 b0 | 0->1 b1, 1->2 b0 | 1->2 b1 */
    table_schedule good(3, 2, steps{{{0, 1, 0}}, {{0, 1, 1}, {1, 2, 0}}, {{1, 2, 1}}});
    EXPECT_TRUE(schedule_check(good, true).ok) << schedule_check(good, true).error;

    struct flawed {
        table_schedule s;
        const char     *needle;
    };
    flawed cases[] = {
        {table_schedule(3, 2, steps{{{0, 1, 0}}, {{0, 1, 1}, {1, 2, 0}}, {{1, 2, 0}}}),
         "already has"},
        {table_schedule(3, 2, steps{{{0, 1, 0}}, {{0, 1, 1}, {1, 2, 0}}, {}}), "missing blocks"},
        {table_schedule(3, 2, steps{{{0, 1, 0}}, {{0, 1, 1}, {1, 2, 1}}, {{1, 2, 0}}}),
         "does not have"},
        {table_schedule(3, 2, steps{{{0, 1, 0}}, {{0, 1, 1}, {0, 2, 0}}, {{1, 2, 1}}}),
         "sends twice"},
        {table_schedule(3, 2, steps{{{0, 1, 5}}, {{0, 1, 1}}, {{1, 2, 1}}}), "out of range"},
        {table_schedule(4, 1, steps{{{0, 1, 0}}, {{0, 2, 0}, {1, 2, 0}}, {{0, 3, 0}}}),
         "receives twice"},
        {table_schedule(3, 1, steps{{{0, 1, 0}}, {{0, 2, 0}}}, {{2, 1, 0}}),
         "plan disagrees"},
        {table_schedule(3, 1, steps{{{0, 1, 0}}, {{0, 2, 0}}}, {{1, 2, 0}}), "the step lacks"},
    };
    for (auto &c : cases) {
        auto r = schedule_check(c.s, true);
        EXPECT_FALSE(r.ok) << c.needle;
        EXPECT_NE(std::string::npos, r.error.find(c.needle)) << r.error;
    }
}

TEST(rdmc_schedule, names_parse_back)
{
    for (auto kind : kAllKinds) {
        schedule_kind parsed;
        ASSERT_TRUE(schedule_parse(schedule_name(kind), parsed));
        EXPECT_EQ(kind, parsed);
    }
    schedule_kind k;
    EXPECT_FALSE(schedule_parse("ring", k));
    EXPECT_EQ(nullptr, schedule::create(schedule_kind::binomial, 4, 4, 1));
    EXPECT_EQ(nullptr, schedule::create(schedule_kind::binomial, 4, 0, 0));
}

} // namespace
