/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * rdmc_probe: one rank of a multi-process RDMC test, started by
 * twochains-run. Every rank is a member; for each schedule kind asked for,
 * an engine is created and the list of sizes is multicast, transfer j from
 * rank j % N, each root in turn (or, with -c, every root at once). Every
 * payload byte is checked, and each rank prints one line per kind:
 *
 *   rdmc KIND rank R received C bad B order O chain HEX
 *
 * where the hash chain covers (root, index, size, bytes) of every transfer
 * in the global order j, so equal chains at every rank mean identical data.
 *
 *   rdmc_probe [-k all|binomial,...] [-b BLOCK] [-s SIZE,SIZE,...] [-c] [-p]
 */
#include "rdmc/engine.hpp"

#include <twochains/twochains.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace tc::rdmc;

namespace {

inline uint8_t payload_byte(int root, int64_t index, size_t i)
{
    uint32_t x = static_cast<uint32_t>(i) * 2654435761u;
    return static_cast<uint8_t>((x >> 13) ^ (x >> 24) ^ (root * 17) ^ (index * 29) ^ (i >> 20));
}

struct chain {
    uint64_t value = 1469598103934665603ull;
    void mix(const void *p, size_t n)
    {
        auto *b = static_cast<const unsigned char*>(p);
        for (size_t i = 0; i < n; ++i) {
            value = (value ^ b[i]) * 1099511628211ull;
        }
    }
};

std::vector<std::string> split(const std::string &s)
{
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
        out.push_back(item);
    }
    return out;
}

struct options {
    std::vector<schedule_kind> kinds{schedule_kind::binomial, schedule_kind::sequential,
                                     schedule_kind::chain, schedule_kind::tree};
    std::vector<size_t>        sizes{1, 39999, 40001, 293013, 1000003};
    size_t                     block      = 40000;
    bool                       concurrent = false;
    bool                       pool       = false;
};

