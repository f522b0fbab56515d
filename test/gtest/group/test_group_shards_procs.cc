/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Many small shards over one large job, as real processes
 * (test/helpers/shard_probe) over posix and over tcp with the default
 * (adaptive) wait policy: P ranks (TC_SHARD_PROCS, 100 by default; 256 in
 * make check-long over posix), one Two-Chains mailbox over all of them and about 2P/3
 * shards of 3, each rank in two. Checked:
 *  - every mailbox receiver's exact sum and call count of the Local and
 *    Cached jams sent to it, none rejected;
 *  - every shard: its members report one hash chain, count and view; a
 *    shard without a victim delivered exactly members x messages and kept
 *    its first view; a shard whose member was killed (kill -9, mid-stream)
 *    installed a view without it, its survivors agreeing;
 *  - endpoints are created on use: no node holds an endpoint to more than
 *    its shard mates (and itself);
 * and reports per rank (min / median / max) the time to create the node,
 * the mailbox and the shards, the bytes pinned (ucp_mem_map), VmRSS and
 * VmHWM.
 *
 * The test raises its soft RLIMIT_NOFILE to the hard limit (a pipe per
 * rank here; each rank does the same for its sockets).
 */
#include "common.h"
#include "probe_cluster.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <sys/resource.h>

namespace {

using namespace std::chrono_literals;
using tc_test::probe::cluster;

struct shard_report {
    int           rank;
    std::string   members, chain, view;
    unsigned long count = 0;
    long          epoch = 0;
    unsigned long bad   = 0;
};

std::set<int> parse_list(const std::string &s)
{
    std::set<int> out;
    std::stringstream in(s);
    for (std::string tok; std::getline(in, tok, ',');) {
        out.insert(std::stoi(tok));
    }
    return out;
}

/* "key":number pairs of a flat JSON object */
std::map<std::string, double> parse_json(const std::string &line)
{
    std::map<std::string, double> out;
    std::regex kv(R"rx("(\w+)":(-?[0-9.]+))rx");
    for (std::sregex_iterator it(line.begin(), line.end(), kv), end; it != end; ++it) {
        out[(*it)[1]] = std::stod((*it)[2]);
    }
    return out;
}

class group_shards_procs : public ::testing::TestWithParam<std::string> {
protected:
    static int procs()
    {
        const char *env = std::getenv("TC_SHARD_PROCS");
        return env ? std::atoi(env) : 100;
    }

    void raise_nofile()
    {
        rlimit r{};
        if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
            r.rlim_cur = r.rlim_max;
            setrlimit(RLIMIT_NOFILE, &r);
        }
    }
};

