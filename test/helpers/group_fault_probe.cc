/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * A group member for the fault tests (test_group_faults.cc starts N of them
 * with the TCP bootstrap environment and kills or stops some). Every member
 * sends COUNT messages at RATE per second and hashes everything it delivers,
 * with view changes folded into the chain, so that survivors can be compared.
 *
 * -L SIZE: rank 0 sends one SIZE-byte message over RDMC halfway through, or
 * with -E EPOCH as soon as the view's epoch is EPOCH or more.
 * -H KIND:RANK: member RANK is hostile (needs -g, and -b so that its slot
 * waits for the batch push): right after it commits message count/2 it
 * rewrites that slot's header in its own memory, as a buffer underflow
 * would, before the slot goes out. KIND size: a size past the window's;
 * index: another message number; flags: a flag no sender sets; rdmc: an
 * RDMC slot whose descriptor names a transfer 2^40 ahead (with -L). The
 * others must blame it, expel it and go on.
 * -J PORT: member r admits joiners on port PORT + r. -j HOST:PORT: join the
 * group through that member instead of creating it (outside the bootstrap);
 * its state (chain and count) comes from the sponsor.
 * Output: "ready ID"; "view E m1,m2,..." per view; "large send N" before the
 * large one; "state received ..." at a joiner; "stream S s" (from the first
 * send until close() returned); "peer faults N" (values peers wrote that
 * they could not have: group_stats::peer_faults); and "result chain HEX count N views
 * V trimmed T joins J status S sum B" at the end (B: every delivered byte,
 * summed; a joiner's counts from its join on). Exit 0: done; 3: expelled or
 * left in a minority (a clear error, as the API reports it); 4: the join
 * failed; 1: anything else.
 */
#include "api/group.hpp"
#include "smc/slot.hpp"

#include <twochains/twochains.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <unistd.h>

namespace {

uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const auto *b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) {
        h = (h ^ b[i]) * 1099511628211ull;
    }
    return h;
}

/* The header in front of @a payload, in our own slot, rewritten after its
 * commit (before the batch push takes it out) */
