/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * PMIx bootstrap: test/helpers/boot_probe and this binary under Open MPI's mpirun (a
 * PMIx server), and the choice of backend and its errors outside a PMIx
 * launcher. Every run is bounded in time. Without mpirun, or without PMIx in
 * the build, the launcher tests skip and say why.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "common.h"

#include <twochains/bootstrap.h>

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using tc_test::scoped_env;
using tc_test::seconds_since;

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

struct boot_deleter {
    void operator()(tc_bootstrap *b) const { tc_bootstrap_destroy(b); }
};
using boot_ptr = std::unique_ptr<tc_bootstrap, boot_deleter>;


/* No UCX_TC_ bootstrap variables and no PMIx launcher around. */
struct clean_boot_env {
    scoped_env size{"UCX_TC_SIZE", nullptr}, rank{"UCX_TC_RANK", nullptr},
            root{"UCX_TC_ROOT", nullptr}, lfd{"UCX_TC_LISTEN_FD", nullptr},
            kind{"UCX_TC_BOOTSTRAP", nullptr}, timeout{"UCX_TC_BOOTSTRAP_TIMEOUT", nullptr},
            prank{"PMIX_RANK", nullptr}, pns{"PMIX_NAMESPACE", nullptr};
};

/* The same for a child started through the shell. */
const char *const kCleanEnv = "env -u UCX_TC_SIZE -u UCX_TC_RANK -u UCX_TC_ROOT "
                              "-u UCX_TC_LISTEN_FD -u UCX_TC_BOOTSTRAP "
                              "-u UCX_TC_BOOTSTRAP_TIMEOUT -u PMIX_RANK -u PMIX_NAMESPACE ";

size_t count_lines_with(const std::string &out, const std::string &needle)
{
    size_t n = 0, pos = 0;
    while (pos < out.size()) {
        size_t end       = out.find('\n', pos);
        std::string line = out.substr(pos, (end == std::string::npos ? out.size() : end) - pos);
        n += (line.find(needle) != std::string::npos);
        pos = (end == std::string::npos) ? out.size() : end + 1;
    }
    return n;
}

