/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The shared progress engine and the wait policies.
 */
#include "common.h"

#include <twochains/config.h>
#include <twochains/progress.h>
#include <twochains/wait.h>

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

struct engine_guard {
    tc_progress_engine_h engine = nullptr;
    explicit engine_guard(tc_wait_policy_t policy = TC_WAIT_SLEEP, unsigned max_pollers = 0)
    {
        tc_progress_params_t params{};
        params.field_mask  = TC_PROGRESS_PARAM_FIELD_WAIT_POLICY;
        params.wait_policy = policy;
        if (max_pollers != 0) {
            params.field_mask |= TC_PROGRESS_PARAM_FIELD_MAX_POLLERS;
            params.max_pollers = max_pollers;
        }
        EXPECT_EQ(UCS_OK, tc_progress_engine_create(nullptr, &params, &engine));
    }
    ~engine_guard() { tc_progress_engine_destroy(engine); }
};

struct counter {
    std::atomic<unsigned> calls{0};
    unsigned              events_per_call = 1;
    static unsigned poll(void *arg)
    {
        auto *self = static_cast<counter*>(arg);
        self->calls++;
        return self->events_per_call;
    }
};

TEST(progress, pollers_run_once_per_loop_and_events_add_up)
{
    engine_guard g;
    counter a, b, c;
    a.events_per_call = 1;
    b.events_per_call = 0;
    c.events_per_call = 5;
    int ia, ib, ic;
    ASSERT_EQ(UCS_OK, tc_progress_poller_add(g.engine, counter::poll, &a, &ia));
    ASSERT_EQ(UCS_OK, tc_progress_poller_add(g.engine, counter::poll, &b, &ib));
    ASSERT_EQ(UCS_OK, tc_progress_poller_add(g.engine, counter::poll, &c, &ic));

    EXPECT_EQ(6u, tc_progress(g.engine));
    EXPECT_EQ(6u, tc_progress(g.engine));
    EXPECT_EQ(2u, a.calls);
    EXPECT_EQ(2u, b.calls);
    EXPECT_EQ(2u, c.calls);

    ASSERT_EQ(UCS_OK, tc_progress_poller_remove(g.engine, ib));
    EXPECT_EQ(6u, tc_progress(g.engine));
    EXPECT_EQ(2u, b.calls);

    tc_progress_stats_t st;
    tc_progress_stats_get(g.engine, &st);
    EXPECT_EQ(3u, st.loops);
    EXPECT_EQ(18u, st.events);
    EXPECT_EQ(0u, st.idle_loops);

    ASSERT_EQ(UCS_OK, tc_progress_poller_remove(g.engine, ia));
    ASSERT_EQ(UCS_OK, tc_progress_poller_remove(g.engine, ic));
    EXPECT_EQ(0u, tc_progress(g.engine));
    tc_progress_stats_get(g.engine, &st);
    EXPECT_EQ(1u, st.idle_loops);
}

/* A quiet poller is called every TC_PROGRESS_QUIET_EVERY loops, the others
 * on every loop; unquieted (from another thread too) it runs on the next. */
TEST(progress, quiet_pollers_run_every_few_loops_and_wake_at_once)
{
    engine_guard g;
    counter busy, quiet;
    int ib, iq;
    ASSERT_EQ(UCS_OK, tc_progress_poller_add(g.engine, counter::poll, &busy, &ib));
    ASSERT_EQ(UCS_OK, tc_progress_poller_add(g.engine, counter::poll, &quiet, &iq));
    ASSERT_EQ(UCS_OK, tc_progress_poller_set_quiet(g.engine, iq, 1));
    const unsigned loops = 10 * TC_PROGRESS_QUIET_EVERY;
    for (unsigned i = 0; i < loops; ++i) {
        tc_progress(g.engine);
    }
    EXPECT_EQ(loops, busy.calls);
    EXPECT_EQ(10u, quiet.calls);

    std::thread([&] { EXPECT_EQ(UCS_OK, tc_progress_poller_set_quiet(g.engine, iq, 0)); }).join();
    const unsigned before = quiet.calls;
    tc_progress(g.engine);
    tc_progress(g.engine);
    EXPECT_EQ(before + 2, quiet.calls);

    {
        tc_test::scoped_log_expect logs;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, tc_progress_poller_set_quiet(g.engine, -1, 1));
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, tc_progress_poller_set_quiet(g.engine, 1000000, 1));
        ASSERT_EQ(UCS_OK, tc_progress_poller_remove(g.engine, ib));
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, tc_progress_poller_set_quiet(g.engine, ib, 1));
        EXPECT_EQ(3u, logs.count("invalid poller id"));
    }
    /* a slot used again starts loud */
    counter reused;
    int ir;
    ASSERT_EQ(UCS_OK, tc_progress_poller_set_quiet(g.engine, iq, 1));
    ASSERT_EQ(UCS_OK, tc_progress_poller_remove(g.engine, iq));
    ASSERT_EQ(UCS_OK, tc_progress_poller_add(g.engine, counter::poll, &reused, &ir));
    tc_progress(g.engine);
    tc_progress(g.engine);
    EXPECT_EQ(2u, reused.calls);
    ASSERT_EQ(UCS_OK, tc_progress_poller_remove(g.engine, ir));
}

