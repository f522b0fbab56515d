/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The RDMC engine (protocol in engine.hpp).
 *
 * Threads: confined to the thread that drives the node's progress engine.
 *
 * Invariants (asserted where cheap):
 *  - per root, a member has at most one active transfer, and handles that
 *    root's transfers in index order;
 *  - arrived[r][p] at us only grows, and never passes what the schedule says
 *    p sends us in our accepted transfers of r: a word that says otherwise
 *    is p's fault (blamed, and p's words are not read again), never ours;
 *  - we write only our own part of the control words, and read a faulty
 *    member's part no more;
 *  - a pool buffer is reused only when its transfer is done here (all blocks
 *    in, all our puts from it completed) and the application released it;
 *  - at most one data put in flight per peer, and at most
 *    max_sends_in_flight in all.
 */
#include "rdmc/engine.hpp"
#include "common/contained_call.hpp"

#include "rdmc/transfer_state.hpp"
#include "sst/region.hpp"

#include <ucs/debug/log_def.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <optional>
#include <string_view>
#include <utility>

namespace tc::rdmc {

using sst::load_word;
using sst::put_purpose;
using sst::store_word;

namespace {

constexpr uint64_t kOfferSeqMask  = (uint64_t{1} << 24) - 1;
constexpr int      kOfferSizeBits = 40;
constexpr uint64_t kOfferSizeMask = (uint64_t{1} << kOfferSizeBits) - 1;
constexpr uint64_t kSlotRoot      = 0xffff;  /* ready word of the root itself */
constexpr double   kCloseTimeoutS = 120.0;

[[noreturn]] void invariant_broken(const char *what)
{
    ucs_error("rdmc: invariant broken: %s", what);
    std::abort();
}

} // namespace

class engine_impl {
public:
    engine_impl(ucp_node &node, const engine_params &params, size_t block, int me)
        : node_(node), p_(params), block_(block), n_(static_cast<int>(params.members.size())),
          me_(me), layout_{n_}, pusher_(node)
    {
        roots_.resize(n_);
        for (auto &r : roots_) {
            r.base.assign(n_, 0);
            r.sent_to.assign(n_, 0);
        }
        slots_.resize(p_.buffers);
        inflight_.assign(n_, {});
        offers_seen_.assign(n_, 0);
        offer_looked_.assign(n_, 0);
        faulty_.assign(n_, 0);
        bad_looks_.assign(n_, {});
    }

    ~engine_impl()
    {
        if (poller_id_ >= 0) {
            tc_progress_poller_remove(node_.engine(), poller_id_);
        }
        for (auto &f : inflight_) {
            if (f.request != nullptr) {
                ucp_request_cancel(node_.worker(), f.request);
                ucp_request_free(f.request);
            }
        }
    }

    /* Collective: register and exchange the control region and the pool. */
    ucs_status_t init()
    {
        ucs_status_t status = create_regions(node_, p_, layout_.part_bytes(),
                                             p_.max_message * p_.buffers, control_, pool_);
        if (status != UCS_OK) {
            return status;
        }
        status = tc_progress_poller_add(node_.engine(), &engine_impl::poll, this, &poller_id_);
        if (status != UCS_OK) {
            return status;
        }
        ucs_debug("rdmc: %d members, me %d, %s, block %zu, %u buffers of %zu bytes", n_, me_,
                  schedule_name(p_.kind), block_, p_.buffers, p_.max_message);
        return UCS_OK;
    }

    /* The engine's regions, created collectively in this order by members
     * and non-members alike (a non-member shares nothing and gets none):
     * the control words, one part per writer, and the pool. */
    static ucs_status_t create_regions(ucp_node &node, const engine_params &p,
                                       size_t control_part_bytes, size_t pool_bytes,
                                       std::unique_ptr<sst::mirrored_region> &control,
                                       std::unique_ptr<sst::mirrored_region> &pool)
    {
        std::vector<int> writers(p.members.size());
        for (size_t m = 0; m < writers.size(); ++m) {
            writers[m] = static_cast<int>(m);
        }
        /* at least a cache line each: UCX maps no empty region */
        ucs_status_t status = sst::mirrored_region::create(
                node, p.members, std::max<size_t>(control_part_bytes, 64), writers, control);
        if (status == UCS_OK) {
            status = sst::mirrored_region::create(node, p.members,
                                                  std::max<size_t>(pool_bytes, 64), pool);
        }
        return status;
    }

