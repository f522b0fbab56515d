/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * twochains-perf -t rdmc_bw: one message of -s bytes from rank 0 to every
 * member over the RDMC engine, timed from the root's send() to the moment
 * the last member has every block (CLOCK_MONOTONIC, one machine: the same
 * clock in every process and namespace). Each measured transfer of the
 * schedule alternates with one point-to-point transfer of the same message
 * (the engine over members {0, 1}, same blocks), so the ratio compares runs
 * that shared the machine's state (A B A B ..., medians).
 *
 *   twochains-run -n 8 -- twochains-perf -t rdmc_bw -s 64m --schedule all --json
 *   twochains-perf -t rdmc_bw --inproc --members 8 -s 64m --schedule binomial
 *
 * One JSON object per schedule with --json.
 */
#include "rdmc/engine.hpp"
#include "tools/perf_members.hpp"
#include "tools/perf_options.hpp"

#include <twochains/twochains.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace tc::rdmc;

struct rdmc_options : tc::perf::common_options {  /* --json, --inproc, --members */
    size_t                     size    = 64u << 20;
    size_t                     block   = 0;   /* 0: UCX_TC_RDMC_BLOCK */
    std::vector<schedule_kind> kinds{schedule_kind::binomial};
    unsigned                   iters   = 3;
    bool                       p2p     = true;
};

double o_timeout_s = 300; /* TC_RDMC_PERF_TIMEOUT: per transfer */

