/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * A group of more than 64 members: 70 real processes (one group member
 * each, test/helpers/group_fault_probe), over posix and over tcp: one
 * stream, a kill past 64, and a joiner that enters through rank 66. Rows 64-69
 * live in the second word of every membership mask, so a failure among
 * them is only seen, spread and agreed on through that word.
 *
 * 70 processes share 2 cores here: heartbeats every 200 ms (70 x 69 puts
 * each round; over tcp each is a system call at both ends) and an 8 s
 * suspicion keep the detector quiet while every process waits for a core;
 * the default (adaptive) wait policy lets idle members block.
 */
#include "common.h"
#include "group/probe_cluster.h"

#include <chrono>
#include <csignal>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using namespace tc_test::probe;

constexpr int kMembers = 70;

std::vector<std::pair<int, std::string>> many_member_env()
{
    std::vector<std::pair<int, std::string>> env;
    for (int r = 0; r < kMembers; ++r) {
        for (const char *kv : {"UCX_TC_HEARTBEAT_INTERVAL=200ms", "UCX_TC_SUSPECT_TIMEOUT=8s",
                               "UCX_TC_BOOTSTRAP_TIMEOUT=60s"}) {
            env.emplace_back(r, kv);
        }
    }
    return env;
}

/* what group_fault_probe sends: message k of rank r has 1 + k % max bytes,
 * byte i being (r * 31 + k * 7 + i) mod 256 */
uint64_t expected_sum(const std::vector<int> &ranks, long count, long max)
{
    uint64_t sum = 0;
    for (int r : ranks) {
        for (long k = 0; k < count; ++k) {
            for (long i = 0; i < 1 + k % max; ++i) {
                sum += static_cast<uint8_t>(r * 31 + k * 7 + i);
            }
        }
    }
    return sum;
}

uint64_t sum_of(const std::string &text)
{
    std::smatch m;
    std::regex sum(R"(result chain [0-9a-f]+ count \d+ .* status Success sum (\d+))");
    return std::regex_search(text, m, sum) ? std::stoull(m[1]) : 0;
}

std::string all_members_view(int epoch, int n, int without = -1)
{
    std::string v = std::to_string(epoch) + " ";
    for (int r = 0; r < n; ++r) {
        if (r != without) {
            v += (v.back() == ' ' ? "" : ",") + std::to_string(r);
        }
    }
    return v;
}

class group_many : public ::testing::TestWithParam<std::string> {};

/* Every member sends 60 messages (batched SMC): each delivers all 4 200 in
 * one order (identical hash chains), every byte (exact sum), in one view. */