    static ucs_status_t take_part_as_outsider(ucp_node &node, const engine_params &p)
    {
        std::unique_ptr<sst::mirrored_region> none;
        return create_regions(node, p, 0, 0, none, none);
    }

    /* --- API ------------------------------------------------------------ */

    ucs_status_t send(std::span<const std::byte> data, int64_t *index_p)
    {
        if (closed_) {
            ucs_error("rdmc: send after close");
            return UCS_ERR_NOT_CONNECTED;
        }
        if (data.size() > p_.max_message) {
            ucs_error("rdmc: message of %zu bytes exceeds the maximum of %zu", data.size(),
                      p_.max_message);
            return UCS_ERR_EXCEEDS_LIMIT;
        }
        if (data.size() > kOfferSizeMask) {
            return UCS_ERR_EXCEEDS_LIMIT;
        }
        pending_send ps{data, -1, next_send_index_++};
        /* from a pool buffer we handed out? then it is zero-copy with the memh */
        const std::byte *base = pool_->base();
        if (data.data() >= base && data.data() < base + pool_->size()) {
            ps.slot = static_cast<int>((data.data() - base) / p_.max_message);
            slot &s = slots_[ps.slot];
            if (s.state != slot_state::handed_out) {
                ucs_error("rdmc: send from pool buffer %d, which was not handed out", ps.slot);
                --next_send_index_;
                return UCS_ERR_INVALID_PARAM;
            }
            s.state = slot_state::busy;
            s.root  = me_;
            s.index = ps.index;
            s.held  = true;
        }
        if (index_p != nullptr) {
            *index_p = ps.index;
        }
        send_queue_.push_back(ps);
        return UCS_INPROGRESS;
    }

    ucs_status_t get_send_buffer(size_t size, std::span<std::byte> &buffer)
    {
        if (size > p_.max_message) {
            ucs_error("rdmc: send buffer of %zu bytes exceeds the maximum of %zu", size,
                      p_.max_message);
            return UCS_ERR_EXCEEDS_LIMIT;
        }
        int s = free_slot();
        if (s < 0) {
            return UCS_ERR_NO_RESOURCE;
        }
        slots_[s].state = slot_state::handed_out;
        buffer          = {slot_base(s), size};
        return UCS_OK;
    }

    ucs_status_t accept(int root)
    {
        if (!p_.manual_accept) {
            ucs_error("rdmc: accept() needs manual_accept");
            return UCS_ERR_INVALID_PARAM;
        }
        if (root < 0 || root >= n_ || root == me_) {
            ucs_error("rdmc: accept of root %d: not another member", root);
            return UCS_ERR_INVALID_PARAM;
        }
        accept_queue_.push_back(root);
        return UCS_OK;
    }

    ucs_status_t release(int root, int64_t index)
    {
        for (size_t i = 0; i < slots_.size(); ++i) {
            slot &s = slots_[i];
            if (s.state != slot_state::free && s.held && s.root == root && s.index == index) {
                s.held = false;
                maybe_free(static_cast<int>(i));
                return UCS_OK;
            }
        }
        ucs_error("rdmc: release of (root %d, index %ld): no buffer holds it", root,
                  static_cast<long>(index));
        return UCS_ERR_NO_ELEM;
    }

    bool idle() const
    {
        if (!send_queue_.empty() || !accept_queue_.empty()) {
            return false;
        }
        for (const auto &r : roots_) {
            if (r.current || !r.offers.empty()) {
                return false;
            }
        }
        return true;
    }

