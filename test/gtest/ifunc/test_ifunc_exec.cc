/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The executor for jams another protocol carries (twochains/ifunc_exec.h),
 * in one process: what a sender plans and writes, a receiver runs with the
 * exact effects; codes known only once run; the security modes; every
 * truncation and byte flip of a frame rejected or run, never a crash; a
 * frame whose code and header a racing writer flips while it runs (its
 * carrier is memory the sender can still write) runs only as the installed
 * code, with the exact sum; and which rejects would make a member diverge.
 */
#include "common.h"

#include <twochains/ifunc.h>
#include <twochains/ifunc_exec.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <string>
#include <vector>

#include "tcbench.h"

namespace {

struct exec_deleter {
    void operator()(tc_ifunc_exec *e) const { tc_ifunc_exec_destroy(e); }
};
using exec_ptr = std::unique_ptr<tc_ifunc_exec, exec_deleter>;

exec_ptr make_exec(tc_ifunc_security_t security)
{
    tc_ifunc_exec_h e = nullptr;
    EXPECT_EQ(UCS_OK, tc_ifunc_exec_create(security, &e));
    return exec_ptr(e);
}

class ifunc_exec : public ::testing::Test {
protected:
    void SetUp() override
    {
        const std::string prefix = tc_test::build_path("test/twochains-pkgs");
        ASSERT_EQ(UCS_OK, tc_ifunc_pkg_load(prefix.c_str(), "tcbench", &pkg));
        for (const char *name : {"server_side_sum", "indirect_put", "ping", "calls_libc"}) {
            uint32_t id;
            ASSERT_EQ(UCS_OK, tc_ifunc_pkg_element(pkg, name, &id)) << name;
            ids.push_back(id);
        }
    }
    void TearDown() override
    {
        if (pkg != nullptr) {
            tc_ifunc_pkg_unload(pkg);
        }
    }

    /* plan and write one frame; its bytes */
    std::vector<uint8_t> frame(tc_ifunc_exec_h e, uint32_t id, tc_ifunc_mode_t mode,
                               const void *args, size_t size, tc_ifunc_exec_plan_t *plan_p = nullptr)
    {
        tc_ifunc_exec_jam_t jam{pkg, id, mode, const_cast<void*>(args), size};
        tc_ifunc_exec_plan_t plan;
        EXPECT_EQ(UCS_OK, tc_ifunc_exec_plan_frame(e, &jam, &plan));
        std::vector<uint8_t> buf(plan.capacity + 64, 0xee);
        size_t used = 0;
        EXPECT_EQ(UCS_OK, tc_ifunc_exec_write_frame(e, &jam, &plan, buf.data(), &used));
        EXPECT_LE(used, plan.capacity);
        buf.resize(plan.capacity);   /* a carrier hands over the reserved size */
        if (plan_p != nullptr) {
            *plan_p = plan;
        }
        return buf;
    }

    tc_ifunc_reject_t run(tc_ifunc_exec_h e, const std::vector<uint8_t> &f,
                          tc_ifunc_exec_result_t *r_p = nullptr)
    {
        tc_ifunc_exec_result_t r;
        tc_ifunc_exec_run(e, f.data(), f.size(), target, &r);
        if (r_p != nullptr) {
            *r_p = r;
        }
        return r.reason;
    }

    template <typename T> T &state(const char *name)
    {
        return *static_cast<T*>(tc_ifunc_pkg_symbol(pkg, name));
    }

