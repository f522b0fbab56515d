/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * region_probe: three members (twochains-run -n 3) make an SST table and a
 * region of one window per member, as a group does (sst/region.hpp), fill
 * their own row and window with a pattern and push them. With -H member 2
 * is hostile: with the rkeys and write-lane keys it really holds, it tries
 * to write member 0's row and window at member 1. It is given the honest
 * member's addresses and write-lane keys (as if it guessed them): the
 * test is what it can do with them.
 *  - Over an RMA lane it puts with the rkey it holds for that part if it
 *    has one; otherwise with its own part's rkey, if that rkey's
 *    registration covers the target. Over shared memory a put outside an
 *    rkey's registration lands in the putter's own memory (UCX maps the
 *    segment and adds an offset), on InfiniBand it fails at the peer: it
 *    never reaches member 1, so the probe says "no rkey" and does not put.
 *  - Over the AM lane it sends three writes: with its own part's key (out
 *    of range), with member 0's key as itself (non-member) and with member
 *    0's key as member 0 (forged sender).
 * Then every member checks every row and window byte for byte and prints
 * "rows ok" (or what it found) and its lane's rejects. -S makes every part
 * writable by every member (each member holds every rkey), the shape these
 * regions had before they were confined: there the hostile's writes land.
 */
#include "common/ucp_handles.hpp"
#include "sst/table.hpp"

#include <twochains/twochains.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>

namespace {

constexpr int kMembers      = 3;
constexpr int kHostile      = 2;
constexpr int kVictim       = 0;
constexpr int kPeer         = 1;
constexpr size_t kWords     = 8;
constexpr size_t kWindow    = 4096;

int64_t row_word(int member, size_t i) { return (member + 1) * 1000 + static_cast<int64_t>(i); }
std::byte window_byte(int member, size_t i) { return std::byte(member * 37 + i * 3 + 1); }

/* the mapping of this process that holds @a p: [start, end), or {0, 0} */
std::pair<uintptr_t, uintptr_t> mapping_of(const void *p)
{
    std::ifstream maps("/proc/self/maps");
    std::string line;
    const auto a = reinterpret_cast<uintptr_t>(p);
    while (std::getline(maps, line)) {
        uintptr_t s = 0, e = 0;
        if (std::sscanf(line.c_str(), "%lx-%lx", &s, &e) == 2 && s <= a && a < e) {
            return {s, e};
        }
    }
    return {0, 0};
}

/* does this rkey's registration (as mapped here) cover [target, target+len)? */
bool covers(const tc::remote_memory &r, uint64_t target, size_t len)
{
    void *base, *t;
    if (ucp_rkey_ptr(r.rkey.get(), r.address, &base) != UCS_OK ||
        ucp_rkey_ptr(r.rkey.get(), target, &t) != UCS_OK) {
        return true;   /* not mapped here: the put reaches the peer, which decides */
    }
    const auto m = mapping_of(base);
    const auto a = reinterpret_cast<uintptr_t>(t);
    return m.first <= a && a + len <= m.second;
}

ucs_status_t wait(tc::ucp_node &node, ucs_status_ptr_t req)
{
    return tc::request_wait(node.engine(), req, 10.0);
}

} // namespace