    ucs_status_t wait_idle(double timeout_s)
    {
        auto done = [](void *arg) -> int {
            auto *e = static_cast<engine_impl*>(arg);
            return e->failed_ || e->idle();
        };
        ucs_status_t status = tc_progress_until(node_.engine(), done, this, timeout_s);
        if (failed_) {
            return UCS_ERR_IO_ERROR;
        }
        if (status != UCS_OK) {
            ucs_error("rdmc: member %d not idle after %.0f s (%zu sends queued)", me_, timeout_s,
                      send_queue_.size());
        }
        return status;
    }

    ucs_status_t close()
    {
        if (closed_) {
            return UCS_OK;
        }
        closed_             = true;
        ucs_status_t status = wait_idle(kCloseTimeoutS);
        ucs_status_t flushed = pusher_.flush();
        auto puts_done = [](void *arg) -> int {
            auto *e = static_cast<engine_impl*>(arg);
            e->reap_data_puts();
            return e->data_in_flight_ == 0;
        };
        if (tc_progress_until(node_.engine(), puts_done, this, kCloseTimeoutS) != UCS_OK) {
            flushed = UCS_ERR_TIMED_OUT;
        }
        /* our puts are complete at the peers (not only locally: a late
         * emulated put must not land in memory a peer maps next), and every
         * member has flushed before anyone unmaps */
        ucp_request_param_t param{};
        ucs_status_t remote = request_wait(node_.engine(),
                                           ucp_worker_flush_nbx(node_.worker(), &param),
                                           kCloseTimeoutS);
        if (flushed == UCS_OK) {
            flushed = remote;
        }
        ucs_status_t barrier = node_.barrier();
        tc_progress_poller_remove(node_.engine(), poller_id_);
        poller_id_ = -1;
        return (status != UCS_OK) ? status : (flushed != UCS_OK) ? flushed : barrier;
    }

    engine_stats stats() const
    {
        engine_stats s  = stats_;
        s.control_puts = pusher_.counts().total();
        return s;
    }

    const sst::put_counts &control_put_counts() const { return pusher_.counts(); }

    void dump(FILE *out) const
    {
        std::fprintf(out, "rdmc member %d: %zu sends queued, accept queue %zu, %u puts in flight\n",
                     me_, send_queue_.size(), accept_queue_.size(), data_in_flight_);
        for (int r = 0; r < n_; ++r) {
            const root_state &rs = roots_[r];
            std::fprintf(out, "  root %d: accepted %ld, offers seen %ld pending %zu, offer word "
                         "%#lx", r, static_cast<long>(rs.accepted),
                         static_cast<long>(offers_seen_[r]), rs.offers.size(),
                         static_cast<unsigned long>(word(layout_.offer(r))));
            if (rs.current) {
                const transfer &t = *rs.current;
                std::fprintf(out, "; transfer %ld: %ld/%ld blocks in, sends %zu/%zu, %u puts",
                             static_cast<long>(t.index), static_cast<long>(t.have_count),
                             static_cast<long>(t.expect), t.next_send, t.sends.size(),
                             t.puts_in_flight);
                if (t.next_send < t.sends.size()) {
                    const auto &op = t.sends[t.next_send];
                    std::fprintf(out, " (next: block %ld to %d, have %d, ready %#lx)",
                                 static_cast<long>(op.block), op.peer,
                                 t.have[static_cast<size_t>(op.block)],
                                 static_cast<unsigned long>(word(layout_.ready(r, op.peer))));
                }
            }
            std::fprintf(out, "\n");
        }
        for (size_t i = 0; i < slots_.size(); ++i) {
            std::fprintf(out, "  buffer %zu: state %d held %d done %d (root %d, index %ld)\n", i,
                         static_cast<int>(slots_[i].state), slots_[i].held, slots_[i].done,
                         slots_[i].root, static_cast<long>(slots_[i].index));
        }
    }
    size_t block_size() const { return block_; }
    size_t max_message() const { return p_.max_message; }
    int my_index() const { return me_; }
    int member_count() const { return n_; }
    schedule_kind kind() const { return p_.kind; }

private:
    using word_at = control_layout::word_at;