    tc_ifunc_pkg_h        pkg = nullptr;
    std::vector<uint32_t> ids;   /* sum, put, ping, calls_libc */
    alignas(8) char       target[TCBENCH_TEXT_LEN] = {};
};

TEST_F(ifunc_exec, every_jam_every_mode_runs_with_its_exact_effect)
{
    auto e = make_exec(TC_IFUNC_SECURITY_VERIFY);
    for (int m = 0; m < TC_IFUNC_MODE_LAST; ++m) {
        const auto mode    = static_cast<tc_ifunc_mode_t>(m);
        const int64_t sum0 = state<int64_t>("tcbench_accumulator");
        int64_t v[3]       = {m + 1, 20, -5};
        size_t known       = 0;   /* what the first plan said later frames take */
        for (int i = 0; i < 3; ++i) {
            tc_ifunc_exec_plan_t plan;
            auto f = frame(e.get(), ids[0], mode, v, sizeof(v), &plan);
            /* Cached: the code until a frame with it ran here, then the hash */
            EXPECT_EQ(mode == TC_IFUNC_MODE_INJECTED || (mode == TC_IFUNC_MODE_CACHED && i == 0),
                      plan.with_code != 0) << m << " " << i;
            known = (i == 0) ? plan.known_capacity : known;
            EXPECT_EQ(known, plan.known_capacity) << m << " " << i;
            if (i > 0) {
                EXPECT_EQ(known, plan.capacity) << m << " " << i;
            }
            tc_ifunc_exec_result_t r;
            ASSERT_EQ(TC_IFUNC_REJECT_NONE, run(e.get(), f, &r)) << r.detail;
            EXPECT_EQ(tc_ifunc_pkg_id(pkg), r.pkg_id);
            EXPECT_EQ(ids[0], r.element_id);
            ASSERT_EQ(sizeof(v), r.payload_size);
            EXPECT_EQ(0, std::memcmp(v, r.payload, sizeof(v)));
        }
        EXPECT_EQ(3 * (m + 1 + 20 - 5), state<int64_t>("tcbench_accumulator") - sum0) << m;

        tcbench_put_t puts[2] = {{11, 100 + m}, {900, -m}};
        ASSERT_EQ(TC_IFUNC_REJECT_NONE, run(e.get(), frame(e.get(), ids[1], mode, puts,
                                                            sizeof(puts))));
        EXPECT_EQ(100 + m, (&state<int64_t>("tcbench_array"))[11]);
        EXPECT_EQ(-m, (&state<int64_t>("tcbench_array"))[900]);

        const uint64_t pings = state<uint64_t>("tcbench_ping_count");
        tcbench_ping_t ping  = {7};
        ASSERT_EQ(TC_IFUNC_REJECT_NONE, run(e.get(), frame(e.get(), ids[2], mode, &ping,
                                                            sizeof(ping))));
        EXPECT_EQ(pings + 1, state<uint64_t>("tcbench_ping_count"));

        char text[] = "hello";
        ASSERT_EQ(TC_IFUNC_REJECT_NONE, run(e.get(), frame(e.get(), ids[3], mode, text,
                                                            sizeof(text))));
        EXPECT_STREQ("two-chains: got \"hello\" (6 bytes, sum 120025)", target) << m;
    }
    tc_ifunc_stats_t st;
    tc_ifunc_exec_stats(e.get(), &st);
    EXPECT_EQ(0u, st.rejects_total);
    EXPECT_EQ(4u, tc_ifunc_exec_codes(e.get()));   /* the Cached pass kept each code */
}

TEST_F(ifunc_exec, a_cached_frame_names_only_code_that_ran_here)
{
    auto sender = make_exec(TC_IFUNC_SECURITY_VERIFY);
    auto other  = make_exec(TC_IFUNC_SECURITY_VERIFY);
    int64_t v[1] = {1};
    ASSERT_EQ(TC_IFUNC_REJECT_NONE,
              run(sender.get(), frame(sender.get(), ids[0], TC_IFUNC_MODE_CACHED, v, sizeof(v))));
    tc_ifunc_exec_plan_t plan;
    auto hash_only = frame(sender.get(), ids[0], TC_IFUNC_MODE_CACHED, v, sizeof(v), &plan);
    ASSERT_FALSE(plan.with_code);
    /* a receiver that never ran the code frame: the same everywhere */
    tc_ifunc_exec_result_t r;
    EXPECT_EQ(TC_IFUNC_REJECT_CACHE_MISS, run(other.get(), hash_only, &r));
    EXPECT_FALSE(r.diverges);

    /* with the sender's codes (a state transfer), it runs */
    void *codes = nullptr;
    size_t size = 0;
    ASSERT_EQ(UCS_OK, tc_ifunc_exec_export(sender.get(), &codes, &size));
    ASSERT_NE(nullptr, codes);
    ASSERT_EQ(UCS_OK, tc_ifunc_exec_import(other.get(), codes, size, &r)) << r.detail;
    EXPECT_EQ(TC_IFUNC_REJECT_NONE, run(other.get(), hash_only, &r)) << r.detail;
    /* re-exported by the newcomer, for the next one */
    void *again = nullptr;
    size_t again_size = 0;
    ASSERT_EQ(UCS_OK, tc_ifunc_exec_export(other.get(), &again, &again_size));
    EXPECT_EQ(size, again_size);

    /* a local-only member refuses the codes; garbage is malformed */
    auto local_only = make_exec(TC_IFUNC_SECURITY_LOCAL_ONLY);
    EXPECT_EQ(UCS_ERR_REJECTED, tc_ifunc_exec_import(local_only.get(), codes, size, &r));
    EXPECT_EQ(TC_IFUNC_REJECT_DISABLED, r.reason);
    std::vector<uint8_t> junk(size, 0x5a);
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, tc_ifunc_exec_import(other.get(), junk.data(), size, &r));
    std::free(codes);
    std::free(again);
}

