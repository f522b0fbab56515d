/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Replicated jams with real processes: contrib/examples/replicated_kv (the
 * quickstart's key-value store, built as test/helpers/replicated_kv) sends
 * tckv's put, increment and compare-and-swap jams through the group's total
 * order. Every member prints the digest of the state its jams built, the
 * digest of a reference that replays the delivered commands in plain C, and
 * a hash chain over every jam event; they must all agree.
 */
#include "common.h"
#include "group/probe_cluster.h"

#include <regex>
#include <set>

namespace {

using namespace std::chrono_literals;
using namespace tc_test::probe;

/* Arguments of every member: the package prefix (TCKV_PKGS overrides it
 * for one member), @a args, then what TCKV_ARGS adds for one member (the
 * last of a repeated option wins) */
std::string kv_args(const std::string &args)
{
    return "-P ${TCKV_PKGS:-" + tc_test::build_path("test/twochains-pkgs") + "} " + args +
           " ${TCKV_ARGS:-}";
}

const std::string kBinary = "test/helpers/replicated_kv";

struct kv_result {
    std::string   digest, reference, chain;
    unsigned long run = 0, errors = 0;
    long          view = 0;
};

bool parse_kv(const std::string &text, kv_result &out)
{
    std::smatch m;
    std::regex result(R"(result digest ([0-9a-f]+) reference ([0-9a-f]+) chain ([0-9a-f]+) )"
                      R"(run (\d+) errors (\d+) view (\d+) status Success\n)");
    if (!std::regex_search(text, m, result)) {
        return false;
    }
    out = {m[1], m[2], m[3], std::stoul(m[4]), std::stoul(m[5]), std::stol(m[6])};
    return true;
}

/* Members @a live exited 0 with the same state, equal to their reference,
 * the same delivered chain, and (when non-zero) @a run jams each */
void expect_replicas_agree(cluster &c, const std::vector<int> &live, unsigned long run = 0)
{
    kv_result first;
    for (int r : live) {
        const auto &m = c.at(r);
        ASSERT_EQ(0, m.exit_code) << c.all_output();
        kv_result o;
        ASSERT_TRUE(parse_kv(m.text, o)) << c.all_output();
        EXPECT_EQ(o.digest, o.reference) << "member " << r << "\n" << c.all_output();
        if (run != 0) {
            EXPECT_EQ(run, o.run) << c.all_output();
        }
        if (first.digest.empty()) {
            first = o;
        }
        EXPECT_EQ(first.digest, o.digest) << "members' states differ\n" << c.all_output();
        EXPECT_EQ(first.chain, o.chain) << "members ran different sequences\n" << c.all_output();
        EXPECT_EQ(first.run, o.run) << c.all_output();
        EXPECT_EQ(first.errors, o.errors) << c.all_output();
    }
    EXPECT_GT(first.errors, 0u) << "no compare-and-swap failed: the error path went untested";
}

/* Every jam of tckv (put, increment, compare-and-swap, which fails when it
 * finds another value) in every mode, at N = 2, 3 and 5, over posix and tcp */
class jams_every_mode
    : public ::testing::TestWithParam<std::tuple<std::string, int, std::string>> {};

TEST_P(jams_every_mode, every_member_runs_the_same_jams_to_the_same_state)
{
    const auto &[tls, n, mode] = GetParam();
    const int count = (tls == "tcp,self") ? 200 : 400;
    cluster c(n, tls, kv_args("-m " + mode + " -c " + std::to_string(count) + " -r 4000"), {},
              kBinary);
    c.wait_all(120s);
    expect_replicas_agree(c, all_ranks(n), static_cast<unsigned long>(n) * count);
}

std::vector<std::tuple<std::string, int, std::string>> mode_cases()
{
    std::vector<std::tuple<std::string, int, std::string>> v;
    for (const char *tls : {"posix,self", "tcp,self"}) {
        for (int n : {2, 3, 5}) {
            for (const char *mode : {"local", "injected", "cached", "portable"}) {
                v.emplace_back(tls, n, mode);
            }
        }
    }
    return v;
}

INSTANTIATE_TEST_SUITE_P(
        tl, jams_every_mode, ::testing::ValuesIn(mode_cases()),
        [](const auto &param_info) {
            const std::string tls = std::get<0>(param_info.param);
            return tls.substr(0, tls.find(',')) + "_n" + std::to_string(std::get<1>(param_info.param)) +
                   "_" + std::get<2>(param_info.param);
        });

class jams_faults : public ::testing::TestWithParam<std::string> {};

/* A member is killed in the middle, a new process joins with the state and
 * the codes, and every live member ends with the same state */
TEST_P(jams_faults, a_killed_member_and_a_joiner_with_state)
{
    const int base = free_port_base(3);
    ASSERT_NE(0, base);
    /* rank 2 kills itself after 800 of its 3000 commands */
    cluster c(3, GetParam(), kv_args("-c 3000 -r 3000 -w 1 -J " + std::to_string(base)),
              {{2, "TCKV_ARGS=-K 800"}}, kBinary);
    ASSERT_TRUE(c.wait_for({0, 1}, "view 2", 30s)) << c.all_output();
    const int j = c.start_joiner(kv_args("-c 500 -r 3000 -j 127.0.0.1:" + std::to_string(base)));
    c.wait_all(90s);
    EXPECT_NE(std::string::npos, c.at(j).text.find("state received")) << c.all_output();
    expect_replicas_agree(c, {0, 1, j});
}

/* The only member that ships the code dies right after its first frame: a
 * Cached frame names the code only once its shipping frame was delivered,
 * so the survivors either ran it or never heard of it, and agree */
TEST_P(jams_faults, a_member_dies_during_a_code_shipping_message)
{
    /* rank 2 sends first, alone: its one frame carries the code; then it
     * dies, while the others have not sent yet */
    cluster c(3, GetParam(), kv_args("-m cached -c 1500 -r 3000 -D 300"),
              {{2, "TCKV_ARGS=-D 0 -K 1"}}, kBinary);
    c.wait_all(90s);
    EXPECT_NE(std::string::npos, c.at(2).text.find("killing myself after 1 commands"))
            << c.all_output();
    expect_replicas_agree(c, {0, 1});
}

/* The same with Portable jams: every member runs its own package's module
 * of the hash its architecture has in each frame, compiled before it became
 * a member; the joiner too */
TEST_P(jams_faults, a_killed_member_and_a_joiner_with_portable_jams)
{
    const int base = free_port_base(3);
    ASSERT_NE(0, base);
    cluster c(3, GetParam(),
              kv_args("-m portable -c 3000 -r 3000 -w 1 -J " + std::to_string(base)),
              {{2, "TCKV_ARGS=-K 800"}}, kBinary);
    ASSERT_TRUE(c.wait_for({0, 1}, "view 2", 30s)) << c.all_output();
    const int j = c.start_joiner(
            kv_args("-m portable -c 500 -r 3000 -j 127.0.0.1:" + std::to_string(base)));
    c.wait_all(90s);
    EXPECT_NE(std::string::npos, c.at(j).text.find("state received")) << c.all_output();
    expect_replicas_agree(c, {0, 1, j});
}

INSTANTIATE_TEST_SUITE_P(tl, jams_faults, ::testing::Values("posix,self", "tcp,self"),
                         [](const auto &param_info) {
                             return param_info.param.substr(0, param_info.param.find(','));
                         });

/* A member with another build of tckv (TCKV_ALTERED_BUILD: its kv_inc adds
 * twice): declared as the group's jam package, creation fails on every
 * member with the reason; undeclared, that member leaves at the first code
 * it cannot run, and the others go on to the same state */
class jams_mismatch : public ::testing::Test {
protected:
    static void SetUpTestSuite()
    {
        char tmpl[] = "/tmp/tckv-altered-XXXXXX";
        ASSERT_NE(nullptr, mkdtemp(tmpl));
        altered_ = tmpl;
        const std::string cmd = tc_test::build_path("toolchain/twochains-pkg") +
                                " build --name tckv --src " TC_SRCDIR "/test/packages/tckv "
                                "--prefix " + altered_ +
                                " --cflags -DTCKV_ALTERED_BUILD=1"
                                " --portable x86_64-linux-gnu,aarch64-linux-gnu >/dev/null";
        ASSERT_EQ(0, std::system(cmd.c_str())) << cmd;
    }
    static void TearDownTestSuite()
    {
        std::system(("rm -rf " + altered_).c_str());
    }
    static std::string altered_;
};
std::string jams_mismatch::altered_;

TEST_F(jams_mismatch, a_declared_package_that_differs_fails_creation_everywhere)
{
    cluster c(3, "posix,self", kv_args("-m cached -c 100"), {{1, "TCKV_PKGS=" + altered_}},
              kBinary);
    c.wait_all(60s);
    for (int r = 0; r < 3; ++r) {
        EXPECT_EQ(1, c.at(r).exit_code) << c.all_output();
        EXPECT_NE(std::string::npos, c.at(r).text.find("create failed: Invalid parameter"))
                << c.all_output();
    }
    EXPECT_NE(std::string::npos, c.all_output().find("jam packages (their code differs)"))
            << c.all_output();
}

/* The same in Portable mode, where the members compare their modules'
 * hashes (the same on every architecture) rather than their machine code */
TEST_F(jams_mismatch, a_declared_package_whose_modules_differ_fails_creation_everywhere)
{
    cluster c(3, "posix,self", kv_args("-m portable -c 100"), {{1, "TCKV_PKGS=" + altered_}},
              kBinary);
    c.wait_all(60s);
    for (int r = 0; r < 3; ++r) {
        EXPECT_EQ(1, c.at(r).exit_code) << c.all_output();
        EXPECT_NE(std::string::npos, c.at(r).text.find("create failed: Invalid parameter"))
                << c.all_output();
    }
    EXPECT_NE(std::string::npos, c.all_output().find("jam packages (their code differs)"))
            << c.all_output();
}

/* An undeclared package whose module differs: the odd member receives a
 * frame naming, for its architecture, the sender's module and not its own,
 * and leaves; the others go on to one state */
TEST_F(jams_mismatch, an_undeclared_portable_package_that_differs_makes_that_member_leave)
{
    cluster c(3, "posix,self", kv_args("-m portable -u -c 600 -r 3000"),
              {{1, "TCKV_PKGS=" + altered_}, {1, "TCKV_ARGS=-c 0"}}, kBinary);
    c.wait_all(90s);
    const auto &odd = c.at(1);
    EXPECT_NE(std::string::npos, odd.text.find("it leaves the group rather than diverge"))
            << c.all_output();
    EXPECT_EQ(1, odd.exit_code) << c.all_output();
    expect_replicas_agree(c, {0, 2});
}

TEST_F(jams_mismatch, an_undeclared_package_that_differs_makes_that_member_leave)
{
    /* the odd member only receives: the first Injected frame from another
     * member is not the code it installed (verify), so it leaves */
    cluster c(3, "posix,self", kv_args("-m injected -u -c 600 -r 3000"),
              {{1, "TCKV_PKGS=" + altered_}, {1, "TCKV_ARGS=-c 0"}}, kBinary);
    c.wait_all(90s);
    const auto &odd = c.at(1);
    EXPECT_NE(std::string::npos, odd.text.find("it leaves the group rather than diverge"))
            << c.all_output();
    EXPECT_NE(std::string::npos, odd.text.find("(left the group)")) << c.all_output();
    EXPECT_EQ(1, odd.exit_code) << c.all_output();
    expect_replicas_agree(c, {0, 2});
}

} // namespace