    /* a peer's word: one load (the caller checks it before use) */
    int64_t word(word_at w) const { return load_word(control_->part(w.part) + w.offset); }
    std::byte *own_word(word_at w) const
    {
        if (w.part != me_) {
            invariant_broken("a write to another member's control words");
        }
        return control_->part(me_) + w.offset;
    }
    std::byte *slot_base(int s) const
    {
        return pool_->base() + static_cast<size_t>(s) * p_.max_message;
    }

    /* our word @a w, at @a member only (arrived counts are per receiver) */
    ucs_status_t put_word(int member, word_at w, int64_t value)
    {
        (void)own_word(w);
        value = kept_lie(w, value);
        if (faulty_[member]) {
            return UCS_OK;   /* nothing more of ours goes to a member we blamed */
        }
        const auto &r = control_->remote(member, me_);
        return pusher_.put_copy(p_.members[member], &value, sizeof(value), r.address + w.offset,
                                r, put_purpose::counter);
    }

    ucs_status_t put_word_to_all(word_at w, int64_t value)
    {
        store_word(own_word(w), kept_lie(w, value));
        return control_->push_all(pusher_, me_, w.offset, sizeof(value), put_purpose::counter);
    }

    /* the hostile-member tests' word, where they keep one (fault_injection) */
    int64_t kept_lie(word_at w, int64_t value) const
    {
        return (lie_ && lie_->first.offset == w.offset) ? lie_->second : value;
    }

public:
    ucs_status_t keep_own_word(std::string_view which, int root, int64_t value)
    {
        if (root < 0 || root >= n_) {
            return UCS_ERR_INVALID_PARAM;
        }
        word_at w;
        if (which == "offer") {
            w = layout_.offer(me_);
        } else if (which == "ready") {
            w = layout_.ready(root, me_);
        } else if (which == "arrived") {
            w = layout_.arrived(root, me_);
        } else {
            return UCS_ERR_INVALID_PARAM;
        }
        lie_.emplace(w, value);
        return put_word_to_all(w, value);
    }

private:
    /* --- peers' words --- */

    enum class word_kind : uint8_t { offer, ready, arrived, count };

    /* @a peer's word of @a kind holds what it cannot have written, on this
     * look. Its fault on the second look in a row; true once blamed. */
    bool bad_look(int peer, word_kind kind, const char *what)
    {
        uint8_t &looks = bad_looks_[peer][static_cast<size_t>(kind)];
        if (++looks < 2) {
            return false;
        }
        blame(peer, what);
        return true;
    }
    void good_look(int peer, word_kind kind)
    {
        bad_looks_[peer][static_cast<size_t>(kind)] = 0;
    }

    void blame(int peer, const char *what)
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

    int free_slot() const
    {
        for (size_t i = 0; i < slots_.size(); ++i) {
            if (slots_[i].state == slot_state::free) {
                return static_cast<int>(i);
            }
        }
        return -1;
    }

    void maybe_free(int s)
    {
        if (slots_[s].state == slot_state::busy && slots_[s].done && !slots_[s].held) {
            slots_[s] = slot{};
        }
    }

    /* --- starting transfers --- */

