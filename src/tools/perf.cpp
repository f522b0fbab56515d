/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * twochains-perf: replication-layer benchmark shapes in ucx_perftest's
 * style. One JSON object per measured point with --json.
 *
 *   smc_bw   every sender multicasts -n messages as fast as the window allows;
 *            delivered messages/s and bytes/s at the slowest member, and the
 *            puts issued per delivered message (all members together).
 *   smc_lat  rank 0 sends one message at a time; latency from send to
 *            delivery at every member (max over members), avg/p50/p99.9.
 *
 * Run as: twochains-run -n 3 -- twochains-perf -t smc_bw -s 100 --json
 *     or: twochains-perf --inproc --members 3 -t smc_bw -s 100 --json
 * (--inproc drives each member from its own thread: group creation is a
 * collective that blocks each member until all arrive.)
 */
#include "api/group.hpp"
#include "tools/perf_jam.hpp"
#include "tools/perf_members.hpp"
#include "tools/perf_options.hpp"

#include <twochains/twochains.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

struct options : tc::perf::common_options {  /* --json, --inproc, --members */
    std::string shape   = "smc_bw";
    size_t      size    = 100;
    uint64_t    iters   = 100000;
    uint64_t    warmup  = 1000;
    unsigned    window  = 64;
    bool        one     = false;
    bool        batched = false;
    std::optional<unsigned> batch;
    std::optional<double>   flush_us;
    double      rate    = 0;      /* smc_lat: offered messages/s (0: one at a time) */
    unsigned    threads = 0;      /* smc_bw batched: application sender threads per member */
    size_t      background = 0;   /* smc_lat: another group multicasts this many bytes
                                     over RDMC from the last rank, all along */
    unsigned    groups  = 1;      /* smc_bw: groups (shards) over the same members */
    unsigned    active  = 0;      /* of which send (0: all) */
    bool        per_message = false; /* on_deliver instead of on_deliver_span */
    std::string jam;              /* local|injected|cached: replicated jams (perf_jam.hpp) */
    std::string pkgs;             /* where tcbench is (default UCX_TC_IFUNC_PKG_PATH) */
    bool        touch = false;    /* span delivery sums each message's 64-bit words, as
                                     server_side_sum does: the jam's work without the jam */
};

