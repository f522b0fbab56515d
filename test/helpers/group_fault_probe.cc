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
 * RDMC slot whose descriptor names a transfer 2^40 ahead (with -L); trim, admit, leaving: a view-change
 * decision for the current epoch nobody could have made (a trim 2^40
 * messages ahead, a joiner at row 1000, a member past the view leaving),
 * in its own row; rdmc-ready, rdmc-arrived, rdmc-offer (with -L; at a
 * quarter of its messages, before rank 0's large one): an RDMC control
 * word of its own, kept so, that no member writes (ready for rank 0's
 * first transfer in buffer 0xfffe, 2^40 blocks of rank 0's arrived, an
 * offer of 2^39 bytes). The others must blame it, expel it and go on.
 * -X SEED:RANK: member RANK turns hostile at a moment SEED picks (needs -g
 * -b): from then on, before about one send in four, it writes a value the
 * protocol never writes into a random column of its own SST row (and
 * pushes it), or rewrites the header of the slot it just committed, until
 * it is out of the group. Values: random words, -1, the extremes, 2^40,
 * and for the membership masks bits past the group's members. Each
 * mutation prints "hostile: FIELD[ENTRY] = VALUE". It never writes a
 * suspicion of a real member: see docs/security.md for what a member that
 * lies about whom it suspects can do.
 * -J PORT: member r admits joiners on port PORT + r. -j HOST:PORT: join the
 * group through that member instead of creating it (outside the bootstrap);
 * its state (chain and count) comes from the sponsor.
 * Output: "ready ID"; "view E m1,m2,..." per view; "large send N" before the
 * large one; "state received ..." at a joiner; "stream S s" (from the first
 * send until close() returned); "delivered from R:N,..." (messages
 * delivered, by sender rank); "max rss K KiB"; "peer faults N" (values peers wrote that
 * they could not have: group_stats::peer_faults); and "result chain HEX count N views
 * V trimmed T joins J status S sum B" at the end (B: every delivered byte,
 * summed; a joiner's counts from its join on). Exit 0: done; 3: expelled or
 * left in a minority (a clear error, as the API reports it); 4: the join
 * failed; 1: anything else.
 */
#include "api/group.hpp"
#include "api/own_row_writer.hpp"
#include "core/slot.hpp"

#include <twochains/twochains.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <sys/resource.h>
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
    if (payload.empty()) {
        return;
    }
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

/* -H trim|admit|leaving: a decision of the current epoch that nobody could
 * have made, published in our own row as a leader would publish its trim */
bool publish_impossible_decision(tc::group &g, const std::string &kind)
{
    namespace fi = tc::fault_injection;
    const int64_t epoch = g.current_view().epoch;
    const auto members  = static_cast<int>(g.current_view().members.size());
    ucs_status_t s;
    if (kind == "trim") {
        s = fi::write_own_row(g, "trim", 0, int64_t{1} << 40);
    } else if (kind == "admit") {
        s = fi::write_own_row(g, "admit", 0, 1000);
    } else if (kind == "leaving") {
        s = fi::write_own_row(g, "leaving", 0, int64_t{1} << members);
    } else {
        return false;
    }
    if (s == UCS_OK) {
        s = fi::write_own_row(g, "trim_epoch", 0, epoch);
    }
    std::printf("hostile: published an impossible decision (%s) for epoch %ld: %s\n",
                kind.c_str(), static_cast<long>(epoch), ucs_status_string(s));
    std::fflush(stdout);
    return true;
}

/* -H rdmc-*: an RDMC control word of ours that no member writes, kept */
void keep_impossible_rdmc_word(tc::group &g, const std::string &kind)
{
    namespace fi = tc::fault_injection;
    ucs_status_t s = UCS_ERR_INVALID_PARAM;
    if (kind == "rdmc-ready") {
        s = fi::keep_own_rdmc_word(g, "ready", 0, (int64_t{1} << 16) | 0xfffe);
    } else if (kind == "rdmc-arrived") {
        s = fi::keep_own_rdmc_word(g, "arrived", 0, int64_t{1} << 40);
    } else if (kind == "rdmc-offer") {
        s = fi::keep_own_rdmc_word(g, "offer", 0, (int64_t{1} << 40) | (int64_t{1} << 39));
    }
    std::printf("hostile: keeps an impossible RDMC word (%s): %s\n", kind.c_str(),
                ucs_status_string(s));
    std::fflush(stdout);
}

/* -X: one bad value into our own row or our last committed slot */
class hostile_member {
public:
    hostile_member(unsigned seed, int members) : rng_(seed), members_(members) {}

    void mutate(tc::group &g, std::span<std::byte> last_slot)
    {
        if (pick(4) != 0) {
            return;
        }
        const auto columns = tc::fault_injection::own_row_columns(g);
        const size_t which = pick(columns.size() + 3);
        if (which >= columns.size()) {
            static const char *const slot_kinds[] = {"size", "index", "rdmc"};
            corrupt_slot(slot_kinds[which - columns.size()], last_slot);
            return;
        }
        const auto &col     = columns[which];
        const size_t entry  = pick(col.entries);
        const bool is_mask  = col.name == "suspected" || col.name == "leaving";
        int64_t value       = is_mask ? mask_value(entry) : word_value();
        const ucs_status_t s = tc::fault_injection::write_own_row(g, col.name, entry, value);
        std::printf("hostile: %.*s[%zu] = %lld (%s)\n", static_cast<int>(col.name.size()),
                    col.name.data(), entry, static_cast<long long>(value), ucs_status_string(s));
    }

private:
    size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

    int64_t word_value()
    {
        static const int64_t extremes[] = {-1, INT64_MIN, INT64_MAX, int64_t{1} << 40,
                                           -(int64_t{1} << 20)};
        const size_t k = pick(std::size(extremes) + 1);
        return k < std::size(extremes) ? extremes[k] : static_cast<int64_t>(rng_());
    }

    /* bits past the members only: a suspicion of a real member is a
     * claim the crash-failure model believes */
    int64_t mask_value(size_t entry)
    {
        uint64_t v = rng_() | 1;
        if (entry == 0 && members_ < 64) {
            v = (v << members_) | (uint64_t{1} << members_);
        } else if (static_cast<int>(entry * 64) < members_) {
            v = uint64_t{1} << 63;   /* a row past the last member of this word */
        }
        return static_cast<int64_t>(v);
    }

    std::mt19937_64 rng_;
    int             members_;
};

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
    long random_hostile_seed = -1;   /* -X SEED:RANK */
    int opt;
    while ((opt = getopt(argc, argv, "c:r:s:bgL:J:j:E:w:z:H:X:")) != -1) {
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
        case 'X': std::sscanf(optarg, "%ld:%d", &random_hostile_seed, &hostile_rank); break;
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
    std::map<int, uint64_t> delivered_from;   /* by sender rank */
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
        ++delivered_from[m.sender];
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
    std::optional<hostile_member> hostile;
    std::mt19937 moment(static_cast<unsigned>(random_hostile_seed));
    const long hostile_from = (random_hostile_seed >= 0 && rank == hostile_rank) ?
            std::uniform_int_distribution<long>(count / 4, 3 * count / 4)(moment) : -1;
    std::span<std::byte> last_slot;
    for (long k = 0; k < count && status == UCS_OK; ++k) {
        /* -L: rank 0 sends one large message (over RDMC) halfway through, or
         * with -E once the view's epoch reached E */
        const bool big = !large_sent && large > 0 && rank == 0 &&
                         (large_epoch > 0 ? g->current_view().epoch >= large_epoch :
                                            k == count / 2);
        large_sent = large_sent || big;
        if (rank == hostile_rank && random_hostile_seed < 0 && k == count / 4 &&
            hostile_kind.starts_with("rdmc-")) {
            keep_impossible_rdmc_word(*g, hostile_kind);
        }
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
            if (k == hostile_from) {
                std::printf("hostile: from message %ld\n", k);
                hostile.emplace(static_cast<unsigned>(random_hostile_seed),
                                static_cast<int>(g->current_view().members.size()));
            }
            if (hostile) {
                hostile->mutate(*g, last_slot);
            }
            status = g->get_buffer(1 + k % max, buf);
            if (status == UCS_OK) {
                fill(buf);
                tc_progress_until(node->engine(), until::done, &u, 10.0);
                status   = g->commit();
                last_slot = buf;
                if (rank == hostile_rank && random_hostile_seed < 0 && k == count / 2 &&
                    !hostile_kind.starts_with("rdmc-")) {
                    if (!publish_impossible_decision(*g, hostile_kind)) {
                        corrupt_slot(hostile_kind, buf);
                    }
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
    std::string from;
    for (const auto &[sender, n] : delivered_from) {
        from += (from.empty() ? "" : ",") + std::to_string(sender) + ":" + std::to_string(n);
    }
    std::printf("delivered from %s\n", from.empty() ? "-" : from.c_str());
    struct rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    std::printf("max rss %ld KiB\n", ru.ru_maxrss);
    std::printf("peer faults %llu\n", static_cast<unsigned long long>(st.peer_faults));
    std::printf("join rejects %llu\n", static_cast<unsigned long long>(st.join_rejects));
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
    if (status != UCS_OK || (st.views > st.joins && large == 0)) {
        /* a member failed and the view only narrowed: the node's bootstrap
         * still counts the dead, so a collective teardown cannot work */
        _exit(status == UCS_ERR_REJECTED ? 3 : (status == UCS_OK ? 0 : 1));
    }
    /* everyone is alive (joins at most), or the survivors rebuilt the view
     * (with RDMC) and the node's collectives run over the old view's
     * exchange among them: tear down together over that bootstrap, so nobody
     * leaves while a peer still waits for the completion of a put to it
     * (fatal in UCX 1.13's tcp software RMA). The group goes first, and the
     * node's last barrier must not need it. */
    g.reset();
    node.reset();
    std::printf("torn down\n");
    std::fflush(stdout);
    return 0;
}