    /* Our part of a transfer, from the schedule. */
    std::unique_ptr<transfer> plan(int root, int64_t index, size_t size)
    {
        auto t    = std::make_unique<transfer>();
        t->root   = root;
        t->index  = index;
        t->size   = size;
        t->blocks = std::max<int64_t>(1, static_cast<int64_t>((size + block_ - 1) / block_));
        auto s    = schedule::create(p_.kind, n_, root, t->blocks);
        if (!s) {
            invariant_broken("schedule for a valid transfer");
        }
        t->have.assign(static_cast<size_t>(t->blocks), root == me_ ? 1 : 0);
        std::vector<int> source_of(n_, -1);
        for (int64_t step = 0; step < s->steps(); ++step) {
            const auto a = s->at(me_, step);
            if (a.send.valid()) {
                t->sends.push_back(a.send);
            }
            if (a.recv.valid()) {
                int &i = source_of[a.recv.peer];
                if (i < 0) {
                    i = static_cast<int>(t->sources.size());
                    t->sources.push_back({a.recv.peer, {}, 0});
                }
                t->sources[i].blocks.push_back(a.recv.block);
                ++t->expect;
            }
        }
        return t;
    }

    ucs_status_t start_send()
    {
        root_state &rs = roots_[me_];
        if (rs.current || send_queue_.empty()) {
            return UCS_OK;
        }
        const pending_send ps = send_queue_.front();  /* a copy: popped below */
        /* every member accepted our previous transfer, so it has read its offer */
        for (int m = 0; m < n_; ++m) {
            if (m != me_ && !faulty_[m] && (word(layout_.ready(me_, m)) >> 16) < ps.index) {
                return UCS_OK;
            }
        }
        auto t  = plan(me_, ps.index, ps.data.size());
        t->slot = ps.slot;
        t->src  = ps.data.data();
        t->dst  = nullptr;
        t->complete = true;
        send_queue_.pop_front();
        rs.current = std::move(t);
        const uint64_t offer = (((static_cast<uint64_t>(ps.index) + 1) & kOfferSeqMask)
                                << kOfferSizeBits) | ps.data.size();
        store_word(own_word(layout_.ready(me_, me_)),
                   static_cast<int64_t>(((ps.index + 1) << 16) | kSlotRoot));
        return put_word_to_all(layout_.offer(me_), static_cast<int64_t>(offer));
    }

    /* New offers: a root offers i+1 only after we accepted i, so at most one. */
    unsigned read_offers()
    {
        unsigned events = 0;
        for (int r = 0; r < n_; ++r) {
            if (r == me_ || faulty_[r]) {
                continue;
            }
            const auto w        = static_cast<uint64_t>(word(layout_.offer(r)));
            const uint64_t next = (static_cast<uint64_t>(offers_seen_[r]) + 1) & kOfferSeqMask;
            if ((w >> kOfferSizeBits) != next) {
                offer_looked_[r] = 0;
                continue;
            }
            /* the word stays until we accept it: take it only when two
             * looks agree, so that a put still landing is never taken */
            if (offer_looked_[r] != w) {
                offer_looked_[r] = w;
                continue;
            }
            const size_t size = static_cast<size_t>(w & kOfferSizeMask);
            if (size > p_.max_message) {
                bad_look(r, word_kind::offer, "an RDMC offer larger than the group's buffers");
                continue;
            }
            good_look(r, word_kind::offer);
            offer_looked_[r]    = 0;
            const int64_t index = offers_seen_[r]++;
            roots_[r].offers.emplace_back(index, size);
            if (!p_.manual_accept) {
                accept_queue_.push_back(r);
            }
            if (p_.on_offer) {
                p_.on_offer(r, index, size);
            }
            ++events;
        }
        return events;
    }

    /* Accept in queue order: each needs the root's offer, the root's previous
     * transfer finished here, and a free buffer. */
    ucs_status_t accept_next(unsigned &events)
    {
        while (!accept_queue_.empty()) {
            const int r    = accept_queue_.front();
            root_state &rs = roots_[r];
            if (rs.current || rs.offers.empty()) {
                return UCS_OK;
            }
            const auto [index, size] = rs.offers.front();   /* checked when read */
            const int s = free_slot();
            if (s < 0) {
                return UCS_OK;
            }
            accept_queue_.pop_front();
            rs.offers.pop_front();
            if (index != rs.accepted) {
                invariant_broken("transfers of one root accepted out of order");
            }
            ++rs.accepted;
            slots_[s] = {slot_state::busy, true, false, r, index};
            auto t    = plan(r, index, size);
            t->slot   = s;
            t->src    = slot_base(s);
            t->dst    = slot_base(s);
            rs.current = std::move(t);
            ++events;
            ucs_status_t status = put_word_to_all(layout_.ready(r, me_),
                                                  static_cast<int64_t>(((index + 1) << 16) | s));
            if (status != UCS_OK) {
                return status;
            }
        }
        return UCS_OK;
    }

