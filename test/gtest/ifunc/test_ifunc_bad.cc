/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Bad input, one test per kind, over posix,self and tcp,self: a sender
 * (test/helpers/ifunc_bad.c) writes raw frames with ucp_put_nbx, bypassing every
 * sender-side check. The receiver must reject each bad frame with the right
 * reason, count it, log it once per cause and peer at warn level, free the
 * slot, and then run the next good frame correctly.
 */
#include "common.h"

#include <string>
#include <tuple>

namespace {

using bad_param = std::tuple<std::string, std::string, std::string>; /* tl, case, reason */

class ifunc_bad : public ::testing::TestWithParam<bad_param> {};

size_t count(const std::string &haystack, const std::string &needle)
{
    size_t n = 0;
    for (size_t pos = haystack.find(needle); pos != std::string::npos;
         pos = haystack.find(needle, pos + 1)) {
        ++n;
    }
    return n;
}

TEST_P(ifunc_bad, rejected_counted_logged_once_and_next_frame_runs)
{
    const auto &[tl, name, reason] = GetParam();
    auto r = tc_test::run_command("UCX_TLS=" + tl + " " +
                                  tc_test::build_path("src/tools/twochains-run") +
                                  " -n 2 --timeout 60 -- " +
                                  tc_test::build_path("test/helpers/ifunc_bad") + " " + name);
    ASSERT_EQ(0, r.exit_code) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("[0] ifunc_bad rank 0: case " + name + ": OK"))
            << r.output;
    EXPECT_NE(std::string::npos, r.output.find("[1] ifunc_bad rank 1: case " + name + ": OK"))
            << r.output;
    /* counted for every bad frame, logged at warn level once for the peer */
    EXPECT_EQ(1u, count(r.output, "UCX  WARN")) << r.output;
    EXPECT_EQ(1u, count(r.output, "rejected frame")) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("from rank 1: " + reason)) << r.output;
    EXPECT_EQ(std::string::npos, r.output.find("UCX  ERROR")) << r.output;
}

/* The other way round: a receiver writes the sender's credit word (the
 * line only it may write) past what it was sent. Read so twice, it is the
 * receiver's fault: counted once (credit_faults), logged once, and every
 * later send to it fails with UCS_ERR_REJECTED instead of stalling for good
 * (before, the unsigned difference wrapped and the sender waited forever
 * for a credit) */
class ifunc_credit_lie : public ::testing::TestWithParam<std::string> {};

TEST_P(ifunc_credit_lie, credit_word_past_sent_is_the_receivers_fault)
{
    auto r = tc_test::run_command("UCX_TLS=" + GetParam() + " " +
                                  tc_test::build_path("src/tools/twochains-run") +
                                  " -n 2 --timeout 60 -- " +
                                  tc_test::build_path("test/helpers/ifunc_bad") +
                                  " credit_past_sent");
    ASSERT_EQ(0, r.exit_code) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("send Operation rejected by remote peer"))
            << r.output;
    EXPECT_NE(std::string::npos, r.output.find("credit faults 1")) << r.output;
    EXPECT_EQ(1u, count(r.output, "wrote credit word 1099511627776")) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("[1] ifunc_bad rank 1: case credit_past_sent: OK"))
            << r.output;
}

INSTANTIATE_TEST_SUITE_P(transports, ifunc_credit_lie,
                         ::testing::Values("posix,self", "tcp,self"),
                         [](const auto &tl) { return tl.param.substr(0, tl.param.find(',')); });

/* A put's late duplicate store of the previous lap's signal (the cause of
 * the stalled ping-pongs once seen with busy polling): waited out, counted
 * as stale, never rejected or logged, and the next frame runs */
class ifunc_stale : public ::testing::TestWithParam<std::string> {};