/* A poller that, on its first call, removes itself and a later poller, and
 * adds a new one. */
struct mutator {
    tc_progress_engine_h engine;
    int                  self_id  = -1;
    int                  victim   = -1;
    int                  added_id = -1;
    counter              *added;
    unsigned             calls    = 0;
    static unsigned poll(void *arg)
    {
        auto *m = static_cast<mutator*>(arg);
        ++m->calls;
        EXPECT_EQ(UCS_OK, tc_progress_poller_remove(m->engine, m->victim));
        EXPECT_EQ(UCS_OK, tc_progress_poller_remove(m->engine, m->self_id));
        EXPECT_EQ(UCS_OK, tc_progress_poller_add(m->engine, counter::poll,
                                                 m->added, &m->added_id));
        return 1;
    }
};

TEST(progress, pollers_add_and_remove_from_inside_a_loop)
{
    engine_guard g;
    counter victim, added;
    mutator m;
    m.engine = g.engine;
    m.added  = &added;
    ASSERT_EQ(UCS_OK, tc_progress_poller_add(g.engine, mutator::poll, &m, &m.self_id));
    ASSERT_EQ(UCS_OK, tc_progress_poller_add(g.engine, counter::poll, &victim, &m.victim));

    tc_progress(g.engine);
    EXPECT_EQ(1u, m.calls);
    EXPECT_EQ(0u, victim.calls) << "a poller removed earlier in the loop still ran";

    tc_progress(g.engine);
    tc_progress(g.engine);
    EXPECT_EQ(1u, m.calls) << "a poller that removed itself ran again";
    EXPECT_GE(added.calls, 2u);
    EXPECT_LE(added.calls, 3u);
    ASSERT_EQ(UCS_OK, tc_progress_poller_remove(g.engine, m.added_id));
}

/* A slow poller: remove() from another thread must wait until it returns. */
struct slow_poller {
    std::atomic<int>      inside{0};
    std::atomic<unsigned> calls{0};
    static unsigned poll(void *arg)
    {
        auto *s = static_cast<slow_poller*>(arg);
        s->inside = 1;
        std::this_thread::sleep_for(200us);
        s->calls++;
        s->inside = 0;
        return 1;
    }
};

TEST(progress, remove_from_another_thread_waits_for_running_poller)
{
    engine_guard g(TC_WAIT_SLEEP);
    for (int round = 0; round < 50; ++round) {
        slow_poller s;
        int id;
        ASSERT_EQ(UCS_OK, tc_progress_poller_add(g.engine, slow_poller::poll, &s, &id));
        ASSERT_EQ(UCS_OK, tc_progress_thread_start(g.engine));
        while (s.calls < 2) {
            std::this_thread::yield();
        }
        ASSERT_EQ(UCS_OK, tc_progress_poller_remove(g.engine, id));
        EXPECT_EQ(0, s.inside.load()) << "poller still running after remove";
        unsigned after = s.calls;
        std::this_thread::sleep_for(1ms);
        EXPECT_EQ(after, s.calls.load()) << "poller ran after remove";
        ASSERT_EQ(UCS_OK, tc_progress_thread_stop(g.engine));
    }
}

