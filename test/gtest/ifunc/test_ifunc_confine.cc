/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Security `confine` across real processes, over posix,self and tcp,self:
 *  - the hostile corpus (test/packages/tchostile, test/helpers/confine_probe.c):
 *    every case refused at check time or ended by its trap, each reason logged
 *    once, the legitimate frame after each one runs with its exact sum, and
 *    nothing the receiver did not grant changed (bytes past the target's
 *    declared size, a global whose address the sender knows, the file system);
 *  - the tcbench jams compiled confined (UCX_TC_IFUNC_CONFINE_OWN) with every
 *    effect that verify gives, checked exactly by ifunc_probe, none trapped;
 *  - what the allow-list leaves out: a call to snprintf (calls_libc) and to a
 *    ried function the receiver did not vouch for (ping) are refused;
 *  - a replicated group with a member that sends the hostile corpus: the
 *    members agree on every outcome and keep delivering
 *    (test/helpers/group_confine.c).
 */
#include "common.h"

#include <regex>
#include <set>
#include <string>

namespace {

class ifunc_confine : public ::testing::TestWithParam<std::string> {
protected:
    tc_test::run_result run(const std::string &helper, const std::string &args,
                            const std::string &env = "")
    {
        return tc_test::run_command("UCX_TLS=" + GetParam() + " " + env + " " +
                                    tc_test::build_path("src/tools/twochains-run") +
                                    " -n 2 --timeout 120 -- " +
                                    tc_test::build_path("test/helpers/" + helper) + " " + args);
    }

    static size_t count(const std::string &text, const std::string &what)
    {
        size_t n = 0;
        for (size_t at = text.find(what); at != std::string::npos;
             at = text.find(what, at + 1)) {
            ++n;
        }
        return n;
    }

    void expect_corpus(const tc_test::run_result &r)
    {
        ASSERT_EQ(0, r.exit_code) << r.output;
        EXPECT_NE(std::string::npos, r.output.find("confine_probe rank 0: OK")) << r.output;
        EXPECT_NE(std::string::npos, r.output.find("confine_probe rank 1: OK")) << r.output;
        for (const char *line : {"tch_payload_pointer  trap memory",
                                 "tch_read_past        trap memory",
                                 "tch_forged_global    trap memory",
                                 "tch_system           refused confine",
                                 "tch_syscall          refused confine",
                                 "tch_indirect         refused confine",
                                 "tch_spin             trap fuel",
                                 "tch_recurse          trap stack",
                                 "tch_index_overflow   trap memory",
                                 "tch_state_by_one     trap memory",
#if defined(__x86_64__)
                                 "tch_segment          refused confine"
#else
                                 "tch_segment          trap memory"
#endif
                                 }) {
            EXPECT_NE(std::string::npos, r.output.find(line)) << line << "\n" << r.output;
        }
        /* each reason logged once, however often it recurs */
        for (const char *trap : {"trap 'memory'", "trap 'fuel'", "trap 'stack'"}) {
            EXPECT_EQ(1u, count(r.output, trap)) << trap << "\n" << r.output;
        }
        EXPECT_EQ(1u, count(r.output, "further 'confine' rejects")) << r.output;
        EXPECT_EQ(std::string::npos, r.output.find("UCX  ERROR")) << r.output;
    }
};

TEST_P(ifunc_confine, hostile_corpus_is_refused_or_trapped_and_the_next_frame_runs)
{
    expect_corpus(run("confine_probe", "-m portable -r 2"));
}

/* Portable-Cached: the first frame carries the module, the rest its hash;
 * a confined module named by hash alone still runs confined */
TEST_P(ifunc_confine, hostile_corpus_in_cached_frames)
{
    expect_corpus(run("confine_probe", "-m portable-cached -r 3"));
}

TEST_P(ifunc_confine, tcbench_jams_run_confined_with_the_effects_of_verify)
{
    auto r = run("ifunc_probe", "-s confine -n 40 -m portable,portable-cached "
                 "-j indirect_put,server_side_sum,ping",
                 "UCX_TC_IFUNC_CONFINE_OWN=y UCX_TC_IFUNC_CONFINE_ALLOW=tcbench_ping_reply");
    ASSERT_EQ(0, r.exit_code) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("ifunc_probe rank 0: OK")) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("confined runs: 240; trapped: memory 0, fuel 0, "
                                               "stack 0, unreachable 0"))
            << r.output;
}