double now_s()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double cpu_s()
{
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void usage(FILE *out)
{
    std::fprintf(out,
                 "Usage: twochains-run -n N -- twochains-perf -t rdmc_bw [options]\n"
                 "  -s BYTES             message size (default 64m; k/m/g suffixes)\n"
                 "  --block BYTES        block size (default UCX_TC_RDMC_BLOCK, 1m)\n"
                 "  --schedule KIND      binomial|sequential|chain|tree|all (default binomial)\n"
                 "  -n ITERS             measured transfers per schedule (default 3)\n"
                 "  --no-p2p             skip the interleaved point-to-point transfers\n"
                 "  --members N          with --inproc: members (default 8)\n"
                 "  --inproc             every member in this process, one thread each\n"
                 "  --json               one JSON object per schedule\n");
}

bool parse(int argc, char **argv, rdmc_options &o)
{
    using namespace tc::perf;
    static const option longopts[] = {{"block", required_argument, nullptr, 'B'},
                                      {"schedule", required_argument, nullptr, 'K'},
                                      kOptJson,
                                      kOptInproc,
                                      kOptMembers,
                                      {"no-p2p", no_argument, nullptr, 'P'},
                                      kOptHelp,
                                      kOptEnd};
    const bool parsed = parse_options(argc, argv, "t:s:n:h", longopts, o, usage, [&o](int c) {
        switch (c) {
        case 't': break; /* rdmc_bw, or we would not be here */
        case 's':
            if (!parse_size(optarg, o.size)) {
                std::fprintf(stderr, "twochains-perf: bad size '%s'\n", optarg);
                return false;
            }
            break;
        case 'B':
            if (!parse_size(optarg, o.block) || o.block == 0) {
                std::fprintf(stderr, "twochains-perf: bad block size '%s'\n", optarg);
                return false;
            }
            break;
        case 'K':
            if (!std::strcmp(optarg, "all")) {
                o.kinds = {schedule_kind::binomial, schedule_kind::sequential,
                           schedule_kind::chain, schedule_kind::tree};
            } else {
                schedule_kind k;
                if (!schedule_parse(optarg, k)) {
                    std::fprintf(stderr, "twochains-perf: unknown schedule '%s'\n", optarg);
                    return false;
                }
                o.kinds = {k};
            }
            break;
        case 'n': o.iters = static_cast<unsigned>(std::strtoul(optarg, nullptr, 0)); break;
        case 'P': o.p2p = false; break;
        default: return false;
        }
        return true;
    });
    if (!parsed) {
        return false;
    }
    if (const char *t = std::getenv("TC_RDMC_PERF_TIMEOUT")) {
        o_timeout_s = std::atof(t);
    }
    if (o.iters == 0 || o.size == 0) {
        std::fprintf(stderr, "twochains-perf: -n and -s must be positive\n");
        return false;
    }
    return tc::perf::check_members(o, 8);
}

double median(std::vector<double> v)
{
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/* One engine and its timing state. */
struct bench_engine {
    std::unique_ptr<engine> e;
    uint64_t                received = 0, sent = 0;
    double                  t_done   = 0;  /* when the last block arrived (or root finished) */
};

ucs_status_t make_engine(tc::ucp_node &node, const std::vector<int> &members, schedule_kind kind,
                         const rdmc_options &o, bench_engine &b)
{
    engine_params p;
    p.members     = members;
    p.kind        = kind;
    p.block_size  = o.block;
    p.buffers     = 1;
    p.max_message = o.size;
    p.on_receive  = [&b](const transfer_info &) {
        b.t_done = now_s();
        ++b.received;
    };
    p.on_sent = [&b](const transfer_info &) { ++b.sent; };
    return engine::create(node, p, b.e);
}

/* One timed transfer from member 0; returns the time to the last member
 * (gathered), or < 0 on error. Every rank calls it. */
double timed_transfer(tc::ucp_node &node, bench_engine &b, std::span<const std::byte> payload)
{
    const bool member = (b.e != nullptr);
    const bool root   = member && b.e->my_index() == 0;
    /* counted before the barrier: the barrier progresses the engine, so the
     * message may arrive while we are still in it */
    const uint64_t want_recv = b.received + (root ? 0 : 1);
    const uint64_t want_sent = b.sent + (root ? 1 : 0);
    if (node.barrier() != UCS_OK) {
        return -1;
    }
    double t0 = now_s();
    if (member) {
        if (root && b.e->send(payload) != UCS_INPROGRESS) {
            return -1;
        }
        struct w {
            bench_engine *b;
            uint64_t      r, s;
            static int done(void *arg)
            {
                auto *x = static_cast<w*>(arg);
                return x->b->received >= x->r && x->b->sent >= x->s;
            }
        } wait{&b, want_recv, want_sent};
        if (tc_progress_until(node.engine(), w::done, &wait, o_timeout_s) != UCS_OK) {
            std::fprintf(stderr, "rank %d: transfer did not complete\n", node.rank());
            b.e->dump(stderr);
            return -1;
        }
        if (root) {
            b.t_done = t0;  /* the root's own "arrival" is the start */
        }
    }
    /* everyone shares t0 of the root and the latest arrival */
    double mine[2] = {root ? t0 : 0.0, member ? b.t_done : 0.0};
    std::vector<std::vector<std::byte>> all;
    if (node.allgather_blobs({reinterpret_cast<const std::byte*>(mine), sizeof(mine)}, all) !=
        UCS_OK) {
        return -1;
    }
    double start = 0, last = 0;
    for (const auto &blob : all) {
        double v[2];
        if (blob.size() != sizeof(v)) {
            return -1;
        }
        std::memcpy(v, blob.data(), sizeof(v));
        start = std::max(start, v[0]);
        last  = std::max(last, v[1]);
    }
    return last - start;
}

int run_member(tc_bootstrap_h boot, const rdmc_options &o)
{
    tc::ucp_node node(boot);
    if (node.status() != UCS_OK) {
        return 2;
    }
    const int n = node.size(), rank = node.rank();
    std::vector<int> everyone;
    for (int r = 0; r < n; ++r) {
        everyone.push_back(r);
    }
    std::vector<std::byte> payload(o.size);
    for (size_t i = 0; i < payload.size(); ++i) {
        payload[i] = std::byte{static_cast<uint8_t>(i * 7 + (i >> 12))};
    }

    bench_engine p2p;
    const bool with_p2p = o.p2p && n >= 2;
    if (with_p2p && make_engine(node, {0, 1}, schedule_kind::sequential, o, p2p) != UCS_OK) {
        return 2;
    }
    if (with_p2p && timed_transfer(node, p2p, payload) < 0) { /* warm-up: connections */
        return 1;
    }

    for (auto kind : o.kinds) {
        bench_engine b;
        if (make_engine(node, everyone, kind, o, b) != UCS_OK) {
            return 2;
        }
        if (timed_transfer(node, b, payload) < 0) { /* warm-up */
            return 1;
        }
        std::vector<double> times, p2p_times;
        const double cpu0 = cpu_s(), wall0 = now_s();
        for (unsigned i = 0; i < o.iters; ++i) {
            if (with_p2p) {
                double t = timed_transfer(node, p2p, payload);
                if (t < 0) {
                    return 1;
                }
                p2p_times.push_back(t);
            }
            double t = timed_transfer(node, b, payload);
            if (t < 0) {
                return 1;
            }
            times.push_back(t);
        }
        const double cpu = cpu_s() - cpu0, wall = now_s() - wall0;
        const engine_stats st = b.e->stats();
        const size_t block    = b.e->block_size();
        if (b.e->close() != UCS_OK) {
            return 1;
        }
        b.e.reset();

        /* per rank cpu; rank 0 prints */
        std::vector<std::vector<std::byte>> all;
        node.allgather_blobs({reinterpret_cast<const std::byte*>(&cpu), sizeof(cpu)}, all);
        double cpu_all = 0;
        for (const auto &blob : all) {
            double v = 0;
            std::memcpy(&v, blob.data(), std::min(sizeof(v), blob.size()));
            cpu_all += v;
        }
        if (rank != 0) {
            continue;
        }
        const int64_t blocks = std::max<int64_t>(1, static_cast<int64_t>((o.size + block - 1) / block));
        const double  t      = median(times);
        const double  tp     = median(p2p_times);
        const std::string tl   = node.rma_transport(n > 1 ? 1 : 0);
        const std::string lane = node.write_lane_name(n > 1 ? 1 : 0);
        if (o.json) {
            std::printf("{\"shape\":\"rdmc_bw\",\"schedule\":\"%s\",\"transport\":\"%s\","
                        "\"write_lane\":\"%s\",\"members\":%d,\"payload_bytes\":%zu,\"block_bytes\":%zu,\"blocks\":%ld,"
                        "\"steps\":%ld,\"iters\":%u,\"time_to_all_s\":%.6f,\"time_min_s\":%.6f,"
                        "\"p2p_s\":%.6f,\"ratio_to_p2p\":%.3f,\"MB/s\":%.1f,"
                        "\"root_blocks_out\":%lu,\"cpu_s\":%.3f,\"wall_s\":%.3f}\n",
                        schedule_name(kind), tl.c_str(), lane.c_str(), n, o.size, block,
                        static_cast<long>(blocks),
                        static_cast<long>(schedule_steps(kind, n, blocks)), o.iters, t,
                        *std::min_element(times.begin(), times.end()), tp,
                        tp > 0 ? t / tp : 0.0, static_cast<double>(o.size) / t / 1e6,
                        static_cast<unsigned long>(st.blocks_sent), cpu_all, wall);
        } else {
            std::printf("rdmc_bw %-10s %d members, %zu B in %ld blocks of %zu: to all %.4f s "
                        "(%.1f MB/s), p2p %.4f s, ratio %.2f (%s)\n",
                        schedule_name(kind), n, o.size, static_cast<long>(blocks), block, t,
                        static_cast<double>(o.size) / t / 1e6, tp, tp > 0 ? t / tp : 0.0,
                        tl.c_str());
        }
        std::fflush(stdout);
    }
    if (p2p.e && p2p.e->close() != UCS_OK) {
        return 1;
    }
    if (with_p2p && !p2p.e) {
        /* outsiders of the p2p engine still take part in close's barrier */
        node.barrier();
    }
    return 0;
}

} // namespace

int perf_rdmc_main(int argc, char **argv)
{
    rdmc_options o;
    if (!parse(argc, argv, o)) {
        usage(stderr);
        return 2;
    }
    return tc::perf::run_members(o.inproc, o.members, 300.0,
                                 [&o](tc_bootstrap_h boot) { return run_member(boot, o); });
}
