/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Many groups (shards) over the same members and one progress engine per
 * member: groups that idle go quiet (their poller reads one flag and one
 * word per peer), and must wake for a message, an application call and
 * their own heartbeats. Every member of every group delivers the same
 * sequence (digest), every message once with its exact bytes.
 */
#include "common.h"
#include "inproc_member.h"

#include "api/group.hpp"

#include <twochains/bootstrap.h>

#include <chrono>
#include <thread>
#include <vector>

namespace {

constexpr int kMembers = 3;

struct shard_result {
    ucs_status_t status = UCS_ERR_NO_PROGRESS;
    std::vector<uint64_t> digest;     /* by group */
    std::vector<uint64_t> delivered;  /* by group */
    std::vector<uint64_t> bad;        /* by group: wrong bytes or order */
    std::vector<tc::group_stats> stats;
};

uint8_t byte_of(int group, int rank, int64_t k, size_t i)
{
    return static_cast<uint8_t>(group * 17 + rank * 31 + k * 7 + i * 13);
}

/* Shard 0 streams; the others stay idle through it (quiet), then every
 * shard sends a few, after a pause long enough for heartbeats to matter. */
void run_shard_member(tc_bootstrap_inproc_domain_h domain, int rank, int groups,
                      int64_t stream, int64_t late, shard_result &out)
{
    tc_test::inproc_member member(domain, rank);
    if ((out.status = member.status()) != UCS_OK) {
        return;
    }
    tc::ucp_node &node = member.node();
    out.digest.assign(groups, 1469598103934665603ull);
    out.delivered.assign(groups, 0);
    out.bad.assign(groups, 0);
    std::vector<std::vector<int64_t>> next(groups, std::vector<int64_t>(kMembers, 0));
    std::vector<std::unique_ptr<tc::group>> g(groups);
    for (int i = 0; i < groups; ++i) {
        tc::group_params p;
        p.members     = {0, 1, 2};
        p.max_payload = 64;
        p.window      = 32;
        p.smc         = (i % 2) ? tc::smc_mode::batched : tc::smc_mode::urgent;
        p.on_deliver_span = [&, i](std::span<const tc::message> msgs) {
            for (const auto &m : msgs) {
                const int64_t k = next[i][m.sender]++;
                bool ok         = m.data.size() == 8 + static_cast<size_t>(k % 40);
                for (size_t b = 0; ok && b < m.data.size(); ++b) {
                    ok = static_cast<uint8_t>(m.data[b]) == byte_of(i, m.sender, k, b);
                }
                out.bad[i] += !ok;
                out.digest[i] = (out.digest[i] ^ static_cast<uint64_t>(m.seq)) * 1099511628211ull;
                out.digest[i] = (out.digest[i] ^ static_cast<uint64_t>(m.sender)) * 1099511628211ull;
                ++out.delivered[i];
            }
        };
        if ((out.status = tc::group::create(node, p, g[i])) != UCS_OK) {
            return;
        }
    }
    std::vector<int64_t> sent(groups, 0);
    auto send = [&](int i) {
        const int64_t k = sent[i]++;
        return g[i]->send(8 + k % 40, [&](std::span<std::byte> buf) {
            for (size_t b = 0; b < buf.size(); ++b) {
                buf[b] = std::byte{byte_of(i, rank, k, b)};
            }
        });
    };
    for (int64_t k = 0; k < stream; ++k) {
        if ((out.status = send(0)) != UCS_OK) {
            return;
        }
    }
    /* longer than a heartbeat interval, progressing: quiet shards must
     * keep their heartbeats going */
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    while (std::chrono::steady_clock::now() < until) {
        tc_progress(node.engine());
    }
    for (int64_t k = 0; k < late; ++k) {
        for (int i = 0; i < groups; ++i) {
            if ((out.status = send(i)) != UCS_OK) {
                return;
            }
        }
    }
    for (auto &each : g) {
        if ((out.status = each->close()) != UCS_OK) {
            return;
        }
        out.stats.push_back(each->stats());
    }
}

TEST(group_shards, quiet_shards_wake_and_deliver_everything_in_one_order)
{
    setenv("UCX_TLS", "posix,self", 1);
    const int groups = 24;
    const int64_t stream = 3000, late = 20;
    tc_bootstrap_inproc_domain_h domain;
    ASSERT_EQ(UCS_OK, tc_bootstrap_inproc_domain_create(kMembers, 60.0, &domain));
    std::vector<shard_result> res(kMembers);
    std::vector<std::thread> threads;
    for (int r = 0; r < kMembers; ++r) {
        threads.emplace_back(run_shard_member, domain, r, groups, stream, late, std::ref(res[r]));
    }
    for (auto &t : threads) {
        t.join();
    }
    tc_bootstrap_inproc_domain_destroy(domain);
    for (int r = 0; r < kMembers; ++r) {
        SCOPED_TRACE("member " + std::to_string(r));
        ASSERT_EQ(UCS_OK, res[r].status);
        for (int i = 0; i < groups; ++i) {
            SCOPED_TRACE("group " + std::to_string(i));
            const uint64_t expected = kMembers * (late + (i == 0 ? stream : 0));
            EXPECT_EQ(expected, res[r].delivered[i]);
            EXPECT_EQ(0u, res[r].bad[i]);
            EXPECT_EQ(res[0].digest[i], res[r].digest[i]) << "delivered sequences differ";
            EXPECT_EQ(0u, res[r].stats[i].views) << "a quiet shard lost a member";
        }
    }
    unsetenv("UCX_TLS");
}

} // namespace
