/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The SST table (typed columns mirrored by puts) and predicate/trigger pairs;
 * the member collectives the regions are exchanged over.
 */
#include "common.h"

#include "common/member_channel.hpp"
#include "sst/table.hpp"

#include <twochains/bootstrap.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

namespace {

struct point {
    int32_t x, y;
};

TEST(sst_layout, columns_are_aligned_and_rows_are_cache_lines)
{
    tc::sst::layout l;
    auto a = l.add<int64_t>();
    auto b = l.add<char>(3);
    auto c = l.add<point>(2);
    auto d = l.add<int64_t>(4);
    EXPECT_EQ(0u, a.offset);
    EXPECT_EQ(8u, b.offset);
    EXPECT_EQ(16u, c.offset);   /* 8-byte alignment at least */
    EXPECT_EQ(32u, d.offset);
    EXPECT_EQ(64u, d.end());
    EXPECT_EQ(64u, l.row_bytes());
    l.add<char>();
    EXPECT_EQ(128u, l.row_bytes());
}

/* Each member writes its own row and pushes; everyone sees every row. */
TEST(sst_table, rows_are_mirrored_by_puts)
{
    setenv("UCX_TLS", "posix,self", 1);
    static constexpr int n = 3;
    tc_bootstrap_inproc_domain_h domain;
    ASSERT_EQ(UCS_OK, tc_bootstrap_inproc_domain_create(n, 30.0, &domain));
    std::vector<int> ok(n, 0);
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
        threads.emplace_back([&, r] {
            tc_bootstrap_h b;
            ASSERT_EQ(UCS_OK, tc_bootstrap_inproc_create(domain, r, &b));
            tc::bootstrap_ptr boot(b);
            tc::ucp_node node(boot.get());
            ASSERT_EQ(UCS_OK, node.status());
            tc::sst::pusher pusher(node);
            tc::sst::layout l;
            auto counter = l.add<int64_t>();
            auto pos     = l.add<point>(2);
            auto flags   = l.add<int64_t>(n);
            std::unique_ptr<tc::sst::table> t;
            ASSERT_EQ(UCS_OK, tc::sst::table::create(node, std::vector<int>{0, 1, 2}, l, t));
            ASSERT_TRUE(t);
            EXPECT_EQ(r, t->my_index());

            t->set(counter, 0, int64_t(100 + r));
            t->set(pos, 1, point{r, -r});
            t->set(flags, r, int64_t(1));
            /* counter and pos in one put, flags in another */
            ASSERT_EQ(UCS_OK, t->push(pusher, counter, pos, tc::sst::put_purpose::other));
            ASSERT_EQ(UCS_OK, t->push(pusher, flags, tc::sst::put_purpose::other));
            EXPECT_EQ(uint64_t(2 * (n - 1)), pusher.counts()[tc::sst::put_purpose::other]);

            struct ctx {
                tc::sst::table *t;
                tc::sst::column<int64_t> flags;
            } c{t.get(), flags};
            auto all_seen = [](void *arg) -> int {
                auto *cc = static_cast<ctx*>(arg);
                for (int m = 0; m < n; ++m) {
                    if (cc->t->get(m, cc->flags, m) != 1) {
                        return 0;
                    }
                }
                return 1;
            };
            ASSERT_EQ(UCS_OK, tc_progress_until(node.engine(), all_seen, &c, 10.0));
            for (int m = 0; m < n; ++m) {
                EXPECT_EQ(100 + m, t->get(m, counter));
                EXPECT_EQ(m, t->get(m, pos, 1).x);
                EXPECT_EQ(-m, t->get(m, pos, 1).y);
                EXPECT_EQ(0, t->get(m, pos, 0).x) << "unwritten cells stay zero";
            }
            EXPECT_EQ(100, t->min_over_members(counter));
            ASSERT_EQ(UCS_OK, pusher.flush());
            ASSERT_EQ(UCS_OK, node.barrier());
            ok[r] = 1;
        });
    }
    for (auto &th : threads) {
        th.join();
    }
    tc_bootstrap_inproc_domain_destroy(domain);
    EXPECT_EQ(std::vector<int>(n, 1), ok);
    unsetenv("UCX_TLS");
}

/* Member collectives believe the endpoint a message came in on, not the
 * sender its header names. Node 2 sends node 1 a message of round 1 in
 * node 0's name after node 0 sent its own, before node 1 reads either (a
 * later message under the same name replaced the earlier one before);
 * node 1's round takes node 0's genuine bytes, and drops the other,
 * counted. */
