/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The mailbox half of the hostile-member harness: in a 4-rank mailbox with
 * the defaults, rank 3 turns hostile at a moment the seed picks and puts
 * randomly edited frames into every ring it was granted, any slot, ignoring
 * credits (test/helpers/ifunc_hostile.c). The honest receivers must run
 * every honest frame exactly once (exact call count and sum), reject what
 * the hostile one wrote (counted), stay bounded (max RSS) and finish (the
 * launcher's timeout catches a hang).
 *
 * Seeds: TC_HOSTILE_SEEDS per transport (4 by default: make check; 100 in
 * make check-long).
 */
#include "common.h"

#include <cstdlib>
#include <regex>
#include <string>
#include <tuple>

namespace {

using hostile_case = std::tuple<std::string, int>;

class ifunc_hostile : public ::testing::TestWithParam<hostile_case> {};

TEST_P(ifunc_hostile, honest_frames_run_exactly_once_beside_a_hostile_rank)
{
    const auto &[tls, seed] = GetParam();
    auto r = tc_test::run_command("UCX_TLS=" + tls + " " +
                                  tc_test::build_path("src/tools/twochains-run") +
                                  " -n 4 --timeout 120 -- " +
                                  tc_test::build_path("test/helpers/ifunc_hostile") + " " +
                                  std::to_string(seed) + " 60");
    ASSERT_EQ(0, r.exit_code) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("ifunc_hostile rank 3: hostile from frame"))
            << r.output;
    uint64_t rejected = 0;
    for (int rank = 0; rank <= 2; ++rank) {
        std::smatch m;
        const std::regex line("ifunc_hostile rank " + std::to_string(rank) +
                              R"(: ran (\d+) \(expected (\d+)\) sum (-?\d+) \(expected (-?\d+)\) )"
                              R"(rejected (\d+) max rss (\d+) KiB)");
        ASSERT_TRUE(std::regex_search(r.output, m, line)) << r.output;
        EXPECT_EQ(m[1], m[2]) << r.output;
        EXPECT_EQ(m[3], m[4]) << r.output;
        EXPECT_LT(std::stol(m[6]), 512 * 1024) << r.output;
        rejected += std::stoull(m[5]);
        EXPECT_NE(std::string::npos,
                  r.output.find("ifunc_hostile rank " + std::to_string(rank) + ": OK"))
                << r.output;
    }
    /* what it wrote was refused somewhere, and said so */
    EXPECT_GT(rejected, 0u) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("from rank 3")) << r.output;
}

std::vector<hostile_case> hostile_cases()
{
    const char *env = std::getenv("TC_HOSTILE_SEEDS");
    const int seeds = env ? std::max(1, std::atoi(env)) : 4;
    std::vector<hostile_case> v;
    for (const char *tls : {"posix,self", "tcp,self"}) {
        for (int seed = 1; seed <= seeds; ++seed) {
            v.emplace_back(tls, seed);
        }
    }
    return v;
}

INSTANTIATE_TEST_SUITE_P(seeds, ifunc_hostile, ::testing::ValuesIn(hostile_cases()),
                         [](const auto &param_info) {
                             const std::string tls = std::get<0>(param_info.param);
                             return tls.substr(0, tls.find(',')) + "_seed" +
                                    std::to_string(std::get<1>(param_info.param));
                         });

} // namespace
