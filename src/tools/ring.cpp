/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * twochains-ring: N processes form a ring over UCX; rank 0 puts a message to
 * rank 1, which checks it and puts it on to rank 2, and so on back to rank 0.
 * Reports the per-hop put latency (round trip / N) and the transport used.
 *
 * Each hop is "data put, ucp_worker_fence, signal put": UCP does not promise
 * that two puts become visible in issue order unless fenced, so the fence is
 * what lets the receiver trust the data once it sees the signal.
 *
 * Every hop verifies every payload byte, and each rank adds its rank to a
 * hop counter in the first 8 bytes, so rank 0 can check the exact sum of
 * ranks that forwarded the message. Exit status 1 on any mismatch.
 *
 * Run with: twochains-run -n 3 -- twochains-ring [-s bytes] [-n iters]
 */
#include "common/ucp_handles.hpp"

#include <twochains/twochains.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <getopt.h>
#include <vector>

namespace {

struct options {
    size_t   size       = 64;
    unsigned iterations = 1000;
    unsigned warmup     = 100;
    bool     json       = false;
    int      corrupt_at = -1;  /* test hook: this rank flips a byte it forwards */
};

constexpr size_t kHopCounterBytes = sizeof(uint64_t);

uint8_t pattern(uint64_t iteration, size_t k)
{
    return static_cast<uint8_t>(iteration * 131 + k * 7 + 1);
}

size_t signal_offset(size_t size)
{
    return (size + 63) & ~size_t(63);
}

void usage(FILE *out)
{
    std::fprintf(out,
                 "Usage: twochains-run -n N -- twochains-ring [-s bytes] [-n iters] "
                 "[-w warmup] [--json]\n"
                 "  -s   message size in bytes (>= 8, default 64)\n"
                 "  -n   measured iterations (default 1000)\n"
                 "  -w   warm-up iterations (default 100)\n"
                 "  --json  also print one JSON object with the result\n"
                 "  --corrupt-at-rank R  (testing) rank R corrupts what it forwards\n");
}

bool parse(int argc, char **argv, options &opt)
{
    static const struct option longopts[] = {{"json", no_argument, nullptr, 'j'},
                                             {"help", no_argument, nullptr, 'h'},
                                             {"corrupt-at-rank", required_argument, nullptr, 'C'},
                                             {nullptr, 0, nullptr, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "s:n:w:h", longopts, nullptr)) != -1) {
        switch (c) {
        case 's': opt.size = std::strtoull(optarg, nullptr, 0); break;
        case 'n': opt.iterations = std::strtoul(optarg, nullptr, 0); break;
        case 'w': opt.warmup = std::strtoul(optarg, nullptr, 0); break;
        case 'j': opt.json = true; break;
        case 'C': opt.corrupt_at = std::atoi(optarg); break;
        case 'h': usage(stdout); std::exit(0);
        default: return false;
        }
    }
    if (opt.size < kHopCounterBytes || opt.iterations == 0) {
        std::fprintf(stderr, "twochains-ring: -s must be >= %zu and -n > 0\n",
                     kHopCounterBytes);
        return false;
    }
    return true;
}

struct signal_wait {
    volatile uint64_t *signal;
    uint64_t          expected;
    static int done(void *arg)
    {
        auto *w = static_cast<signal_wait*>(arg);
        return __atomic_load_n(w->signal, __ATOMIC_ACQUIRE) >= w->expected;
    }
};

class ring {
public:
    ring(tc::ucp_node &node, const options &opt)
        : node_(node), opt_(opt), next_((node.rank() + 1) % node.size()),
          recv_(node.context(), signal_offset(opt.size) + 64), send_(opt.size)
    {
    }

    ~ring() { node_.forbid_writes(recv_); }

    ucs_status_t setup()
    {
        if (recv_.status() != UCS_OK) {
            return recv_.status();
        }
        /* only the previous rank writes here, over whichever lane */
        const int prev = (node_.rank() + node_.size() - 1) % node_.size();
        ucs_status_t status = node_.allow_writes(recv_, tc::rank_set{prev});
        return (status != UCS_OK) ? status : node_.exchange(recv_, remotes_);
    }