double now_s()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double cpu_s()
{
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* per member, also with --inproc */
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void usage(FILE *out)
{
    std::fprintf(out,
                 "Usage: twochains-run -n N -- twochains-perf [options]\n"
                 "  -t smc_bw|smc_lat   shape (default smc_bw)\n"
                 "  -s BYTES            payload size (default 100, >= 8)\n"
                 "  -n ITERS            messages per sender (default 100000)\n"
                 "  -w WARMUP           warm-up messages (default 1000)\n"
                 "  --window W          slots per sender (default 64)\n"
                 "  --senders all|one   who sends (default all; smc_lat: one)\n"
                 "  --mode urgent|batched  SMC mode (default urgent)\n"
                 "  --batch B           batched: push once B messages are pending\n"
                 "  --flush-us T        batched: push a partial batch after T us\n"
                 "  --rate R            smc_lat: offer R messages/s instead of one at a time\n"
                 "  --rdmc-background B smc_lat: meanwhile the last rank multicasts B-byte\n"
                 "                      messages over RDMC in a second group on the same node\n"
                 "  --threads T         smc_bw, batched: T sender threads per member, the\n"
                 "                      engine driven by its own thread (threaded senders)\n"
                 "  --groups G          smc_bw: G groups over the same members and engine\n"
                 "  --active A          smc_bw: A of the G groups send, the rest idle (default G)\n"
                 "  --deliver span|message  delivery callback (default span; smc_lat: message)\n"
                 "  --jam MODE          send tcbench's server_side_sum jam (local, injected,\n"
                 "                      cached) with -s bytes of payload; smc_lat: send to\n"
                 "                      executed at every member (send_jam, flush(stable))\n"
                 "  --pkgs DIR          with --jam: the package prefix (UCX_TC_IFUNC_PKG_PATH)\n"
                 "  --touch             span delivery sums every message's 64-bit words (what\n"
                 "                      --jam's server_side_sum does), so the data is read\n"
                 "  --members N         with --inproc: members to start (default 3)\n"
                 "  --inproc            all members in this process, one thread each,\n"
                 "                      joined by the in-process bootstrap\n"
                 "  --json              one JSON object per point\n");
}

bool parse(int argc, char **argv, options &o)
{
    using namespace tc::perf;
    static const option longopts[] = {{"window", required_argument, nullptr, 'W'},
                                      {"senders", required_argument, nullptr, 'S'},
                                      {"mode", required_argument, nullptr, 'M'},
                                      kOptJson,
                                      kOptInproc,
                                      {"batch", required_argument, nullptr, 'B'},
                                      {"flush-us", required_argument, nullptr, 'F'},
                                      {"rate", required_argument, nullptr, 'R'},
                                      {"threads", required_argument, nullptr, 'T'},
                                      {"rdmc-background", required_argument, nullptr, 'G'},
                                      kOptMembers,
                                      {"groups", required_argument, nullptr, 'g'},
                                      {"active", required_argument, nullptr, 'a'},
                                      {"deliver", required_argument, nullptr, 'D'},
                                      {"jam", required_argument, nullptr, 'J'},
                                      {"pkgs", required_argument, nullptr, 'P'},
                                      {"touch", no_argument, nullptr, 'X'},
                                      kOptHelp,
                                      kOptEnd};
    const bool parsed = parse_options(argc, argv, "t:s:n:w:h", longopts, o, usage, [&o](int c) {
        switch (c) {
        case 't': o.shape = optarg; break;
        case 's': o.size = std::strtoull(optarg, nullptr, 0); break;
        case 'n': o.iters = std::strtoull(optarg, nullptr, 0); break;
        case 'w': o.warmup = std::strtoull(optarg, nullptr, 0); break;
        case 'W': o.window = std::strtoul(optarg, nullptr, 0); break;
        case 'S': o.one = !std::strcmp(optarg, "one"); break;
        case 'M':
            if (!std::strcmp(optarg, "batched")) {
                o.batched = true;
            } else if (std::strcmp(optarg, "urgent") != 0) {
                std::fprintf(stderr, "twochains-perf: unknown mode '%s' (urgent, batched)\n",
                             optarg);
                return false;
            }
            break;
        case 'B': o.batch = std::strtoul(optarg, nullptr, 0); break;
        case 'F': o.flush_us = std::strtod(optarg, nullptr); break;
        case 'R': o.rate = std::strtod(optarg, nullptr); break;
        case 'T': o.threads = std::strtoul(optarg, nullptr, 0); break;
        case 'G': o.background = std::strtoull(optarg, nullptr, 0); break;
        case 'g': o.groups = std::strtoul(optarg, nullptr, 0); break;
        case 'a': o.active = std::strtoul(optarg, nullptr, 0); break;
        case 'D':
            if (!std::strcmp(optarg, "message")) {
                o.per_message = true;
            } else if (std::strcmp(optarg, "span") != 0) {
                std::fprintf(stderr, "twochains-perf: unknown delivery '%s' (span, message)\n",
                             optarg);
                return false;
            }
            break;
        case 'J': o.jam = optarg; break;
        case 'P': o.pkgs = optarg; break;
        case 'X': o.touch = true; break;
        default: return false;
        }
        return true;
    });
    if (!parsed) {
        return false;
    }
    if (o.shape != "smc_bw" && o.shape != "smc_lat") {
        std::fprintf(stderr, "twochains-perf: unknown shape '%s'\n", o.shape.c_str());
        return false;
    }
    if (o.size < sizeof(double) || o.iters == 0) {
        std::fprintf(stderr, "twochains-perf: -s must be >= 8 and -n > 0\n");
        return false;
    }
    if (o.shape == "smc_lat") {
        o.one         = true;
        o.per_message = true;
    }
    if (o.active == 0) {
        o.active = o.groups;
    }
    if (o.groups < 1 || o.groups > 1024 || o.active > o.groups ||
        (o.groups > 1 && (o.shape != "smc_bw" || o.threads > 0 || o.background > 0))) {
        std::fprintf(stderr, "twochains-perf: --groups 1..1024 with -t smc_bw (not with "
                             "--threads or --rdmc-background), --active <= --groups\n");
        return false;
    }
    if (!o.jam.empty() && (o.threads > 0 || o.rate > 0 || o.background > 0)) {
        std::fprintf(stderr, "twochains-perf: --jam is not for --threads, --rate or "
                             "--rdmc-background\n");
        return false;
    }
    if (o.threads > 0 && (o.shape != "smc_bw" || !o.batched)) {
        std::fprintf(stderr, "twochains-perf: --threads needs -t smc_bw --mode batched\n");
        return false;
    }
    return tc::perf::check_members(o, 3);
}

double percentile(std::vector<double> v, double p)
{
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

/* Allgather one fixed-size record per rank through the node's bootstrap. */
template<class T> std::vector<T> gather(tc::ucp_node &node, const std::vector<T> &mine)
{
    std::vector<std::vector<std::byte>> all;
    std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(mine.data()),
                                     mine.size() * sizeof(T));
    std::vector<T> out;
    if (node.allgather_blobs(bytes, all) != UCS_OK) {
        return out;
    }
    for (const auto &b : all) {
        const T *p = reinterpret_cast<const T*>(b.data());
        out.insert(out.end(), p, p + b.size() / sizeof(T));
    }
    return out;
}

} // namespace

