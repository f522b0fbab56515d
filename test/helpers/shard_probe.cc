/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * shard_probe: one rank of a large job split into many small shards
 * (test_group_shards_procs.cc starts P of them over the TCP bootstrap).
 *
 * Every rank creates one Two-Chains mailbox for the whole job, then two
 * groups of 3 consecutive ranks: layer A {0,1,2},{3,4,5},... and layer B
 * offset by one, {1,2,3},{4,5,6},... (the last shard of a layer takes the
 * ranks left over, and layer B wraps around to rank 0), so about 2P/3
 * shards. Then:
 *  - mailbox: every rank that is not a victim sends server_side_sum jams,
 *    Local and Cached, to -d random peers (not victims; the choice is a
 *    pure function of the seed and the sender, so every receiver knows what
 *    comes to it) and checks its exact sum and call count;
 *  - shards: every member sends -s messages into each of its two shards;
 *    every member checks each delivered message's bytes and per-sender order
 *    and folds it (and every view) into a hash chain;
 *  - victims (-k): send half of their messages, print "victim ready" and
 *    wait to be killed (kill -9 by the test); their shards go on without them.
 *
 * Output per rank: "metrics {JSON}" (creation times, pinned bytes: the sum
 * of what ucp_mem_map mapped in this process, RSS, endpoints), "mailbox sum
 * ... OK", per shard "shard ID members LIST chain HEX count N epoch E view
 * LIST bad B status S", then "done"; it then keeps progressing until
 * SIGUSR1 (the test's "everyone finished") and exits 0 without a collective
 * teardown, which a job with killed ranks could not pass. "FAILED" marks a
 * failed check. Exit 1 on any failure.
 *
 * Usage: shard_probe [-s MSGS] [-f FRAMES] [-d FANOUT] [-k V1,V2,...]
 *                    [-S SEED] [-D RING_DEPTH] [-t TIMEOUT_S]
 */
#include "api/group.hpp"

#include <twochains/twochains.h>

#include "tcbench.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <sys/resource.h>
#include <unistd.h>
#include <vector>

/* --- pinned memory: every ucp_mem_map of this process, counted ------------ */

namespace {

std::atomic<int64_t> g_pinned{0};
std::mutex           g_pinned_lock;
std::map<ucp_mem_h, size_t> &pinned_sizes()
{
    static std::map<ucp_mem_h, size_t> sizes;
    return sizes;
}

} // namespace

/* The libraries call ucp_mem_map through the PLT, so the executable's
 * definition (exported: -rdynamic) takes their calls and passes them on. */
extern "C" ucs_status_t ucp_mem_map(ucp_context_h context, const ucp_mem_map_params_t *params,
                                    ucp_mem_h *memh_p)
{
    using fn  = ucs_status_t (*)(ucp_context_h, const ucp_mem_map_params_t *, ucp_mem_h *);
    static fn real = reinterpret_cast<fn>(dlsym(RTLD_NEXT, "ucp_mem_map"));
    ucs_status_t status = real(context, params, memh_p);
    if (status == UCS_OK && (params->field_mask & UCP_MEM_MAP_PARAM_FIELD_LENGTH)) {
        std::lock_guard<std::mutex> lock(g_pinned_lock);
        pinned_sizes()[*memh_p] = params->length;
        g_pinned += static_cast<int64_t>(params->length);
    }
    return status;
}

extern "C" ucs_status_t ucp_mem_unmap(ucp_context_h context, ucp_mem_h memh)
{
    using fn  = ucs_status_t (*)(ucp_context_h, ucp_mem_h);
    static fn real = reinterpret_cast<fn>(dlsym(RTLD_NEXT, "ucp_mem_unmap"));
    {
        std::lock_guard<std::mutex> lock(g_pinned_lock);
        auto it = pinned_sizes().find(memh);
        if (it != pinned_sizes().end()) {
            g_pinned -= static_cast<int64_t>(it->second);
            pinned_sizes().erase(it);
        }
    }
    return real(context, memh);
}

namespace {

int g_rank = -1;
int g_failures = 0;
volatile sig_atomic_t g_release = 0;

#define CHECK(_cond, ...) \
    do { \
        if (!(_cond)) { \
            std::printf("shard_probe rank %d: FAILED: ", g_rank); \
            std::printf(__VA_ARGS__); \
            std::printf("\n"); \
            ++g_failures; \
        } \
    } while (0)

double now_s()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
}

uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const auto *b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) {
        h = (h ^ b[i]) * 1099511628211ull;
    }
    return h;
}