TEST_P(group_many, seventy_members_deliver_one_stream_in_total_order)
{
    constexpr long kCount = 60, kMax = 64;
    const auto start = std::chrono::steady_clock::now();
    cluster c(kMembers, GetParam(), "-b -c " + std::to_string(kCount) + " -r 200 -s 64",
              many_member_env());
    c.wait_all(120s);
    const uint64_t sum = expected_sum(all_ranks(kMembers), kCount, kMax);
    std::string chain;
    for (int r = 0; r < kMembers; ++r) {
        SCOPED_TRACE("rank " + std::to_string(r));
        const auto &m = c.at(r);
        ASSERT_EQ(0, m.exit_code) << c.all_output();
        const outcome o = parse(m.text);
        ASSERT_FALSE(o.chain.empty()) << m.text;
        chain = chain.empty() ? o.chain : chain;
        EXPECT_EQ(chain, o.chain) << "members delivered different sequences";
        EXPECT_EQ(static_cast<unsigned long>(kMembers * kCount), o.count);
        EXPECT_EQ(sum, sum_of(m.text));
        EXPECT_EQ(all_members_view(1, kMembers), o.final_view);
        EXPECT_EQ(0u, o.trimmed);
    }
    std::printf("70 members over %s: %.1f s\n", GetParam().c_str(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

/* Rank 66 (bit 2 of the masks' second word) is killed mid-stream: the 69
 * others suspect it, agree on its leaving, install view 2 without it, and
 * report one hash chain (deliveries and views). */
TEST_P(group_many, member_past_64_killed_the_others_agree_on_view_and_sequence)
{
    constexpr int kVictim = 66;
    const auto start = std::chrono::steady_clock::now();
    cluster c(kMembers, GetParam(), "-b -c 200 -r 50 -s 64", many_member_env());
    ASSERT_TRUE(c.wait_for(all_ranks(kMembers), "ready", 60s)) << c.all_output();
    const auto ready = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(500ms);
    c.signal(kVictim, SIGKILL);
    std::vector<int> survivors = all_ranks(kMembers);
    survivors.erase(survivors.begin() + kVictim);
    const bool view_2 = c.wait_for(survivors, "view 2 ", 60s);
    const auto installed = std::chrono::steady_clock::now();
    c.wait_all(120s);
    const auto seconds = [](auto from, auto to) {
        return std::chrono::duration<double>(to - from).count();
    };
    std::printf("created in %.1f s; view 2 at every survivor %.1f s after the kill; "
                "done %.1f s later\n", seconds(start, ready), seconds(ready, installed) - 0.5,
                seconds(installed, std::chrono::steady_clock::now()));
    EXPECT_TRUE(view_2) << c.all_output();
    expect_survivors_agree(c, kMembers, {kVictim});
    for (int r = 0; r < kMembers; ++r) {
        if (r != kVictim) {
            EXPECT_EQ(all_members_view(2, kMembers, kVictim), parse(c.at(r).text).final_view)
                    << "rank " << r;
        }
    }
    std::printf("70 members over %s, one killed: %.1f s\n", GetParam().c_str(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

/* A process outside the job joins the 70 through rank 66's join port (its
 * sponsor's row and the joiner's, 70, are in the masks' second word): the
 * join reply carries the 70-member list, and afterwards all 71 deliver the
 * same sequence (views included) and the joiner's count includes the
 * prefix it received as state. */
TEST_P(group_many, joiner_enters_seventy_members_through_a_sponsor_past_64)
{
    constexpr int kSponsor = 66;
    const int base = free_port_base(kMembers);
    ASSERT_NE(0, base);
    auto env = many_member_env();
    cluster c(kMembers, GetParam(), "-b -c 400 -r 50 -s 64 -J " + std::to_string(base), env);
    ASSERT_TRUE(c.wait_for(all_ranks(kMembers), "ready", 60s)) << c.all_output();
    const int j = c.start_joiner("-b -c 50 -r 50 -s 64 -j 127.0.0.1:" +
                                 std::to_string(base + kSponsor),
                                 {"UCX_TC_HEARTBEAT_INTERVAL=200ms", "UCX_TC_SUSPECT_TIMEOUT=8s",
                                  "UCX_TC_BOOTSTRAP_TIMEOUT=60s"});
    std::vector<int> everyone = all_ranks(kMembers);
    everyone.push_back(j);
    const std::string view_2 = all_members_view(2, kMembers + 1);
    EXPECT_TRUE(c.wait_for(everyone, "view " + view_2, 90s)) << c.all_output();
    c.wait_all(180s);
    EXPECT_NE(std::string::npos, c.at(j).text.find("state received")) << c.at(j).text;
    std::string chain;
    for (int r : everyone) {
        SCOPED_TRACE("rank " + std::to_string(r));
        ASSERT_EQ(0, c.at(r).exit_code) << c.at(r).text;
        const outcome o = parse(c.at(r).text);
        EXPECT_EQ(view_2, o.final_view);
        EXPECT_EQ(0u, o.trimmed);
        chain = chain.empty() ? o.chain : chain;
        EXPECT_EQ(chain, o.chain) << "members and joiner delivered different sequences";
        EXPECT_EQ(static_cast<unsigned long>(kMembers * 400 + 50), o.count);
    }
}

INSTANTIATE_TEST_SUITE_P(tl, group_many, ::testing::Values("posix,self", "tcp,self"),
                         [](const auto &param_info) {
                             return param_info.param.substr(0, param_info.param.find(','));
                         });

} // namespace
