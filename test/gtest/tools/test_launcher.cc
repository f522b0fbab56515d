/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * twochains-run: environment, prefixed output, exit codes, killing the rest
 * when one rank fails, timeout, signals and usage errors.
 */
#include "common.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

std::string launcher()
{
    return tc_test::build_path("src/tools/twochains-run");
}

struct timed_result {
    tc_test::run_result r;
    double              seconds;
};

timed_result run(const std::string &args)
{
    auto start = clock_type::now();
    auto r     = tc_test::run_command(launcher() + " " + args);
    return {r, std::chrono::duration<double>(clock_type::now() - start).count()};
}

std::vector<std::string> lines_of(const std::string &text)
{
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        lines.push_back(line);
    }
    return lines;
}

bool contains(const std::string &haystack, const std::string &needle)
{
    return haystack.find(needle) != std::string::npos;
}

TEST(launcher, environment_and_prefixes)
{
    auto res = run("-n 3 -- sh -c 'echo \"env $UCX_TC_RANK $UCX_TC_SIZE $UCX_TC_ROOT "
                   "${UCX_TC_LISTEN_FD:-none}\"'");
    ASSERT_EQ(0, res.r.exit_code) << res.r.output;

    std::regex env_re(R"(^\[(\d)\] env (\d) 3 127\.0\.0\.1:(\d+) (\S+)$)");
    std::set<std::string> roots;
    int seen = 0;
    for (const auto &line : lines_of(res.r.output)) {
        std::smatch m;
        ASSERT_TRUE(std::regex_match(line, m, env_re)) << line;
        EXPECT_EQ(m[1], m[2]) << "prefix and UCX_TC_RANK differ: " << line;
        EXPECT_NE("0", m[3]);
        roots.insert(m[3]);
        if (m[1] == "0") {
            EXPECT_NE("none", m[4]) << "rank 0 needs UCX_TC_LISTEN_FD";
        } else {
            EXPECT_EQ("none", m[4]) << "only rank 0 gets UCX_TC_LISTEN_FD";
        }
        ++seen;
    }
    EXPECT_EQ(3, seen);
    EXPECT_EQ(1u, roots.size()) << "every rank must get the same root";
}

TEST(launcher, stdout_and_stderr_stay_apart)
{
    const std::string cmd = "-n 2 sh -c 'echo out-$UCX_TC_RANK; echo err-$UCX_TC_RANK >&2'";
    auto only_out = tc_test::run_command("(" + launcher() + " " + cmd + " 2>/dev/null)");
    auto only_err = tc_test::run_command("(" + launcher() + " " + cmd + " >/dev/null)");
    ASSERT_EQ(0, only_out.exit_code);
    ASSERT_EQ(0, only_err.exit_code);
    for (int r = 0; r < 2; ++r) {
        auto rs = std::to_string(r);
        EXPECT_TRUE(contains(only_out.output, "[" + rs + "] out-" + rs + "\n")) << only_out.output;
        EXPECT_FALSE(contains(only_out.output, "err-")) << only_out.output;
        EXPECT_TRUE(contains(only_err.output, "[" + rs + "] err-" + rs + "\n")) << only_err.output;
        EXPECT_FALSE(contains(only_err.output, "out-")) << only_err.output;
    }
}

TEST(launcher, lines_are_never_torn_or_interleaved)
{
    // 3 ranks x 400 lines of ~250 bytes, written as fast as sh can
    auto res = run("-n 3 sh -c 'i=0; pad=$(printf %0240d 0); while [ $i -lt 400 ]; do "
                   "echo \"line-$UCX_TC_RANK-$i-$pad\"; i=$((i+1)); done'");
    ASSERT_EQ(0, res.r.exit_code);

    std::regex line_re(R"(^\[(\d)\] line-(\d)-(\d+)-0{240}$)");
    std::map<std::string, int> next;   // per rank: lines arrive in order
    for (const auto &line : lines_of(res.r.output)) {
        std::smatch m;
        ASSERT_TRUE(std::regex_match(line, m, line_re)) << "torn line: " << line.substr(0, 80);
        ASSERT_EQ(m[1], m[2]);
        ASSERT_EQ(next[m[1]]++, std::stoi(m[3]));
    }
    EXPECT_EQ(3u, next.size());
    for (auto &[rank, n] : next) {
        EXPECT_EQ(400, n) << "rank " << rank;
    }
}

TEST(launcher, last_line_without_newline_is_kept)
{
    auto res = run("-n 1 printf no-newline");
    EXPECT_EQ(0, res.r.exit_code);
    EXPECT_EQ("[0] no-newline\n", res.r.output);
}

TEST(launcher, exit_status_of_the_failing_rank_is_propagated)
{
    auto res = run("-n 3 sh -c '[ $UCX_TC_RANK != 2 ] || exit 3'");
    EXPECT_EQ(3, res.r.exit_code) << res.r.output;
    EXPECT_TRUE(contains(res.r.output, "twochains-run: rank 2 exited with status 3"))
            << res.r.output;
}

