/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Replication groups across real processes under twochains-run, over real
 * transports, through the C API (test/helpers/group_probe.c). Every member must
 * deliver the identical sequence: equal hash chains, exact counts.
 */
#include "common.h"

#include <map>
#include <regex>
#include <set>
#include <string>

namespace {

struct probe_run {
    int                                     exit_code;
    std::string                             output;
    std::map<int, std::set<std::string>>    chains;   /* group -> distinct chains */
    std::map<int, int>                      reports;  /* group -> members reporting */
};

probe_run run_probe(const std::string &tls, int n, const std::string &args)
{
    auto r = tc_test::run_command("UCX_TLS=" + tls + " " +
                                  tc_test::build_path("src/tools/twochains-run") + " -n " +
                                  std::to_string(n) + " --timeout 120 -- " +
                                  tc_test::build_path("test/helpers/group_probe") + " " + args);
    probe_run out{r.exit_code, r.output, {}, {}};
    std::regex line(R"(\[\d+\] group (\d+) chain ([0-9a-f]+) count (\d+) bad 0)");
    for (std::sregex_iterator it(r.output.begin(), r.output.end(), line), end; it != end; ++it) {
        int g = std::stoi((*it)[1]);
        out.chains[g].insert((*it)[2].str() + "/" + (*it)[3].str());
        out.reports[g]++;
    }
    return out;
}

class group_procs : public ::testing::TestWithParam<std::string> {};

TEST_P(group_procs, three_members_all_senders)
{
    const int count = GetParam().starts_with("tcp") ? 3000 : 33334; /* 100k total on shm */
    auto r = run_probe(GetParam(), 3, "-c " + std::to_string(count) + " -s 512");
    ASSERT_EQ(0, r.exit_code) << r.output;
    EXPECT_EQ(3, r.reports[0]) << r.output;
    EXPECT_EQ(1u, r.chains[0].size()) << "members delivered different sequences:\n" << r.output;
}

TEST_P(group_procs, five_members_one_sender)
{
    auto r = run_probe(GetParam(), 5, "-o -c 2000 -s 128 -w 8");
    ASSERT_EQ(0, r.exit_code) << r.output;
    EXPECT_EQ(5, r.reports[0]) << r.output;
    EXPECT_EQ(1u, r.chains[0].size()) << r.output;
}

TEST_P(group_procs, two_groups_share_one_worker)
{
    auto r = run_probe(GetParam(), 3, "-2 -c 1000 -s 64");
    ASSERT_EQ(0, r.exit_code) << r.output;
    EXPECT_EQ(2, r.reports[0]) << r.output;  /* ranks 0, 1 */
    EXPECT_EQ(2, r.reports[1]) << r.output;  /* ranks 1, 2 */
    EXPECT_EQ(1u, r.chains[0].size()) << r.output;
    EXPECT_EQ(1u, r.chains[1].size()) << r.output;
}

TEST_P(group_procs, mixed_smc_and_rdmc_messages_in_one_order)
{
    const bool tcp = GetParam().starts_with("tcp");
    for (int n : {3, 5}) {
        auto r = run_probe(GetParam(), n,
                           tcp ? "-c 60 -s 256 -L 300000" : "-c 100 -s 256 -L 4000000");
        ASSERT_EQ(0, r.exit_code) << r.output;
        EXPECT_EQ(n, r.reports[0]) << r.output;
        EXPECT_EQ(1u, r.chains[0].size()) << "members delivered different sequences:\n" << r.output;
    }
}

/* The C span callback: the same checks (every byte, per-sender order, one
 * sequence at all members), large messages among small ones, and calls that
 * carry more than one message each. */
TEST_P(group_procs, span_delivery_through_the_c_api)
{
    const bool tcp = GetParam().starts_with("tcp");
    auto r = run_probe(GetParam(), 3, tcp ? "-S -c 2000 -s 256 -L 300000" :
                                            "-S -c 20000 -s 256 -L 400000");
    ASSERT_EQ(0, r.exit_code) << r.output;
    EXPECT_EQ(3, r.reports[0]) << r.output;
    EXPECT_EQ(1u, r.chains[0].size()) << "members delivered different sequences:\n" << r.output;
    std::regex spans(R"(\[\d+\] group 0 spans (\d+) longest (\d+))");
    int seen = 0;
    for (std::sregex_iterator it(r.output.begin(), r.output.end(), spans), end; it != end;
         ++it, ++seen) {
        const uint64_t count = tcp ? 6000 : 60000;
        EXPECT_LT(std::stoull((*it)[1]), count) << "one call per message:\n" << r.output;
        EXPECT_GT(std::stoull((*it)[2]), 1u) << r.output;
        EXPECT_LE(std::stoull((*it)[2]), 64u) << r.output;
    }
    EXPECT_EQ(3, seen) << r.output;
}

/* Shards: 16 groups over the same 3 processes and one engine each; 15 idle
 * (quiet) while group 0 streams, then each sends its own: every group one
 * sequence at every member, exact counts and bytes. */
TEST_P(group_procs, sixteen_shards_quiet_ones_wake)
{
    const bool tcp = GetParam().starts_with("tcp");
    auto r = run_probe(GetParam(), 3, tcp ? "-G 16 -c 1000 -s 128" : "-G 16 -c 10000 -s 128");
    ASSERT_EQ(0, r.exit_code) << r.output;
    for (int g = 0; g < 16; ++g) {
        EXPECT_EQ(3, r.reports[g]) << "group " << g << ":\n" << r.output;
        EXPECT_EQ(1u, r.chains[g].size()) << "group " << g << " sequences differ:\n" << r.output;
    }
}

TEST(group_procs_rdmc, messages_up_to_64_mib_among_small_ones)
{
    /* -c 3 -L 64 MiB: message k = 2 of each of 3 senders is large, up to 64 MiB */
    auto r = run_probe("posix,self", 3, "-c 3 -s 64 -L 67108864");
    ASSERT_EQ(0, r.exit_code) << r.output;
    EXPECT_EQ(3, r.reports[0]) << r.output;
    EXPECT_EQ(1u, r.chains[0].size()) << r.output;
}

TEST_P(group_procs, perf_shapes_print_sane_json)
{
    for (std::string shape : {"smc_bw", "smc_lat"}) {
        auto r = tc_test::run_command("UCX_TLS=" + GetParam() + " " +
                                      tc_test::build_path("src/tools/twochains-run") +
                                      " -n 3 --timeout 60 -- " +
                                      tc_test::build_path("src/tools/twochains-perf") + " -t " +
                                      shape + " -s 100 -n 200 -w 10 --json");
        ASSERT_EQ(0, r.exit_code) << r.output;
        std::smatch m;
        std::regex json(R"(\[0\] \{"shape":")" + shape +
                        R"(","mode":"urgent","transport":"[^"]+","write_lane":"(rma|am) [^"]+",)"
                        R"("members":3,.*"puts_per_msg":([0-9.]+),)");
        ASSERT_TRUE(std::regex_search(r.output, m, json)) << r.output;
        /* UCP emulates puts over tcp: the group writes over active messages */
        EXPECT_EQ(GetParam().rfind("tcp", 0) == 0 ? "am" : "rma", m[1].str()) << r.output;
        /* at least the urgent protocol's N^2+N-2 = 10 per message */
        EXPECT_GE(std::stod(m[2]), 10.0) << r.output;
        if (shape == "smc_lat") {
            std::regex lat(R"("lat_avg_us":([0-9.]+),"lat_p50_us":([0-9.]+),"lat_p999_us":([0-9.]+))");
            ASSERT_TRUE(std::regex_search(r.output, m, lat)) << r.output;
            EXPECT_GT(std::stod(m[1]), 0.0);
            EXPECT_LE(std::stod(m[2]), std::stod(m[3]));
        } else {
            std::regex rate(R"("msg_rate":([0-9.]+))");
            ASSERT_TRUE(std::regex_search(r.output, m, rate)) << r.output;
            EXPECT_GT(std::stod(m[1]), 0.0);
        }
    }
}

TEST_P(group_procs, perf_inproc_runs_every_member_in_one_process)
{
    auto r = tc_test::run_command("UCX_TLS=" + GetParam() + " " +
                                  tc_test::build_path("src/tools/twochains-perf") +
                                  " --inproc --members 3 -t smc_bw -s 64 -n 300 -w 10 --json");
    ASSERT_EQ(0, r.exit_code) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("\"members\":3,\"senders\":3")) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("\"messages\":900,")) << r.output;
}

INSTANTIATE_TEST_SUITE_P(tl, group_procs, ::testing::Values("posix,self", "tcp,self"),
                         [](const auto &param_info) {
                             return param_info.param.substr(0, param_info.param.find(','));
                         });

} // namespace