TEST(progress, capacity_and_misuse_are_errors)
{
    engine_guard g(TC_WAIT_SLEEP, 2);
    counter a;
    int i1, i2, i3;
    ASSERT_EQ(UCS_OK, tc_progress_poller_add(g.engine, counter::poll, &a, &i1));
    ASSERT_EQ(UCS_OK, tc_progress_poller_add(g.engine, counter::poll, &a, &i2));
    {
        tc_test::scoped_log_expect logs;
        EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT,
                  tc_progress_poller_add(g.engine, counter::poll, &a, &i3));
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  tc_progress_poller_add(g.engine, nullptr, &a, &i3));
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, tc_progress_poller_remove(g.engine, 7));
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, tc_progress_poller_remove(g.engine, -1));
        EXPECT_EQ(UCS_OK, tc_progress_poller_remove(g.engine, i1));
        EXPECT_EQ(UCS_ERR_NO_ELEM, tc_progress_poller_remove(g.engine, i1));
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, tc_progress_thread_stop(g.engine));
        EXPECT_EQ(6u, logs.messages().size());
    }
    /* the freed slot is reused */
    ASSERT_EQ(UCS_OK, tc_progress_poller_add(g.engine, counter::poll, &a, &i3));
    EXPECT_EQ(i1, i3);
    EXPECT_EQ(UCS_OK, tc_progress_poller_remove(g.engine, i2));
    EXPECT_EQ(UCS_OK, tc_progress_poller_remove(g.engine, i3));
}

TEST(progress, until_times_out_and_accounts_idle_cpu)
{
    engine_guard g(TC_WAIT_BUSY);
    auto never = [](void *) -> int { return 0; };
    auto t0    = clock_type::now();
    EXPECT_EQ(UCS_ERR_TIMED_OUT, tc_progress_until(g.engine, never, nullptr, 0.05));
    double wall = std::chrono::duration<double>(clock_type::now() - t0).count();
    EXPECT_GE(wall, 0.05);
    EXPECT_LT(wall, 2.0);

    tc_progress_stats_t st;
    tc_progress_stats_get(g.engine, &st);
    EXPECT_EQ(st.loops, st.idle_loops);
    EXPECT_GT(st.idle_cpu_s, 0.03);   /* busy waiting burns what it waits */
    EXPECT_LE(st.idle_cpu_s, wall + 0.01);
}

class wait_policy : public ::testing::TestWithParam<tc_wait_policy_t> {};

TEST_P(wait_policy, waiter_wakes_on_store_from_another_thread)
{
    tc_waiter_t w;
    ASSERT_EQ(UCS_OK, tc_waiter_init(&w, GetParam()));
    EXPECT_NE(nullptr, w.mechanism);

    alignas(64) volatile uint64_t flag = 0;
    std::thread writer([&] {
        std::this_thread::sleep_for(20ms);
        __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
    });
    auto t0 = clock_type::now();
    EXPECT_EQ(UCS_OK, tc_waiter_wait_change(&w, &flag, 0, 10.0));
    double waited = std::chrono::duration<double>(clock_type::now() - t0).count();
    writer.join();
    EXPECT_EQ(1u, flag);
    EXPECT_LT(waited, 2.0);

    /* and a store that never comes is a bounded wait */
    flag = 5;
    EXPECT_EQ(UCS_ERR_TIMED_OUT, tc_waiter_wait_change(&w, &flag, 5, 0.02));
}

TEST_P(wait_policy, progress_thread_wakes_on_store_from_another_thread)
{
    engine_guard g(GetParam());
    struct watch {
        std::atomic<int>      flag{0};
        std::atomic<unsigned> seen{0};
        static unsigned poll(void *arg)
        {
            auto *w = static_cast<watch*>(arg);
            if (w->flag.exchange(0) != 0) {
                w->seen++;
                return 1;
            }
            return 0;
        }
    } w;
    int id;
    ASSERT_EQ(UCS_OK, tc_progress_poller_add(g.engine, watch::poll, &w, &id));
    ASSERT_EQ(UCS_OK, tc_progress_thread_start(g.engine));
    for (unsigned i = 1; i <= 20; ++i) {
        std::this_thread::sleep_for(1ms);
        w.flag = 1;
        auto t0 = clock_type::now();
        while (w.seen < i && clock_type::now() - t0 < 5s) {
            std::this_thread::yield();
        }
        ASSERT_EQ(i, w.seen.load()) << "store " << i << " was not seen within 5 s";
    }
    ASSERT_EQ(UCS_OK, tc_progress_thread_stop(g.engine));
    ASSERT_EQ(UCS_OK, tc_progress_poller_remove(g.engine, id));

    tc_progress_stats_t st;
    tc_progress_stats_get(g.engine, &st);
    EXPECT_EQ(20u, st.events);
    EXPECT_GT(st.idle_loops, 0u);
    EXPECT_GE(st.idle_cpu_s, 0.0);
}