TEST_F(ifunc_exec, security_modes)
{
    auto local_only = make_exec(TC_IFUNC_SECURITY_LOCAL_ONLY);
    auto verify     = make_exec(TC_IFUNC_SECURITY_VERIFY);
    int64_t v[1]    = {3};
    tc_test::scoped_log_expect expected;   /* the refused plan logs why */
    tc_ifunc_exec_jam_t jam{pkg, ids[0], TC_IFUNC_MODE_INJECTED, v, sizeof(v)};
    tc_ifunc_exec_plan_t plan;
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, tc_ifunc_exec_plan_frame(local_only.get(), &jam, &plan));
    /* code from elsewhere: refused alike by every local-only receiver */
    tc_ifunc_exec_result_t r;
    EXPECT_EQ(TC_IFUNC_REJECT_DISABLED,
              run(local_only.get(), frame(verify.get(), ids[0], TC_IFUNC_MODE_INJECTED, v,
                                          sizeof(v)), &r));
    EXPECT_FALSE(r.diverges);
    EXPECT_EQ(TC_IFUNC_REJECT_NONE,
              run(local_only.get(), frame(verify.get(), ids[0], TC_IFUNC_MODE_LOCAL, v,
                                          sizeof(v))));

    /* another element's code under this element's name: not the installed
     * code, but intact (it hashes to its header): this receiver's build
     * differs, so running on would diverge */
    auto f = frame(verify.get(), ids[0], TC_IFUNC_MODE_INJECTED, v, sizeof(v));
    auto g = frame(verify.get(), ids[2], TC_IFUNC_MODE_INJECTED, v, sizeof(v));
    uint32_t other_id;
    std::memcpy(&other_id, g.data() + 40, sizeof(other_id));
    std::memcpy(f.data() + 40, &other_id, sizeof(other_id));   /* element_id */
    EXPECT_EQ(TC_IFUNC_REJECT_HASH, run(verify.get(), f, &r));
    EXPECT_TRUE(r.diverges) << r.detail;
    /* declared packages are the same everywhere: then it is the frame's fault */
    ASSERT_EQ(UCS_OK, tc_ifunc_exec_declare(verify.get(), &pkg, 1));
    EXPECT_EQ(TC_IFUNC_REJECT_HASH, run(verify.get(), f, &r));
    EXPECT_FALSE(r.diverges);
}

