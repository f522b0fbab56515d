/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * libFuzzer target for the join wire's decoders (src/membership/join_wire):
 * what a sponsor makes of a joiner's request (join::request_mismatch) and
 * what a joiner makes of a sponsor's reply (join::list_bytes on the header,
 * before it reads or allocates for the lists; join::decode_admission on
 * the whole of it). It calls only the public decode functions, so it
 * follows the wire format wherever it goes.
 *
 * The input's first byte picks request or reply, and a valid encoding to
 * patch (so the fuzzer starts inside the valid space) or raw bytes; the
 * next ones the admission's size and the joiner's UCX_TC_GROUP_MAX_MEMBERS;
 * the rest are patches, or the raw bytes.
 *
 * The promises checked:
 *  - a request is accepted only if it speaks this version and shares every
 *    parameter; our own request is always accepted;
 *  - list_bytes accepts only counts within the maximum (so what the joiner
 *    allocates is bounded by it) and gives their exact length;
 *  - decode_admission accepts only exactly the header and the lists its
 *    counts announce (read from a heap copy of exactly the input's size, so
 *    AddressSanitizer catches a read past it), at most max_members of them,
 *    ids in range, one membership (members without repeats, the
 *    rendezvous a permutation of them, senders among them, the joiner and
 *    the sponsor in it), a port and an epoch; and what it accepted encodes
 *    back to the same bytes; the unpatched admission is always accepted.
 */
#include "fuzz_common.hpp"
#include "membership/join_wire.hpp"

#include <algorithm>
#include <vector>

using namespace tc;

