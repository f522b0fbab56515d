/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The state the RDMC engine keeps per member: the control region's layout
 * (protocol in engine.hpp), pool buffers, transfers in progress and the
 * per-root bookkeeping. Internal to the engine (engine.cpp).
 *
 * Invariants: a transfer's sources list, per peer, the blocks that peer
 * sends us in the order it sends them; have_count counts the distinct
 * blocks in have; a pool buffer is free only when no transfer uses it and
 * the application does not hold it.
 */
#pragma once

#include "rdmc/schedule.hpp"

#include <twochains/lane.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace tc::rdmc {

/* The control words of N members, one part per writer: part w holds
 * what member w writes, and w alone (its rkey goes to w only):
 *   offer          w's current transfer as root
 *   ready[r]       w is ready for root r's transfer
 *   arrived[r]     blocks of root r's transfers that w has put into the
 *                  part's holder (each holder's copy counts its own)
 * int64 words, the same layout at every member. A word is named by its
 * writer's part and its offset there. */
struct control_layout {
    int n;

    struct word_at {
        int    part;     /* the writer */
        size_t offset;   /* bytes into its part */
    };

    size_t part_bytes() const { return (1 + 2 * static_cast<size_t>(n)) * sizeof(int64_t); }
    word_at offer(int r) const { return {r, 0}; }
    /* member m is ready for root r's transfer */
    word_at ready(int r, int m) const
    {
        return {m, (1 + static_cast<size_t>(r)) * sizeof(int64_t)};
    }
    /* blocks of root r's transfers that member p has put into us */
    word_at arrived(int r, int p) const
    {
        return {p, (1 + static_cast<size_t>(n) + static_cast<size_t>(r)) * sizeof(int64_t)};
    }
};

enum class slot_state : uint8_t { free, handed_out, busy };

struct slot {
    slot_state state = slot_state::free;
    bool       held  = false;  /* the application still holds it */
    bool       done  = false;  /* its transfer finished here */
    int        root  = -1;
    int64_t    index = -1;
};

struct pending_send {
    std::span<const std::byte> data;
    int                        slot;
    int64_t                    index;
};

struct source {
    int                  peer;
    std::vector<int64_t> blocks;  /* in the order the peer sends them */
    size_t               seen = 0;
};

struct transfer {
    int                        root;
    int64_t                    index;
    size_t                     size;
    int64_t                    blocks;
    int                        slot;         /* pool buffer, -1: the root's own memory */
    const std::byte           *src;          /* where our sends read from */
    std::byte                 *dst;          /* receivers: where blocks land */
    std::vector<block_transfer> sends;       /* in step order */
    size_t                     next_send = 0;
    std::vector<source>        sources;
    std::vector<uint8_t>       have;
    int64_t                    have_count = 0;
    int64_t                    expect     = 0;
    unsigned                   puts_in_flight = 0;
    bool                       complete   = false;  /* every block is here */
};

struct root_state {
    std::unique_ptr<transfer>                     current;
    int64_t                                       accepted = 0;  /* transfers accepted */
    std::deque<std::pair<int64_t, size_t>>        offers;        /* seen, not accepted */
    std::vector<int64_t>                          base;     /* arrived[r][p] before current */
    std::vector<int64_t>                          sent_to;  /* our blocks to p, cumulative */
};

/* The offer word: the transfer's index + 1 above its size in bytes. */
inline constexpr uint64_t kOfferSeqMask  = (uint64_t{1} << 24) - 1;
inline constexpr int      kOfferSizeBits = 40;
inline constexpr uint64_t kOfferSizeMask = (uint64_t{1} << kOfferSizeBits) - 1;
inline constexpr uint64_t kSlotRoot      = 0xffff;  /* ready word of the root itself */

/* Logs and aborts: the engine's own bookkeeping is wrong (engine.cpp). */
[[noreturn]] void invariant_broken(const char *what);

/* Our part, as member @a me of @a n, of root @a root's transfer @a index of
 * @a size bytes in blocks of @a block, from the schedule (transfer_plan.cpp). */
std::unique_ptr<transfer> plan_transfer(schedule_kind kind, int n, int me, size_t block, int root,
                                        int64_t index, size_t size);

struct data_put {
    void     *request = nullptr;
    transfer *owner   = nullptr;
    tc_write_header_t header{};   /* the write lane's, until the request completes */
};

} // namespace tc::rdmc