    /* one trip around the ring; false on a data error */
    bool trip(uint64_t iteration)
    {
        if (node_.rank() == 0) {
            send_.assign(opt_.size, 0);
            for (size_t k = kHopCounterBytes; k < opt_.size; ++k) {
                send_[k] = pattern(iteration, k);
            }
            if (!forward(iteration) || !await(iteration)) {
                return false;
            }
            return check(iteration, expected_hops());
        }

        if (!await(iteration) || !check(iteration, partial_hops())) {
            return false;
        }
        std::memcpy(send_.data(), recv_.address(), opt_.size);
        uint64_t hops;
        std::memcpy(&hops, send_.data(), sizeof(hops));
        hops += static_cast<uint64_t>(node_.rank());
        std::memcpy(send_.data(), &hops, sizeof(hops));
        if (opt_.corrupt_at == node_.rank()) {
            send_[opt_.size - 1] ^= 0x5a; /* proves the checks can fail */
        }
        return forward(iteration);
    }

    ucs_status_t drain()
    {
        for (auto *req : pending_) {
            ucs_status_t status = tc::request_wait(node_.engine(), req);
            if (status != UCS_OK) {
                pending_.clear();
                return status;
            }
        }
        pending_.clear();
        return UCS_OK;
    }

private:
    uint64_t expected_hops() const
    {
        uint64_t n = node_.size();
        return n * (n - 1) / 2; /* ranks 1..N-1 each added themselves */
    }

    uint64_t partial_hops() const
    {
        uint64_t r = node_.rank();
        return r * (r - 1) / 2; /* ranks 1..r-1 forwarded it to us */
    }

    bool forward(uint64_t iteration)
    {
        if (drain() != UCS_OK) {
            return false;
        }
        auto &remote = remotes_[next_];
        ucp_request_param_t param{};
        signal_value_ = iteration;

        ucs_status_ptr_t req = node_.write(next_, send_.data(), opt_.size, remote.address,
                                           remote, param, data_header_);
        if (!track(req, "data")) {
            return false;
        }
        ucs_status_t status = ucp_worker_fence(node_.worker());
        if (status != UCS_OK) {
            std::fprintf(stderr, "ucp_worker_fence: %s\n", ucs_status_string(status));
            return false;
        }
        req = node_.write(next_, &signal_value_, sizeof(signal_value_),
                          remote.address + signal_offset(opt_.size), remote, param,
                          signal_header_);
        return track(req, "signal");
    }

    bool track(ucs_status_ptr_t req, const char *what)
    {
        if (UCS_PTR_IS_ERR(req)) {
            std::fprintf(stderr, "write (%s) to rank %d: %s\n", what, next_,
                         ucs_status_string(UCS_PTR_STATUS(req)));
            return false;
        }
        if (req != nullptr) {
            pending_.push_back(req);
        }
        return true;
    }

    bool await(uint64_t iteration)
    {
        auto *base = static_cast<uint8_t*>(recv_.address());
        signal_wait w{reinterpret_cast<volatile uint64_t*>(base + signal_offset(opt_.size)),
                      iteration};
        if (tc_progress_until(node_.engine(), signal_wait::done, &w, 30.0) != UCS_OK) {
            std::fprintf(stderr, "rank %d: message %" PRIu64 " did not arrive within 30 s\n",
                         node_.rank(), iteration);
            return false;
        }
        if (*w.signal != iteration) {
            std::fprintf(stderr, "rank %d: expected signal %" PRIu64 ", got %" PRIu64 "\n",
                         node_.rank(), iteration, *w.signal);
            return false;
        }
        return true;
    }

    bool check(uint64_t iteration, uint64_t hops_expected) const
    {
        const auto *data = static_cast<const uint8_t*>(recv_.address());
        uint64_t hops;
        std::memcpy(&hops, data, sizeof(hops));
        if (hops != hops_expected) {
            std::fprintf(stderr, "rank %d: message %" PRIu64 " hop sum %" PRIu64
                         ", expected %" PRIu64 "\n", node_.rank(), iteration, hops,
                         hops_expected);
            return false;
        }
        for (size_t k = kHopCounterBytes; k < opt_.size; ++k) {
            if (data[k] != pattern(iteration, k)) {
                std::fprintf(stderr, "rank %d: message %" PRIu64 " byte %zu is 0x%02x, "
                             "expected 0x%02x\n", node_.rank(), iteration, k, data[k],
                             pattern(iteration, k));
                return false;
            }
        }
        return true;
    }