TEST_P(group_shards_procs, many_shards_of_three_a_mailbox_and_kills)
{
    raise_nofile();
    const int p          = procs();
    const long msgs      = 60;
    const long kWindow   = 16;   /* shard_probe's window */
    ASSERT_GE(p, 12);
    const std::set<int> victims = {4, p / 2 + 1};
    std::string victim_list;
    for (int v : victims) {
        victim_list += (victim_list.empty() ? "" : ",") + std::to_string(v);
    }
    std::vector<std::pair<int, std::string>> env;
    for (int r = 0; r < p; ++r) {
        /* P processes on 2 cores: heartbeats paced to the machine, and the
         * creation collectives given the time P processes take to start */
        env.emplace_back(r, "UCX_TC_HEARTBEAT_INTERVAL=50ms");
        env.emplace_back(r, "UCX_TC_SUSPECT_TIMEOUT=4s");
        env.emplace_back(r, "UCX_TC_BOOTSTRAP_TIMEOUT=180s");
    }
    const auto start = std::chrono::steady_clock::now();
    cluster c(p, GetParam(),
              "-s " + std::to_string(msgs) + " -f 10 -d 3 -t 240 -k " + victim_list, env,
              "test/helpers/shard_probe");
    const std::vector<int> victim_ranks(victims.begin(), victims.end());
    ASSERT_TRUE(c.wait_for(victim_ranks, "victim ready", 240s)) << c.all_output();
    for (int v : victims) {
        c.signal(v, SIGKILL);
    }
    std::vector<int> survivors;
    for (int r = 0; r < p; ++r) {
        if (!victims.count(r)) {
            survivors.push_back(r);
        }
    }
    const bool finished = c.wait_for(survivors, "done ", 240s);
    for (int r : survivors) {
        c.signal(r, SIGUSR1);   /* everyone is done: leave */
    }
    c.wait_all(30s);
    const double seconds = tc_test::seconds_since(start);
    ASSERT_TRUE(finished) << c.all_output();

    std::map<int, std::vector<shard_report>> shards;
    std::map<std::string, std::vector<double>> metrics;
    std::regex shard_line(
            R"(shard (\d+) members ([0-9,]+) chain ([0-9a-f]+) count (\d+) epoch (\d+) view ([0-9,]+) bad (\d+) sent \d+ trimmed \d+ status Success)");
    for (int r : survivors) {
        SCOPED_TRACE("rank " + std::to_string(r));
        const auto &m = c.at(r);
        ASSERT_EQ(0, m.exit_code) << m.text;
        EXPECT_NE(std::string::npos, m.text.find("done OK")) << m.text;
        EXPECT_EQ(std::string::npos, m.text.find("FAILED")) << m.text;
        EXPECT_NE(std::string::npos, m.text.find(" OK\n")) << m.text;
        std::smatch sm;
        ASSERT_TRUE(std::regex_search(m.text, sm, std::regex(R"(mailbox sum -?\d+ frames \d+ .* OK)")))
                << m.text;
        int found = 0;
        for (std::sregex_iterator it(m.text.begin(), m.text.end(), shard_line), end; it != end;
             ++it, ++found) {
            shard_report s{r, (*it)[2], (*it)[3], (*it)[6], std::stoul((*it)[4]),
                           std::stol((*it)[5]), std::stoul((*it)[7])};
            shards[std::stoi((*it)[1])].push_back(s);
        }
        EXPECT_EQ(2, found) << m.text;
        for (const char *what : {"metrics", "final"}) {
            const auto at = m.text.find(std::string(what) + " {");
            ASSERT_NE(std::string::npos, at) << m.text;
            for (const auto &[k, v] :
                 parse_json(m.text.substr(at, m.text.find('\n', at) - at))) {
                metrics[std::string(what) + "." + k].push_back(v);
            }
        }
    }

    EXPECT_EQ(static_cast<size_t>(2 * (p / 3)), shards.size());
    long first_epoch = -1;
    int with_victim = 0;
    for (const auto &[id, reports] : shards) {
        SCOPED_TRACE("shard " + std::to_string(id) + " members " + reports[0].members);
        const std::set<int> members = parse_list(reports[0].members);
        std::set<int> alive;
        for (int m : members) {
            if (!victims.count(m)) {
                alive.insert(m);
            }
        }
        EXPECT_EQ(alive.size(), reports.size()) << "every surviving member reports";
        for (const auto &s : reports) {
            EXPECT_EQ(0u, s.bad);
            EXPECT_EQ(reports[0].chain, s.chain) << "members delivered different sequences";
            EXPECT_EQ(reports[0].count, s.count);
            EXPECT_EQ(reports[0].view, s.view);
            EXPECT_EQ(reports[0].epoch, s.epoch);
        }
        EXPECT_EQ(alive, parse_list(reports[0].view)) << "the view is the survivors";
        if (alive.size() == members.size()) {
            EXPECT_EQ(members.size() * msgs, reports[0].count);
            first_epoch = (first_epoch < 0) ? reports[0].epoch : first_epoch;
            EXPECT_EQ(first_epoch, reports[0].epoch) << "a shard without a kill changed view";
        } else {
            ++with_victim;
            /* what the survivors sent, but for what the failure's trim
             * discarded (at most what was in flight: a window per sender),
             * and a prefix of the victim's */
            EXPECT_GE(reports[0].count, alive.size() * (msgs - kWindow));
            EXPECT_LE(reports[0].count, alive.size() * msgs + msgs / 2);
        }
    }
    EXPECT_EQ(static_cast<int>(2 * victims.size()), with_victim);
    for (const auto &[id, reports] : shards) {
        if (parse_list(reports[0].view).size() < parse_list(reports[0].members).size()) {
            EXPECT_GT(reports[0].epoch, first_epoch) << "shard " << id;
        }
    }
    /* endpoints on use: shard mates (at most 2 x 4 others) and itself */
    for (double eps : metrics["final.node_eps"]) {
        EXPECT_LE(eps, 9.0);
    }

    std::ostringstream report;
    report << "{\"transport\":\"" << GetParam().substr(0, GetParam().find(',')) << "\",\"ranks\":"
           << p << ",\"shards\":" << shards.size() << ",\"seconds\":" << seconds;
    for (auto &[k, v] : metrics) {
        if (k == "metrics.rank" || k == "final.rank" || k == "metrics.ranks" ||
            k == "metrics.shards") {
            continue;
        }
        std::sort(v.begin(), v.end());
        report << ",\"" << k << "\":[" << v.front() << "," << v[v.size() / 2] << ","
               << v.back() << "]";
    }
    report << "}";
    std::cout << "[ REPORT   ] min/median/max per rank: " << report.str() << std::endl;
    RecordProperty("shards", report.str());
}

INSTANTIATE_TEST_SUITE_P(tl, group_shards_procs, ::testing::Values("posix,self", "tcp,self"),
                         [](const auto &param_info) {
                             return param_info.param.substr(0, param_info.param.find(','));
                         });

} // namespace