TEST_P(ifunc_stale, previous_lap_signal_is_not_a_frame)
{
    auto r = tc_test::run_command("UCX_TLS=" + GetParam() + " " +
                                  tc_test::build_path("src/tools/twochains-run") +
                                  " -n 2 --timeout 60 -- " +
                                  tc_test::build_path("test/helpers/ifunc_bad") + " stale_signal");
    ASSERT_EQ(0, r.exit_code) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("[0] ifunc_bad rank 0: case stale_signal: OK"))
            << r.output;
    EXPECT_EQ(0u, count(r.output, "UCX  WARN")) << r.output;
    EXPECT_EQ(std::string::npos, r.output.find("UCX  ERROR")) << r.output;
}

INSTANTIATE_TEST_SUITE_P(transports, ifunc_stale,
                         ::testing::Values("posix,self", "tcp,self"),
                         [](const auto &tl) {
                             return tl.param.substr(0, tl.param.find(','));
                         });

/* Compact frames torn on purpose (test/helpers/ifunc_tear.c): written in
 * flushed pieces with pauses -- the expected seq first, words in reverse,
 * two halves, single bytes shuffled -- each stored again later. Every frame
 * runs once, never before its last piece, with exactly the bytes sent; one
 * left incomplete is rejected as truncated and the next one runs. */
class ifunc_tear : public ::testing::TestWithParam<std::string> {};

/* One run of the tearing helper over @a tls, with @a env before it and
 * @a mode as its argument; what both kinds of frames must show */
static tc_test::run_result run_tear(const std::string &tls, const std::string &env,
                                        const std::string &mode)
{
    auto r = tc_test::run_command("UCX_TLS=" + tls + " " + env + " " +
                                  tc_test::build_path("src/tools/twochains-run") +
                                  " -n 2 --timeout 120 -- " +
                                  tc_test::build_path("test/helpers/ifunc_tear") + " " + mode);
    EXPECT_EQ(0, r.exit_code) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("[0] ifunc_tear rank 0: OK")) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("[1] ifunc_tear rank 1: OK")) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("ran 41, rejected 1 (truncated 1)")) << r.output;
    /* the one incomplete frame, logged once */
    EXPECT_EQ(1u, count(r.output, "rejected frame")) << r.output;
    EXPECT_EQ(std::string::npos, r.output.find("UCX  ERROR")) << r.output;
    return r;
}

TEST_P(ifunc_tear, torn_frames_never_run_and_none_is_lost)
{
    run_tear(GetParam(), "", "");
}

INSTANTIATE_TEST_SUITE_P(transports, ifunc_tear,
                         ::testing::Values("posix,self", "tcp,self"),
                         [](const auto &tl) {
                             return tl.param.substr(0, tl.param.find(','));
                         });

/* The same tearing, of the public API's checked frames (Injected code in
 * one put, ucp_ifunc_send_nbix's default form) into caller-managed buffers
 * that ucp_poll_ifunc polls, all of them on every round, garbage-filled
 * first: every frame runs once, never before its last piece, with the
 * bytes sent; every late store of a run frame is recognised (no buffer
 * yields a second frame); the incomplete one is rejected as truncated. */
class ifunc_tear_buffer : public ::testing::TestWithParam<std::string> {};

TEST_P(ifunc_tear_buffer, torn_checked_frames_never_run_and_none_is_lost)
{
    /* checked frames are the default over networks; over shared memory the
     * default fences, so the test asks for them */
    auto r = run_tear(GetParam(), "UCX_TC_IFUNC_CHECKED_MAX=64k", "buffer");
    EXPECT_NE(std::string::npos, r.output.find("checked frame of")) << r.output;
}

INSTANTIATE_TEST_SUITE_P(transports, ifunc_tear_buffer,
                         ::testing::Values("posix,self", "tcp,self"),
                         [](const auto &tl) {
                             return tl.param.substr(0, tl.param.find(','));
                         });