    /* --- moving blocks --- */

    unsigned reap_data_puts()
    {
        unsigned done = 0;
        for (auto &f : inflight_) {
            if (f.request == nullptr) {
                continue;
            }
            ucs_status_t status = ucp_request_check_status(f.request);
            if (status == UCS_INPROGRESS) {
                continue;
            }
            if (status != UCS_OK) {
                ucs_error("rdmc: block put completed with error: %s", ucs_status_string(status));
                failed_ = true;
            }
            ucp_request_free(f.request);
            --f.owner->puts_in_flight;
            --data_in_flight_;
            f = {};
            ++done;
        }
        return done;
    }

    ucs_status_t put_block(transfer &t, const block_transfer &op, uint64_t ready)
    {
        const int     peer   = op.peer;
        const size_t  offset = static_cast<size_t>(op.block) * block_;
        const size_t  len    = std::min(block_, t.size - std::min(t.size, offset));
        const uint64_t buffer = ready & 0xffff;
        const auto   &remote = pool_->remote(peer);
        if (len > 0) {
            ucp_request_param_t param{};
            const std::byte *pool_base = pool_->base();
            if (t.src >= pool_base && t.src < pool_base + pool_->size()) {
                param.op_attr_mask = UCP_OP_ATTR_FIELD_MEMH;
                param.memh         = pool_->memh();
            }
            ucs_status_ptr_t req = node_.write(p_.members[peer], t.src + offset, len,
                                               remote.address + buffer * p_.max_message + offset,
                                               remote, param, inflight_[peer].header);
            if (UCS_PTR_IS_ERR(req)) {
                ucs_error("rdmc: put of block %ld (%zu bytes) to member %d failed: %s",
                          static_cast<long>(op.block), len, peer,
                          ucs_status_string(UCS_PTR_STATUS(req)));
                return UCS_PTR_STATUS(req);
            }
            if (req != nullptr) {
                inflight_[peer].request = req;   /* the header stays until it completes */
                inflight_[peer].owner   = &t;
                ++t.puts_in_flight;
                ++data_in_flight_;
            }
            stats_.bytes_sent += len;
        }
        ++stats_.blocks_sent;
        /* data, fence, signal: the counter is visible only after the block */
        ucs_status_t status = pusher_.fence();
        if (status != UCS_OK) {
            return status;
        }
        const int64_t count = ++roots_[t.root].sent_to[peer];
        return put_word(peer, layout_.arrived(t.root, me_), count);
    }

    ucs_status_t progress_sends(transfer &t, unsigned &events)
    {
        while (t.next_send < t.sends.size()) {
            const auto &op = t.sends[t.next_send];
            if (!t.have[static_cast<size_t>(op.block)]) {
                return UCS_OK;
            }
            if (faulty_[op.peer]) {
                ++t.next_send;   /* we owe a member we blamed nothing */
                continue;
            }
            if (inflight_[op.peer].request != nullptr) {
                ++stats_.peer_busy_waits;
                return UCS_OK;
            }
            if (data_in_flight_ >= std::max(1u, p_.max_sends_in_flight)) {
                return UCS_OK;
            }
            const auto ready = static_cast<uint64_t>(word(layout_.ready(t.root, op.peer)));
            const auto ready_for = static_cast<int64_t>(ready >> 16);
            /* a peer we owe blocks of transfer i has not finished it, so it
             * cannot be ready for a later one; and its buffer is one it has */
            if (ready_for > t.index + 1 || (ready_for == t.index + 1 &&
                                            (ready & 0xffff) >= p_.buffers)) {
                bad_look(op.peer, word_kind::ready,
                         "an RDMC ready word naming a transfer or buffer it cannot have");
                return UCS_OK;
            }
            good_look(op.peer, word_kind::ready);
            if (ready_for != t.index + 1) {
                ++stats_.not_ready_waits;
                return UCS_OK;
            }
            ucs_status_t status = put_block(t, op, ready);
            if (status != UCS_OK) {
                return status;
            }
            ++t.next_send;
            ++events;
        }
        return UCS_OK;
    }

