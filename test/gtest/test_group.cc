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

#include <chrono>
#include <cstring>
#include <functional>
#include <stdexcept>
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
    return 1 + g() % max;  /* 1 .. max */
}

uint8_t payload_byte(int rank, int64_t k, size_t i)
{
    return static_cast<uint8_t>(rank * 31 + k * 7 + i * 13);
}

struct member_result {
    ucs_status_t      status = UCS_ERR_NO_PROGRESS;
    ucs_status_t      create_status = UCS_ERR_NO_PROGRESS;
    hash_chain        chain;
    uint64_t          bad_payloads = 0;
    uint64_t          order_errors = 0;
    uint64_t          sent         = 0;
    tc::group_stats   stats;
    std::vector<ucs_status_t> misuse_status;
};

struct scenario {
    int              members      = 3;
    bool             all_send     = true;
    int64_t          per_sender   = 2000;
    size_t           max_payload  = 256;
    unsigned         window       = 16;
    tc::delivery_mode mode        = tc::delivery_mode::ordered;
    int              throw_every  = 0;      /* member 1's callback throws every n-th */
    int64_t          quiet_sends  = -1;     /* member 1 sends only this many */
    bool             nonblocking  = false;  /* send without blocking, retry on NO_RESOURCE */
    std::function<void(int, tc::group_params &)> tweak;  /* per-member parameter change */
    std::function<void(int, tc::group &, member_result &)> misuse; /* before sending */
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
        /* the group numbers nulls too, so check against the app's own k:
         * per-sender FIFO means it is the next one we expect from m.sender */
        const int64_t k = next_index[m.sender];
        if (m.data.size() != payload_size(m.sender, k, sc.max_payload)) {
            ++out.bad_payloads;
        } else {
            for (size_t i = 0; i < m.data.size(); ++i) {
                if (static_cast<uint8_t>(m.data[i]) != payload_byte(m.sender, k, i)) {
                    ++out.bad_payloads;
                    break;
                }
            }
        }
        if (sc.mode == tc::delivery_mode::ordered && m.seq <= last_seq) {
            ++out.order_errors;
        }
        ++next_index[m.sender];
        last_seq = m.seq;
        if (sc.throw_every && rank == 1 && out.chain.count % sc.throw_every == 0) {
            throw std::runtime_error("callback failure injected by the test");
        }
    };
    if (sc.tweak) {
        sc.tweak(rank, p);
    }

    std::unique_ptr<tc::group> g;
    out.create_status = out.status = tc::group::create(node, p, g);
    if (out.status != UCS_OK) {
        return;
    }
    if (sc.misuse) {
        sc.misuse(rank, *g, out);
    }

    if (g->is_sender()) {
        const int64_t count = (rank == 1 && sc.quiet_sends >= 0) ? sc.quiet_sends : sc.per_sender;
        for (int64_t k = 0; k < count; ++k) {
            size_t size = payload_size(rank, k, sc.max_payload);
            auto fill   = [&](std::span<std::byte> buf) {
                for (size_t i = 0; i < buf.size(); ++i) {
                    buf[i] = std::byte{payload_byte(rank, k, i)};
                }
            };
            while ((out.status = g->send(size, fill, !sc.nonblocking)) == UCS_ERR_NO_RESOURCE) {
                tc_progress(node.engine());
                std::this_thread::yield(); /* 2 cores, up to 5 members: never spin */
            }
            if (out.status != UCS_OK) {
                return;
            }
            ++out.sent;
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
    uint64_t expected = 0;
    for (const auto &r : res) {
        expected += r.sent;
    }
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

scenario small_scenario(int members)
{
    scenario sc;
    sc.members    = members;
    sc.per_sender = 500;
    return sc;
}

TEST(group, urgent_mode_costs_n2_plus_n_minus_2_puts_per_message)
{
    setenv("UCX_TLS", "posix,self", 1);
    for (int n : {2, 3, 5}) {
        SCOPED_TRACE("members " + std::to_string(n));
        scenario sc   = small_scenario(n);
        sc.all_send   = false;
        sc.per_sender = 3000;
        auto res      = run_scenario(sc);
        expect_identical_delivery(sc, res);
        uint64_t protocol = 0, nulls = 0, delivery_only = 0;
        for (const auto &r : res) {
            protocol += r.stats.puts[tc::sst::put_purpose::data] +
                        r.stats.puts[tc::sst::put_purpose::counter] +
                        r.stats.puts[tc::sst::put_purpose::receive_report];
            nulls += r.stats.puts[tc::sst::put_purpose::null_message];
            delivery_only += r.stats.puts[tc::sst::put_purpose::delivery_report];
        }
        const uint64_t per_msg = static_cast<uint64_t>(n * n + n - 2);
        EXPECT_EQ(0u, nulls);
        EXPECT_EQ(per_msg * sc.per_sender, protocol)
                << "puts per message " << double(protocol) / sc.per_sender;
        std::printf("members %d: %.3f protocol puts/msg (N^2+N-2 = %lu), "
                    "%.3f idle delivery reports/msg\n", n, double(protocol) / sc.per_sender,
                    per_msg, double(delivery_only) / sc.per_sender);
    }
    unsetenv("UCX_TLS");
}

TEST(group, quiet_sender_sends_nulls_and_order_still_completes)
{
    setenv("UCX_TLS", "posix,self", 1);
    scenario sc    = small_scenario(3);
    sc.quiet_sends = 5;
    auto res       = run_scenario(sc);
    expect_identical_delivery(sc, res);
    EXPECT_GT(res[1].stats.nulls_sent, 400u) << "the quiet sender must fill its turns";
    EXPECT_EQ(5u, res[1].stats.sent);
    unsetenv("UCX_TLS");
}

TEST(group, nonblocking_send_reports_full_window_and_recovers)
{
    setenv("UCX_TLS", "posix,self", 1);
    scenario sc    = small_scenario(3);
    sc.window      = 2;
    sc.nonblocking = true;
    sc.per_sender  = 1000;
    auto res       = run_scenario(sc);
    expect_identical_delivery(sc, res);
    uint64_t stalls = 0;
    for (const auto &r : res) {
        stalls += r.stats.window_stalls;
    }
    EXPECT_GT(stalls, 0u) << "a window of 2 never filled up";
    unsetenv("UCX_TLS");
}

TEST(group, delivery_callback_that_throws_is_contained)
{
    setenv("UCX_TLS", "posix,self", 1);
    tc_test::scoped_log_expect logs;
    scenario sc    = small_scenario(3);
    sc.throw_every = 7;
    auto res       = run_scenario(sc);
    expect_identical_delivery(sc, res);
    EXPECT_EQ(res[1].chain.count / 7, res[1].stats.callback_errors);
    EXPECT_EQ(1u, logs.count("delivery callback threw")) << "logged once, not per message";
    unsetenv("UCX_TLS");
}

TEST(group, misuse_is_rejected_and_nothing_is_sent)
{
    setenv("UCX_TLS", "posix,self", 1);
    tc_test::scoped_log_expect logs;
    scenario sc   = small_scenario(3);
    sc.all_send   = false;
    sc.misuse     = [](int rank, tc::group &g, member_result &out) {
        auto noop = [](std::span<std::byte>) {};
        if (rank == 0) {
            out.misuse_status.push_back(g.send(100000, noop));          /* over the maximum */
            std::span<std::byte> b;
            out.misuse_status.push_back(g.commit());                    /* commit w/o buffer */
            out.misuse_status.push_back(g.get_buffer(8, b));
            out.misuse_status.push_back(g.get_buffer(8, b));            /* twice */
            /* the held buffer is never committed: nothing may be delivered */
        } else {
            out.misuse_status.push_back(g.send(8, noop));               /* not a sender */
        }
    };
    auto res = run_scenario(sc);
    EXPECT_EQ((std::vector<ucs_status_t>{UCS_ERR_EXCEEDS_LIMIT, UCS_ERR_INVALID_PARAM, UCS_OK,
                                          UCS_ERR_INVALID_PARAM}),
              res[0].misuse_status);
    for (const auto &r : res) {
        EXPECT_EQ(0u, r.stats.delivered) << "a rejected or uncommitted send was delivered";
    }
    EXPECT_EQ(std::vector<ucs_status_t>{UCS_ERR_INVALID_PARAM}, res[1].misuse_status);
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, res[0].status) << "send while a buffer is held";
    EXPECT_GE(logs.count("exceeds the maximum"), 1u);
    EXPECT_GE(logs.count("not a sender"), 2u);
    unsetenv("UCX_TLS");
}

TEST(group, send_after_close_is_an_error)
{
    setenv("UCX_TLS", "posix,self", 1);
    tc_test::scoped_log_expect logs;
    scenario sc   = small_scenario(2);
    sc.misuse     = [](int, tc::group &g, member_result &out) {
        out.misuse_status.push_back(g.close());
        out.misuse_status.push_back(g.send(8, [](std::span<std::byte>) {}));
        out.misuse_status.push_back(g.flush());
    };
    auto res = run_scenario(sc);
    for (const auto &r : res) {
        EXPECT_EQ((std::vector<ucs_status_t>{UCS_OK, UCS_ERR_NOT_CONNECTED, UCS_ERR_NOT_CONNECTED}),
                  r.misuse_status);
        EXPECT_EQ(UCS_ERR_NOT_CONNECTED, r.status);
        EXPECT_EQ(0u, r.stats.delivered);
    }
    unsetenv("UCX_TLS");
}

TEST(group, mismatched_parameters_fail_on_every_member)
{
    setenv("UCX_TLS", "posix,self", 1);
    tc_test::scoped_log_expect logs;
    scenario sc = small_scenario(3);
    sc.tweak    = [](int rank, tc::group_params &p) {
        if (rank == 2) {
            p.window = 8;
        }
    };
    auto t0  = std::chrono::steady_clock::now();
    auto res = run_scenario(sc);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
    for (const auto &r : res) {
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, r.create_status);
    }
    EXPECT_EQ(3u, logs.count("parameters differ between members (window"));
    unsetenv("UCX_TLS");
}

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
