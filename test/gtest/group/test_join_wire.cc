/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The join reply on the wire: a header with counts, then the lists of any
 * length. A sponsor's bytes are untrusted input to the joiner: every reply
 * that is truncated, oversized or garbage is rejected with its reason, and
 * the counts are judged before anything is allocated for them.
 */
#include "common.h"

#include "membership/join_wire.hpp"

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using tc::join::admission;
using tc::join::decode_admission;
using tc::join::encode_admission;
using tc::join::reply;

constexpr unsigned kMax = 256;   /* UCX_TC_GROUP_MAX_MEMBERS's default */

/* 200 members (ids 1000, 1003, ...), every other one a sender, the joiner
 * last, the sponsor (member 7) first at the rendezvous */
admission two_hundred()
{
    admission a;
    a.epoch           = 9;
    a.rendezvous_port = 41234;
    for (int i = 0; i < 200; ++i) {
        a.members.push_back(1000 + 3 * i);
        if (i % 2 == 0) {
            a.senders.push_back(a.members.back());
        }
    }
    a.id      = a.members.back();
    a.sponsor = a.members[7];
    a.rendezvous.push_back(a.sponsor);
    for (int id : a.members) {
        if (id != a.sponsor) {
            a.rendezvous.push_back(id);
        }
    }
    return a;
}

reply header_of(const std::vector<std::byte> &wire)
{
    reply h;
    std::memcpy(&h, wire.data(), sizeof(h));
    return h;
}

void set_header(std::vector<std::byte> &wire, const reply &h)
{
    std::memcpy(wire.data(), &h, sizeof(h));
}

/* nullptr when accepted; the reason otherwise */
std::string rejection(const std::vector<std::byte> &wire, unsigned max = kMax)
{
    admission out;
    const char *why = decode_admission(wire, max, out);
    return why ? why : "";
}

TEST(join_wire, two_hundred_members_round_trip)
{
    const admission a               = two_hundred();
    const std::vector<std::byte> wire = encode_admission(a);
    EXPECT_EQ(sizeof(reply) + 4 * (200 + 100 + 200), wire.size());
    size_t lists = 0;
    ASSERT_EQ(nullptr, tc::join::list_bytes(header_of(wire), kMax, lists));
    EXPECT_EQ(wire.size() - sizeof(reply), lists);
    admission b;
    ASSERT_EQ(nullptr, decode_admission(wire, kMax, b));
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.epoch, b.epoch);
    EXPECT_EQ(a.sponsor, b.sponsor);
    EXPECT_EQ(a.rendezvous_port, b.rendezvous_port);
    EXPECT_EQ(a.members, b.members);
    EXPECT_EQ(a.senders, b.senders);
    EXPECT_EQ(a.rendezvous, b.rendezvous);
}

TEST(join_wire, a_joiner_configured_for_fewer_members_refuses_the_admission)
{
    const auto wire = encode_admission(two_hundred());
    EXPECT_EQ("more members than UCX_TC_GROUP_MAX_MEMBERS", rejection(wire, 199));
    EXPECT_EQ("", rejection(wire, 200));
}

TEST(join_wire, truncated_replies_are_rejected)
{
    const auto wire = encode_admission(two_hundred());
    EXPECT_EQ("truncated header", rejection({}));
    EXPECT_EQ("truncated header",
              rejection(std::vector<std::byte>(wire.begin(), wire.begin() + sizeof(reply) - 1)));
    EXPECT_EQ("truncated lists",
              rejection(std::vector<std::byte>(wire.begin(), wire.begin() + sizeof(reply))));
    EXPECT_EQ("truncated lists", rejection(std::vector<std::byte>(wire.begin(), wire.end() - 1)));
}

