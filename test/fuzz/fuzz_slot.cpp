/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * libFuzzer target for what a receiver checks in a sender's SMC slots: the
 * slot header (smc::check_slot_header, src/smc/receiver.cpp) and, for a
 * large message, the RDMC descriptor after it (check_rdmc_descriptor,
 * src/large/large.cpp).
 *
 * The target follows one sender's run of slots as a receiver takes them.
 * The input fixes the group (window, max_payload, RDMC or not, the root's
 * buffers) and then, per step, which slot an honest sender writes next (a
 * message, a jam, a null run, a large message) and up to three byte
 * patches onto its header and descriptor -- so the fuzzer starts inside the
 * valid space and leaves it a few bytes at a time. A large message's data
 * may be late, and its slot is then read again (as rewritten by the patches
 * of the next step).
 *
 * The promises checked, whenever the checks accept:
 *  - the slot is one a sender writes: the index expected; flags of a
 *    message, a jam, a null run or (in a group with RDMC) a large message,
 *    a null run with no other flag;
 *  - it takes 1 slot, or a null run of at most the window that stays within
 *    the sender's counter; the ring entries it marks are inside the window
 *    (a heap array of exactly the window);
 *  - a message's payload lies inside the slot: read from a heap copy of
 *    exactly the slot's stride;
 *  - an RDMC slot holds a descriptor; the descriptor's size is 1 to the
 *    largest message (its bytes read from a buffer of exactly that size),
 *    its transfer one the root could have started (accepting up to it
 *    takes at most as many accepts as the root has buffers) and named by
 *    no slot taken before;
 * and an honest slot is never refused.
 */
#include "fuzz_common.hpp"
#include "large/large.hpp"
#include "smc/receiver.hpp"

#include <algorithm>
#include <vector>

using namespace tc;
using smc::rdmc_descriptor;
using smc::slot_header;

