/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Two-Chains across real processes (test/helpers/ifunc_probe.c under
 * twochains-run), over posix,self and tcp,self: every tcbench jam in every
 * mode and placement, 2 and then 4 processes sending to one receiver, ring
 * wrap-around with credit stalls, mixed frame types on one ring, remote
 * linking in trust mode, and the soundness of the single-put trailer mode.
 * The receiver checks every effect exactly; these tests check it said so.
 */
#include "common.h"

#include <cstdlib>
#include <iostream>
#include <regex>
#include <string>

namespace {

class ifunc_procs : public ::testing::TestWithParam<std::string> {
protected:
    tc_test::run_result probe(int n, const std::string &args,
                              const std::string &env = "", int timeout_s = 60)
    {
        return tc_test::run_command("UCX_TLS=" + GetParam() + " " + env + " " +
                                    tc_test::build_path("src/tools/twochains-run") +
                                    " -n " + std::to_string(n) + " --timeout " +
                                    std::to_string(timeout_s) + " -- " +
                                    tc_test::build_path("test/helpers/ifunc_probe") + " " + args);
    }

    /* every rank printed OK, rank 0 checked @a frames frames, none rejected */
    void expect_ok(const tc_test::run_result &r, int n, int frames)
    {
        ASSERT_EQ(0, r.exit_code) << r.output;
        for (int rank = 0; rank < n; ++rank) {
            EXPECT_NE(std::string::npos,
                      r.output.find("[" + std::to_string(rank) + "] ifunc_probe rank " +
                                    std::to_string(rank) + ": OK"))
                    << r.output;
        }
        EXPECT_NE(std::string::npos,
                  r.output.find("checked " + std::to_string(frames) + " frames"))
                << r.output;
        EXPECT_NE(std::string::npos, r.output.find("; rejected 0")) << r.output;
        EXPECT_EQ(std::string::npos, r.output.find("UCX  WARN")) << r.output;
        EXPECT_EQ(std::string::npos, r.output.find("UCX  ERROR")) << r.output;
        EXPECT_NE(std::string::npos, r.output.find("transport " + tl())) << r.output;
    }

    std::string tl() const { return GetParam().substr(0, GetParam().find(',')); }