    ucs_status_t progress_receives(transfer &t, root_state &rs, unsigned &events)
    {
        for (auto &src : t.sources) {
            if (faulty_[src.peer]) {
                continue;   /* its blocks wait for the view change */
            }
            const int64_t arrived = word(layout_.arrived(t.root, src.peer));
            /* base >= 0, so past the first test the differences do not overflow */
            if (arrived < rs.base[src.peer] ||
                arrived - rs.base[src.peer] > static_cast<int64_t>(src.blocks.size()) ||
                arrived - rs.base[src.peer] < static_cast<int64_t>(src.seen)) {
                bad_look(src.peer, word_kind::arrived,
                         "an RDMC arrived count the schedule does not allow");
                continue;
            }
            good_look(src.peer, word_kind::arrived);
            const int64_t count = arrived - rs.base[src.peer];
            while (static_cast<int64_t>(src.seen) < count) {
                const int64_t b = src.blocks[src.seen++];
                if (t.have[static_cast<size_t>(b)]) {
                    invariant_broken("a block arrived twice");
                }
                t.have[static_cast<size_t>(b)] = 1;
                ++t.have_count;
                ++stats_.blocks_received;
                ++events;
            }
        }
        return UCS_OK;
    }

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

    ucs_status_t progress_transfer(int r, unsigned &events)
    {
        root_state &rs = roots_[r];
        transfer   &t  = *rs.current;
        ucs_status_t status = progress_receives(t, rs, events);
        if (status == UCS_OK) {
            status = progress_sends(t, events);
        }
        if (status != UCS_OK) {
            return status;
        }
        if (!t.complete && t.have_count == t.expect) {
            t.complete = true;
            ++stats_.transfers_received;
            stats_.bytes_received += t.size;
            const transfer_info ti = info(t);
            if (p_.auto_release) {
                slots_[t.slot].held = false;
            }
            run_callback(p_.on_receive, ti);
            ++events;
        }
        if (!t.complete || t.next_send < t.sends.size() || t.puts_in_flight != 0) {
            return UCS_OK;
        }
        /* done here: the next transfer of this root may start */
        std::unique_ptr<transfer> done = std::move(rs.current);
        for (const auto &src : done->sources) {
            rs.base[src.peer] += static_cast<int64_t>(src.blocks.size());
        }
        if (done->slot >= 0) {
            slots_[done->slot].done = true;
            if (r == me_ && p_.auto_release) {
                slots_[done->slot].held = false;
            }
        }
        if (r == me_) {
            ++stats_.transfers_sent;
            run_callback(p_.on_sent, info(*done));
        }
        if (done->slot >= 0) {
            maybe_free(done->slot);
        }
        ++events;
        return UCS_OK;
    }

    unsigned poll_once()
    {
        unsigned events = reap_data_puts() + pusher_.reap();
        events += read_offers();
        ucs_status_t status = accept_next(events);
        if (status == UCS_OK) {
            status = start_send();
        }
        for (int r = 0; r < n_ && status == UCS_OK; ++r) {
            if (roots_[r].current) {
                status = progress_transfer(r, events);
            }
        }
        if (status == UCS_OK && !roots_[me_].current && !send_queue_.empty()) {
            status = start_send();   /* the previous one may have just finished */
        }
        if (status != UCS_OK && !failed_) {
            failed_ = true;
            ucs_error("rdmc: protocol error %s; member %d stops", ucs_status_string(status), me_);
        }
        return events;
    }