[[maybe_unused]] std::string find_in_path(const char *prog)
{
    const char *path = std::getenv("PATH");
    std::string dirs = path ? path : "";
    size_t pos       = 0;
    while (pos <= dirs.size()) {
        size_t end      = dirs.find(':', pos);
        std::string dir = dirs.substr(pos, (end == std::string::npos ? dirs.size() : end) - pos);
        std::string candidate = (dir.empty() ? "." : dir) + "/" + prog;
        if (::access(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
        if (end == std::string::npos) {
            break;
        }
        pos = end + 1;
    }
    return {};
}

std::string self_exe()
{
    char buf[4096];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    return (n > 0) ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

/*
 * "mpirun ... -np N <program>" with a clean bootstrap environment, @a env
 * ("NAME=value ...") set and forwarded with -x, and an outer time limit.
 */
std::string mpirun_cmd(int np, const std::string &program, const std::vector<std::string> &env = {})
{
    std::string cmd = std::string(kCleanEnv) +
                      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ";
    std::string fwd;
    for (const auto &e : env) {
        cmd += e + " ";
        fwd += " -x " + e.substr(0, e.find('='));
    }
    return cmd + "timeout -k 5 120 mpirun --oversubscribe --allow-run-as-root" + fwd +
           " -np " + std::to_string(np) + " " + program;
}

/* Empty when mpirun starts its processes under a PMIx server; else why not. */
const std::string &pmix_launcher_missing()
{
    static const std::string reason = [] {
#ifndef TC_HAVE_PMIX
        return std::string("built without PMIx: apt-get install libpmix-dev and reconfigure");
#else
        if (find_in_path("mpirun").empty()) {
            return std::string("mpirun not found: apt-get install openmpi-bin");
        }
        auto res = tc_test::run_command(mpirun_cmd(1, "env"));
        if ((res.exit_code != 0) || (res.output.find("PMIX_RANK=") == std::string::npos)) {
            return "mpirun does not start processes under a PMIx server (exit " +
                   std::to_string(res.exit_code) + "): " + res.output.substr(0, 400);
        }
        return std::string();
#endif
    }();
    return reason;
}

#define SKIP_WITHOUT_PMIX_LAUNCHER() \
    do { \
        if (!pmix_launcher_missing().empty()) { \
            GTEST_SKIP() << pmix_launcher_missing(); \
        } \
    } while (0)

struct timed_run {
    tc_test::run_result result;
    double              seconds;
};

timed_run run_timed(const std::string &cmd)
{
    auto start = clock_type::now();
    auto res   = tc_test::run_command(cmd);
    return {res, seconds_since(start)};
}

/* --- under mpirun -------------------------------------------------------- */

TEST(bootstrap_pmix_procs, three_processes_under_mpirun_pick_pmix_and_exchange_exactly)
{
    SKIP_WITHOUT_PMIX_LAUNCHER();
    auto run = run_timed(mpirun_cmd(3, tc_test::build_path("test/helpers/boot_probe"),
                                    {"UCX_TC_BOOTSTRAP_TIMEOUT=20s"}));
    EXPECT_EQ(0, run.result.exit_code) << run.result.output;
    for (int r = 0; r < 3; ++r) {
        EXPECT_EQ(1u, count_lines_with(run.result.output, "bootstrap pmix rank " +
                                                                  std::to_string(r) + " size 3"))
                << run.result.output;
    }
    EXPECT_EQ(3u, count_lines_with(run.result.output, "20 rounds of 3 ranks ok"))
            << run.result.output;
    EXPECT_LT(run.seconds, 60.0);
}

TEST(bootstrap_pmix_procs, forced_pmix_ignores_ucx_tc_size)
{
    SKIP_WITHOUT_PMIX_LAUNCHER();
    // UCX_TC_SIZE would make auto choose tcp; pmix takes the size from PMIx
    auto run = run_timed(mpirun_cmd(2, tc_test::build_path("test/helpers/boot_probe") + " --rounds 3",
                                    {"UCX_TC_BOOTSTRAP=pmix", "UCX_TC_SIZE=5"}));
    EXPECT_EQ(0, run.result.exit_code) << run.result.output;
    EXPECT_EQ(2u, count_lines_with(run.result.output, "bootstrap pmix rank")) << run.result.output;
    EXPECT_EQ(2u, count_lines_with(run.result.output, "3 rounds of 2 ranks ok"))
            << run.result.output;
}

TEST(bootstrap_pmix_procs, allgather_length_mismatch_fails_on_every_rank_and_they_carry_on)
{
    SKIP_WITHOUT_PMIX_LAUNCHER();
    auto run = run_timed(mpirun_cmd(3, tc_test::build_path("test/helpers/boot_probe") +
                                               " --mismatch-rank 1",
                                    {"UCX_TC_BOOTSTRAP_TIMEOUT=20s"}));
    EXPECT_EQ(0, run.result.exit_code) << run.result.output;
    EXPECT_EQ(3u, count_lines_with(run.result.output, "length mismatch detected"))
            << run.result.output;
    EXPECT_EQ(1u, count_lines_with(run.result.output, "rank 1 contributed 17 bytes"))
            << run.result.output;
}

TEST(bootstrap_pmix_procs, rank_that_dies_fails_the_others_before_the_timeout)
{
    SKIP_WITHOUT_PMIX_LAUNCHER();
    // the launcher notices the dead rank; the survivors must not wait 20 s
    auto run = run_timed(mpirun_cmd(3, tc_test::build_path("test/helpers/boot_probe") +
                                               " --vanish-rank 2",
                                    {"UCX_TC_BOOTSTRAP_TIMEOUT=20s"}));
    EXPECT_NE(0, run.result.exit_code) << run.result.output;
    EXPECT_EQ(0u, count_lines_with(run.result.output, "succeeded although")) << run.result.output;
    EXPECT_LT(run.seconds, 15.0) << run.result.output;
}

TEST(bootstrap_pmix_procs, rank_that_never_arrives_times_out_the_others)
{
    SKIP_WITHOUT_PMIX_LAUNCHER();
    // this binary again, as the DISABLED_ test below, under mpirun
    auto run = run_timed(
            mpirun_cmd(3,
                       self_exe() + " --gtest_color=no --gtest_also_run_disabled_tests"
                                    " --gtest_filter=bootstrap_pmix_child.DISABLED_straggler",
                       {"TC_PMIX_CHILD=straggler", "UCX_TC_BOOTSTRAP_TIMEOUT=1s"}));
    EXPECT_EQ(0, run.result.exit_code) << run.result.output;
    EXPECT_EQ(2u, count_lines_with(run.result.output, "timed out as expected")) << run.result.output;
    EXPECT_EQ(1u, count_lines_with(run.result.output, "straggler skipped the collective"))
            << run.result.output;
    EXPECT_EQ(3u, count_lines_with(run.result.output, "[  PASSED  ] 1 test")) << run.result.output;
    EXPECT_LT(run.seconds, 60.0);
}

/* Run by rank_that_never_arrives_times_out_the_others: the last rank skips a
 * collective; the others must fail it with a timeout, and then at once. */
TEST(bootstrap_pmix_child, DISABLED_straggler)
{
    const char *role = std::getenv("TC_PMIX_CHILD");
    if ((role == nullptr) || (std::strcmp(role, "straggler") != 0)) {
        GTEST_SKIP() << "run under mpirun by rank_that_never_arrives_times_out_the_others";
    }

    tc_test::scoped_log_expect expect;
    tc_bootstrap_h raw = nullptr;
    ASSERT_EQ(UCS_OK, tc_bootstrap_create_from_env(&raw));
    boot_ptr boot(raw);
    ASSERT_STREQ("pmix", tc_bootstrap_name(boot.get()));
    const int rank = tc_bootstrap_rank(boot.get()), size = tc_bootstrap_size(boot.get());
    ASSERT_EQ(UCS_OK, tc_bootstrap_barrier(boot.get()));

    if (rank == size - 1) {
        std::this_thread::sleep_for(3s);        // UCX_TC_BOOTSTRAP_TIMEOUT is 1 s
        std::printf("rank %d: straggler skipped the collective\n", rank);
        return;
    }

    uint64_t mine = static_cast<uint64_t>(rank);
    std::vector<uint64_t> all(static_cast<size_t>(size));
    auto start          = clock_type::now();
    ucs_status_t status = tc_bootstrap_allgather(boot.get(), &mine, sizeof(mine), all.data());
    double elapsed      = seconds_since(start);
    EXPECT_EQ(UCS_ERR_TIMED_OUT, status);
    EXPECT_GE(elapsed, 0.8);
    EXPECT_LT(elapsed, 2.5);
    EXPECT_EQ(1u, expect.count("timed out"));

    start = clock_type::now();
    EXPECT_EQ(UCS_ERR_IO_ERROR, tc_bootstrap_barrier(boot.get()));
    EXPECT_LT(seconds_since(start), 0.5);
    EXPECT_EQ(1u, expect.count("out of step"));
    std::printf("rank %d: allgather timed out as expected after %.2f s\n", rank, elapsed);
}

/* --- outside a PMIx launcher --------------------------------------------- */

TEST(bootstrap_pmix_env, forced_pmix_outside_a_launcher_fails_clearly_and_quickly)
{
    clean_boot_env env;
    scoped_env kind("UCX_TC_BOOTSTRAP", "pmix");
    tc_test::scoped_log_expect expect;
    tc_bootstrap_h raw = nullptr;

    auto start          = clock_type::now();
    ucs_status_t status = tc_bootstrap_create_from_env(&raw);
    double elapsed      = seconds_since(start);
#ifdef TC_HAVE_PMIX
    EXPECT_EQ(UCS_ERR_UNREACHABLE, status);
    EXPECT_EQ(1u, expect.count("not started by a PMIx launcher")) << expect.messages().size();
    EXPECT_EQ(1u, expect.count("mpirun, prterun or srun --mpi=pmix"));
#else
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, status);
    EXPECT_EQ(1u, expect.count("libpmix-dev"));
#endif
    EXPECT_EQ(1u, expect.messages().size());
    EXPECT_LT(elapsed, 5.0);
    if (status == UCS_OK) {
        tc_bootstrap_destroy(raw);
    }
}

TEST(bootstrap_pmix_env, forced_pmix_outside_a_launcher_fails_the_probe)
{
    auto run = run_timed(std::string(kCleanEnv) + "UCX_TC_BOOTSTRAP=pmix timeout -k 5 60 " +
                         tc_test::build_path("test/helpers/boot_probe"));
    EXPECT_EQ(1, run.result.exit_code) << run.result.output;
    EXPECT_EQ(1u, count_lines_with(run.result.output, "bootstrap create failed"))
            << run.result.output;
#ifdef TC_HAVE_PMIX
    EXPECT_EQ(1u, count_lines_with(run.result.output, "not started by a PMIx launcher"))
            << run.result.output;
#else
    EXPECT_EQ(1u, count_lines_with(run.result.output, "libpmix-dev")) << run.result.output;
#endif
    EXPECT_LT(run.seconds, 10.0);
}

TEST(bootstrap_pmix_env, stale_launcher_environment_fails_clearly_and_quickly)
{
    // PMIX_RANK makes auto choose PMIx, but no server of that job exists (or,
    // without PMIx in the build, the backend): an error, not N single members
    auto run = run_timed(std::string(kCleanEnv) +
                         "PMIX_RANK=0 PMIX_NAMESPACE=tc-test-gone timeout -k 5 60 " +
                         tc_test::build_path("test/helpers/boot_probe"));
    EXPECT_EQ(1, run.result.exit_code) << run.result.output;
#ifdef TC_HAVE_PMIX
    EXPECT_EQ(1u, count_lines_with(run.result.output, "PMIx server of the launcher is not "
                                                      "reachable"))
            << run.result.output;
#else
    EXPECT_EQ(1u, count_lines_with(run.result.output, "libpmix-dev")) << run.result.output;
#endif
    EXPECT_LT(run.seconds, 10.0);
}

TEST(bootstrap_pmix_env, auto_without_pmix_rank_is_single)
{
    clean_boot_env env;
    tc_bootstrap_h raw = nullptr;
    ASSERT_EQ(UCS_OK, tc_bootstrap_create_from_env(&raw));
    boot_ptr boot(raw);
    EXPECT_STREQ("single", tc_bootstrap_name(boot.get()));
}

TEST(bootstrap_pmix_env, auto_prefers_ucx_tc_size_over_pmix_rank)
{
    clean_boot_env env;
    // twochains-run under a PMIx launcher: UCX_TC_SIZE wins, so this is the
    // tcp path (and its error), and PMIx is never asked
    scoped_env prank("PMIX_RANK", "0"), size("UCX_TC_SIZE", "2"), rank("UCX_TC_RANK", "1");
    tc_test::scoped_log_expect expect;
    tc_bootstrap_h raw = nullptr;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, tc_bootstrap_create_from_env(&raw));
    EXPECT_EQ(1u, expect.count("UCX_TC_ROOT"));
    EXPECT_EQ(0u, expect.count("PMIx"));
}

TEST(bootstrap_pmix_env, unknown_backend_lists_pmix)
{
    clean_boot_env env;
    scoped_env kind("UCX_TC_BOOTSTRAP", "pmi2");
    tc_test::scoped_log_expect expect;
    tc_bootstrap_h raw = nullptr;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, tc_bootstrap_create_from_env(&raw));
    EXPECT_EQ(1u, expect.count("auto, tcp, single, pmix"));
}

} // namespace