    tc::ucp_node                   &node_;
    const options                  &opt_;
    int                            next_;
    tc::registered_memory          recv_;
    std::vector<uint8_t>           send_;
    std::vector<tc::remote_memory> remotes_;
    std::vector<void*>             pending_;
    uint64_t                       signal_value_ = 0;
    /* the write lane's headers, until drain() */
    tc_write_header_t              data_header_{};
    tc_write_header_t              signal_header_{};
};

double percentile(std::vector<double> sorted, double p)
{
    size_t idx = std::min(sorted.size() - 1,
                          static_cast<size_t>(p * static_cast<double>(sorted.size())));
    return sorted[idx];
}

} // namespace

int main(int argc, char **argv)
{
    options opt;
    if (!parse(argc, argv, opt)) {
        usage(stderr);
        return 2;
    }

    tc_bootstrap_h boot_raw;
    if (tc_bootstrap_create_from_env(&boot_raw) != UCS_OK) {
        return 2;
    }
    tc::bootstrap_ptr boot(boot_raw);
    if (tc_bootstrap_size(boot.get()) < 2) {
        std::fprintf(stderr, "twochains-ring needs at least 2 ranks: "
                     "run it as twochains-run -n 3 -- twochains-ring\n");
        return 2;
    }

    int rc = 0;
    {
        tc::ucp_node node(boot.get());
        if (node.status() != UCS_OK) {
            return 2;
        }
        ring r(node, opt);
        if (r.setup() != UCS_OK) {
            return 2;
        }

        std::vector<double> rtt_us;
        rtt_us.reserve(opt.iterations);
        const uint64_t total = uint64_t(opt.warmup) + opt.iterations;
        for (uint64_t i = 1; i <= total; ++i) {
            auto t0 = std::chrono::steady_clock::now();
            if (!r.trip(i)) {
                rc = 1;
                break;
            }
            if (i > opt.warmup) {
                rtt_us.push_back(std::chrono::duration<double, std::micro>(
                                 std::chrono::steady_clock::now() - t0).count());
            }
        }
        /* our puts complete even after a failure (the next rank still
         * progresses), and their buffers must outlive them */
        if (r.drain() != UCS_OK) {
            rc = 1;
        }
        if (rc != 0) {
            node.abandon();
        }

        if (rc == 0 && node.rank() == 0) {
            const double n = node.size();
            double sum = 0;
            for (double v : rtt_us) {
                sum += v;
            }
            std::sort(rtt_us.begin(), rtt_us.end());
            tc_progress_stats_t st;
            tc_progress_stats_get(node.engine(), &st);
            const std::string tl   = node.rma_transport(1);
            const std::string lane = node.write_lane_name(1);
            std::printf("ring: %d ranks, %zu B, %u iterations, transport %s, write lane %s, "
                        "wait %s (%s)\n", node.size(), opt.size, opt.iterations, tl.c_str(),
                        lane.c_str(), tc_wait_policy_names[st.policy], st.mechanism);
            std::printf("ring: per-hop put latency avg %.3f us, p50 %.3f us, p99 %.3f us "
                        "(round trip / %d); all %u messages verified\n",
                        sum / rtt_us.size() / n, percentile(rtt_us, 0.5) / n,
                        percentile(rtt_us, 0.99) / n, node.size(), opt.iterations);
            if (opt.json) {
                std::printf("{\"shape\":\"put_ring\",\"members\":%d,\"transport\":\"%s\","
                            "\"write_lane\":\"%s\",\"payload_bytes\":%zu,\"iterations\":%u,\"wait\":\"%s\","
                            "\"hop_lat_avg_us\":%.3f,\"hop_lat_p50_us\":%.3f,"
                            "\"hop_lat_p99_us\":%.3f}\n",
                            node.size(), tl.c_str(), lane.c_str(), opt.size, opt.iterations,
                            tc_wait_policy_names[st.policy], sum / rtt_us.size() / n,
                            percentile(rtt_us, 0.5) / n, percentile(rtt_us, 0.99) / n);
            }
            std::fflush(stdout);
        }
    }
    return rc;
}