long status_kb(const char *field)
{
    FILE *f = std::fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f != nullptr && std::fgets(line, sizeof(line), f) != nullptr) {
        if (std::strncmp(line, field, std::strlen(field)) == 0) {
            kb = std::atol(line + std::strlen(field) + 1);
        }
    }
    if (f != nullptr) {
        std::fclose(f);
    }
    return kb;
}

/* --- the shards: 3 consecutive ranks, two layers --------------------------- */

struct shard_def {
    int              id;
    std::vector<int> members;
};

/* layer @a layer (0: A, 1: B, offset by one) of a job of @a p ranks */
std::vector<shard_def> layer_shards(int p, int layer, int first_id)
{
    std::vector<shard_def> out;
    const int count = p / 3;
    for (int i = 0; i < count; ++i) {
        shard_def s{first_id + i, {}};
        const int end = (i == count - 1) ? p : 3 * (i + 1);
        for (int k = 3 * i; k < end; ++k) {
            s.members.push_back((k + layer) % p);
        }
        out.push_back(std::move(s));
    }
    return out;
}

uint8_t byte_of(int shard, int sender, int64_t k, size_t i)
{
    return static_cast<uint8_t>(shard * 17 + sender * 31 + k * 7 + i * 13);
}

size_t size_of(int64_t k) { return 8 + static_cast<size_t>(k % 24); }

constexpr unsigned kWindow = 16;   /* test_group_shards_procs.cc bounds a trim by it */

struct shard_run {
    shard_def                   def;
    std::unique_ptr<tc::group>  group;
    uint64_t                    chain = 1469598103934665603ull;
    uint64_t                    count = 0, bad = 0;
    std::map<int, int64_t>      next;   /* per sender: the index expected next */
    tc::view                    last_view;
    int64_t                     sent = 0;
};

/* --- the mailbox: who sends what to whom ----------------------------------- */

std::vector<int> targets_of(int sender, int p, int fanout, uint32_t seed,
                            const std::set<int> &victims)
{
    std::vector<int> t;
    if (victims.count(sender) || p - 1 - static_cast<int>(victims.size()) < fanout) {
        return t;
    }
    std::mt19937 rng(seed * 2654435761u + static_cast<uint32_t>(sender));
    std::uniform_int_distribution<int> pick(0, p - 1);
    while (static_cast<int>(t.size()) < fanout) {
        const int r = pick(rng);
        if (r != sender && !victims.count(r) && std::find(t.begin(), t.end(), r) == t.end()) {
            t.push_back(r);
        }
    }
    return t;
}

int64_t sum_value(int sender, int target, int mode, int i, unsigned j)
{
    return static_cast<int64_t>(sender) * 1000003 + static_cast<int64_t>(target) * 7919 +
           mode * 104729 + i * 31 + j;
}

unsigned sum_count(int i) { return 1 + static_cast<unsigned>(i % 8); }

struct until_time {
    double t;
    static int done(void *arg) { return now_s() >= static_cast<until_time*>(arg)->t; }
};

struct arrived {
    tc_ifunc_mailbox_h mbox;
    uint64_t           expected;
    static int done(void *arg)
    {
        auto *a = static_cast<arrived*>(arg);
        tc_ifunc_stats_t st;
        tc_ifunc_mailbox_stats(a->mbox, &st);
        return st.frames[0] + st.frames[1] + st.frames[2] + st.rejects_total >= a->expected;
    }
};