namespace {

join::admission valid_admission(unsigned members, unsigned senders)
{
    join::admission a;
    for (unsigned i = 0; i < members; ++i) {
        a.members.push_back(static_cast<int>(3 * i + 1));
    }
    a.senders.assign(a.members.begin(), a.members.begin() + senders);
    a.rendezvous = a.members;
    std::rotate(a.rendezvous.begin(), a.rendezvous.begin() + members / 2, a.rendezvous.end());
    a.id              = a.members.back();
    a.sponsor         = a.members.front();
    a.epoch           = 2;
    a.rendezvous_port = 4242;
    return a;
}

join::request valid_request()
{
    join::request r{};
    r.magic            = join::kRequestMagic;
    r.version          = join::kVersion;
    r.max_payload      = 1024;
    r.rdmc_max_message = 1 << 20;
    r.rdmc_block       = 4096;
    r.window           = 16;
    r.mode             = 1;
    r.smc_batched      = 2;
    r.jam_security     = 1;
    r.jam_state_size   = 64;
    r.jam_packages     = 0x1234567890abcdefull;
    return r;
}

void fuzz_request(uint8_t mode, fuzz::bytes_in &in)
{
    const join::request ours = valid_request();
    join::request r          = ours;
    if (mode & 2) {
        std::memset(&r, 0, sizeof(r));
        for (size_t i = 0; i < sizeof(r) && in.left() != 0; ++i) {
            reinterpret_cast<uint8_t*>(&r)[i] = in.u8();
        }
    } else {
        in.patch(&r, sizeof(r));
    }
    const bool untouched = std::memcmp(&r, &ours, sizeof(r)) == 0;
    if (join::request_mismatch(r, ours) != nullptr) {
        REQUIRE(!untouched);
        return;
    }
    REQUIRE(r.version == join::kVersion);
    REQUIRE(r.max_payload == ours.max_payload && r.rdmc_max_message == ours.rdmc_max_message &&
            r.rdmc_block == ours.rdmc_block && r.window == ours.window && r.mode == ours.mode &&
            r.smc_batched == ours.smc_batched && r.jam_security == ours.jam_security &&
            r.jam_state_size == ours.jam_state_size && r.jam_packages == ours.jam_packages);
}

void check_list_bytes(const join::reply &h, unsigned max_members)
{
    size_t lists = SIZE_MAX;
    if (join::list_bytes(h, max_members, lists) != nullptr) {
        return;
    }
    REQUIRE(h.member_count >= 1 && static_cast<uint32_t>(h.member_count) <= max_members);
    REQUIRE(h.sender_count >= 0 && h.sender_count <= h.member_count);
    REQUIRE(h.rendezvous_size == h.member_count);
    REQUIRE(lists == sizeof(int32_t) * (static_cast<size_t>(h.member_count) +
                                        static_cast<size_t>(h.sender_count) +
                                        static_cast<size_t>(h.rendezvous_size)));
    REQUIRE(lists <= 3 * sizeof(int32_t) * static_cast<size_t>(max_members));
}

void check_admission(std::span<const std::byte> wire, unsigned max_members,
                     const join::admission &a)
{
    join::reply h;
    REQUIRE(wire.size() >= sizeof(h));
    std::memcpy(&h, wire.data(), sizeof(h));
    const size_t m = a.members.size(), s = a.senders.size();
    REQUIRE(m >= 1 && m <= max_members && s <= m && a.rendezvous.size() == m);
    REQUIRE(wire.size() == sizeof(h) + sizeof(int32_t) * (2 * m + s));
    REQUIRE(h.magic == join::kReplyMagic && h.version == join::kVersion && h.status == UCS_OK);
    REQUIRE(a.id == h.id && a.sponsor == h.sponsor && a.epoch == h.epoch && a.epoch >= 1);
    REQUIRE(a.rendezvous_port != 0 && a.rendezvous_port == h.rendezvous_port);

    std::vector<int> members = a.members, rendezvous = a.rendezvous, senders = a.senders;
    std::sort(members.begin(), members.end());
    std::sort(rendezvous.begin(), rendezvous.end());
    std::sort(senders.begin(), senders.end());
    REQUIRE(std::all_of(members.begin(), members.end(), join::valid_member_id));
    REQUIRE(std::adjacent_find(members.begin(), members.end()) == members.end());
    REQUIRE(members == rendezvous);
    REQUIRE(std::adjacent_find(senders.begin(), senders.end()) == senders.end());
    const auto member = [&](int id) {
        return std::binary_search(members.begin(), members.end(), id);
    };
    REQUIRE(std::all_of(senders.begin(), senders.end(), member));
    REQUIRE(member(a.id) && member(a.sponsor));
    /* the joiner finds its rank in the rendezvous */
    REQUIRE(std::find(a.rendezvous.begin(), a.rendezvous.end(), a.id) != a.rendezvous.end());

    /* what it accepted is what was sent: lists byte for byte */
    const std::vector<std::byte> again = join::encode_admission(a);
    REQUIRE(again.size() == wire.size());
    REQUIRE(std::memcmp(again.data() + sizeof(h), wire.data() + sizeof(h),
                        wire.size() - sizeof(h)) == 0);
}

void fuzz_reply(uint8_t mode, fuzz::bytes_in &in)
{
    const unsigned members = 1 + in.u8();                    /* 1..256 */
    const unsigned senders = in.u8() % (members + 1);
    const uint8_t limit    = in.u8();
    const unsigned max_members = (limit & 0x80) ? 256 :
            static_cast<unsigned>(std::max(1, static_cast<int>(members) + (limit & 7) - 4));
    const int8_t resize    = static_cast<int8_t>(in.u8());   /* bytes cut or added */

    std::vector<std::byte> wire;
    if (mode & 2) {
        while (in.left() != 0) {
            wire.push_back(static_cast<std::byte>(in.u8()));
        }
    } else {
        wire = join::encode_admission(valid_admission(members, senders));
        if (resize < 0) {
            wire.resize(wire.size() - std::min<size_t>(wire.size(), -resize));
        } else {
            wire.resize(wire.size() + static_cast<size_t>(resize), std::byte{0x5a});
        }
        in.patch(wire.data(), wire.size());
    }
    const bool untouched = !(mode & 2) && resize == 0 &&
                           wire == join::encode_admission(valid_admission(members, senders));

    /* the header alone, as the joiner reads it before the lists */
    if (wire.size() >= sizeof(join::reply)) {
        join::reply h;
        std::memcpy(&h, wire.data(), sizeof(h));
        check_list_bytes(h, max_members);
    }
    /* the whole of it, from exactly its bytes */
    const auto copy = fuzz::exact_copy(wire.data(), wire.size());
    const std::span<const std::byte> exact(copy.get(), wire.size());
    join::admission a;
    if (join::decode_admission(exact, max_members, a) != nullptr) {
        REQUIRE(!(untouched && members <= max_members));
        return;
    }
    check_admission(exact, max_members, a);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz::bytes_in in(data, size);
    const uint8_t mode = in.u8();
    if (mode & 1) {
        fuzz_request(mode, in);
    } else {
        fuzz_reply(mode, in);
    }
    return 0;
}
