/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Replicated jams through the C++ API, members in one process (a thread
 * each, real UCX transports): jams mixed with plain messages in one total
 * order; a jam too large for a slot over RDMC; misuse refused with nothing
 * sent while correct jams keep running; and a jam that reports a failure,
 * the same at every member.
 */
#include "common.h"
#include "inproc_member.h"

#include "api/group.hpp"

#include <twochains/bootstrap.h>
#include <twochains/ifunc.h>

#include "tckv_store.h"

#include <thread>
#include <vector>

namespace {

struct member_result {
    ucs_status_t          status = UCS_ERR_NO_PROGRESS;
    tckv_state_t          state{};
    std::vector<uint64_t> events;   /* (seq, element, status) of each jam, in order */
    uint64_t              messages = 0;
    tc::group_stats       stats;
};

class group_jams_api : public ::testing::Test {
protected:
    void SetUp() override
    {
        const std::string prefix = tc_test::build_path("test/twochains-pkgs");
        ASSERT_EQ(UCS_OK, tc_ifunc_pkg_load(prefix.c_str(), "tckv", &kv));
        ASSERT_EQ(UCS_OK, tc_ifunc_pkg_load(prefix.c_str(), "tcbench", &bench));
        ASSERT_EQ(UCS_OK, tc_ifunc_pkg_element(kv, "kv_put", &put));
        ASSERT_EQ(UCS_OK, tc_ifunc_pkg_element(kv, "kv_inc", &inc));
        ASSERT_EQ(UCS_OK, tc_ifunc_pkg_element(kv, "kv_cas", &cas));
    }
    void TearDown() override
    {
        tc_ifunc_pkg_unload(kv);
        tc_ifunc_pkg_unload(bench);
    }

    /* @a n members run @a body(rank, group, result) with @a params */
    template <class Body>
    std::vector<member_result> run(int n, tc::group_params params, Body body)
    {
        std::vector<member_result> res(n);
        const auto status = tc_test::run_inproc_members(n, [&](int r, tc::ucp_node &node) {
            auto &out          = res[r];
            tc::group_params p = params;
            for (int m = 0; m < n; ++m) {
                p.members.push_back(m);
            }
            p.jam_state  = {reinterpret_cast<std::byte*>(&out.state), sizeof(out.state)};
            p.on_jam     = [&out](const tc::jam_event &e) {
                out.events.push_back((static_cast<uint64_t>(e.seq) << 16) ^
                                     (e.element << 8) ^ static_cast<uint64_t>(e.status));
            };
            p.on_deliver = [&out](const tc::message &) { ++out.messages; };
            std::unique_ptr<tc::group> g;
            ucs_status_t s = tc::group::create(node, p, g);
            if (s != UCS_OK) {
                return s;
            }
            s = body(r, *g);
            if (s == UCS_OK) {
                s = g->flush(true);
            }
            const ucs_status_t closed = g->close();
            out.stats                 = g->stats();
            return (s != UCS_OK) ? s : closed;
        });
        for (int r = 0; r < n; ++r) {
            res[r].status = status[r];
        }
        return res;
    }

    static void expect_same(const std::vector<member_result> &res)
    {
        for (const auto &r : res) {
            ASSERT_EQ(UCS_OK, r.status);
            EXPECT_EQ(tckv_digest(&res[0].state), tckv_digest(&r.state));
            EXPECT_EQ(res[0].events, r.events);
            EXPECT_EQ(res[0].messages, r.messages);
        }
    }