/* Local and Cached frames to every target; the expected sum at this rank */
void mailbox_phase(tc::ucp_node &node, tc_ifunc_mailbox_h mbox, tc_ifunc_pkg_h pkg, int p,
                   int frames, int fanout, uint32_t seed, const std::set<int> &victims,
                   double timeout_s)
{
    uint32_t element = 0;
    CHECK(tc_ifunc_pkg_element(pkg, "server_side_sum", &element) == UCS_OK, "no jam");
    const tc_ifunc_mode_t modes[2] = {TC_IFUNC_MODE_LOCAL, TC_IFUNC_MODE_CACHED};
    int64_t buf[8] = {0};
    tc_ifunc_msg_h msgs[2] = {nullptr, nullptr};
    for (int m = 0; m < 2; ++m) {
        CHECK(tc_ifunc_msg_create(mbox, pkg, element, modes[m], buf, sizeof(buf), &msgs[m]) ==
                      UCS_OK, "msg_create");
    }
    uint64_t no_resource = 0;
    for (int t : targets_of(g_rank, p, fanout, seed, victims)) {
        for (int i = 0; i < frames; ++i) {
            for (int m = 0; m < 2 && g_failures == 0; ++m) {
                for (unsigned j = 0; j < sum_count(i); ++j) {
                    buf[j] = sum_value(g_rank, t, m, i, j);
                }
                CHECK(tc_ifunc_msg_reinit(msgs[m], buf, sum_count(i) * sizeof(int64_t)) ==
                              UCS_OK, "msg_reinit");
                const double deadline = now_s() + timeout_s;
                ucs_status_t status;
                /* UCS_ERR_NO_RESOURCE: no credit yet (or, for a first send,
                 * no ring granted yet): progress and retry */
                while ((status = tc_ifunc_send(mbox, t, msgs[m])) == UCS_ERR_NO_RESOURCE &&
                       now_s() < deadline) {
                    /* wait with the engine's policy, not in a spin: hundreds
                     * of ranks share two cores, and their groups'
                     * heartbeats need them */
                    ++no_resource;
                    until_time pause{now_s() + 1e-3};
                    tc_progress_until(node.engine(), &until_time::done, &pause, 1.0);
                }
                CHECK(status == UCS_OK || status == UCS_INPROGRESS, "send to %d: %s", t,
                      ucs_status_string(status));
            }
        }
    }
    CHECK(tc_ifunc_mailbox_flush(mbox, timeout_s) == UCS_OK, "mailbox flush");

    int64_t expected_sum = 0;
    uint64_t expected_frames = 0;
    for (int s = 0; s < p; ++s) {
        for (int t : targets_of(s, p, fanout, seed, victims)) {
            if (t != g_rank) {
                continue;
            }
            for (int i = 0; i < frames; ++i) {
                for (int m = 0; m < 2; ++m) {
                    for (unsigned j = 0; j < sum_count(i); ++j) {
                        expected_sum += sum_value(s, t, m, i, j);
                    }
                    ++expected_frames;
                }
            }
        }
    }
    arrived a{mbox, expected_frames};
    CHECK(tc_progress_until(node.engine(), &arrived::done, &a, timeout_s) == UCS_OK,
          "only some of %llu frames arrived", static_cast<unsigned long long>(expected_frames));
    tc_ifunc_stats_t st;
    tc_ifunc_mailbox_stats(mbox, &st);
    const auto *sum   = static_cast<int64_t*>(tc_ifunc_pkg_symbol(pkg, "tcbench_accumulator"));
    const auto *calls = static_cast<uint64_t*>(tc_ifunc_pkg_symbol(pkg, "tcbench_sum_calls"));
    CHECK(st.rejects_total == 0, "%llu frames rejected",
          static_cast<unsigned long long>(st.rejects_total));
    CHECK(*sum == expected_sum && *calls == expected_frames,
          "mailbox sum %lld in %llu calls, expected %lld in %llu",
          static_cast<long long>(*sum), static_cast<unsigned long long>(*calls),
          static_cast<long long>(expected_sum), static_cast<unsigned long long>(expected_frames));
    if (g_failures == 0) {
        std::printf("mailbox sum %lld frames %llu local %llu cached %llu retries %llu OK\n",
                    static_cast<long long>(*sum), static_cast<unsigned long long>(*calls),
                    static_cast<unsigned long long>(st.frames[TC_IFUNC_FRAME_LOCAL]),
                    static_cast<unsigned long long>(st.frames[TC_IFUNC_FRAME_CACHED]),
                    static_cast<unsigned long long>(no_resource));
    }
    for (auto *m : msgs) {
        tc_ifunc_msg_free(m);
    }
}

void create_shard(tc::ucp_node &node, shard_run &s, bool batched)
{
    tc::group_params p;
    p.members     = s.def.members;
    p.max_payload = 64;
    p.window      = kWindow;
    p.smc         = batched ? tc::smc_mode::batched : tc::smc_mode::urgent;
    p.on_deliver  = [&s](const tc::message &m) {
        /* the sender's k leads the bytes; the rest follow from it. Within a
         * view every message of a sender comes once, in its order; a
         * failure's trim may discard a survivor's last few (not resent),
         * so k may skip ahead then, but never repeat or go back */
        int64_t k = -1;
        bool ok   = m.data.size() >= sizeof(k);
        if (ok) {
            std::memcpy(&k, m.data.data(), sizeof(k));
            ok = k >= s.next[m.sender] && m.data.size() == size_of(k);
        }
        for (size_t i = sizeof(k); ok && i < m.data.size(); ++i) {
            ok = static_cast<uint8_t>(m.data[i]) == byte_of(s.def.id, m.sender, k, i);
        }
        s.bad += !ok;
        s.next[m.sender] = k + 1;
        s.chain = fnv(s.chain, &m.sender, sizeof(m.sender));
        s.chain = fnv(s.chain, m.data.data(), m.data.size());
        ++s.count;
    };
    p.on_view = [&s](const tc::view &v) {
        s.last_view = v;
        s.chain     = fnv(s.chain, &v.epoch, sizeof(v.epoch));
        s.chain     = fnv(s.chain, v.members.data(), v.members.size() * sizeof(int));
    };
    const ucs_status_t status = tc::group::create(node, p, s.group);
    CHECK(status == UCS_OK && s.group != nullptr, "shard %d: create: %s", s.def.id,
          ucs_status_string(status));
}

