/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The RDMC engine across real processes under twochains-run, over real
 * transports (test/helpers/rdmc_probe.cc): every schedule kind end to end at
 * N = 2, 3, 5, 8, every payload byte checked, and every rank must report
 * the same hash chain over all transfers.
 */
#include "common.h"

#include <map>
#include <regex>
#include <set>
#include <string>

namespace {

struct probe_run {
    int                                   exit_code;
    std::string                           output;
    std::map<std::string, std::set<std::string>> chains;   /* kind -> distinct chains */
    std::map<std::string, int>                   reports;  /* kind -> clean reports */
};

probe_run run_probe(const std::string &tls, int n, const std::string &args, int timeout = 120)
{
    auto r = tc_test::run_command("UCX_TLS=" + tls + " " +
                                  tc_test::build_path("src/tools/twochains-run") + " -n " +
                                  std::to_string(n) + " --timeout " + std::to_string(timeout) +
                                  " -- " + tc_test::build_path("test/helpers/rdmc_probe") + " " + args);
    probe_run out{r.exit_code, r.output, {}, {}};
    std::regex line(R"(\[\d+\] rdmc (\w+) rank \d+ received \d+ bad 0 order 0 chain ([0-9a-f]+))");
    for (std::sregex_iterator it(r.output.begin(), r.output.end(), line), end; it != end; ++it) {
        out.chains[(*it)[1]].insert((*it)[2]);
        out.reports[(*it)[1]]++;
    }
    return out;
}

void expect_identical(const probe_run &r, int n, const std::vector<std::string> &kinds)
{
    ASSERT_EQ(0, r.exit_code) << r.output;
    for (const auto &k : kinds) {
        EXPECT_EQ(n, r.reports.at(k)) << k << "\n" << r.output;
        EXPECT_EQ(1u, r.chains.at(k).size()) << k << ": ranks differ\n" << r.output;
    }
}

const std::vector<std::string> kAllKinds{"binomial", "sequential", "chain", "tree"};

class rdmc_procs : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(rdmc_procs, every_kind_every_root_awkward_sizes)
{
    const auto [tls, n] = GetParam();
    /* blocks of 40000 bytes: 1 byte, +-1 around a block, 7.3 and 25 blocks */
    std::string sizes = tls.starts_with("tcp") ? "1,39999,40001,293013,1000003"
                                               : "1,39999,40001,293013,1000003,3000017";
    auto r = run_probe(tls, n, "-k all -b 40000 -s " + sizes);
    expect_identical(r, n, kAllKinds);
}

INSTANTIATE_TEST_SUITE_P(tl, rdmc_procs,
                         ::testing::Combine(::testing::Values("posix,self", "tcp,self"),
                                            ::testing::Values(2, 3, 5, 8)),
                         [](const auto &param_info) {
                             std::string tl = std::get<0>(param_info.param);
                             return tl.substr(0, tl.find(',')) + "_n" +
                                    std::to_string(std::get<1>(param_info.param));
                         });

TEST(rdmc_procs_large, binomial_64MiB_8_processes_posix)
{
    /* 1 MiB blocks (the default), from registered pool buffers */
    auto r = run_probe("posix,self", 8, "-k binomial -b 1m -p -s 64m", 180);
    expect_identical(r, 8, {"binomial"});
}

TEST(rdmc_procs_large, every_root_at_once_tcp)
{
    auto r = run_probe("tcp,self", 3, "-k binomial,chain -b 65537 -c -s 700001,300007,1,131075,524288,99");
    expect_identical(r, 3, {"binomial", "chain"});
}

} // namespace

namespace {

TEST(rdmc_launcher_netns, bad_prefix_and_missing_namespace_are_clear_errors)
{
    auto run = tc_test::build_path("src/tools/twochains-run");
    auto r   = tc_test::run_command(run + " -n 1 --netns a/b -- true");
    EXPECT_EQ(2, r.exit_code) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("--netns needs a namespace name prefix"))
            << r.output;
    r = tc_test::run_command(run + " -n 2 --netns tc-no-such-ns- -- true");
    EXPECT_EQ(1, r.exit_code) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("cannot open network namespace"))
            << r.output;
}

} // namespace

namespace {

TEST(rdmc_perf, rdmc_bw_prints_one_json_object_per_schedule)
{
    auto r = tc_test::run_command("UCX_TLS=posix,self " +
                                  tc_test::build_path("src/tools/twochains-perf") +
                                  " -t rdmc_bw --inproc --members 3 -s 1m --block 100k"
                                  " --schedule all -n 2 --json");
    ASSERT_EQ(0, r.exit_code) << r.output;
    for (std::string kind : {"binomial", "sequential", "chain", "tree"}) {
        std::regex json(R"(\{"shape":"rdmc_bw","schedule":")" + kind +
                        R"(","transport":"[^"]+","write_lane":"rma [^"]+","members":3,)"
                        R"("payload_bytes":1048576,)"
                        R"("block_bytes":102400,"blocks":11,.*"time_to_all_s":([0-9.]+),)"
                        R"(.*"ratio_to_p2p":([0-9.]+),"MB/s":([0-9.]+),.*"cpu_s":[0-9.]+,"wall_s":[0-9.]+\})");
        std::smatch m;
        ASSERT_TRUE(std::regex_search(r.output, m, json)) << kind << "\n" << r.output;
        EXPECT_GT(std::stod(m[1]), 0.0);
        EXPECT_GT(std::stod(m[2]), 0.0);
    }
}

} // namespace