INSTANTIATE_TEST_SUITE_P(all, wait_policy,
                         ::testing::Values(TC_WAIT_BUSY, TC_WAIT_PAUSE, TC_WAIT_WFE,
                                           TC_WAIT_SLEEP, TC_WAIT_ADAPTIVE),
                         [](const auto &param_info) {
                             return std::string(tc_wait_policy_names[param_info.param]);
                         });

TEST(wait_policy_names, parse_round_trips_and_rejects_unknown)
{
    for (int p = 0; p < TC_WAIT_LAST; ++p) {
        tc_wait_policy_t out;
        ASSERT_EQ(UCS_OK, tc_wait_policy_parse(tc_wait_policy_names[p], &out));
        EXPECT_EQ(p, out);
    }
    tc_test::scoped_log_expect logs;
    tc_wait_policy_t out;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, tc_wait_policy_parse("spinny", &out));
    EXPECT_EQ(1u, logs.count("spinny"));
}

TEST(wait_policy_names, wfe_names_its_fallback)
{
    tc_waiter_t w;
    ASSERT_EQ(UCS_OK, tc_waiter_init(&w, TC_WAIT_WFE));
    if (w.effective == TC_WAIT_WFE) {
        EXPECT_TRUE(std::string(w.mechanism) == "umwait" || std::string(w.mechanism) == "wfe");
    } else {
        EXPECT_EQ(TC_WAIT_PAUSE, w.effective);
        EXPECT_NE(std::string::npos, std::string(w.mechanism).find("no WAITPKG"));
    }
}

} // namespace

/* The default policy: a spinner per core at most, and the core given away
 * after the spin budget. The cores are counted from the affinity mask when
 * a waiter is made, so pin this thread to one core for that. */
class one_core {
public:
    one_core()
    {
        sched_getaffinity(0, sizeof(old_), &old_);
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(sched_getcpu(), &one);
        pinned_ = sched_setaffinity(0, sizeof(one), &one) == 0;
    }
    ~one_core() { sched_setaffinity(0, sizeof(old_), &old_); }
    bool pinned() const { return pinned_; }

private:
    cpu_set_t old_;
    bool      pinned_ = false;
};

TEST(wait_adaptive, is_the_default)
{
    tc_config_t config;
    ASSERT_EQ(UCS_OK, tc_config_read(&config));
    EXPECT_EQ(TC_WAIT_ADAPTIVE, config.wait_policy) << "unless the environment sets one";
    tc_config_release(&config);
}

TEST(wait_adaptive, spins_only_while_the_process_has_a_core_for_it)
{
    tc_waiter_t a, b;
    {
        one_core pin;
        ASSERT_TRUE(pin.pinned());
        ASSERT_EQ(UCS_OK, tc_waiter_init(&a, TC_WAIT_ADAPTIVE));
        ASSERT_EQ(UCS_OK, tc_waiter_init(&b, TC_WAIT_ADAPTIVE));
    }
    /* a streak joins the spinners after its quick steps */
    auto idle_past_quick_steps = [](tc_waiter_t &w) {
        for (unsigned i = 0; i <= TC_WAIT_ADAPTIVE_QUICK_STEPS; ++i) {
            tc_waiter_idle(&w, nullptr);
        }
    };
    /* on a crowded machine (a CPU hog beside the test) nobody spins */
    idle_past_quick_steps(a);
    if (!tc_waiter_machine_crowded()) {
        EXPECT_EQ(1, a.spinning);
    }
    idle_past_quick_steps(b);
    EXPECT_EQ(0, b.spinning) << "a second spinner on one core only delays the first";
    tc_waiter_reset(&a);
    EXPECT_EQ(0, a.spinning);
    tc_waiter_reset(&b);
    idle_past_quick_steps(b);
    if (!tc_waiter_machine_crowded()) {
        EXPECT_EQ(1, b.spinning) << "the core is free again";
    }
    tc_waiter_reset(&b);
}