TEST_F(ifunc_exec, every_truncation_and_byte_flip_is_rejected_or_runs)
{
    auto e = make_exec(TC_IFUNC_SECURITY_VERIFY);
    tcbench_put_t puts[1] = {{5, 1}};
    for (int m = 0; m < TC_IFUNC_MODE_LAST; ++m) {
        const auto mode = static_cast<tc_ifunc_mode_t>(m);
        tc_ifunc_exec_plan_t plan;
        const auto good = frame(e.get(), ids[1], mode, puts, sizeof(puts), &plan);
        tc_ifunc_exec_result_t r;
        for (size_t n = 0; n < good.size(); ++n) {
            std::vector<uint8_t> cut(good.begin(), good.begin() + n);
            cut.reserve(good.size());   /* nothing read past n: ASan would see it */
            EXPECT_NE(TC_IFUNC_REJECT_NONE, run(e.get(), cut, &r)) << m << " " << n;
        }
        size_t ran = 0, rejected = 0;
        for (size_t i = 0; i < good.size(); ++i) {
            auto bad = good;
            bad[i] ^= 0x41;
            const int64_t before = (&state<int64_t>("tcbench_array"))[5];
            if (run(e.get(), bad, &r) == TC_IFUNC_REJECT_NONE) {
                ++ran;
            } else {
                ++rejected;
                EXPECT_EQ(before, (&state<int64_t>("tcbench_array"))[5]);
                EXPECT_FALSE(r.diverges && r.reason != TC_IFUNC_REJECT_UNKNOWN_PKG &&
                             r.reason != TC_IFUNC_REJECT_UNKNOWN_ELEMENT)
                        << "byte " << i << ": " << tc_ifunc_reject_name(r.reason) << " "
                        << r.detail;
            }
        }
        EXPECT_GT(rejected, 0u) << m;
        EXPECT_GT(ran, 0u) << m;   /* a payload byte changed is another valid frame */
    }
}

/* The carrier of a replicated jam is an SMC slot its sender can still
 * write. A thread flips one code byte and the frame's cache flag in a loop
 * while this one runs the frame again and again: every run either rejects
 * the frame (not the installed code) or runs the installed code, and the
 * accumulator holds exactly what the runs that ran added. Frames without
 * the cache flag run where they lie, those with it from a private copy:
 * the flag flips between the two. */