/* One member's part of the benchmark; rank 0 prints the result. */
int run_member(tc_bootstrap_h boot, const options &o)
{
    tc::ucp_node node(boot);
    if (node.status() != UCS_OK) {
        return 2;
    }
    const int n = node.size(), rank = node.rank();

    const uint64_t total_per_sender = o.warmup + o.iters;
    const uint64_t senders          = o.one ? 1 : n;
    const bool latency              = o.shape == "smc_lat";
    /* delivered here, over the active groups: written by the engine's thread
     * only, read by others with threaded senders */
    std::atomic<uint64_t> delivered{0};
    int64_t touched = 0;   /* --touch: the sum, printed so that it is computed */
    const uint64_t warm_total = o.warmup * senders * o.active;
    const uint64_t all_total  = total_per_sender * senders * o.active;
    double   t_start = 0, t_measured = 0;
    std::vector<double> lat_us;     /* smc_lat: send -> delivery here, per message */
    lat_us.reserve(latency ? o.iters : 0);
    const auto count_delivered = [&](uint64_t k) {
        const uint64_t before = delivered.load(std::memory_order_relaxed);
        delivered.store(before + k, std::memory_order_release);
        if (before < warm_total && before + k >= warm_total) {
            t_start = now_s();   /* the measured phase starts after warm-up */
        }
    };

    tc::group_params p;
    for (int r = 0; r < n; ++r) {
        p.members.push_back(r);
    }
    if (o.one) {
        p.senders = {0};
    }
    p.max_payload = o.size;
    p.window      = o.window;
    p.smc         = o.batched ? tc::smc_mode::batched : tc::smc_mode::urgent;
    p.batch       = o.batch;
    p.flush_us    = o.flush_us;
    p.threaded_senders = (o.threads > 0);
    if (o.per_message) {
        p.on_deliver = [&](const tc::message &m) {
            count_delivered(1);
            if (latency && m.index >= static_cast<int64_t>(o.warmup)) {
                double sent;
                std::memcpy(&sent, m.data.data(), sizeof(sent));
                lat_us.push_back((now_s() - sent) * 1e6);
            }
        };
    } else {
        p.on_deliver_span = [&](std::span<const tc::message> msgs) {
            if (o.touch) {
                for (const auto &m : msgs) {
                    int64_t sum = 0, v;
                    for (size_t i = 0; i + sizeof(v) <= m.data.size(); i += sizeof(v)) {
                        std::memcpy(&v, m.data.data() + i, sizeof(v));
                        sum += v;
                    }
                    touched += sum;
                }
            }
            count_delivered(msgs.size());
        };
    }
    tc::perf::perf_jam jam;
    std::vector<std::byte> jam_payload(o.size);
    if (!o.jam.empty()) {
        const char *path = std::getenv("UCX_TC_IFUNC_PKG_PATH");
        if (!jam.load(o.jam, !o.pkgs.empty() ? o.pkgs : (path != nullptr ? path : ""))) {
            return 2;
        }
        /* slots hold the frames once the code is known; Cached frames that
         * still carry it go over RDMC */
        tc_ifunc_exec_plan_t plan;
        if (!jam.plan(o.size, plan)) {
            return 2;
        }
        p.max_payload = std::max(o.size, plan.known_capacity);
        if (plan.capacity > plan.known_capacity) {
            p.rdmc_max_message = plan.capacity;
        }
        p.jam_packages = {jam.pkg};
        p.jam_mode     = jam.mode;
        p.on_jam       = [&](const tc::jam_event &) { count_delivered(1); };
    }
    /* --groups: the first o.active groups send, the others stay idle */
    std::vector<std::unique_ptr<tc::group>> groups(o.groups);
    for (unsigned i = 0; i < o.groups; ++i) {
        tc::group_params gp = p;
        if (i >= o.active) {
            gp.on_deliver      = nullptr;
            gp.on_deliver_span = nullptr;
        }
        if (tc::group::create(node, gp, groups[i]) != UCS_OK) {
            return 2;
        }
    }
    tc::group *const g = groups[0].get();
    /* --rdmc-background: a second group (another shard on the same worker and
     * progress engine) whose last rank keeps a large RDMC message in flight */
    std::unique_ptr<tc::group> bg;
    uint64_t bg_sent = 0;
    if (o.background > 0) {
        tc::group_params bp;
        bp.members          = p.members;
        bp.senders          = {n - 1};
        bp.max_payload      = 64;
        bp.window           = 16;
        bp.rdmc_max_message = o.background;
        if (tc::group::create(node, bp, bg) != UCS_OK) {
            return 2;
        }
    }
    if (node.barrier() != UCS_OK) {
        return 2;
    }
    if (bg && rank == n - 1) {
        /* the background sender: large messages back to back until the
         * measured group has delivered everything here */
        while (delivered.load() < all_total) {
            if (bg->send(o.background, [](std::span<std::byte> b) { b[0] = std::byte{1}; }) !=
                UCS_OK) {
                return 1;
            }
            ++bg_sent;
        }
    }

    const double cpu0 = cpu_s(), wall0 = now_s();
    if (o.warmup == 0) {
        t_start = wall0;
    }
    struct wait_delivered {
        std::atomic<uint64_t> *delivered;
        uint64_t              target;
        static int done(void *arg)
        {
            auto *w = static_cast<wait_delivered*>(arg);
            return w->delivered->load() >= w->target;
        }
    };
    /* smc_lat stamps its send time; smc_bw writes the index (no clock read) */
    const auto fill_latency = [](std::span<std::byte> buf) {
        const double t = now_s();
        std::memcpy(buf.data(), &t, sizeof(t));
    };
    if (o.threads > 0) {
        /* threaded senders: the engine runs on its own thread, T application
         * threads send; this thread only waits */
        if (tc_progress_thread_start(node.engine()) != UCS_OK) {
            return 1;
        }
        std::vector<std::thread> senders_t;
        std::atomic<int> failed{0};
        if (g->is_sender()) {
            for (unsigned t = 0; t < o.threads; ++t) {
                senders_t.emplace_back([&, t] {
                    const uint64_t mine = total_per_sender / o.threads +
                                          (t < total_per_sender % o.threads ? 1 : 0);
                    for (uint64_t k = 0; k < mine; ++k) {
                        if (g->send(o.size, [k](std::span<std::byte> buf) {
                                std::memcpy(buf.data(), &k, sizeof(k));
                            }) != UCS_OK) {
                            failed++;
                            return;
                        }
                    }
                });
            }
        }
        for (auto &t : senders_t) {
            t.join();
        }
        const double deadline = now_s() + 120;
        while (!failed && delivered.load() < all_total && now_s() < deadline) {
            std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
        t_measured = now_s() - t_start;
        const ucs_status_t closed = g->close();
        tc_progress_thread_stop(node.engine());
        if (failed || closed != UCS_OK || delivered.load() < all_total) {
            return 1;
        }
    } else if (g->is_sender()) {
        for (uint64_t k = 0; k < total_per_sender; ++k) {
            const double t_send = latency ? now_s() : 0;   /* no clock read in smc_bw */
            for (unsigned i = 0; i < o.active; ++i) {
                std::memcpy(jam_payload.data(), &k, sizeof(k));
                const ucs_status_t status =
                        !o.jam.empty() ? groups[i]->send_jam(jam.pkg, jam.element,
                                                             jam_payload.data(), o.size) :
                        latency ? groups[i]->send(o.size, fill_latency) :
                                  groups[i]->send(o.size, [k](std::span<std::byte> buf) {
                                      std::memcpy(buf.data(), &k, sizeof(k));
                                  });
                if (status != UCS_OK) {
                    return 1;
                }
            }
            if (latency && o.rate > 0) {
                /* open loop: send at the offered rate, progressing meanwhile */
                const double due = wall0 + static_cast<double>(k + 1) / o.rate;
                struct until_time {
                    double due;
                    static int done(void *arg)
                    {
                        return now_s() >= static_cast<until_time*>(arg)->due;
                    }
                } u{due};
                tc_progress_until(node.engine(), until_time::done, &u, 30);
            } else if (latency && !o.jam.empty()) {
                /* one jam in flight: until it ran at every member */
                if (g->flush(true) != UCS_OK) {
                    return 1;
                }
                if (k >= o.warmup) {
                    lat_us.push_back((now_s() - t_send) * 1e6);
                }
            } else if (latency) {
                /* one message in flight: wait until it is delivered here,
                 * which needs it to be stable at every member */
                wait_delivered w{&delivered, k + 1};
                if (tc_progress_until(node.engine(), wait_delivered::done, &w, 30) != UCS_OK) {
                    return 1;
                }
            }
        }
    }
    if (o.threads == 0) {
        wait_delivered all{&delivered, all_total};
        if (tc_progress_until(node.engine(), wait_delivered::done, &all, 120) != UCS_OK) {
            std::fprintf(stderr, "rank %d: delivered %lu of %lu\n", rank,
                         static_cast<unsigned long>(delivered.load()),
                         static_cast<unsigned long>(all.target));
            return 1;
        }
        t_measured = now_s() - t_start;
        for (auto &each : groups) {
            if (each->close() != UCS_OK) {
                return 1;
            }
        }
        if (bg && bg->close() != UCS_OK) {
            return 1;
        }
        if (bg && rank == n - 1) {
            std::fprintf(stderr, "background: %lu messages of %zu bytes over RDMC\n",
                         static_cast<unsigned long>(bg_sent), o.background);
        }
    }
    const double wall = now_s() - wall0, cpu = cpu_s() - cpu0;
    /* over every group, idle ones included */
    uint64_t protocol = 0, batches = 0, batched_msgs = 0;
    for (const auto &each : groups) {
        const auto st = each->stats();
        protocol += st.puts[tc::sst::put_purpose::data] +
                    st.puts[tc::sst::put_purpose::counter] +
                    st.puts[tc::sst::put_purpose::receive_report] +
                    st.puts[tc::sst::put_purpose::null_message] +
                    st.puts[tc::sst::put_purpose::delivery_report];
        batches += st.batches;
        batched_msgs += st.batched_msgs;
    }
    const double batch_avg = batches ? double(batched_msgs) / double(batches) : 0;
    /* per rank: elapsed, protocol puts, cpu, batch size */
    auto per_rank  = gather<double>(node, {t_measured, static_cast<double>(protocol), cpu,
                                           batch_avg});
    auto latencies = gather<double>(node, lat_us);
    if (rank != 0 || per_rank.size() != static_cast<size_t>(4 * n)) {
        return 0;
    }

    double slowest = 0, puts = 0, cpu_all = 0, batch_avg_all = 0, batch_ranks = 0;
    for (int r = 0; r < n; ++r) {
        slowest = std::max(slowest, per_rank[4 * r]);
        puts += per_rank[4 * r + 1];
        cpu_all += per_rank[4 * r + 2];
        if (per_rank[4 * r + 3] > 0) {
            batch_avg_all += per_rank[4 * r + 3];
            ++batch_ranks;
        }
    }
    batch_avg_all = batch_ranks ? batch_avg_all / batch_ranks : 0;
    const char *mode = o.batched ? "batched" : "urgent";
    const double msgs     = static_cast<double>(o.iters * senders * o.active);
    const double all_msgs = static_cast<double>(all_total);
    /* smc_lat: a message is delivered at all members when the last one has it */
    std::vector<double> to_all(latency ? o.iters : 0, 0);
    if (latency && !o.jam.empty()) {
        to_all = latencies;   /* the sender's: send to executed at every member */
    } else if (latency && latencies.size() == o.iters * n) {
        for (int r = 0; r < n; ++r) {
            for (uint64_t i = 0; i < o.iters; ++i) {
                to_all[i] = std::max(to_all[i], latencies[r * o.iters + i]);
            }
        }
    }
    double avg = 0;
    for (double v : to_all) {
        avg += v;
    }
    avg /= std::max<size_t>(1, to_all.size());
    const std::string tl   = node.rma_transport(n > 1 ? 1 : 0);
    const std::string lane = node.write_lane_name(n > 1 ? 1 : 0);
    const double rate = (o.shape == "smc_bw") ? msgs / slowest : 0;

    if (o.json) {
        std::printf("{\"shape\":\"%s\",\"mode\":\"%s\",\"transport\":\"%s\",\"write_lane\":\"%s\","
                    "\"members\":%d,\"senders\":%lu,\"payload_bytes\":%zu,\"window\":%u,\"batch\":%u,"
                    "\"flush_us\":%.0f,\"offered_rate\":%.0f,\"messages\":%.0f,"
                    "\"msg_rate\":%.1f,\"MB/s\":%.3f,\"lat_avg_us\":%.3f,\"lat_p50_us\":%.3f,"
                    "\"lat_p999_us\":%.3f,\"puts_per_msg\":%.3f,\"batch_avg\":%.2f,"
                    "\"threads\":%u,\"rdmc_background_bytes\":%zu,\"groups\":%u,\"active\":%u,"
                    "\"delivery\":\"%s\",\"jam\":\"%s\",\"slot_bytes\":%zu,\"touch\":%s,\"touch_sum\":%lld,"
                    "\"cpu_s\":%.3f,\"wall_s\":%.3f}\n",
                    o.shape.c_str(), mode, tl.c_str(), lane.c_str(), n, static_cast<unsigned long>(senders),
                    o.size, o.window, o.batch.value_or(0), o.flush_us.value_or(-1), o.rate, msgs,
                    rate, rate * static_cast<double>(o.size) / 1e6, avg, percentile(to_all, 0.5),
                    percentile(to_all, 0.999), puts / all_msgs, batch_avg_all, o.threads,
                    o.background, o.groups, o.active, o.per_message ? "message" : "span",
                    o.jam.empty() ? "none" : o.jam.c_str(), p.max_payload,
                    o.touch ? "true" : "false", static_cast<long long>(touched), cpu_all, wall);
    } else if (o.shape == "smc_bw") {
        std::printf("%s: %d members, %lu senders, %zu B: %.0f msg/s delivered, %.2f MB/s, "
                    "%.2f puts/msg (%s)\n", o.shape.c_str(), n, static_cast<unsigned long>(senders),
                    o.size, rate, rate * static_cast<double>(o.size) / 1e6, puts / all_msgs,
                    tl.c_str());
    } else {
        std::printf("%s: %d members, %zu B: send->delivered at all, avg %.2f us, p50 %.2f us, "
                    "p99.9 %.2f us, %.2f puts/msg (%s)\n", o.shape.c_str(), n, o.size, avg,
                    percentile(to_all, 0.5), percentile(to_all, 0.999), puts / all_msgs,
                    tl.c_str());
    }
    return 0;
}

int perf_rdmc_main(int argc, char **argv); /* perf_rdmc.cpp: -t rdmc_bw */

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; ++i) {
        if (!std::strcmp(argv[i], "-t") && !std::strcmp(argv[i + 1], "rdmc_bw")) {
            return perf_rdmc_main(argc, argv);
        }
    }
    options o;
    if (!parse(argc, argv, o)) {
        usage(stderr);
        return 2;
    }

    return tc::perf::run_members(o.inproc, o.members, 60.0,
                                 [&o](tc_bootstrap_h boot) { return run_member(boot, o); });
}