    /* the count a statistics line prints (the first group of @a pattern);
     * a missing line is a failure, and counts 0 */
    static unsigned long stat_count(const std::string &output, const char *pattern)
    {
        std::smatch m;
        if (!std::regex_search(output, m, std::regex(pattern))) {
            ADD_FAILURE() << "no match for " << pattern;
            return 0;
        }
        return std::stoul(m[1]);
    }
};

/* 4 jams x (local, injected, cached) x n + n mixed, per sender */
constexpr int frames_per_sender(int n) { return 4 * 3 * n + n; }

TEST_P(ifunc_procs, two_procs_every_jam_every_mode_copy)
{
    expect_ok(probe(2, "-n 40 -p copy"), 2, frames_per_sender(40));
}

TEST_P(ifunc_procs, two_procs_every_jam_every_mode_inplace)
{
    expect_ok(probe(2, "-n 40 -p inplace -s trust"), 2, frames_per_sender(40));
}

TEST_P(ifunc_procs, four_procs_to_one_receiver_copy)
{
    expect_ok(probe(4, "-n 30 -p copy"), 4, 3 * frames_per_sender(30));
}

TEST_P(ifunc_procs, four_procs_to_one_receiver_inplace)
{
    expect_ok(probe(4, "-n 30 -p inplace -s trust"), 4, 3 * frames_per_sender(30));
}

/* 70 processes: senders 64..69 are past any 64-bit mask of ranks (the
 * write lane once rejected them, so over tcp their frames and credits were
 * lost); every frame of every sender runs at rank 0 */
TEST_P(ifunc_procs, seventy_procs_ranks_past_64_reach_the_receiver)
{
    expect_ok(probe(70, "-n 2 -p copy -t 200", "", 240), 70, 69 * frames_per_sender(2));
}

/* A mailbox of a job of 2 and of 16,384 ranks (test/helpers/mailbox_scale:
 * two real processes at ranks 0 and N-1, the others phantoms that never
 * send): one ring each way, for the one peer that talks; exact sums of a
 * ping-pong; once the idle ring sleeps, 200,000 empty polls read no ring
 * slot; 20 bursts into the sleeping ring all run (the doorbell wakes it) */
TEST_P(ifunc_procs, empty_poll_reads_no_idle_ring_at_any_job_size)
{
    for (int job : {2, 16384}) {
        auto r = tc_test::run_command(
                "UCX_TLS=" + GetParam() + " " + tc_test::build_path("src/tools/twochains-run") +
                " -n 2 --timeout 60 -- " + tc_test::build_path("test/helpers/mailbox_scale") +
                " --job " + std::to_string(job) + " --iters 300 --cycles 20 --json");
        ASSERT_EQ(0, r.exit_code) << r.output;
        for (int rank : {0, job - 1}) {
            const std::string who = "mailbox_scale rank " + std::to_string(rank);
            EXPECT_NE(std::string::npos, r.output.find(who + ": OK")) << r.output;
        }
        EXPECT_NE(std::string::npos, r.output.find("\"job\":" + std::to_string(job) + ","))
                << r.output;
        EXPECT_NE(std::string::npos, r.output.find("\"rings\":1,")) << r.output;
        EXPECT_EQ(std::string::npos, r.output.find("UCX  ERROR")) << r.output;
    }
}

TEST_P(ifunc_procs, trust_mode_and_checksummed_frames)
{
    expect_ok(probe(2, "-n 20 -s trust -c"), 2, frames_per_sender(20));
}

/* Ring of 4 slots, 3000 frames of mixed types: the ring wraps 750 times and
 * the sender must stall for credits (-e checks that it did). */
TEST_P(ifunc_procs, ring_wraparound_and_credit_stalls)
{
    auto r = probe(2, "-d 4 -n 3000 -m mixed -e");
    expect_ok(r, 2, 3000);
    EXPECT_GT(stat_count(r.output, R"(\[1\] \[stats rank 1\] .* (\d+) stalls)"), 0u)
            << r.output;
}

TEST_P(ifunc_procs, mixed_frame_types_on_one_ring_three_senders)
{
    expect_ok(probe(4, "-d 8 -n 600 -m mixed -p inplace -s trust"), 4, 3 * 600);
}

/* Portable frames: every jam's bitcode (the test package's module for this
 * host) compiled by the receiver once per hash, off its polling thread,
 * then run for every frame (Portable) or named by hash (Portable-Cached);
 * every effect checked. Senders keep sending Local frames on their own
 * rings meanwhile, and polls that found a compile running prove the poll
 * went on without it. */
TEST_P(ifunc_procs, portable_every_jam_compiled_once_off_the_poll)
{
    auto r = probe(3, "-n 40 -m local,portable,portable-cached");
    expect_ok(r, 3, 2 * 4 * 3 * 40);
    EXPECT_NE(std::string::npos, r.output.find("4 modules compiled")) << r.output;
    EXPECT_GT(stat_count(r.output, R"((\d+) polls found a compile running)"), 0u) << r.output;
}

/* In trust mode the receiver compiles the frame's own module: copied out of
 * the slot, hashed, and only the copy compiled */
TEST_P(ifunc_procs, portable_trust_compiles_a_private_copy)
{
    auto r = probe(2, "-n 20 -s trust -m portable,portable-cached");
    expect_ok(r, 2, 4 * 2 * 20);
    EXPECT_NE(std::string::npos, r.output.find("4 modules compiled")) << r.output;
}

/* A table of 2 compiled modules and 4 jams' Portable frames: a new module
 * evicts the least recently run one that no ring names for Cached frames
 * and no poll is running, and is compiled again when named again; nothing
 * is rejected, every effect exact. */
TEST_P(ifunc_procs, portable_full_table_evicts_and_loses_nothing)
{
    auto r = probe(2, "-n 30 -m portable", "UCX_TC_IFUNC_PORTABLE_CODE=2");
    expect_ok(r, 2, 4 * 30);
    EXPECT_GE(stat_count(r.output, R"((\d+) modules evicted)"), 2u) << r.output;
}

/* The receiver has not loaded the package, only the ried: trust mode links
 * the injected code from the symbol names of the first frame. */
TEST_P(ifunc_procs, trust_mode_remote_linking_without_package)
{
    auto r = probe(2, "-n 25 -s trust -N -m injected,cached");
    expect_ok(r, 2, 4 * 2 * 25);
    EXPECT_NE(std::string::npos, r.output.find("4 remote links")) << r.output;
}

/* A code cache of 2 copies and 4 jams' Injected frames (W^X copies):
 * the least recently run copy is evicted, nothing is rejected. */
TEST_P(ifunc_procs, full_code_cache_evicts_and_loses_nothing)
{
    auto r = probe(2, "-n 30 -m injected -p copy", "UCX_TC_IFUNC_CACHE_ENTRIES=2");
    expect_ok(r, 2, 4 * 30);
    EXPECT_GT(stat_count(r.output, R"(\[0\] \[stats rank 0\] .* (\d+) evictions)"), 0u)
            << r.output;
}

/*
 * UCX_TC_IFUNC_SIGNAL=trailer relies on one put landing in address order.
 * Measure it here rather than assume it: every frame checksummed, payloads
 * up to 3 KiB, a receiver that polls without sleeping. The result is
 * reported; a torn frame is rejected (never run), so the run itself must
 * complete either way.
 */
TEST_P(ifunc_procs, trailer_soundness)
{
    auto r = probe(2, "-g trailer -c -L -R -n 150", "UCX_TC_WAIT_POLICY=pause");
    ASSERT_EQ(0, r.exit_code) << r.output;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.output, m, std::regex(R"(soundness of signal trailer .*)")))
            << r.output;
    std::cout << "[ REPORT   ] " << GetParam() << ": " << m[0] << std::endl;
    RecordProperty("trailer_soundness", m[0].str());
}