    static unsigned poll(void *arg)
    {
        auto *e = static_cast<engine_impl*>(arg);
        return e->failed_ ? 0 : e->poll_once();
    }

    ucp_node                            &node_;
    engine_params                       p_;
    size_t                              block_;
    int                                 n_;
    int                                 me_;
    control_layout                      layout_;
    sst::pusher                         pusher_;
    std::unique_ptr<sst::mirrored_region> control_, pool_;
    std::vector<root_state>             roots_;
    std::vector<slot>                   slots_;
    std::vector<data_put>               inflight_;  /* by peer */
    unsigned                            data_in_flight_ = 0;
    std::vector<int64_t>                offers_seen_;
    std::optional<std::pair<word_at, int64_t>> lie_;  /* fault_injection only */
    std::vector<uint64_t>               offer_looked_;  /* by root: the word of our last look */
    std::vector<uint8_t>                faulty_;        /* by member: blamed, not read */
    std::vector<std::array<uint8_t, static_cast<size_t>(word_kind::count)>> bad_looks_;
    std::deque<int>                     accept_queue_;
    std::deque<pending_send>            send_queue_;
    int64_t                             next_send_index_ = 0;
    int                                 poller_id_       = -1;
    bool                                closed_          = false;
    bool                                failed_          = false;
    uint64_t                            callback_errors_ = 0;
    engine_stats                        stats_;
};

/* --- engine --------------------------------------------------------------- */

engine::engine(std::unique_ptr<engine_impl> impl) : impl_(std::move(impl)) {}

engine::~engine() = default;

ucs_status_t engine::create(ucp_node &node, const engine_params &params,
                            std::unique_ptr<engine> &out)
{
    out.reset();
    auto me = std::find(params.members.begin(), params.members.end(), node.rank());
    const bool member = (me != params.members.end());

    size_t block        = 0;
    ucs_status_t status = agree_on_params(node, params, member, block);
    if (status != UCS_OK) {
        return status;   /* everyone saw the same blobs: everyone stops here */
    }
    if (!member) {
        return engine_impl::take_part_as_outsider(node, params);
    }
    auto impl = std::make_unique<engine_impl>(node, params, block,
                                              static_cast<int>(me - params.members.begin()));
    status = impl->init();
    if (status != UCS_OK) {
        return status;
    }
    out = std::make_unique<engine>(std::move(impl));
    return UCS_OK;
}

ucs_status_t engine::send(std::span<const std::byte> data, int64_t *index_p)
{
    return impl_->send(data, index_p);
}

ucs_status_t engine::get_send_buffer(size_t size, std::span<std::byte> &buffer)
{
    return impl_->get_send_buffer(size, buffer);
}

ucs_status_t engine::accept(int root) { return impl_->accept(root); }
ucs_status_t engine::release(int root, int64_t index) { return impl_->release(root, index); }
bool engine::idle() const { return impl_->idle(); }
ucs_status_t engine::wait_idle(double timeout_s) { return impl_->wait_idle(timeout_s); }
ucs_status_t engine::close() { return impl_->close(); }
engine_stats engine::stats() const { return impl_->stats(); }
sst::put_counts engine::control_put_counts() const { return impl_->control_put_counts(); }
size_t engine::block_size() const { return impl_->block_size(); }
size_t engine::max_message() const { return impl_->max_message(); }
int engine::my_index() const { return impl_->my_index(); }
int engine::member_count() const { return impl_->member_count(); }
schedule_kind engine::kind() const { return impl_->kind(); }
void engine::dump(FILE *out) const { impl_->dump(out); }

ucs_status_t fault_injection::keep_own_control_word(engine &e, std::string_view which, int root,
                                                   int64_t value)
{
    return e.impl_->keep_own_word(which, root, value);
}

} // namespace tc::rdmc
