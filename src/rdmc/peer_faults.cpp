/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The RDMC engine's blame of a peer: counted, told to the owner's
 * on_peer_fault (contained) or logged.
 *
 * Threads: the engine's (the thread that drives the node's progress).
 */
#include "rdmc/peer_faults.hpp"
#include "common/contained_call.hpp"

#include <ucs/debug/log_def.h>

namespace tc::rdmc {

peer_faults::peer_faults(const engine_params &p, engine_stats &stats, uint64_t &callback_errors)
    : p_(p), stats_(stats), callback_errors_(callback_errors),
      faulty_(p.members.size(), 0), bad_looks_(p.members.size())
{
}

void peer_faults::blame(int peer, const char *what)
{
    if (faulty_[peer]) {
        return;
    }
    faulty_[peer] = 1;
    ++stats_.peer_faults;
    if (p_.on_peer_fault) {
        call_contained("rdmc: on_peer_fault", "the engine goes on",
                       [&] { p_.on_peer_fault(peer, what); },
                       [this] { return callback_errors_++; });
    } else {
        ucs_error("rdmc: member %d (rank %d) wrote %s; its words are not read again", peer,
                  p_.members[peer], what);
    }
}

} // namespace tc::rdmc
