/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Messages above max_payload: RDMC carries the bytes, an SMC slot carries
 * the message's place in the total order (an rdmc_descriptor: size and the
 * sender's transfer index).
 *
 * Invariants:
 *  - one large message of ours in flight at a time: the pool has N + 1
 *    buffers, so the N - 1 other roots always find one to receive into, and
 *    nobody waits for a buffer that only a later delivery would free;
 *  - one root's transfers arrive in order everywhere, and each is accepted
 *    once, in that order, when its slot is taken: the slot's transfer index
 *    names the data, and a root's slots name ever later transfers (a
 *    descriptor naming one an earlier slot took is its root's fault);
 *  - a buffer goes back to the pool once its message is delivered here and,
 *    for our own, once RDMC finished sending it (whichever comes last);
 *  - the engine spans the members of the view it was built in: a view that
 *    only lost members cannot use it (refused, never hung); a view that
 *    admits a joiner, or one rebuilt after a failure, builds a new one.
 */
#pragma once

#include "core/context.hpp"
#include "rdmc/engine.hpp"

#include <functional>
#include <map>
#include <memory>

namespace tc {

class waiter;

/* A large message's descriptor, read once from its root's slot: nullptr
 * when it is one the root could have written (a size of 1 to
 * @a max_message bytes; a transfer no slot taken before named, at or past
 * @a taken, and fewer than @a ahead, the root's buffers, past the
 * @a accepted transfers), else why not. */
const char *check_rdmc_descriptor(const smc::rdmc_descriptor &d, uint64_t max_message,
                                  int64_t taken, int64_t accepted, int64_t ahead);

class large_messages {
public:
    explicit large_messages(group_context &ctx) : ctx_(ctx) {}

    /* Collective over the node's bootstrap, members (@a owner set) and
     * non-members (@a owner null) alike. */
    static ucs_status_t create_engine(ucp_node &node, const group_params &p,
                                      large_messages *owner, std::unique_ptr<rdmc::engine> &out);
    void attach(std::unique_ptr<rdmc::engine> engine);

    bool enabled() const { return engine_ != nullptr; }
    /* UCS_OK, or why this view cannot send large messages (logged) */
    ucs_status_t usable() const;

    /* The data of a large message into a buffer and out over RDMC; @a out
     * the descriptor the caller's SMC slot carries into the total order
     * (SMC sits above this room). Blocks, with @a block, while our earlier
     * large message is undelivered or the buffers are held. */
    ucs_status_t send(size_t size, fill_ref fill, bool block, waiter &wait,
                      smc::rdmc_descriptor &out);

    /* For a large message's slot: its descriptor read once and checked
     * (a size this group allows; a transfer no further ahead of the ones
     * accepted than the root has buffers), its transfer accepted (once,
     * in this sender's order), and whether all its blocks are here. A
     * descriptor that fails is the sender's fault: invalid, blamed by the
     * caller. */
    enum class arrival { pending, arrived, invalid };
    arrival arrived(int sender, int64_t index);
    /* the data of a slot arrived() said had arrived (the transfer it
     * checked then, not the slot's descriptor again) */
    std::span<const std::byte> data(int sender, int64_t index, int64_t &transfer);
    /* after its delivery here */
    void release(int sender, int64_t transfer);

    void dump(FILE *out) const;

    /* the engine of this view, or null (for the hostile-member tests) */
    rdmc::engine *engine() const { return engine_.get(); }

private:
    struct own_message {
        std::span<const std::byte> data;
        bool                       sent, delivered;
    };

    smc::rdmc_descriptor descriptor(int sender, int64_t index) const;
    /* our own buffer goes back once both sent and delivered */
    void release_own_when_done(std::map<int64_t, own_message>::iterator it);

    group_context                                                 &ctx_;
    std::unique_ptr<rdmc::engine>                                 engine_;
    int64_t                                                       epoch_ = 0;  /* it spans */
    std::map<int64_t, own_message>                                own_;        /* by transfer */
    std::map<std::pair<int, int64_t>, std::span<const std::byte>> arrived_;    /* root, transfer */
    std::map<int, int64_t>                                        accepted_;   /* per root */
    /* per root: 1 + the newest transfer a taken slot named */
    std::map<int, int64_t>                                        taken_;
    std::map<std::pair<int, int64_t>, int64_t>                    checked_;    /* (sender, index)
                                                                                   -> transfer */
};

} // namespace tc
