/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Replication groups in one process: N members, each with its own UCP
 * context, worker and progress engine, driven by its own thread, joined by
 * the in-process bootstrap, over real UCX transports.
 */
#include "common.h"

#include "api/group.hpp"
#include "order/sequence.hpp"

#include <twochains/bootstrap.h>

#include <cstring>
#include <functional>
#include <random>
#include <thread>

namespace {

/* Order-sensitive digest of what a member delivered. */
struct hash_chain {
    uint64_t value = 1469598103934665603ull;
    uint64_t count = 0;
    void add(const tc::message &m)
    {
        mix(&m.sender, sizeof(m.sender));
        mix(&m.index, sizeof(m.index));
        mix(m.data.data(), m.data.size());
        ++count;
    }
    void mix(const void *p, size_t n)
    {
        auto *b = static_cast<const unsigned char*>(p);
        for (size_t i = 0; i < n; ++i) {
            value = (value ^ b[i]) * 1099511628211ull;
        }
        value = (value ^ n) * 1099511628211ull;
    }
};

/* The payload of message k from rank r: size and bytes derived from (r, k). */
size_t payload_size(int rank, int64_t k, size_t max)
{
    std::mt19937_64 g(static_cast<uint64_t>(rank) * 1000003u + static_cast<uint64_t>(k));
    return sizeof(int64_t) + g() % (max - sizeof(int64_t) + 1);  /* 8 .. max */
}

uint8_t payload_byte(int rank, int64_t k, size_t i)
{
    return static_cast<uint8_t>(rank * 31 + k * 7 + i * 13);
}

struct member_result {
    ucs_status_t      status = UCS_ERR_NO_PROGRESS;
    hash_chain        chain;
    uint64_t          bad_payloads = 0;
    uint64_t          order_errors = 0;
    tc::group_stats   stats;
};

struct scenario {
    int              members      = 3;
    bool             all_send     = true;
    int64_t          per_sender   = 2000;
    size_t           max_payload  = 256;
    unsigned         window       = 16;
    tc::delivery_mode mode        = tc::delivery_mode::ordered;
};

void run_member(tc_bootstrap_inproc_domain_h domain, int rank, const scenario &sc,
                member_result &out)
{
    tc_bootstrap_h boot_raw;
    out.status = tc_bootstrap_inproc_create(domain, rank, &boot_raw);
    if (out.status != UCS_OK) {
        return;
    }
    tc::bootstrap_ptr boot(boot_raw);
    tc::ucp_node node(boot.get());
    if ((out.status = node.status()) != UCS_OK) {
        return;
    }

    std::vector<int> members;
    for (int r = 0; r < sc.members; ++r) {
        members.push_back(r);
    }
    int64_t last_seq = -1;
    std::vector<int64_t> next_index(sc.members, 0);
    tc::group_params p;
    p.members     = members;
    p.senders     = sc.all_send ? std::vector<int>{} : std::vector<int>{0};
    p.max_payload = sc.max_payload;
    p.window      = sc.window;
    p.mode        = sc.mode;
    p.on_deliver  = [&](const tc::message &m) {
        out.chain.add(m);
        /* the group numbers nulls too, so the payload carries the app's own k */
        int64_t k = -1;
        if (m.data.size() >= sizeof(k)) {
            std::memcpy(&k, m.data.data(), sizeof(k));
        }
        if (k < 0 || m.data.size() != payload_size(m.sender, k, sc.max_payload)) {
            ++out.bad_payloads;
        } else {
            for (size_t i = sizeof(k); i < m.data.size(); ++i) {
                if (static_cast<uint8_t>(m.data[i]) != payload_byte(m.sender, k, i)) {
                    ++out.bad_payloads;
                    break;
                }
            }
        }
        if (sc.mode == tc::delivery_mode::ordered && m.seq <= last_seq) {
            ++out.order_errors;
        }
        if (k != next_index[m.sender]++) {
            ++out.order_errors;   /* per-sender FIFO holds in every mode */
        }
        last_seq = m.seq;
    };

    std::unique_ptr<tc::group> g;
    if ((out.status = tc::group::create(node, p, g)) != UCS_OK) {
        return;
    }

    if (g->is_sender()) {
        for (int64_t k = 0; k < sc.per_sender; ++k) {
            size_t size = payload_size(rank, k, sc.max_payload);
            out.status  = g->send(size, [&](std::span<std::byte> buf) {
                std::memcpy(buf.data(), &k, sizeof(k));
                for (size_t i = sizeof(k); i < buf.size(); ++i) {
                    buf[i] = std::byte{payload_byte(rank, k, i)};
                }
            });
            if (out.status != UCS_OK) {
                return;
            }
        }
    }
    out.status = g->close();  /* drains: everything sent is delivered everywhere */
    out.stats  = g->stats();
}

std::vector<member_result> run_scenario(const scenario &sc)
{
    tc_bootstrap_inproc_domain_h domain;
    EXPECT_EQ(UCS_OK, tc_bootstrap_inproc_domain_create(sc.members, 60.0, &domain));
    std::vector<member_result> results(sc.members);
    std::vector<std::thread> threads;
    for (int r = 0; r < sc.members; ++r) {
        threads.emplace_back(run_member, domain, r, std::cref(sc), std::ref(results[r]));
    }
    for (auto &t : threads) {
        t.join();
    }
    tc_bootstrap_inproc_domain_destroy(domain);
    return results;
}

void expect_identical_delivery(const scenario &sc, const std::vector<member_result> &res)
{
    const uint64_t senders  = sc.all_send ? sc.members : 1;
    const uint64_t expected = senders * sc.per_sender;
    for (int r = 0; r < sc.members; ++r) {
        SCOPED_TRACE("member " + std::to_string(r));
        ASSERT_EQ(UCS_OK, res[r].status);
        EXPECT_EQ(expected, res[r].chain.count);
        EXPECT_EQ(0u, res[r].bad_payloads);
        EXPECT_EQ(0u, res[r].order_errors);
        EXPECT_EQ(expected, res[r].stats.delivered);
        if (sc.mode == tc::delivery_mode::ordered) {
            EXPECT_EQ(res[0].chain.value, res[r].chain.value) << "delivered sequences differ";
        }
    }
}

class group_inproc : public ::testing::TestWithParam<std::tuple<std::string, int, bool>> {
protected:
    void SetUp() override { setenv("UCX_TLS", std::get<0>(GetParam()).c_str(), 1); }
    void TearDown() override { unsetenv("UCX_TLS"); }
};

TEST_P(group_inproc, identical_total_order_with_random_sizes)
{
    scenario sc;
    sc.members    = std::get<1>(GetParam());
    sc.all_send   = std::get<2>(GetParam());
    /* 100 000 messages in all over shared memory; tcp's emulated RMA is ~10x slower */
    const int64_t total = (std::get<0>(GetParam()).starts_with("tcp")) ? 10000 : 100000;
    sc.per_sender       = total / (sc.all_send ? sc.members : 1);
    auto res      = run_scenario(sc);
    expect_identical_delivery(sc, res);
}

INSTANTIATE_TEST_SUITE_P(
        tl, group_inproc,
        ::testing::Combine(::testing::Values("posix,self", "tcp,self"), ::testing::Values(2, 3, 5),
                           ::testing::Bool()),
        [](const auto &param_info) {
            std::string tl = std::get<0>(param_info.param);
            return tl.substr(0, tl.find(',')) + "_n" + std::to_string(std::get<1>(param_info.param)) +
                   (std::get<2>(param_info.param) ? "_all" : "_one");
        });

TEST(group_order, contiguous_received_and_counts)
{
    std::vector<int64_t> rec{3, 2, 2};  /* seqs 0..8 of S=3: sender 0 has 0,3,6 */
    EXPECT_EQ(6, tc::order::contiguous_received(rec));  /* 7 = k2 of sender 1 missing */
    rec = {0, 5, 5};
    EXPECT_EQ(-1, tc::order::contiguous_received(rec));
    EXPECT_EQ(0, tc::order::count_through(-1, 0, 3));
    EXPECT_EQ(1, tc::order::count_through(0, 0, 3));
    EXPECT_EQ(0, tc::order::count_through(0, 1, 3));
    EXPECT_EQ(3, tc::order::count_through(8, 2, 3));
    EXPECT_EQ(2, tc::order::sender_of(tc::order::sequence_of(7, 2, 3), 3));
    EXPECT_EQ(7, tc::order::index_of(tc::order::sequence_of(7, 2, 3), 3));
}

} // namespace