void corrupt_slot(const std::string &kind, std::span<std::byte> payload)
{
    auto *h = reinterpret_cast<tc::smc::slot_header*>(payload.data()) - 1;
    if (kind == "size") {
        h->size = 0x7fffffffu;
    } else if (kind == "index") {
        h->index += 1000;
    } else if (kind == "flags") {
        h->flags |= 1u << 7;
    } else if (kind == "rdmc") {
        const tc::smc::rdmc_descriptor d{64, int64_t{1} << 40};
        std::memcpy(payload.data(), &d, sizeof(d));
        h->size  = sizeof(d);
        h->flags |= tc::smc::SLOT_FLAG_RDMC;
    }
    std::printf("hostile: rewrote the header of a committed slot (%s)\n", kind.c_str());
    std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv)
{
    long count = 2000, rate = 5000;
    size_t max = 64, large = 0;
    bool batched = false, get_buffer = false;
    int join_base = 0;
    long large_epoch = 0;
    unsigned window  = 32;
    int slow_rank    = -1;   /* -z R:MS: rank R sends one message every MS ms */
    long slow_ms     = 0;
    std::string contact;
    std::string hostile_kind;
    int hostile_rank = -1;
    int opt;
    while ((opt = getopt(argc, argv, "c:r:s:bgL:J:j:E:w:z:H:")) != -1) {
        switch (opt) {
        case 'J': join_base = std::atoi(optarg); break;
        case 'j': contact = optarg; break;
        case 'E': large_epoch = std::atol(optarg); break;
        case 'c': count = std::atol(optarg); break;
        case 'r': rate = std::atol(optarg); break;
        case 's': max = std::strtoul(optarg, nullptr, 0); break;
        case 'b': batched = true; break;
        case 'g': get_buffer = true; break;
        case 'z': std::sscanf(optarg, "%d:%ld", &slow_rank, &slow_ms); break;
        case 'H': {
            const char *colon = std::strchr(optarg, ':');
            hostile_kind      = std::string(optarg, colon ? colon - optarg : std::strlen(optarg));
            hostile_rank      = colon ? std::atoi(colon + 1) : -1;
            break;
        }
        case 'w': window = static_cast<unsigned>(std::atoi(optarg)); break;
        case 'L': large = std::strtoul(optarg, nullptr, 0); break;
        default: return 1;
        }
    }
    setvbuf(stdout, nullptr, _IOLBF, 0);

    tc_bootstrap_h b;
    if (tc_bootstrap_create_from_env(&b) != UCS_OK) {
        return 1;
    }
    tc::bootstrap_ptr boot(b);
    auto node = std::make_unique<tc::ucp_node>(boot.get());
    if (node->status() != UCS_OK) {
        return 1;
    }
    uint64_t chain = 1469598103934665603ull, delivered = 0;
    uint64_t sum = 0;   /* of every delivered byte: the tests know what it must be */
    tc::group_params p;
    for (int r = 0; r < node->size(); ++r) {
        p.members.push_back(r);
    }
    if (join_base > 0) {
        p.join_port = static_cast<uint16_t>(join_base + node->rank());
    }
    /* the state a joiner needs: the chain so far and its length */
    p.get_state = [&] {
        std::vector<std::byte> s(2 * sizeof(uint64_t));
        std::memcpy(s.data(), &chain, sizeof(chain));
        std::memcpy(s.data() + sizeof(chain), &delivered, sizeof(delivered));
        return s;
    };
    p.set_state = [&](std::span<const std::byte> s) {
        if (s.size() == 2 * sizeof(uint64_t)) {
            std::memcpy(&chain, s.data(), sizeof(chain));
            std::memcpy(&delivered, s.data() + sizeof(chain), sizeof(delivered));
        }
        std::printf("state received %zu bytes, count %llu\n", s.size(),
                    static_cast<unsigned long long>(delivered));
    };
    p.max_payload = max;
    p.window      = window;
    p.smc         = batched ? tc::smc_mode::batched : tc::smc_mode::urgent;
    p.rdmc_max_message = large;
    p.on_deliver  = [&](const tc::message &m) {
        chain = fnv(chain, &m.sender, sizeof(m.sender));
        chain = fnv(chain, m.data.data(), m.data.size());
        for (std::byte byte : m.data) {
            sum += static_cast<uint8_t>(byte);
        }
        ++delivered;
    };
    p.on_view = [&](const tc::view &v) {
        std::string list;
        for (int m : v.members) {
            list += (list.empty() ? "" : ",") + std::to_string(m);
        }
        std::printf("view %ld %s\n", static_cast<long>(v.epoch), list.c_str());
        chain = fnv(chain, &v.epoch, sizeof(v.epoch));
        chain = fnv(chain, v.members.data(), v.members.size() * sizeof(int));
    };
    std::unique_ptr<tc::group> g;
    if ((contact.empty() ? tc::group::create(*node, p, g) :
                           tc::group::join(*node, p, contact, g)) != UCS_OK) {
        std::printf("%s failed\n", contact.empty() ? "create" : "join");
        return contact.empty() ? 1 : 4;
    }
    const int rank = node->rank();   /* a joiner's id once it is in */
    std::printf("ready %d\n", rank);

    ucs_status_t status = UCS_OK;
    const auto started = std::chrono::steady_clock::now();
    auto next          = started;
    bool large_sent = false;
    for (long k = 0; k < count && status == UCS_OK; ++k) {
        /* -L: rank 0 sends one large message (over RDMC) halfway through, or
         * with -E once the view's epoch reached E */
        const bool big = !large_sent && large > 0 && rank == 0 &&
                         (large_epoch > 0 ? g->current_view().epoch >= large_epoch :
                                            k == count / 2);
        large_sent = large_sent || big;
        if (big) {
            std::printf("large send %zu\n", large);
        }
        auto fill = [&](std::span<std::byte> buf) {
            for (size_t i = 0; i < buf.size(); ++i) {
                buf[i] = std::byte(static_cast<uint8_t>(rank * 31 + k * 7 + i));
            }
        };
        /* pace, progressing the engine: heartbeats keep flowing */
        next += (rank == slow_rank) ? std::chrono::microseconds(slow_ms * 1000) :
                                      std::chrono::microseconds(1000000 / rate);
        struct until {
            std::chrono::steady_clock::time_point t;
            static int done(void *arg)
            {
                return std::chrono::steady_clock::now() >= static_cast<until*>(arg)->t;
            }
        } u{next};
        if (get_buffer && !big) {
            /* -g: zero-copy sends that hold their slot while the engine
             * runs (and a view change may start) until commit() */
            std::span<std::byte> buf;
            status = g->get_buffer(1 + k % max, buf);
            if (status == UCS_OK) {
                fill(buf);
                tc_progress_until(node->engine(), until::done, &u, 10.0);
                status = g->commit();
                if (rank == hostile_rank && k == count / 2) {
                    corrupt_slot(hostile_kind, buf);
                }
            }
        } else {
            status = g->send(big ? large : 1 + k % max, fill);
            tc_progress_until(node->engine(), until::done, &u, 10.0);
        }
    }
    if (status == UCS_OK) {
        status = g->close();
    }
    /* from the first send until close() returned: every message of every
     * member delivered here */
    std::printf("stream %.6f s\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    auto st = g->stats();
    std::printf("peer faults %llu\n", static_cast<unsigned long long>(st.peer_faults));
    std::printf("result chain %016llx count %llu views %llu trimmed %llu joins %llu status %s "
                "sum %llu\n",
                static_cast<unsigned long long>(chain), static_cast<unsigned long long>(delivered),
                static_cast<unsigned long long>(st.views),
                static_cast<unsigned long long>(st.trimmed),
                static_cast<unsigned long long>(st.joins), ucs_status_string(status),
                static_cast<unsigned long long>(sum));
    std::fflush(stdout);
    if (rank == hostile_rank) {
        /* a buggy member lives on: what it already wrote goes out (over
         * tcp its writes are messages still queued at an early exit) */
        struct never {
            static int done(void*) { return 0; }
        };
        tc_progress_until(node->engine(), never::done, nullptr, 1.0);
    }
    if (st.views > st.joins || status != UCS_OK) {
        /* a member failed: a collective teardown cannot work */
        _exit(status == UCS_ERR_REJECTED ? 3 : (status == UCS_OK ? 0 : 1));
    }
    /* everyone is alive (joins at most): tear down together over the node's
     * current bootstrap, so nobody leaves while a peer still waits for the
     * completion of a put to it (fatal in UCX 1.13's tcp software RMA) */
    g.reset();
    node.reset();
    return 0;
}