TEST(launcher, rank_killed_by_a_signal_is_reported)
{
    auto res = run("-n 2 sh -c '[ $UCX_TC_RANK != 1 ] || kill -9 $$; sleep 100'");
    EXPECT_EQ(1, res.r.exit_code) << res.r.output;
    EXPECT_TRUE(contains(res.r.output, "twochains-run: rank 1 killed by signal 9")) << res.r.output;
    EXPECT_LT(res.seconds, 5.0);
}

bool process_gone(pid_t pid)
{
    if (::kill(pid, 0) != 0) {
        return true;
    }
    // an orphan may linger as a zombie until init reaps it: that is dead too
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string pid_s, comm, state;
    stat >> pid_s >> comm >> state;
    return !stat || (state == "Z");
}

TEST(launcher, one_failure_kills_the_others_and_their_children)
{
    const std::string pidfile = "/tmp/tc_launcher_test_" + std::to_string(::getpid()) + ".pid";
    std::remove(pidfile.c_str());

    // rank 0 parks a grandchild; rank 1 fails once it is there
    auto res = run("-n 3 sh -c 'case $UCX_TC_RANK in "
                   "0) sleep 100 & echo $! > " + pidfile + "; wait;; "
                   "1) while [ ! -s " + pidfile + " ]; do sleep 0.05; done; exit 1;; "
                   "*) sleep 100;; esac'");
    EXPECT_EQ(1, res.r.exit_code) << res.r.output;
    EXPECT_TRUE(contains(res.r.output, "rank 1 exited with status 1")) << res.r.output;
    EXPECT_LT(res.seconds, 5.0) << "the sleeping ranks were not killed promptly";

    std::ifstream in(pidfile);
    pid_t grandchild = 0;
    in >> grandchild;
    ASSERT_GT(grandchild, 0);
    auto deadline = clock_type::now() + 3s;
    while (!process_gone(grandchild) && (clock_type::now() < deadline)) {
        std::this_thread::sleep_for(20ms);
    }
    EXPECT_TRUE(process_gone(grandchild)) << "grandchild " << grandchild << " survived";
    std::remove(pidfile.c_str());
}

TEST(launcher, rank_ignoring_sigterm_is_killed_after_the_grace)
{
    auto res = run("-n 2 sh -c 'if [ $UCX_TC_RANK = 1 ]; then sleep 0.2; exit 4; fi; "
                   "trap \"\" TERM; sleep 100'");
    EXPECT_EQ(4, res.r.exit_code) << res.r.output;
    EXPECT_LT(res.seconds, 6.0);
}

TEST(launcher, timeout_kills_everything_and_exits_124)
{
    auto res = run("--timeout 0.5 -n 2 sleep 100");
    EXPECT_EQ(124, res.r.exit_code) << res.r.output;
    EXPECT_TRUE(contains(res.r.output, "timeout after 0.5 s")) << res.r.output;
    EXPECT_GE(res.seconds, 0.4);
    EXPECT_LT(res.seconds, 4.0);
}

TEST(launcher, sigterm_is_forwarded_to_the_ranks)
{
    auto start = clock_type::now();
    auto res   = tc_test::run_command("sh -c '" + launcher() +
                                      " -n 2 sleep 100 & p=$!; sleep 0.3; kill -TERM $p; "
                                      "wait $p; echo rc=$?'");
    double seconds = std::chrono::duration<double>(clock_type::now() - start).count();
    EXPECT_TRUE(contains(res.output, "rc=143")) << res.output;
    EXPECT_TRUE(contains(res.output, "forwarding it to all ranks")) << res.output;
    EXPECT_LT(seconds, 4.0);
}

TEST(launcher, command_that_cannot_run_exits_127)
{
    auto res = run("-n 2 /nonexistent/twochains-program");
    EXPECT_EQ(127, res.r.exit_code) << res.r.output;
    EXPECT_TRUE(contains(res.r.output, "cannot execute")) << res.r.output;
}

TEST(launcher, usage_errors_exit_2)
{
    for (const char *args : {"", "-n", "-n 0 true", "-n abc true", "-n 2", "-x -n 1 true",
                             "--timeout -1 -n 1 true", "--timeout 1"}) {
        auto res = run(args);
        EXPECT_EQ(2, res.r.exit_code) << "args '" << args << "': " << res.r.output;
        EXPECT_TRUE(contains(res.r.output, "Usage: twochains-run")) << args;
    }
    auto help = run("-h");
    EXPECT_EQ(0, help.r.exit_code);
    EXPECT_TRUE(contains(help.r.output, "Usage: twochains-run"));
}

TEST(launcher, options_after_the_command_belong_to_the_command)
{
    auto res = run("-n 1 echo -n 5 -- x");
    EXPECT_EQ(0, res.r.exit_code) << res.r.output;
    EXPECT_EQ("[0] 5 -- x\n", res.r.output);
}

} // namespace
