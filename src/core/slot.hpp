/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * SMC slot layout. Each sender owns a window of W slots, replicated at every
 * member; message k of a sender lands in slot k mod W. A slot is the header
 * below followed by the payload, padded to 64 bytes.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace tc::smc {

enum slot_flags : uint32_t {
    SLOT_FLAG_NULL = 1u << 0, /* keeps round-robin order moving; not delivered */
    SLOT_FLAG_RDMC = 1u << 1, /* payload is an rdmc_descriptor: the data comes by RDMC */
    SLOT_FLAG_JAM  = 1u << 2  /* the message is a jam frame, run at delivery */
};

/* An SMC slot that gives a large message its place in the total order. */
struct rdmc_descriptor {
    uint64_t size;      /* bytes of the message */
    int64_t  transfer;  /* the sender's RDMC transfer index */
};

struct slot_header {
    uint32_t size;   /* payload bytes */
    uint32_t flags;  /* slot_flags */
    int64_t  index;  /* k: the sender's message number, checked by receivers */
};
static_assert(sizeof(slot_header) == 16);
static_assert(std::is_trivially_copyable_v<slot_header>);

constexpr size_t kSlotAlign = 64;

inline size_t slot_stride(size_t max_payload)
{
    return (sizeof(slot_header) + max_payload + kSlotAlign - 1) & ~(kSlotAlign - 1);
}

} // namespace tc::smc