namespace {

struct group_shape {
    unsigned window;
    size_t   max_payload;
    bool     large;
    uint64_t max_message;
    int64_t  ahead;   /* the root's buffers: members + 1 */
};

/* what a receiver knows of the sender, and what the honest sender did */
struct sender_model {
    int64_t expected      = 0;    /* next index */
    int64_t accepted      = 0;    /* RDMC transfers accepted from the root */
    int64_t taken         = 0;    /* 1 + the newest transfer a taken slot named */
    int64_t next_transfer = 0;    /* the honest root's next transfer */
};

constexpr size_t kSlotBytes = sizeof(slot_header) + sizeof(rdmc_descriptor);

/* the slot an honest sender writes next, and how far its counter says */
void honest_slot(const group_shape &g, const sender_model &m, fuzz::bytes_in &in,
                 uint8_t *slot, int64_t &bound)
{
    slot_header h{};
    rdmc_descriptor d{};
    const uint8_t kind = in.u8();
    bound              = m.expected + 1 + in.u8() % (2 * g.window);
    h.index            = m.expected;
    switch (kind % 4) {
    case 0:
    case 1:
        h.flags = (kind % 4 == 1) ? smc::SLOT_FLAG_JAM : 0;
        h.size  = static_cast<uint32_t>(in.u16() % (g.max_payload + 1));
        break;
    case 2:
        h.flags = smc::SLOT_FLAG_NULL;
        h.size  = 1 + in.u8() % std::min<int64_t>(g.window, bound - m.expected);
        break;
    default:
        if (!g.large) {
            h.size = 0;
            break;
        }
        h.flags    = smc::SLOT_FLAG_RDMC | ((kind & 4) ? smc::SLOT_FLAG_JAM : 0);
        h.size     = sizeof(rdmc_descriptor);
        d.size     = 1 + in.u32() % g.max_message;
        d.transfer = m.next_transfer;
        break;
    }
    std::memcpy(slot, &h, sizeof(h));
    std::memcpy(slot + sizeof(h), &d, sizeof(d));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz::bytes_in in(data, size);
    group_shape g;
    g.window      = 1 + in.u8() % 64;
    g.max_payload = 16 + in.u16() % 8192;
    g.large       = in.u8() & 1;
    g.max_message = 1 + in.u16() % 65536;
    g.ahead       = 2 + in.u8() % 8;
    const size_t stride = smc::slot_stride(g.max_payload);

    sender_model m;
    std::vector<smc::receiver::taken_slot> ring(g.window);   /* exactly the window */
    /* a slot's bytes and a large message's buffer, of exactly their sizes */
    const auto slot_copy = fuzz::exact_copy(std::vector<std::byte>(stride).data(), stride);
    const auto buffer    = fuzz::exact_copy(std::vector<std::byte>(g.max_message).data(),
                                            g.max_message);
    uint8_t slot[kSlotBytes], honest[kSlotBytes];
    bool again = false;   /* a large message's data was late: its slot is read again */
    int64_t bound = 0;

    for (int step = 0; step < 64 && in.left() != 0; ++step) {
        if (!again) {
            honest_slot(g, m, in, honest, bound);
        }
        std::memcpy(slot, honest, sizeof(slot));
        for (unsigned k = in.u8() % 4; k != 0; --k) {
            slot[in.u8() % sizeof(slot)] ^= in.u8();
        }
        const bool untouched = std::memcmp(slot, honest, sizeof(slot)) == 0;

        /* the header, once, as the receiver reads it */
        slot_header h;
        std::memcpy(&h, slot, sizeof(h));
        int64_t count     = -1;
        const char *fault = smc::check_slot_header(
                h, {m.expected, bound, g.max_payload, g.window, g.large}, count);
        if (fault != nullptr) {
            REQUIRE(!untouched);
            return 0;   /* the sender is blamed and not read again */
        }
        const bool is_null  = h.flags & smc::SLOT_FLAG_NULL;
        const bool is_large = (h.flags & smc::SLOT_FLAG_RDMC) && g.large;
        REQUIRE(h.index == m.expected);
        REQUIRE((h.flags & ~uint32_t{smc::SLOT_FLAG_NULL | smc::SLOT_FLAG_RDMC |
                                     smc::SLOT_FLAG_JAM}) == 0);
        REQUIRE(!is_null || h.flags == smc::SLOT_FLAG_NULL);
        REQUIRE(!is_large || g.large);
        if (is_null) {
            REQUIRE(count >= 1 && count <= g.window && m.expected + count <= bound);
        } else {
            REQUIRE(count == 1 && h.size <= g.max_payload);
            /* the payload, from exactly the slot */
            fuzz::read_bytes(slot_copy.get() + sizeof(slot_header), h.size);
        }
        if (is_large) {
            REQUIRE(h.size == sizeof(rdmc_descriptor));
            rdmc_descriptor d;
            std::memcpy(&d, slot + sizeof(h), sizeof(d));
            if (check_rdmc_descriptor(d, g.max_message, m.taken, m.accepted, g.ahead) !=
                nullptr) {
                REQUIRE(!untouched);
                return 0;
            }
            REQUIRE(d.size >= 1 && d.size <= g.max_message);
            REQUIRE(d.transfer >= 0 && d.transfer < m.accepted + g.ahead);
            REQUIRE(d.transfer >= m.taken);   /* no transfer is named twice */
            for (int accepts = 0; m.accepted <= d.transfer; ++m.accepted) {
                REQUIRE(++accepts <= g.ahead);
            }
            /* its bytes, from a buffer of exactly the largest message */
            fuzz::read_bytes(buffer.get(), d.size);
            if (in.u8() & 1) {
                again = true;   /* its data is late: read the slot again */
                continue;
            }
            m.taken = d.transfer + 1;
            if (d.transfer >= m.next_transfer) {
                m.next_transfer = d.transfer + 1;
            }
        }
        again = false;
        unsigned at = static_cast<unsigned>(m.expected % g.window);
        for (int64_t i = 0; i < count; ++i) {
            ring.at(at) = {h.size, h.flags};
            at          = (at + 1 == g.window) ? 0 : at + 1;
        }
        m.expected += count;
    }
    return 0;
}
