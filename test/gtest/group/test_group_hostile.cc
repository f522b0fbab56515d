/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The hostile-member harness: one member of a group of real processes
 * (group_fault_probe -X SEED:RANK) turns hostile at a moment the seed picks
 * and writes, through the lane it really has (its own row pushed to every
 * member, its own slots), values the protocol never writes into every
 * column of its row and every field of its slot headers, until it is out.
 *
 * The honest members must not crash, hang or grow (max RSS checked), must
 * deliver one sequence (hash chain) holding every message of every honest
 * member exactly once (but for those its sender counts as trimmed at the
 * view change that expels the hostile one), must log why they expelled
 * it, and must end in a view without it.
 *
 * Seeds: TC_HOSTILE_SEEDS per (transport, group size), 13 by default
 * (52 in all: make check); make check-long runs 250 (1,000 in all).
 */
#include "common.h"
#include "group/probe_cluster.h"

#include <cstdlib>
#include <map>
#include <regex>

namespace {

using namespace std::chrono_literals;
using namespace tc_test::probe;

constexpr long kMessages      = 400;
constexpr long kMaxRssKiB     = 512 * 1024;

using hostile_case = std::tuple<std::string, int, int>;

class group_hostile : public ::testing::TestWithParam<hostile_case> {};

std::map<int, unsigned long> delivered_from(const std::string &text)
{
    std::map<int, unsigned long> out;
    std::smatch m;
    if (!std::regex_search(text, m, std::regex(R"(delivered from ([0-9:,]+))"))) {
        return out;
    }
    const std::string list = m[1];
    const std::regex entry(R"((\d+):(\d+))");
    for (std::sregex_iterator it(list.begin(), list.end(), entry), end;
         it != end; ++it) {
        out[std::stoi((*it)[1])] = std::stoul((*it)[2]);
    }
    return out;
}

TEST_P(group_hostile, honest_members_expel_it_and_deliver_everything_they_sent)
{
    const auto &[tls, n, seed] = GetParam();
    const int hostile          = seed % n;
    cluster c(n, tls,
              "-b -g -c " + std::to_string(kMessages) + " -r 4000 -s 64 -X " +
                      std::to_string(seed) + ":" + std::to_string(hostile));
    c.wait_all(90s);
    SCOPED_TRACE("hostile rank " + std::to_string(hostile) + ", seed " + std::to_string(seed));
    if (c.at(hostile).text.find("hostile: from message") == std::string::npos &&
        c.at(hostile).exit_code == 3 &&
        c.at(hostile).text.find("expelled from the group") != std::string::npos) {
        /* starved past the suspicion timeout before its moment came (a CPU
         * hog beside us): excluded, and told so; nothing hostile happened,
         * and the others must simply agree without it */
        std::printf("rank %d was expelled before it turned hostile\n", hostile);
        expect_survivors_agree_despite_false_suspicion(c, n, {hostile});
        return;
    }
    ASSERT_NE(std::string::npos, c.at(hostile).text.find("hostile: from message"))
            << c.at(hostile).text;

    expect_survivors_agree_despite_false_suspicion(c, n, {hostile});
    if (HasFatalFailure()) {
        return;
    }
    /* why it went: an honest member saw it write what it could not have
     * (the others may only have followed that suspicion), unless its own
     * bad values took it down first and it went silent */
    const bool hostile_crashed_itself = c.at(hostile).exit_code < 0 ||
                                        c.at(hostile).exit_code > 128;
    if (!hostile_crashed_itself) {
        bool logged = false;
        for (int r = 0; r < n; ++r) {
            logged = logged || (r != hostile &&
                                c.at(r).text.find("rank " + std::to_string(hostile) + " wrote ") !=
                                        std::string::npos);
        }
        EXPECT_TRUE(logged) << c.all_output();
    }
    for (int r = 0; r < n; ++r) {
        const auto &m = c.at(r);
        if (r == hostile || m.exit_code != 0) {
            continue;   /* the hostile one, or an honest one told it was expelled */
        }
        /* every message of every honest member once, except those the
         * sender itself counts as trimmed at the view change (beyond the
         * trim of a failure, not resent: docs/groups.md) */
        const auto from = delivered_from(m.text);
        for (int s = 0; s < n; ++s) {
            if (s == hostile || c.at(s).exit_code != 0) {
                continue;
            }
            const unsigned long got  = from.count(s) ? from.at(s) : 0ul;
            const unsigned long lost = static_cast<unsigned long>(kMessages) - got;
            EXPECT_LE(got, static_cast<unsigned long>(kMessages)) << m.text;
            EXPECT_LE(lost, parse(c.at(s).text).trimmed)
                    << "rank " << r << " lost messages of rank " << s << " that rank " << s
                    << " does not count as trimmed\n" << c.all_output();
        }
        std::smatch rss;
        ASSERT_TRUE(std::regex_search(m.text, rss, std::regex(R"(max rss (\d+) KiB)"))) << m.text;
        EXPECT_LT(std::stol(rss[1]), kMaxRssKiB) << m.text;
    }
}

std::vector<hostile_case> hostile_cases()
{
    const char *env = std::getenv("TC_HOSTILE_SEEDS");
    const int seeds = env ? std::max(1, std::atoi(env)) : 13;
    std::vector<hostile_case> v;
    for (const char *tls : {"posix,self", "tcp,self"}) {
        for (int seed = 1; seed <= seeds; ++seed) {
            v.emplace_back(tls, 3, seed);
            v.emplace_back(tls, 5, 5000 + seed);
        }
    }
    return v;
}

INSTANTIATE_TEST_SUITE_P(
        seeds, group_hostile, ::testing::ValuesIn(hostile_cases()),
        [](const auto &param_info) {
            const std::string tls = std::get<0>(param_info.param);
            return tls.substr(0, tls.find(',')) + "_n" +
                   std::to_string(std::get<1>(param_info.param)) + "_seed" +
                   std::to_string(std::get<2>(param_info.param));
        });

} // namespace
