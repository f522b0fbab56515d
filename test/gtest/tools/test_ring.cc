/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The put ring: 3 real processes under twochains-run, real UCX transports,
 * every byte of every hop checked by the ring program itself.
 */
#include "common.h"

#include <string>

namespace {

class put_ring : public ::testing::TestWithParam<std::string> {
protected:
    tc_test::run_result run(int n, const std::string &args)
    {
        return tc_test::run_command("UCX_TLS=" + GetParam() + " " +
                                    tc_test::build_path("src/tools/twochains-run") + " -n " +
                                    std::to_string(n) + " --timeout 60 -- " +
                                    tc_test::build_path("src/tools/twochains-ring") + " " + args);
    }

    std::string transport_prefix() const { return GetParam().substr(0, GetParam().find(',')); }
};

TEST_P(put_ring, three_processes_verify_every_hop)
{
    auto r = run(3, "-s 256 -n 300 -w 10 --json");
    ASSERT_EQ(0, r.exit_code) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("[0] ring: 3 ranks, 256 B, 300 iterations"))
            << r.output;
    EXPECT_NE(std::string::npos, r.output.find("transport " + transport_prefix())) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("all 300 messages verified")) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("\"shape\":\"put_ring\",\"members\":3")) << r.output;
}

TEST_P(put_ring, large_messages_and_two_ranks)
{
    auto r = run(2, "-s 65536 -n 50 -w 5");
    ASSERT_EQ(0, r.exit_code) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("all 50 messages verified")) << r.output;
}

TEST_P(put_ring, corruption_is_detected)
{
    auto r = run(3, "-s 128 -n 20 -w 0 --corrupt-at-rank 1");
    EXPECT_NE(0, r.exit_code) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("rank 2: message 1 byte 127")) << r.output;
}

INSTANTIATE_TEST_SUITE_P(tl, put_ring, ::testing::Values("posix,self", "tcp,self"),
                         [](const auto &param_info) {
                             std::string s = param_info.param;
                             return s.substr(0, s.find(','));
                         });

} // namespace
