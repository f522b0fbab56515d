/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * RDMC transfers in progress (protocol in engine.hpp): blocks put to peers
 * once they are ready for them, blocks counted in from peers' arrived
 * words, and a transfer finished here (callbacks, buffer freed) once all is
 * in and out. Internal to the engine.
 */
#pragma once

#include "rdmc/buffer_pool.hpp"
#include "rdmc/control_words.hpp"
#include "rdmc/data_puts.hpp"
#include "rdmc/peer_faults.hpp"
#include "rdmc/transfer_state.hpp"
#include "common/contained_call.hpp"

#include <vector>

namespace tc::rdmc {

class transfer_mover {
public:
    transfer_mover(ucp_node &node, const engine_params &p, size_t block, int me,
                   const control_layout &layout, peer_faults &faults, control_words &words,
                   buffer_pool &buffers, data_puts &puts, std::vector<root_state> &roots,
                   engine_stats &stats, uint64_t &callback_errors)
        : node_(node), p_(p), block_(block), me_(me), layout_(layout), faults_(faults),
          words_(words), buffers_(buffers), puts_(puts), roots_(roots), stats_(stats),
          callback_errors_(callback_errors)
    {
    }

    /* root @a r's current transfer, one step further */
    ucs_status_t progress_transfer(int r, unsigned &events);

private:
    ucs_status_t put_block(transfer &t, const block_transfer &op, uint64_t ready);
    ucs_status_t progress_sends(transfer &t, unsigned &events);
    ucs_status_t progress_receives(transfer &t, root_state &rs, unsigned &events);

    transfer_info info(const transfer &t) const
    {
        return {t.root, p_.members[t.root], t.index,
                {t.root == me_ ? t.src : t.dst, t.size}};
    }

    template<class F> void run_callback(const F &cb, const transfer_info &ti)
    {
        if (!cb) {
            return;
        }
        call_contained("rdmc: callback", "the transfer goes on", [&] { cb(ti); },
                       [this] { return callback_errors_++; });
    }

    ucp_node                &node_;
    const engine_params     &p_;
    size_t                  block_;
    int                     me_;
    const control_layout    &layout_;
    peer_faults             &faults_;
    control_words           &words_;
    buffer_pool             &buffers_;
    data_puts               &puts_;
    std::vector<root_state> &roots_;
    engine_stats            &stats_;
    uint64_t                &callback_errors_;
};

} // namespace tc::rdmc