int run_kind(tc::ucp_node &node, const options &o, schedule_kind kind)
{
    const int n = node.size(), rank = node.rank();
    std::map<int, std::vector<size_t>> by_root;
    for (size_t j = 0; j < o.sizes.size(); ++j) {
        by_root[static_cast<int>(j % n)].push_back(o.sizes[j]);
    }
    /* received[root][index]: payload digest (and bad bytes) */
    std::map<int, std::vector<uint64_t>> digests;
    uint64_t received = 0, bad = 0, order = 0, sent_done = 0;
    std::vector<int64_t> next(n, 0);

    engine_params p;
    for (int r = 0; r < n; ++r) {
        p.members.push_back(r);
    }
    p.kind        = kind;
    p.block_size  = o.block;
    p.buffers     = o.concurrent ? static_cast<unsigned>(n) : 2;
    p.max_message = *std::max_element(o.sizes.begin(), o.sizes.end());
    p.on_receive  = [&](const transfer_info &t) {
        if (t.index != next[t.root]++) {
            ++order;
        }
        const auto &list = by_root[t.root];
        if (t.index >= static_cast<int64_t>(list.size()) ||
            t.data.size() != list[static_cast<size_t>(t.index)]) {
            ++bad;
        } else {
            for (size_t i = 0; i < t.data.size(); ++i) {
                bad += static_cast<uint8_t>(t.data[i]) != payload_byte(t.root, t.index, i);
            }
        }
        chain c;
        c.mix(t.data.data(), t.data.size());
        digests[t.root].push_back(c.value);
        ++received;
    };
    p.on_sent = [&](const transfer_info &) { ++sent_done; };

    std::unique_ptr<engine> e;
    if (engine::create(node, p, e) != UCS_OK) {
        return 2;
    }
    node.barrier();
    const auto t0 = std::chrono::steady_clock::now();

    std::vector<std::vector<std::byte>> mine;
    mine.reserve(o.sizes.size());
    uint64_t my_sends = 0, want = 0;
    struct waiter {
        uint64_t *received, *sent, want_received, want_sent;
        static int done(void *arg)
        {
            auto *w = static_cast<waiter*>(arg);
            return *w->received >= w->want_received && *w->sent >= w->want_sent;
        }
    };
    for (size_t j = 0; j < o.sizes.size(); ++j) {
        const int root = static_cast<int>(j % n);
        if (root == rank) {
            const int64_t index = static_cast<int64_t>(my_sends++);
            std::span<std::byte> buf;
            if (o.pool) {
                while (e->get_send_buffer(o.sizes[j], buf) == UCS_ERR_NO_RESOURCE) {
                    tc_progress(node.engine());
                }
            } else {
                mine.emplace_back(o.sizes[j]);
                buf = mine.back();
            }
            for (size_t i = 0; i < buf.size(); ++i) {
                buf[i] = std::byte{payload_byte(rank, index, i)};
            }
            if (e->send(buf) != UCS_INPROGRESS) {
                return 1;
            }
        } else {
            ++want;
        }
        if (!o.concurrent) {
            waiter w{&received, &sent_done, want, my_sends};
            if (tc_progress_until(node.engine(), waiter::done, &w, 120) != UCS_OK) {
                std::fprintf(stderr, "rank %d: transfer %zu did not complete\n", rank, j);
                return 1;
            }
        }
    }
    waiter w{&received, &sent_done, want, my_sends};
    if (tc_progress_until(node.engine(), waiter::done, &w, 120) != UCS_OK) {
        std::fprintf(stderr, "rank %d: received %lu of %lu\n", rank,
                     static_cast<unsigned long>(received), static_cast<unsigned long>(want));
        return 1;
    }
    const double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (e->close() != UCS_OK) {
        return 1;
    }
    /* the chain over every transfer in global order j; own sends digested
     * from what was sent */
    chain all;
    std::vector<int64_t> idx(n, 0);
    for (size_t j = 0; j < o.sizes.size(); ++j) {
        const int root = static_cast<int>(j % n);
        const int64_t k = idx[root]++;
        uint64_t d;
        if (root == rank) {
            chain c;
            for (size_t i = 0; i < o.sizes[j]; ++i) {
                uint8_t b = payload_byte(rank, k, i);
                c.mix(&b, 1);
            }
            d = c.value;
        } else {
            d = (k < static_cast<int64_t>(digests[root].size())) ? digests[root][k] : 0;
        }
        all.mix(&root, sizeof(root));
        all.mix(&k, sizeof(k));
        all.mix(&d, sizeof(d));
    }
    auto st = e->stats();
    std::printf("rdmc %s rank %d received %lu bad %lu order %lu chain %016llx "
                "(%.3f s, %lu blocks out, %lu control puts, %s)\n",
                schedule_name(kind), rank, static_cast<unsigned long>(received),
                static_cast<unsigned long>(bad), static_cast<unsigned long>(order),
                static_cast<unsigned long long>(all.value), secs,
                static_cast<unsigned long>(st.blocks_sent),
                static_cast<unsigned long>(st.control_puts),
                node.rma_transport(n > 1 ? (rank + 1) % n : 0).c_str());
    std::fflush(stdout);
    return (bad == 0 && order == 0) ? 0 : 1;
}

} // namespace

int main(int argc, char **argv)
{
    options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "-k" && i + 1 < argc) {
            std::string v = argv[++i];
            if (v != "all") {
                o.kinds.clear();
                for (const auto &name : split(v)) {
                    schedule_kind k;
                    if (!schedule_parse(name, k)) {
                        std::fprintf(stderr, "rdmc_probe: unknown schedule %s\n", name.c_str());
                        return 2;
                    }
                    o.kinds.push_back(k);
                }
            }
        } else if (a == "-b" && i + 1 < argc) {
            if (!parse_size(argv[++i], o.block)) {
                return 2;
            }
        } else if (a == "-s" && i + 1 < argc) {
            o.sizes.clear();
            for (const auto &s : split(argv[++i])) {
                size_t v;
                if (!parse_size(s.c_str(), v)) {
                    return 2;
                }
                o.sizes.push_back(v);
            }
        } else if (a == "-c") {
            o.concurrent = true;
        } else if (a == "-p") {
            o.pool = true;
        } else {
            std::fprintf(stderr, "Usage: rdmc_probe [-k all|KIND,...] [-b BLOCK] "
                                 "[-s SIZE,...] [-c] [-p]\n");
            return 2;
        }
    }
    tc_bootstrap_h boot;
    if (tc_bootstrap_create_from_env(&boot) != UCS_OK) {
        return 2;
    }
    int rc = 0;
    {
        tc::bootstrap_ptr owner(boot);
        tc::ucp_node node(boot);
        if (node.status() != UCS_OK) {
            return 2;
        }
        for (auto kind : o.kinds) {
            rc = run_kind(node, o, kind);
            if (rc != 0) {
                break;
            }
        }
    }
    return rc;
}