    tc_ifunc_pkg_h kv = nullptr, bench = nullptr;
    uint32_t       put = 0, inc = 0, cas = 0;
};

TEST_F(group_jams_api, jams_and_messages_share_one_total_order)
{
    tc::group_params p;
    p.max_payload  = 512;
    p.jam_packages = {kv};
    p.jam_mode     = TC_IFUNC_MODE_CACHED;
    auto res = run(3, p, [&](int rank, tc::group &g) {
        for (int k = 0; k < 200; ++k) {
            tckv_inc_t a{static_cast<uint64_t>(k % 8), rank + 1};
            ucs_status_t s = g.send_jam(kv, inc, &a, sizeof(a));
            if (s == UCS_OK) {
                s = g.send(8, [](std::span<std::byte> b) { std::fill(b.begin(), b.end(), std::byte{7}); });
            }
            if (s != UCS_OK) {
                return s;
            }
        }
        return UCS_OK;
    });
    expect_same(res);
    /* every increment ran exactly once at every member: (1+2+3) * 25 per key */
    for (unsigned key = 0; key < 8; ++key) {
        EXPECT_EQ(6 * 25, res[0].state.keys[key].value) << key;
    }
    EXPECT_EQ(600u, res[0].events.size());
    EXPECT_EQ(600u, res[0].messages);
    EXPECT_EQ(600u, res[0].stats.jams_run);
    EXPECT_EQ(1200u, res[0].stats.delivered);
    /* the code went in full until a frame with it was delivered, then by hash */
    EXPECT_GE(res[0].stats.jam_codes_sent, 1u);
    EXPECT_LT(res[0].stats.jam_codes_sent, 200u);
}

TEST_F(group_jams_api, a_jam_larger_than_a_slot_goes_over_rdmc)
{
    tc::group_params p;
    p.max_payload      = 64;       /* a Local put fits; code does not */
    p.rdmc_max_message = 4096;
    p.jam_mode         = TC_IFUNC_MODE_INJECTED;
    auto res = run(3, p, [&](int rank, tc::group &g) {
        for (int k = 0; k < 20; ++k) {
            tckv_put_t a{static_cast<uint64_t>(rank), k};
            if (ucs_status_t s = g.send_jam(kv, put, &a, sizeof(a)); s != UCS_OK) {
                return s;
            }
            if (ucs_status_t s = g.send_jam(kv, put, &a, sizeof(a), TC_IFUNC_MODE_LOCAL);
                s != UCS_OK) {
                return s;
            }
        }
        return UCS_OK;
    });
    expect_same(res);
    for (int r = 0; r < 3; ++r) {
        EXPECT_EQ(19, res[0].state.keys[r].value);
        EXPECT_EQ(40u, res[0].state.keys[r].version);
    }
    EXPECT_EQ(20u, res[0].stats.rdmc_sent);   /* its Injected ones */
}

TEST_F(group_jams_api, misuse_is_refused_and_correct_jams_keep_running)
{
    tc::group_params p;
    p.max_payload  = 512;
    p.jam_packages = {kv};
    p.jam_security = TC_IFUNC_SECURITY_LOCAL_ONLY;
    tc_test::scoped_log_expect expected;
    auto res = run(2, p, [&](int rank, tc::group &g) {
        tckv_put_t a{1, rank};
        int64_t v[1] = {1};
        uint32_t sum;
        tc_ifunc_pkg_element(bench, "server_side_sum", &sum);
        const bool refused =
                g.send_jam(kv, put, &a, sizeof(a), TC_IFUNC_MODE_INJECTED) == UCS_ERR_UNSUPPORTED &&
                g.send_jam(kv, 99, &a, sizeof(a)) == UCS_ERR_INVALID_PARAM &&
                g.send_jam(bench, sum, v, sizeof(v)) == UCS_ERR_INVALID_PARAM;
        if (!refused) {
            return UCS_ERR_IO_ERROR;
        }
        /* kv_put's payload_init refuses a key out of range after the slot
         * was taken: the slot goes out, and every member rejects it alike */
        tckv_put_t out_of_range{TCKV_KEYS + 5, 1};
        if (g.send_jam(kv, put, &out_of_range, sizeof(out_of_range)) != UCS_ERR_CANCELED) {
            return UCS_ERR_IO_ERROR;
        }
        /* a compare-and-swap that fails: the same status at every member */
        tckv_cas_t c{2, 12345, 1};
        ucs_status_t s = g.send_jam(kv, cas, &c, sizeof(c));
        return (s != UCS_OK) ? s : g.send_jam(kv, put, &a, sizeof(a));
    });
    expect_same(res);
    EXPECT_EQ(4u, res[0].stats.jams_run);
    EXPECT_EQ(2u, res[0].stats.jam_errors);
    for (const auto &r : res) {
        EXPECT_EQ(2u, r.stats.jam_rejects);   /* both members' refused payloads */
    }
    EXPECT_EQ(2u, res[0].state.failures);
    EXPECT_EQ(0u, res[0].state.keys[2].version);   /* the failed CAS changed nothing */
    for (const auto &r : res) {
        EXPECT_EQ(2u, r.stats.jams_sent);   /* the refused ones never went out */
    }
}

TEST_F(group_jams_api, raw_delivery_has_no_total_order_for_jams)
{
    tc::group_params p;
    p.mode = tc::delivery_mode::raw;
    tc_test::scoped_log_expect expected;
    auto res = run(2, p, [&](int, tc::group &g) {
        tckv_put_t a{1, 1};
        return (g.send_jam(kv, put, &a, sizeof(a)) == UCS_ERR_INVALID_PARAM) ? UCS_OK
                                                                              : UCS_ERR_IO_ERROR;
    });
    expect_same(res);
    EXPECT_EQ(0u, res[0].stats.jams_sent);
}

} // namespace
