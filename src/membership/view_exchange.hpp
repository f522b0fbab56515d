/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The survivors of a failure rebuild the next view's SST, SMC and RDMC over
 * themselves (so that large messages go on), exchanging what that needs
 * (worker addresses, rkeys) through the old view: an allgather over an
 * exchange area of its own in the old view's memory, served as a
 * tc_bootstrap backend whose operations put with the old view's pusher and
 * progress the worker themselves (they run inside the group's poller).
 *
 * Invariants: per member two alternating slots of a round word, a length
 * and the bytes, so a member one round ahead never overwrites what a slower
 * one still reads; the round word is stored last, after a fence, so a reader
 * that sees the round sees its bytes.
 *
 * Ownership: the node runs its collectives over such a bootstrap until the
 * next view change, and ends with a barrier over it when it is destroyed,
 * which may be after the group (and so this view) is gone. The exchange's
 * region, its pusher and what a round reads of the view are therefore one
 * link that the view and every bootstrap over it share; the view only lends
 * it its blame, and takes it back when it goes.
 */
#pragma once

#include "core/context.hpp"

#include <twochains/bootstrap.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace tc::membership {

/* The lengths of one exchange round, as read once from each rank's row
 * (@a words, rank order): each a length its writer could have stored (not
 * negative, at most @a slot_bytes, the bytes its slot holds) into
 * @a lens[r], and their sum into @a total (checked: it never wraps). -1, or
 * the first rank whose length cannot be (nothing is written for it). */
int check_round_lengths(std::span<const int64_t> words, size_t slot_bytes, size_t *lens,
                        size_t &total);

class view_exchange {
public:
    explicit view_exchange(group_context &ctx) : ctx_(ctx) {}
    ~view_exchange();
    view_exchange(const view_exchange &)            = delete;
    view_exchange &operator=(const view_exchange &) = delete;

    /* Views after failures are rebuilt (not narrowed) when the group has
     * RDMC: its engine must span exactly the members. Same on every rank. */
    static bool rebuilds_on_failure(const group_params &p)
    {
        return p.rdmc_max_message > 0 && !p.threaded_senders;
    }
    /* one row per member, each a part its member alone writes */
    static size_t row_bytes() { return kRowBytes; }

    /* collective, with the view's other regions */
    void adopt(std::unique_ptr<sst::mirrored_region> region);
    bool available() const { return link_ != nullptr; }

    /* A bootstrap among @a rows (survivors, view order) over the exchange. */
    ucs_status_t bootstrap_over(const std::vector<int> &rows, tc_bootstrap_h &out);

private:
    /* what a round needs, shared by the view and its bootstraps */
    struct link {
        link(group_context &ctx, std::unique_ptr<sst::mirrored_region> r);
        ucp_node                              &node;
        const int                             me;          /* our row in the view */
        const double                          timeout_s;   /* a round's deadline */
        std::unique_ptr<sst::mirrored_region> region;
        sst::pusher                           pusher;
        group_context                         *blame_to;   /* null once the view is gone */
    };
    struct round_ctx {
        std::shared_ptr<link> via;
        std::vector<int>      rows;      /* rank -> row in the old view */
        uint64_t              round = 0;
        std::vector<int64_t>  len_words;   /* the rows' lengths, read once; sized once */
    };

    static constexpr size_t kSlotBytes = 8192;
    static constexpr size_t kSlotSize  = 16 + kSlotBytes;
    static constexpr size_t kRowBytes  = 2 * kSlotSize;

    static ucs_status_t allgatherv(void *arg, const void *buf, size_t len, void **all_p,
                                   size_t *lens);
    static ucs_status_t round(round_ctx &x, const void *buf, size_t len, void **all_p,
                              size_t *lens);

    group_context         &ctx_;
    std::shared_ptr<link> link_;
};

} // namespace tc::membership
