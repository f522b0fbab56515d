/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "order/delivery.hpp"

#include "common/contained_call.hpp"
#include "large/large.hpp"
#include "jam/replicated_jams.hpp"
#include "core/sequence.hpp"
#include "smc/receiver.hpp"

#include <chrono>
#include <cstdlib>
#include <thread>

namespace tc {

/* Up to kSpan descriptors of consecutive messages, handed out when full and
 * when the walk ends. */
class delivery::chunk {
public:
    explicit chunk(delivery &d) : d_(d) {}
    ~chunk() { flush(); }
    chunk(const chunk &)            = delete;
    chunk &operator=(const chunk &) = delete;

    void add(int sender, int64_t index, int64_t seq, std::span<const std::byte> data)
    {
        msgs_[n_] = {sender, index, seq, data};
        if (++n_ == kSpan) {
            flush();
        }
    }
    void flush()
    {
        if (n_ != 0) {
            d_.hand_out(msgs_, n_);
            n_ = 0;
        }
    }

private:
    delivery &d_;
    message  msgs_[kSpan];
    unsigned n_ = 0;
};

delivery::delivery(group_context &ctx, smc::receiver &received, large_messages &large)
    : ctx_(ctx), received_(received), large_(large)
{
    cursors_.reserve(ctx_.map.creation_sender_count());
}

void delivery::hand_out(const message *msgs, unsigned count)
{
    ctx_.stats.add(&group_stats::delivered, count);
    const auto errors = [this] { return ctx_.count(&group_stats::callback_errors); };
    if (ctx_.params.on_deliver_span) {
        call_contained("group: delivery callback", "delivery goes on",
                       [&] { ctx_.params.on_deliver_span({msgs, count}); }, errors);
    } else if (ctx_.params.on_deliver) {
        for (unsigned i = 0; i < count; ++i) {
            call_contained("group: delivery callback", "delivery goes on",
                           [&] { ctx_.params.on_deliver(msgs[i]); }, errors);
        }
    }
}

/* A jam runs where a message would be handed out: in sequence order. */
bool delivery::run_jam(int sender, int64_t index, int64_t seq, std::span<const std::byte> frame)
{
    const replicated_jams::delivered d{ctx_.map.current().senders[sender], index, seq,
                                       ctx_.epoch()};
    const auto outcome = ctx_.jams.run(d, frame, ctx_.stats);
    if (outcome == replicated_jams::outcome::pending) {
        return false;
    }
    ctx_.stats.add(&group_stats::delivered, 1);
    if (outcome == replicated_jams::outcome::diverged) {
        ctx_.state.enter(member_state::left);
    }
    return true;
}

void delivery::deliver_one(int sender, int64_t index, int64_t seq)
{
    if (received_.is_null(sender, index)) {
        return;
    }
    /* size and flags as the receiver checked them, not the slot again */
    const auto &t = received_.taken(sender, index);
    std::span<const std::byte> data{
            reinterpret_cast<const std::byte*>(ctx_.header(sender, index) + 1), t.size};
    int64_t transfer = -1;
    if ((t.flags & smc::SLOT_FLAG_RDMC) && large_.enabled()) {
        data = large_.data(sender, index, transfer);
        ctx_.count(&group_stats::rdmc_delivered);
    }
    /* the large message's buffer goes back once the callback is done with
     * it, whatever the callback did */
    struct release_after {
        large_messages &large;
        int            sender;
        int64_t        transfer;
        ~release_after()
        {
            if (transfer >= 0) {
                large.release(sender, transfer);
            }
        }
    } releaser{large_, sender, transfer};
    if (t.flags & smc::SLOT_FLAG_JAM) {
        /* a large jam: its buffer is held for one run; a module still
         * compiling is waited for here (rare: a confined jam over RDMC) */
        while (!run_jam(sender, index, seq, data)) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        return;
    }
    const message m{ctx_.map.current().senders[sender], index, seq, data};
    hand_out(&m, 1);
}

/*
 * The walk keeps, per sender, where its next slot is: sequences go round
 * the senders, so each step moves one sender's slot by one, and nothing is
 * divided per message.
 */
template<class Keep>
int64_t delivery::deliver_range(int64_t first, int64_t last, Keep &&keep)
{
    const int S      = ctx_.map.sender_count();
    const unsigned w = ctx_.settings.window;
    const auto &rank = ctx_.map.current().senders;
    if (first > last) {
        return first;
    }
    cursors_.resize(S);
    int s       = order::sender_of(first, S);
    int64_t idx = order::index_of(first, S);
    for (int t = 0; t < S; ++t) {
        const int64_t k = idx + (t < s ? 1 : 0);   /* senders before s are one lap ahead */
        cursors_[t]     = {ctx_.slot(t, 0), received_.taken_column(t),
                           static_cast<unsigned>(k % w)};
    }
    const size_t stride = ctx_.settings.stride;
    chunk out(*this);
    for (int64_t seq = first; seq <= last; ++seq) {
        cursor &c     = cursors_[s];
        const auto &t = c.taken[c.slot];
        if (!(t.flags & smc::SLOT_FLAG_NULL) && keep(s, idx)) {
            const bool large = (t.flags & smc::SLOT_FLAG_RDMC) && large_.enabled();
            if (large || (t.flags & smc::SLOT_FLAG_JAM)) {
                out.flush();
                if (large) {
                    deliver_one(s, idx, seq);
                } else if (!run_jam(s, idx, seq, {c.base + c.slot * stride +
                                                  sizeof(smc::slot_header), t.size})) {
                    return seq;   /* it waits for its compile; nothing passes it */
                }
                if (ctx_.state.is(member_state::left)) {
                    return seq + 1;   /* nothing after it */
                }
            } else {
                out.add(rank[s], idx, seq,
                        {c.base + c.slot * stride + sizeof(smc::slot_header), t.size});
            }
        }
        if (++c.slot == w) {
            c.slot = 0;
        }
        if (++s == S) {
            s = 0;
            ++idx;
        }
    }
    return last + 1;
}

unsigned delivery::deliver_stable()
{
    const int64_t stable    = ctx_.min_over_members(ctx_.cols.published) - 1;
    const int64_t delivered = ctx_.mine(ctx_.cols.delivered) - 1;
    if (delivered >= stable) {
        return 0;
    }
    /* invariant: we deliver only what we have ourselves received */
    if (stable > ctx_.mine(ctx_.cols.published) - 1) {
        ucs_error("group: invariant broken: stable %ld beyond published %ld",
                  static_cast<long>(stable), static_cast<long>(ctx_.mine(ctx_.cols.published)));
        std::abort();
    }
    const int64_t next = (ctx_.params.mode == delivery_mode::ordered) ?
            deliver_range(delivered + 1, stable, [](int, int64_t) { return true; }) :
            stable + 1;
    const auto count = static_cast<unsigned>(next - (delivered + 1));
    if (ctx_.state.is(member_state::left)) {
        return count;   /* out of the group: the others go on without us */
    }
    if (count != 0) {
        ctx_.set(ctx_.cols.delivered, next);
        received_.note_delivered();
    }
    return count;
}

void delivery::deliver_up_to_trim()
{
    const int S       = ctx_.map.sender_count();
    auto kept         = [&](int s) { return ctx_.mine(ctx_.cols.trim, ctx_.map.sender_column(s)); };
    int64_t delivered = ctx_.get(ctx_.me(), ctx_.cols.delivered) - 1;
    int64_t last      = -1;
    for (int s = 0; s < S; ++s) {
        if (kept(s) > 0) {
            last = std::max(last, order::sequence_of(kept(s) - 1, s, S));
        }
    }
    uint64_t trimmed = 0;
    for (int s = 0; s < S; ++s) {
        trimmed += static_cast<uint64_t>(received_.received(s) - kept(s));
    }
    if (ctx_.params.mode == delivery_mode::ordered) {
        /* a view change delivers up to the trim before it goes on: a jam
         * whose module still compiles is waited for here */
        for (int64_t next = delivered + 1;
             (next = deliver_range(next, last,
                                   [&](int s, int64_t idx) { return idx < kept(s); })) <= last;) {
            if (ctx_.state.is(member_state::left)) {
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        if (ctx_.state.is(member_state::left)) {
            return;
        }
    }
    ctx_.count(&group_stats::trimmed, trimmed);
    ucs_diag("group: epoch %ld: delivered up to the trim, %lu received messages beyond it "
             "discarded", static_cast<long>(ctx_.epoch()), static_cast<unsigned long>(trimmed));
}

} // namespace tc