TEST(member_channel, a_message_in_another_members_name_is_dropped)
{
    setenv("UCX_TLS", "posix,self", 1);
    static constexpr int n = 3;
    tc_bootstrap_inproc_domain_h domain;
    ASSERT_EQ(UCS_OK, tc_bootstrap_inproc_domain_create(n, 30.0, &domain));
    std::atomic<bool> forged_sent{false};
    tc_test::scoped_log_expect logs;
    std::vector<std::string> from_zero(n);
    std::vector<uint64_t> forged(n, 0);
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
        threads.emplace_back([&, r] {
            tc_bootstrap_h b;
            ASSERT_EQ(UCS_OK, tc_bootstrap_inproc_create(domain, r, &b));
            tc::bootstrap_ptr boot(b);
            tc::ucp_node node(boot.get());
            ASSERT_EQ(UCS_OK, node.status());
            const std::vector<int> ids{0, 1, 2};
            const uint64_t name = tc::member_channel::name_of(ids, 77);
            tc::member_channel channel(node, name, ids, r, 30.0);
            ASSERT_EQ(UCS_OK, channel.status());
            if (r == 2) {
                /* after node 0's genuine message reached node 1's queue */
                std::this_thread::sleep_for(std::chrono::milliseconds(200));
                struct {
                    uint64_t channel;
                    uint32_t round;
                    int32_t  sender;
                } const h{name, 1, 0};
                static const char lie[] = "forged by 2";
                ucp_request_param_t param{};
                param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
                param.flags        = UCP_AM_SEND_FLAG_EAGER | UCP_AM_SEND_FLAG_REPLY;
                ucs_status_ptr_t req = ucp_am_send_nbx(node.ep(1),
                                                       tc::collective_inbox::kAmId, &h,
                                                       sizeof(h), lie, sizeof(lie), &param);
                ASSERT_FALSE(UCS_PTR_IS_ERR(req));
                while (req != nullptr && ucp_request_check_status(req) == UCS_INPROGRESS) {
                    ucp_worker_progress(node.worker());
                }
                if (req != nullptr) {
                    ucp_request_free(req);
                }
                forged_sent = true;
            }
            if (r == 1) {   /* takes nothing before both are in its inbox */
                while (!forged_sent) {
                    ucp_worker_progress(node.worker());
                }
                for (int i = 0; i < 1000; ++i) {
                    ucp_worker_progress(node.worker());
                }
            }
            const std::string mine = "genuine from " + std::to_string(r);
            void *all   = nullptr;
            size_t lens[n];
            ASSERT_EQ(UCS_OK, channel.allgatherv(mine.data(), mine.size(), &all, lens));
            from_zero[r].assign(static_cast<const char*>(all), lens[0]);
            std::free(all);
            forged[r] = node.inbox().forged();
            ASSERT_EQ(UCS_OK, node.barrier());
        });
    }
    for (auto &th : threads) {
        th.join();
    }
    tc_bootstrap_inproc_domain_destroy(domain);
    for (int r = 0; r < n; ++r) {
        EXPECT_EQ("genuine from 0", from_zero[r]) << "node " << r;
    }
    EXPECT_EQ(1u, forged[1]);
    EXPECT_EQ(0u, forged[0] + forged[2]);
    EXPECT_EQ(1u, logs.count("a message in the name of node 0 came in on another node's"));
    unsetenv("UCX_TLS");
}

TEST(sst_predicates, run_in_order_once_or_always_and_tolerate_changes)
{
    tc::sst::predicates p;
    std::vector<std::string> log;
    int value = 0;
    p.add([&] { return value > 0; }, [&] { log.push_back("recurrent"); return 1u; });
    p.add([&] { return value > 1; }, [&] { log.push_back("once"); return 1u; },
          tc::sst::predicates::kind::one_time);
    int self = -1;
    self = p.add([] { return true; }, [&] {
        log.push_back("adds-and-removes-itself");
        p.add([] { return true; }, [&] { log.push_back("added"); return 1u; },
              tc::sst::predicates::kind::one_time);
        p.remove(self);
        return 1u;
    });

    EXPECT_EQ(2u, p.evaluate());   /* self-remover + the one it added, in the same pass */
    EXPECT_EQ((std::vector<std::string>{"adds-and-removes-itself", "added"}), log);
    log.clear();
    value = 2;
    EXPECT_EQ(2u, p.evaluate());
    EXPECT_EQ(1u, p.evaluate());   /* the one-time pair is gone */
    EXPECT_EQ((std::vector<std::string>{"recurrent", "once", "recurrent"}), log);
}

} // namespace

namespace {

/* Three member processes (test/helpers/region_probe.cc); member 2 tries,
 * with the rkeys and keys it really holds, to write member 0's SST row and
 * SMC-shaped window at member 1. Each part is a registration of its own
 * whose rkey only its owner holds: over posix the hostile has no rkey that
 * reaches them, over tcp (AM lane) its three writes are rejected by reason
 * and counted; every member's rows and windows stay byte for byte. The
 * same attack against regions every member may write (-S, the shape they
 * had before) lands: the probe's attack is real. */
class region_confine : public testing::TestWithParam<std::string> {};

tc_test::run_result run_probe(const std::string &tl, const std::string &args)
{
    return tc_test::run_command("UCX_TLS=" + tl + ",self " +
                                tc_test::build_path("src/tools/twochains-run") +
                                " -n 3 --timeout 60 -- " +
                                tc_test::build_path("test/helpers/region_probe") + " " + args);
}

} // namespace

TEST_P(region_confine, a_member_writes_only_its_own_row_and_window)
{
    auto r = run_probe(GetParam(), "-H");
    ASSERT_EQ(0, r.exit_code) << r.output;
    for (int m = 0; m < 3; ++m) {
        EXPECT_NE(std::string::npos,
                  r.output.find("[" + std::to_string(m) + "] rank " + std::to_string(m) +
                                ": rows ok")) << r.output;
    }
    if (GetParam() == "posix") {
        EXPECT_NE(std::string::npos, r.output.find("no rkey of mine reaches the row of 0 at 1"))
                << r.output;
        EXPECT_NE(std::string::npos,
                  r.output.find("no rkey of mine reaches the window of 0 at 1")) << r.output;
    } else {
        EXPECT_NE(std::string::npos, r.output.find("3 am writes to the window of 0 at 1"))
                << r.output;
        EXPECT_NE(std::string::npos,
                  r.output.find("[1] rank 1: rejected range 2 sender 2 forged 2")) << r.output;
        EXPECT_NE(std::string::npos, r.output.find("rejected a forged-sender write"))
                << r.output;
    }

    auto open = run_probe(GetParam(), "-H -S");
    ASSERT_EQ(0, open.exit_code) << open.output;
    EXPECT_NE(std::string::npos, open.output.find("[1] rank 1: rows corrupted: window0[0]"))
            << open.output;
}

INSTANTIATE_TEST_SUITE_P(transports, region_confine, testing::Values("posix", "tcp"));