TEST_P(ifunc_confine, calls_off_the_allow_list_are_refused)
{
    auto r = run("ifunc_probe", "-s confine -n 10 -m portable -j calls_libc,ping -R",
                 "UCX_TC_IFUNC_CONFINE_OWN=y");
    ASSERT_EQ(0, r.exit_code) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("rejected confine: 20")) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("a call to 'snprintf', not on the confine "
                                               "allow-list"))
            << r.output;
}

/* A replicated group (3 members, tckv as Portable jams, everything confined)
 * where member 2 also sends the hostile corpus of a package the group did
 * not declare: every member computes the same status for every case (the
 * trap's, or the same reject), the hash chains over every jam event and the
 * states agree, and the key-value store equals the reference built from the
 * legitimate commands alone */
TEST_P(ifunc_confine, group_with_a_hostile_member_agrees_and_keeps_delivering)
{
    auto r = tc_test::run_command("UCX_TLS=" + GetParam() +
                                  " UCX_TC_IFUNC_SECURITY=confine UCX_TC_IFUNC_CONFINE_OWN=y " +
                                  tc_test::build_path("src/tools/twochains-run") +
                                  " -n 3 --timeout 120 -- " +
                                  tc_test::build_path("test/helpers/group_confine") + " -P " +
                                  tc_test::build_path("test/twochains-pkgs") + " -c 60 -H 2");
    ASSERT_EQ(0, r.exit_code) << r.output;
    for (const char *line : {"tch_payload_pointer  status -1001 reject none",
                             "tch_read_past        status -1001 reject none",
                             "tch_forged_global    status -1001 reject none",
                             "tch_system           status 0 reject confine",
                             "tch_syscall          status 0 reject confine",
                             "tch_indirect         status 0 reject confine",
                             "tch_spin             status -1002 reject none",
                             "tch_recurse          status -1003 reject none",
                             "tch_index_overflow   status -1001 reject none",
                             "tch_state_by_one     status -1001 reject none",
                             "tch_state_overrun    status -1001 reject none",
                             "tch_ok               status 0 reject none"}) {
        EXPECT_NE(std::string::npos, r.output.find(line)) << line << "\n" << r.output;
    }
    std::regex result(R"(group_confine rank (\d): chain ([0-9a-f]+) digest ([0-9a-f]+) )"
                      R"(reference ([0-9a-f]+) run (\d+) rejected (\d+) status Success)");
    std::set<std::string> chains, digests;
    int members = 0;
    for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), result);
         it != std::sregex_iterator(); ++it) {
        ++members;
        chains.insert((*it)[2]);
        digests.insert((*it)[3]);
        EXPECT_EQ((*it)[3], (*it)[4]) << "member " << (*it)[1] << " diverged from its reference";
        /* 3 x 60 commands, 12 hostile jams of which 3 are refused */
        EXPECT_EQ("189", (*it)[5].str());
        EXPECT_EQ("3", (*it)[6].str());
    }
    EXPECT_EQ(3, members) << r.output;
    EXPECT_EQ(1u, chains.size()) << r.output;
    EXPECT_EQ(1u, digests.size()) << r.output;
}

INSTANTIATE_TEST_SUITE_P(tl, ifunc_confine, ::testing::Values("posix,self", "tcp,self"),
                         [](const auto &param_info) {
                             return param_info.param.substr(0, param_info.param.find(','));
                         });

} // namespace