/* A hostile mailbox's GRANT (its ring) or REQUEST (its credit line) names
 * an address outside what it registered (test/helpers/ifunc_grant.c). Over
 * shared memory our puts there would store into our own memory: the
 * honest rank refuses it, counts it once and logs it once, and goes on.
 * (Over tcp the puts travel on the AM lane and the hostile's own lane
 * refuses them: nothing of ours is at stake, so it is not tested there.) */
class ifunc_grant : public ::testing::TestWithParam<std::string> {};

TEST_P(ifunc_grant, a_target_outside_the_registration_is_refused)
{
    auto r = tc_test::run_command("UCX_TLS=posix,self " +
                                  tc_test::build_path("src/tools/twochains-run") +
                                  " -n 2 --timeout 60 -- " +
                                  tc_test::build_path("test/helpers/ifunc_grant") + " " +
                                  GetParam());
    ASSERT_EQ(0, r.exit_code) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("forged the " + GetParam() + " address"))
            << r.output;
    EXPECT_NE(std::string::npos, r.output.find("[0] ifunc_grant rank 0: case " + GetParam() +
                                               ": OK")) << r.output;
    EXPECT_EQ(1u, count(r.output, "rejected a " + GetParam() + " control message"))
            << r.output;
    EXPECT_EQ(1u, count(r.output, "outside what its rkey maps")) << r.output;
}

INSTANTIATE_TEST_SUITE_P(posix, ifunc_grant, ::testing::Values("grant", "request"));

const bad_param cases[] = {
    {"", "size_zero", "size"},
    {"", "size_big", "size"},
    {"", "truncated", "truncated"},
    {"", "unknown_pkg", "unknown-package"},
    {"", "unknown_element", "unknown-element"},
    {"", "hash_mismatch", "hash"},
    {"", "injected_local_only", "disabled"},
    {"", "cached_never_sent", "cache-miss"},
    {"", "bad_offset", "offset"},
    {"", "ignore_credits", "sequence"},
    {"", "checksum", "checksum"},
    {"", "bad_signal", "signal"},
    {"", "unresolved_symbol", "link"},
    {"", "compact_unknown_pkg", "unknown-package"},
    {"", "compact_wrong_sender", "sequence"},
    {"", "compact_size_big", "size"},
    {"", "compact_injected", "type"},
    {"", "compact_cached_never_sent", "cache-miss"},
    /* Portable frames: the reason, and what the log line says of the cause */
    {"", "portable_not_bitcode", "bitcode: 512 bytes that are not LLVM 14 bitcode"},
    {"", "portable_wrong_triple", "triple: a module for 'aarch64-unknown-linux-gnu'"},
    {"", "portable_hash_mismatch", "hash: module does not hash to"},
    {"", "portable_not_installed", "hash: module"},
    {"", "portable_forbidden_external", "external: external 'system' is neither"},
    {"", "portable_unresolved_external",
     "external: external 'tc_no_such_function_anywhere' is neither"},
    {"", "portable_module_past_frame", "offset"},
    {"", "portable_local_only", "disabled: portable code in local-only mode"},
    {"", "portable_llvm_abort", "bitcode: the module crashed LLVM's compile"},
    {"", "portable_llvm_abort_confine", "bitcode: the module crashed LLVM's compile"},
};

std::vector<bad_param> with_tl(const std::string &tl)
{
    std::vector<bad_param> v;
    for (const auto &c : cases) {
        v.emplace_back(tl, std::get<1>(c), std::get<2>(c));
    }
    return v;
}

std::string param_name(const ::testing::TestParamInfo<bad_param> &info)
{
    const auto &tl = std::get<0>(info.param);
    return std::get<1>(info.param) + "_" + tl.substr(0, tl.find(','));
}

INSTANTIATE_TEST_SUITE_P(posix, ifunc_bad, ::testing::ValuesIn(with_tl("posix,self")),
                         param_name);
INSTANTIATE_TEST_SUITE_P(tcp, ifunc_bad, ::testing::ValuesIn(with_tl("tcp,self")),
                         param_name);

} // namespace