TEST(wait_adaptive, gives_the_core_away_after_the_spin_budget)
{
    tc_test::scoped_env budget("UCX_TC_SPIN_TIME", "2ms");
    tc_waiter_t w;
    ASSERT_EQ(UCS_OK, tc_waiter_init(&w, TC_WAIT_ADAPTIVE));
    EXPECT_EQ(2000000u, w.spin_ns);
    const auto start = std::chrono::steady_clock::now();
    unsigned steps   = 0;
    do {
        tc_waiter_idle(&w, nullptr);
        ++steps;
    } while ((w.spinning || steps <= TC_WAIT_ADAPTIVE_QUICK_STEPS) && steps < 100000000u);
    const double spun_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count();
    EXPECT_FALSE(w.spinning);
    if (spun_ms < 2.0) {
        /* it stops early only when the machine has more runnable tasks than
         * cores (make -j2 check): then nobody may spin */
        EXPECT_TRUE(tc_waiter_machine_crowded()) << "stopped after " << spun_ms << " ms";
    }
    EXPECT_LT(spun_ms, 200.0) << "it gives the core away after the budget";
    /* then yields, then sleeps: a step now takes at least a yield */
    tc_waiter_reset(&w);
}

TEST(wait_adaptive, nobody_spins_beside_a_cpu_hog)
{
    /* more runnable tasks than cores: the verdict turns crowded within two
     * looks (2 ms apart) and then no streak spins */
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    std::atomic<bool> stop{false};
    std::vector<std::thread> hogs;
    for (unsigned i = 0; i < cores + 1; ++i) {
        hogs.emplace_back([&] {
            while (!stop.load(std::memory_order_relaxed)) {
            }
        });
    }
    tc_waiter_t w;
    ASSERT_EQ(UCS_OK, tc_waiter_init(&w, TC_WAIT_ADAPTIVE));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!tc_waiter_machine_crowded() && std::chrono::steady_clock::now() < deadline) {
        tc_waiter_idle(&w, nullptr);   /* the spin path looks at the crowd */
    }
    tc_waiter_reset(&w);
    EXPECT_TRUE(tc_waiter_machine_crowded()) << cores + 1 << " hogs on " << cores << " cores";
    for (unsigned i = 0; i <= 2 * TC_WAIT_ADAPTIVE_QUICK_STEPS; ++i) {
        tc_waiter_idle(&w, nullptr);
    }
    EXPECT_EQ(0, w.spinning) << "a crowded machine gets the core back at once";
    tc_waiter_reset(&w);
    stop = true;
    for (auto &t : hogs) {
        t.join();
    }
}

namespace {

/* this thread's run-queue wait so far, ns (0 without schedstat) */
uint64_t own_run_delay_ns()
{
    std::ifstream f("/proc/thread-self/schedstat");
    uint64_t on_cpu = 0, delay = 0;
    f >> on_cpu >> delay;
    return delay;
}

} // namespace

TEST(wait_adaptive, a_niced_neighbour_is_no_crowd)
{
    /* more runnable tasks than cores, all at nice 19: the scheduler keeps
     * them off our core, so spinning delays nobody we wait for, and the
     * verdict must stay "not crowded" -- unless this thread itself waited
     * for a CPU (other tests of a parallel make check at our priority),
     * which is what the verdict is about */
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    std::atomic<bool> stop{false};
    std::vector<std::thread> hogs;
    for (unsigned i = 0; i < cores + 1; ++i) {
        hogs.emplace_back([&] {
            setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
            while (!stop.load(std::memory_order_relaxed)) {
            }
        });
    }
    std::this_thread::sleep_for(50ms);
    tc_waiter_t w;
    ASSERT_EQ(UCS_OK, tc_waiter_init(&w, TC_WAIT_ADAPTIVE));
    const uint64_t delay0 = own_run_delay_ns();
    const auto t0 = clock_type::now();
    unsigned crowded_looks = 0, looks = 0;
    while (clock_type::now() - t0 < 300ms) {
        tc_waiter_idle(&w, nullptr);
        if ((++looks % 1024) == 0) {
            crowded_looks += tc_waiter_machine_crowded();
            tc_waiter_reset(&w);
        }
    }
    const double elapsed_ns = std::chrono::duration<double, std::nano>(clock_type::now() - t0).count();
    const double delayed = (double)(own_run_delay_ns() - delay0) / elapsed_ns;
    tc_waiter_reset(&w);
    stop = true;
    for (auto &t : hogs) {
        t.join();
    }
    if (delayed > 0.1) {
        std::cout << "[ NOTE     ] this thread waited " << delayed * 100
                  << " % of the time for a CPU: the machine is crowded for it, not by the "
                     "niced hogs alone" << std::endl;
        return;
    }
    EXPECT_EQ(0u, crowded_looks) << cores + 1 << " niced hogs on " << cores
                                 << " cores; this thread waited " << delayed * 100 << " %";
}