TEST_F(ifunc_exec, a_frame_flipped_while_it_runs_runs_only_the_installed_code)
{
    auto e = make_exec(TC_IFUNC_SECURITY_VERIFY);
    int64_t v[4] = {3, 5, 7, 11};
    auto f       = frame(e.get(), ids[0], TC_IFUNC_MODE_INJECTED, v, sizeof(v));
    uint32_t code_offset, code_size, flags;
    std::memcpy(&code_offset, f.data() + 56, sizeof(code_offset));
    std::memcpy(&code_size, f.data() + 60, sizeof(code_size));
    std::memcpy(&flags, f.data() + 12, sizeof(flags));
    ASSERT_GT(code_size, 16u);
    ASSERT_LE(size_t{code_offset} + code_size, f.size());
    ASSERT_EQ(0u, flags & 0x2u);   /* TC_FRAME_F_CACHE: not yet */

    const int64_t sum0 = state<int64_t>("tcbench_accumulator");
    std::atomic<bool> stop{false};
    uint8_t *code_byte = f.data() + code_offset + code_size / 2;
    uint8_t *flag_byte = f.data() + 12;   /* flags, low byte */
    std::thread flipper([&] {
        std::atomic_ref<uint8_t> c(*code_byte), g(*flag_byte);
        while (!stop.load(std::memory_order_relaxed)) {
            c.fetch_xor(0x41, std::memory_order_relaxed);
            g.fetch_xor(0x2, std::memory_order_relaxed);
        }
    });
    const char *env   = std::getenv("TC_EXEC_FLIP_RUNS");
    const size_t runs = (env != nullptr) ? std::strtoull(env, nullptr, 10) : 300000;
    size_t ran = 0, rejected = 0, other = 0;
    tc_ifunc_exec_result_t r;
    for (size_t i = 0; i < runs; ++i) {
        tc_ifunc_exec_run(e.get(), f.data(), f.size(), target, &r);
        if (r.reason == TC_IFUNC_REJECT_NONE) {
            ++ran;
        } else if (r.reason == TC_IFUNC_REJECT_HASH) {
            ++rejected;
        } else {
            ++other;
        }
    }
    stop = true;
    flipper.join();
    std::printf("%zu runs: %zu ran, %zu rejected as not the installed code, %zu other\n",
                runs, ran, rejected, other);
    EXPECT_EQ(0u, other) << tc_ifunc_reject_name(r.reason) << " " << r.detail;
    EXPECT_GT(ran, 0u);
    EXPECT_EQ(sum0 + static_cast<int64_t>(ran) * (3 + 5 + 7 + 11),
              state<int64_t>("tcbench_accumulator"));

    /* a compact Cached frame (no code: it names one by hash; copied first,
     * a few cache lines, which measured faster than reading the slot in
     * place); its hash flipped names no known code */
    auto first = frame(e.get(), ids[0], TC_IFUNC_MODE_CACHED, v, sizeof(v));
    ASSERT_EQ(TC_IFUNC_REJECT_NONE, run(e.get(), first, &r)) << r.detail;
    auto cached = frame(e.get(), ids[0], TC_IFUNC_MODE_CACHED, v, sizeof(v));
    ASSERT_LT(48u, cached.size() + 1);   /* a compact Cached header: 48 bytes */
    const int64_t sum1 = state<int64_t>("tcbench_accumulator");
    stop = false;
    uint8_t *hash_byte = cached.data() + 40;   /* compact code_hash, low byte */
    std::thread hash_flipper([&] {
        std::atomic_ref<uint8_t> hb(*hash_byte);
        while (!stop.load(std::memory_order_relaxed)) {
            hb.fetch_xor(0x5a, std::memory_order_relaxed);
        }
    });
    size_t cached_ran = 0, missed = 0;
    other = 0;
    for (size_t i = 0; i < runs; ++i) {
        tc_ifunc_exec_run(e.get(), cached.data(), cached.size(), target, &r);
        if (r.reason == TC_IFUNC_REJECT_NONE) {
            ++cached_ran;
        } else if (r.reason == TC_IFUNC_REJECT_CACHE_MISS) {
            ++missed;
        } else {
            ++other;
        }
    }
    stop = true;
    hash_flipper.join();
    std::printf("%zu compact runs: %zu ran, %zu named no known code, %zu other\n", runs,
                cached_ran, missed, other);
    EXPECT_EQ(0u, other) << tc_ifunc_reject_name(r.reason) << " " << r.detail;
    EXPECT_GT(cached_ran, 0u);
    EXPECT_EQ(sum1 + static_cast<int64_t>(cached_ran) * (3 + 5 + 7 + 11),
              state<int64_t>("tcbench_accumulator"));
}

TEST_F(ifunc_exec, undeclared_packages_are_refused)
{
    auto e = make_exec(TC_IFUNC_SECURITY_VERIFY);
    auto f = frame(e.get(), ids[0], TC_IFUNC_MODE_LOCAL, "12345678", 8);
    tc_ifunc_pkg_h none[1] = {};
    ASSERT_EQ(UCS_OK, tc_ifunc_exec_declare(e.get(), none, 0));
    tc_ifunc_exec_result_t r;
    EXPECT_EQ(TC_IFUNC_REJECT_NONE, run(e.get(), f, &r));

    /* declare another package id: tcbench is no longer one of them */
    tc_ifunc_pkg_h kv;
    ASSERT_EQ(UCS_OK, tc_ifunc_pkg_load(tc_test::build_path("test/twochains-pkgs").c_str(),
                                        "tckv", &kv));
    ASSERT_EQ(UCS_OK, tc_ifunc_exec_declare(e.get(), &kv, 1));
    EXPECT_EQ(TC_IFUNC_REJECT_UNKNOWN_PKG, run(e.get(), f, &r));
    EXPECT_FALSE(r.diverges);
    tc_ifunc_exec_jam_t jam{pkg, ids[0], TC_IFUNC_MODE_LOCAL, nullptr, 0};
    tc_ifunc_exec_plan_t plan;
    tc_test::scoped_log_expect expected;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, tc_ifunc_exec_plan_frame(e.get(), &jam, &plan));
    tc_ifunc_pkg_unload(kv);
}

} // namespace