TEST(join_wire, oversized_replies_are_rejected_before_any_allocation)
{
    auto wire = encode_admission(two_hundred());
    auto plus_one = wire;
    plus_one.push_back(std::byte{0});
    EXPECT_EQ("bytes past the lists", rejection(plus_one));

    /* counts a peer could send to make us read or allocate without bound:
     * judged from the header alone */
    const reply good = header_of(wire);
    for (int32_t count : {257, 1 << 20, INT32_MAX}) {
        reply h          = good;
        h.member_count   = count;
        h.rendezvous_size = count;
        size_t lists     = 0;
        EXPECT_STREQ("more members than UCX_TC_GROUP_MAX_MEMBERS",
                     tc::join::list_bytes(h, kMax, lists)) << count;
        set_header(wire, h);
        EXPECT_EQ("more members than UCX_TC_GROUP_MAX_MEMBERS", rejection(wire)) << count;
    }
    struct bad_counts {
        int32_t members, senders, rendezvous;
        const char *why;
    };
    for (const bad_counts &b : {bad_counts{0, 0, 0, "no members"},
                                bad_counts{-1, 0, -1, "no members"},
                                bad_counts{INT32_MIN, 0, 0, "no members"},
                                bad_counts{200, -1, 200, "a sender count out of range"},
                                bad_counts{200, 201, 200, "a sender count out of range"},
                                bad_counts{200, 100, 199, "a rendezvous that is not the members"},
                                bad_counts{200, 100, -5, "a rendezvous that is not the members"}}) {
        reply h           = good;
        h.member_count    = b.members;
        h.sender_count    = b.senders;
        h.rendezvous_size = b.rendezvous;
        set_header(wire, h);
        EXPECT_EQ(b.why, rejection(wire)) << b.members << " " << b.senders << " " << b.rendezvous;
    }
}

TEST(join_wire, garbage_replies_are_rejected)
{
    const auto good = encode_admission(two_hundred());
    auto edit = [&](auto change) {
        admission a = two_hundred();
        change(a);
        return rejection(encode_admission(a));
    };
    EXPECT_EQ("a member id out of range", edit([](admission &a) { a.members[3] = -4; }));
    EXPECT_EQ("a member id out of range", edit([](admission &a) { a.senders[0] = 1 << 20; }));
    EXPECT_EQ("a member id out of range", edit([](admission &a) { a.rendezvous[9] = -1; }));
    EXPECT_EQ("a member listed twice", edit([](admission &a) {
                  a.members[1] = a.members[0];
                  a.rendezvous = a.members;
              }));
    EXPECT_EQ("a rendezvous that is not the members",
              edit([](admission &a) { a.rendezvous[5] = 7; }));
    EXPECT_EQ("a sender that is not a member, or listed twice",
              edit([](admission &a) { a.senders[2] = 5; }));
    EXPECT_EQ("a sender that is not a member, or listed twice",
              edit([](admission &a) { a.senders[2] = a.senders[3]; }));
    EXPECT_EQ("the joiner or the sponsor is not a member", edit([](admission &a) { a.id = 5; }));
    EXPECT_EQ("the joiner's or the sponsor's id out of range",
              edit([](admission &a) { a.sponsor = -2; }));
    EXPECT_EQ("an epoch out of range", edit([](admission &a) { a.epoch = 0; }));
    EXPECT_EQ("no rendezvous port", edit([](admission &a) { a.rendezvous_port = 0; }));

    auto wire = good;
    reply h   = header_of(wire);
    h.magic   = 0x12345678;
    set_header(wire, h);
    EXPECT_EQ("not a join reply of this protocol version", rejection(wire));
    h         = header_of(good);
    h.version = tc::join::kVersion - 1;
    set_header(wire, h);
    EXPECT_EQ("not a join reply of this protocol version", rejection(wire));
    const reply refused = tc::join::refusal_reply(UCS_ERR_INVALID_PARAM, "group parameters differ");
    std::vector<std::byte> refusal(sizeof(refused));
    std::memcpy(refusal.data(), &refused, sizeof(refused));
    EXPECT_EQ("a refusal, not an admission", rejection(refusal));

    /* random bytes of random lengths, and random headers over good lists:
     * each is rejected (or, if it happens to be one membership, accepted)
     * without reading past what arrived (ASan builds check that) */
    std::mt19937 rng(7);
    for (int i = 0; i < 2000; ++i) {
        std::vector<std::byte> junk(std::uniform_int_distribution<size_t>(0, 3000)(rng));
        for (auto &b : junk) {
            b = std::byte(rng());
        }
        if (i % 2 == 1 && junk.size() >= sizeof(reply)) {
            reply j = header_of(good);   /* valid magic, so the rest is looked at */
            j.member_count    = static_cast<int32_t>(rng() % 300) - 20;
            j.sender_count    = static_cast<int32_t>(rng() % 300) - 20;
            j.rendezvous_size = j.member_count;
            set_header(junk, j);
        }
        EXPECT_NE("", rejection(junk)) << "junk of " << junk.size() << " bytes accepted";
    }
}

} // namespace