ucs_status_t send_one(shard_run &s)
{
    const int64_t k = s.sent++;
    return s.group->send(size_of(k), [&](std::span<std::byte> buf) {
        std::memcpy(buf.data(), &k, sizeof(k));
        for (size_t i = sizeof(k); i < buf.size(); ++i) {
            buf[i] = std::byte{byte_of(s.def.id, g_rank, k, i)};
        }
    });
}

int never(void *) { return 0; }
int released(void *) { return g_release != 0; }

std::string list_of(const std::vector<int> &v)
{
    std::string s;
    for (int m : v) {
        s += (s.empty() ? "" : ",") + std::to_string(m);
    }
    return s;
}

} // namespace

int main(int argc, char **argv)
{
    int64_t msgs = 100;
    int frames = 20, fanout = 3;
    unsigned depth = 8;
    uint32_t seed = 1;
    double timeout_s = 120;
    std::set<int> victims;
    int opt;
    while ((opt = getopt(argc, argv, "s:f:d:k:S:D:t:")) != -1) {
        switch (opt) {
        case 's': msgs = std::atol(optarg); break;
        case 'f': frames = std::atoi(optarg); break;
        case 'd': fanout = std::atoi(optarg); break;
        case 'S': seed = static_cast<uint32_t>(std::atol(optarg)); break;
        case 'D': depth = static_cast<unsigned>(std::atoi(optarg)); break;
        case 't': timeout_s = std::atof(optarg); break;
        case 'k':
            for (char *tok = std::strtok(optarg, ","); tok; tok = std::strtok(nullptr, ",")) {
                victims.insert(std::atoi(tok));
            }
            break;
        default: return 2;
        }
    }
    setvbuf(stdout, nullptr, _IOLBF, 0);
    /* a tcp endpoint is a socket or two: a rank that talks to many needs
     * more than the usual soft limit of open files */
    rlimit nofile{};
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }
    std::signal(SIGUSR1, [](int) { g_release = 1; });

    tc_bootstrap_h b;
    if (tc_bootstrap_create_from_env(&b) != UCS_OK) {
        return 1;
    }
    tc::bootstrap_ptr boot(b);
    g_rank      = tc_bootstrap_rank(b);
    const int p = tc_bootstrap_size(b);
    const bool victim = victims.count(g_rank) > 0;

    const double t0 = now_s();
    auto node = std::make_unique<tc::ucp_node>(boot.get());
    if (node->status() != UCS_OK) {
        std::printf("shard_probe rank %d: FAILED: node\n", g_rank);
        return 1;
    }
    const double t_node = now_s();
    const int64_t pinned_node = g_pinned.load();

    tc_ifunc_pkg_h pkg;
    if (tc_ifunc_pkg_load(TC_BUILDDIR "/test/twochains-pkgs", "tcbench", &pkg) != UCS_OK) {
        std::printf("shard_probe rank %d: FAILED: package\n", g_rank);
        return 1;
    }
    char target[TCBENCH_TEXT_LEN] = {0};
    tc_ifunc_mailbox_params_t mp{};
    mp.field_mask  = TC_IFUNC_MAILBOX_PARAM_FIELD_TARGET_ARGS |
                     TC_IFUNC_MAILBOX_PARAM_FIELD_RING_DEPTH;
    mp.target_args = target;
    mp.ring_depth  = depth;
    const double t_mbox0 = now_s();
    tc_ifunc_mailbox_h mbox;
    if (tc_ifunc_mailbox_create(node->context(), node->engine(), boot.get(), &mp, &mbox) !=
        UCS_OK) {
        std::printf("shard_probe rank %d: FAILED: mailbox\n", g_rank);
        return 1;
    }
    const double t_mbox = now_s();
    const int64_t pinned_mbox = g_pinned.load();

    /* every rank: its shard of layer A, then of layer B (the same order at
     * every member of both) */
    const int per_layer = p / 3;
    std::vector<shard_run> shards;
    shards.reserve(2);   /* the callbacks hold references to the elements */
    for (int layer = 0; layer < 2; ++layer) {
        for (auto &d : layer_shards(p, layer, layer * per_layer)) {
            if (std::find(d.members.begin(), d.members.end(), g_rank) != d.members.end()) {
                shards.emplace_back();
                shards.back().def = d;
            }
        }
    }
    const double t_shards0 = now_s();
    for (size_t i = 0; i < shards.size() && g_failures == 0; ++i) {
        create_shard(*node, shards[i], i == 1);
    }
    const double t_shards = now_s();
    const int64_t pinned_all = g_pinned.load();
    std::printf("metrics {\"rank\":%d,\"ranks\":%d,\"shards\":%zu,\"node_ms\":%.1f,"
                "\"mailbox_ms\":%.1f,\"shards_ms\":%.1f,\"pinned_node\":%lld,"
                "\"pinned_mailbox\":%lld,\"pinned_shards\":%lld,\"pinned_bytes\":%lld,"
                "\"node_eps\":%d,\"vmrss_kb\":%ld,\"vmhwm_kb\":%ld}\n",
                g_rank, p, shards.size(), (t_node - t0) * 1e3, (t_mbox - t_mbox0) * 1e3,
                (t_shards - t_shards0) * 1e3, static_cast<long long>(pinned_node),
                static_cast<long long>(pinned_mbox - pinned_node),
                static_cast<long long>(pinned_all - pinned_mbox),
                static_cast<long long>(pinned_all), node->connected_peers(),
                status_kb("VmRSS:"), status_kb("VmHWM:"));
    if (g_failures != 0) {
        return 1;
    }

    if (!victim) {
        mailbox_phase(*node, mbox, pkg, p, frames, fanout, seed, victims, timeout_s);
    }

    ucs_status_t status = UCS_OK;
    const int64_t until = victim ? msgs / 2 : msgs;
    for (int64_t k = 0; k < until && status == UCS_OK; ++k) {
        for (auto &s : shards) {
            if (status == UCS_OK) {
                status = send_one(s);
            }
        }
    }
    CHECK(status == UCS_OK, "send: %s", ucs_status_string(status));
    if (victim) {
        std::printf("victim ready\n");
        const double deadline = now_s() + timeout_s;
        while (now_s() < deadline) {
            tc_progress_until(node->engine(), &never, nullptr, 1.0);
        }
        std::printf("shard_probe rank %d: FAILED: a victim was not killed\n", g_rank);
        _exit(1);
    }
    for (auto &s : shards) {
        const ucs_status_t closed = s.group->close();
        CHECK(closed == UCS_OK, "shard %d: close: %s", s.def.id, ucs_status_string(closed));
        std::printf("shard %d members %s chain %016llx count %llu epoch %lld view %s bad %llu "
                    "sent %lld trimmed %llu status %s\n", s.def.id, list_of(s.def.members).c_str(),
                    static_cast<unsigned long long>(s.chain),
                    static_cast<unsigned long long>(s.count),
                    static_cast<long long>(s.last_view.epoch),
                    list_of(s.last_view.members).c_str(),
                    static_cast<unsigned long long>(s.bad), static_cast<long long>(s.sent),
                    static_cast<unsigned long long>(s.group->stats().trimmed),
                    ucs_status_string(closed));
        CHECK(s.bad == 0, "shard %d: %llu messages with wrong bytes or order", s.def.id,
              static_cast<unsigned long long>(s.bad));
    }
    std::printf("final {\"rank\":%d,\"vmrss_kb\":%ld,\"vmhwm_kb\":%ld,\"node_eps\":%d,"
                "\"pinned_bytes\":%lld}\n", g_rank, status_kb("VmRSS:"), status_kb("VmHWM:"),
                node->connected_peers(), static_cast<long long>(g_pinned.load()));
    std::printf("done %s\n", g_failures == 0 ? "OK" : "FAILED");

    /* Peers may still need us (credits, acks, their own closes' last
     * puts): serve them until the test says everyone is done, then leave
     * without a collective teardown (the job has killed ranks). */
    const double deadline = now_s() + timeout_s;
    while (!g_release && now_s() < deadline) {
        tc_progress_until(node->engine(), &released, nullptr, 1.0);
    }
    std::fflush(stdout);
    _exit(g_failures == 0 ? 0 : 1);
}