/* A sender rewrites its Injected code (the entry point's first byte to
 * "ret" and back, held 0-5 us each, by puts through the rkey of its own
 * ring) while the receiver verifies it, with the default transports and
 * security: every frame runs the verified code or is rejected as not the
 * installed code; none runs what the sender flipped in
 * (test/helpers/ifunc_flip.c). TC_FLIP_FRAMES frames: 50,000 here (over
 * 10^6 flips), 10^6 in make check-long. A receiver that compared the slot
 * and then copied from it again ran the flipped code about once in 5,000
 * frames. */
TEST(ifunc_verify, code_flipped_during_verification_never_runs)
{
    const char *env   = std::getenv("TC_FLIP_FRAMES");
    const long frames = env ? std::atol(env) : 50000;
    auto r = tc_test::run_command(tc_test::build_path("src/tools/twochains-run") +
                                  " -n 2 --timeout 900 -- " +
                                  tc_test::build_path("test/helpers/ifunc_flip") + " -n " +
                                  std::to_string(frames));
    ASSERT_EQ(0, r.exit_code) << r.output;
    for (int rank : {0, 1}) {
        EXPECT_NE(std::string::npos,
                  r.output.find("ifunc_flip rank " + std::to_string(rank) + ": OK"))
                << r.output;
    }
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.output, m, std::regex(R"(ifunc_flip rank 0: \d+ frames ran.*)")))
            << r.output;
    std::cout << "[ REPORT   ] " << m[0] << std::endl;
}

INSTANTIATE_TEST_SUITE_P(tl, ifunc_procs, ::testing::Values("posix,self", "tcp,self"),
                         [](const auto &param_info) {
                             return param_info.param.substr(0, param_info.param.find(','));
                         });

} // namespace
