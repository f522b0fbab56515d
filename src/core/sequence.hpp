/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Round-robin total order, as pure functions so that it can be tested
 * without a network. Message k of sender s (sender index, 0..S-1) has global
 * sequence k*S + s. Sequences are int64; -1 means "none yet".
 */
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>

namespace tc::order {

inline int64_t sequence_of(int64_t index, int sender, int senders)
{
    return index * senders + sender;
}

inline int sender_of(int64_t seq, int senders)
{
    return static_cast<int>(seq % senders);
}

inline int64_t index_of(int64_t seq, int senders)
{
    return seq / senders;
}

/*
 * Highest sequence below which everything has been received, given how many
 * messages arrived from each sender: the first missing sequence is
 * min_s(received[s]*S + s).
 */
inline int64_t contiguous_received(std::span<const int64_t> received)
{
    const int senders = static_cast<int>(received.size());
    int64_t first_missing = INT64_MAX;
    for (int s = 0; s < senders; ++s) {
        first_missing = std::min(first_missing, sequence_of(received[s], s, senders));
    }
    return first_missing - 1;
}

/* Messages of sender s whose sequence is <= seq. */
inline int64_t count_through(int64_t seq, int sender, int senders)
{
    return (seq < sender) ? 0 : (seq - sender) / senders + 1;
}

} // namespace tc::order