int main(int argc, char **argv)
{
    bool hostile_mode = false, shared = false;
    for (int opt; (opt = getopt(argc, argv, "HS")) != -1;) {
        hostile_mode |= (opt == 'H');
        shared       |= (opt == 'S');
    }
    setvbuf(stdout, nullptr, _IOLBF, 0);
    tc_bootstrap_h b;
    if (tc_bootstrap_create_from_env(&b) != UCS_OK) {
        return 2;
    }
    tc::bootstrap_ptr boot(b);
    auto node = std::make_unique<tc::ucp_node>(boot.get());
    if (node->status() != UCS_OK || node->size() != kMembers) {
        return 2;
    }
    const int me = node->rank();
    const std::vector<int> members{0, 1, 2};
    std::vector<int> owners{0, 1, 2};
    if (shared) {
        owners.assign(kMembers, tc::sst::mirrored_region::kAnyMember);
    }

    tc::sst::layout l;
    auto words = l.add<int64_t>(kWords);
    std::unique_ptr<tc::sst::table> table;
    std::unique_ptr<tc::sst::mirrored_region> windows;
    if (tc::sst::table::create(*node, members, l, table) != UCS_OK ||
        tc::sst::mirrored_region::create(*node, members, kWindow, owners, windows) != UCS_OK) {
        std::printf("create failed\n");
        return 1;
    }
    /* (the table's rows are confined always; -S shapes the windows only,
     * and the hostile's rows attack shows the table's confinement) */
    tc::sst::pusher pusher(*node);
    for (size_t i = 0; i < kWords; ++i) {
        table->set(words, i, row_word(me, i));
    }
    for (size_t i = 0; i < kWindow; ++i) {
        windows->part(me)[i] = window_byte(me, i);
    }
    if (table->push(pusher, words, tc::sst::put_purpose::other) != UCS_OK ||
        windows->push_all(pusher, me, 0, kWindow, tc::sst::put_purpose::data) != UCS_OK ||
        pusher.flush() != UCS_OK) {
        std::printf("push failed\n");
        return 1;
    }
    node->barrier();

    /* everyone's part addresses and keys, for the hostile's "guess" */
    const tc::sst::mirrored_region *regions[] = {&table->region(), windows.get()};
    std::vector<std::byte> mine;
    for (const auto *r : regions) {
        for (int p = 0; p < kMembers; ++p) {
            const uint64_t v[2] = {reinterpret_cast<uintptr_t>(r->part(p)), r->local_write_key(p)};
            const auto *bytes   = reinterpret_cast<const std::byte*>(v);
            mine.insert(mine.end(), bytes, bytes + sizeof(v));
        }
    }
    std::vector<std::vector<std::byte>> all;
    if (node->allgather_blobs(mine, all) != UCS_OK) {
        return 1;
    }

    if (hostile_mode && me == kHostile) {
        const bool am = node->writes_over_am(kPeer);
        std::vector<std::byte> bad(kWindow, std::byte{0xee});
        for (int ri = 0; ri < 2; ++ri) {
            const auto *r     = regions[ri];
            const size_t len  = (ri == 0) ? kWords * sizeof(int64_t) : kWindow;
            uint64_t v[2];
            std::memcpy(v, all[kPeer].data() + (ri * kMembers + kVictim) * sizeof(v), sizeof(v));
            const uint64_t target = v[0], victim_key = v[1];
            const char *what      = (ri == 0) ? "row" : "window";
            ucp_request_param_t param{};
            if (am) {
                const tc::remote_memory &own = r->remote(kPeer, kHostile);
                struct attempt {
                    uint32_t sender;
                    uint64_t key;
                } const attempts[] = {{kHostile, own.write_key},
                                      {kHostile, victim_key},
                                      {kVictim, victim_key}};
                for (const auto &a : attempts) {
                    tc_write_header_t header{};
                    wait(*node, tc_write_lane_write(node->write_lane(), TC_WRITE_LANE_AM,
                                                    node->ep(kPeer), a.sender, bad.data(), len,
                                                    target, own.rkey.get(), a.key, &param,
                                                    &header));
                }
                std::printf("hostile: 3 am writes to the %s of %d at %d\n", what, kVictim, kPeer);
            } else if (r->may_write(kVictim)) {
                const tc::remote_memory &theirs = r->remote(kPeer, kVictim);
                wait(*node, ucp_put_nbx(node->ep(kPeer), bad.data(), len, target,
                                        theirs.rkey.get(), &param));
                std::printf("hostile: put to the %s of %d at %d with its rkey\n", what, kVictim,
                            kPeer);
            } else if (covers(r->remote(kPeer, kHostile), target, len)) {
                const tc::remote_memory &own = r->remote(kPeer, kHostile);
                wait(*node, ucp_put_nbx(node->ep(kPeer), bad.data(), len, target,
                                        own.rkey.get(), &param));
                std::printf("hostile: put to the %s of %d at %d with its own rkey\n", what,
                            kVictim, kPeer);
            } else {
                std::printf("hostile: no rkey of mine reaches the %s of %d at %d\n", what,
                            kVictim, kPeer);
            }
        }
        ucp_request_param_t param{};
        wait(*node, ucp_ep_flush_nbx(node->ep(kPeer), &param));
    }
    /* let the AM handlers run everywhere before anyone looks */
    node->barrier();
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    while (std::chrono::steady_clock::now() < until) {
        tc_progress(node->engine());
    }
    node->barrier();

    std::string found;
    for (int m = 0; m < kMembers; ++m) {
        for (size_t i = 0; i < kWords; ++i) {
            if (table->get(m, words, i) != row_word(m, i)) {
                found += " row" + std::to_string(m) + "[" + std::to_string(i) + "]";
                break;
            }
        }
        for (size_t i = 0; i < kWindow; ++i) {
            if (windows->part(m)[i] != window_byte(m, i)) {
                found += " window" + std::to_string(m) + "[" + std::to_string(i) + "]";
                break;
            }
        }
    }
    std::printf("rank %d: writes to %d: %s\n", me, (me + 1) % kMembers,
                node->write_lane_name((me + 1) % kMembers).c_str());
    const auto s = node->write_lane_stats();
    std::printf("rank %d: %s%s\n", me, found.empty() ? "rows ok" : "rows corrupted:",
                found.c_str());
    std::printf("rank %d: rejected range %llu sender %llu forged %llu\n", me,
                static_cast<unsigned long long>(s.rejected_range),
                static_cast<unsigned long long>(s.rejected_sender),
                static_cast<unsigned long long>(s.rejected_forged));
    std::printf("rank %d: registrations %zu bytes %zu\n", me,
                table->region().registrations() + windows->registrations(),
                table->region().registered_bytes() + windows->registered_bytes());
    std::fflush(stdout);
    windows.reset();
    table.reset();
    node.reset();
    return 0;
}
