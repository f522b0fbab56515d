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

#include "rdmc/buffer_pool.hpp"
#include "rdmc/control_words.hpp"
#include "rdmc/data_puts.hpp"
#include "rdmc/engine_regions.hpp"
#include "rdmc/peer_faults.hpp"
#include "rdmc/transfer_intake.hpp"
#include "rdmc/transfer_mover.hpp"
#include "rdmc/transfer_state.hpp"

#include <ucs/debug/log_def.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace tc::rdmc {

namespace {

constexpr double kCloseTimeoutS = 120.0;

} // namespace

[[noreturn]] void invariant_broken(const char *what)
{
    ucs_error("rdmc: invariant broken: %s", what);
    std::abort();
}

class engine_impl {
public:
    engine_impl(ucp_node &node, const engine_params &params, size_t block, int me)
        : node_(node), p_(params), block_(block), n_(static_cast<int>(params.members.size())),
          me_(me), layout_{n_}, faults_(p_, stats_, callback_errors_),
          words_(node, p_, me_, faults_), buffers_(p_), puts_(n_),
          intake_(p_, block_, n_, me_, layout_, faults_, words_, buffers_, roots_),
          mover_(node_, p_, block_, me_, layout_, faults_, words_, buffers_, puts_, roots_, stats_,
                 callback_errors_)
    {
        roots_.resize(n_);
        for (auto &r : roots_) {
            r.base.assign(n_, 0);
            r.sent_to.assign(n_, 0);
        }
    }

    ~engine_impl()
    {
        if (poller_id_ >= 0) {
            tc_progress_poller_remove(node_.engine(), poller_id_);
        }
        puts_.cancel(node_.worker());
    }

    /* Collective: register and exchange the control region and the pool. */
    ucs_status_t init()
    {
        ucs_status_t status = create_regions(node_, p_, layout_.part_bytes(),
                                             p_.max_message * p_.buffers, words_.owned_region(),
                                             buffers_.owned_region());
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

    /* --- API ------------------------------------------------------------ */

    ucs_status_t send(std::span<const std::byte> data, int64_t *index_p)
    {
        if (closed_) {
            ucs_error("rdmc: send after close");
            return UCS_ERR_NOT_CONNECTED;
        }
        return intake_.queue_send(data, index_p);
    }

    ucs_status_t get_send_buffer(size_t size, std::span<std::byte> &buffer)
    {
        if (size > p_.max_message) {
            ucs_error("rdmc: send buffer of %zu bytes exceeds the maximum of %zu", size,
                      p_.max_message);
            return UCS_ERR_EXCEEDS_LIMIT;
        }
        int s = buffers_.free_slot();
        if (s < 0) {
            return UCS_ERR_NO_RESOURCE;
        }
        buffers_[s].state = slot_state::handed_out;
        buffer          = {buffers_.slot_base(s), size};
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
        intake_.queue_accept(root);
        return UCS_OK;
    }

    ucs_status_t release(int root, int64_t index)
    {
        for (size_t i = 0; i < buffers_.size(); ++i) {
            slot &s = buffers_[i];
            if (s.state != slot_state::free && s.held && s.root == root && s.index == index) {
                s.held = false;
                buffers_.maybe_free(static_cast<int>(i));
                return UCS_OK;
            }
        }
        ucs_error("rdmc: release of (root %d, index %ld): no buffer holds it", root,
                  static_cast<long>(index));
        return UCS_ERR_NO_ELEM;
    }

    bool idle() const
    {
        if (!intake_.empty()) {
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
                      intake_.sends_queued());
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
        ucs_status_t flushed = words_.pusher().flush();
        auto puts_done = [](void *arg) -> int {
            auto *e = static_cast<engine_impl*>(arg);
            e->puts_.reap(e->failed_);
            return e->puts_.in_flight == 0;
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
        s.control_puts = words_.pusher().counts().total();
        return s;
    }

    const sst::put_counts &control_put_counts() const { return words_.pusher().counts(); }

    void dump(FILE *out) const
    {
        std::fprintf(out, "rdmc member %d: %zu sends queued, accept queue %zu, %u puts in flight\n",
                     me_, intake_.sends_queued(), intake_.accepts_queued(), puts_.in_flight);
        for (int r = 0; r < n_; ++r) {
            const root_state &rs = roots_[r];
            std::fprintf(out, "  root %d: accepted %ld, offers seen %ld pending %zu, offer word "
                         "%#lx", r, static_cast<long>(rs.accepted),
                         static_cast<long>(intake_.offers_seen(r)), rs.offers.size(),
                         static_cast<unsigned long>(words_.word(layout_.offer(r))));
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
                                 static_cast<unsigned long>(
                                         words_.word(layout_.ready(r, op.peer))));
                }
            }
            std::fprintf(out, "\n");
        }
        for (size_t i = 0; i < buffers_.size(); ++i) {
            std::fprintf(out, "  buffer %zu: state %d held %d done %d (root %d, index %ld)\n", i,
                         static_cast<int>(buffers_[i].state), buffers_[i].held, buffers_[i].done,
                         buffers_[i].root, static_cast<long>(buffers_[i].index));
        }
    }
    size_t block_size() const { return block_; }
    size_t max_message() const { return p_.max_message; }
    int my_index() const { return me_; }
    int member_count() const { return n_; }
    schedule_kind kind() const { return p_.kind; }

    ucs_status_t keep_own_word(std::string_view which, int root, int64_t value)
    {
        if (root < 0 || root >= n_) {
            return UCS_ERR_INVALID_PARAM;
        }
        control_layout::word_at w;
        if (which == "offer") {
            w = layout_.offer(me_);
        } else if (which == "ready") {
            w = layout_.ready(root, me_);
        } else if (which == "arrived") {
            w = layout_.arrived(root, me_);
        } else {
            return UCS_ERR_INVALID_PARAM;
        }
        words_.keep(w, value);
        return words_.put_word_to_all(w, value);
    }

private:
    unsigned poll_once()
    {
        unsigned events = puts_.reap(failed_) + words_.pusher().reap();
        events += intake_.read_offers();
        ucs_status_t status = intake_.accept_next(events);
        if (status == UCS_OK) {
            status = intake_.start_send();
        }
        for (int r = 0; r < n_ && status == UCS_OK; ++r) {
            if (roots_[r].current) {
                status = mover_.progress_transfer(r, events);
            }
        }
        if (status == UCS_OK && !roots_[me_].current && intake_.sends_queued() != 0) {
            status = intake_.start_send();   /* the previous one may have just finished */
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

    ucp_node                &node_;
    engine_params           p_;
    size_t                  block_;
    int                     n_;
    int                     me_;
    control_layout          layout_;
    engine_stats            stats_;
    uint64_t                callback_errors_ = 0;
    peer_faults             faults_;
    control_words           words_;
    buffer_pool             buffers_;
    data_puts               puts_;
    std::vector<root_state> roots_;
    transfer_intake         intake_;
    transfer_mover          mover_;
    int                     poller_id_ = -1;
    bool                    closed_    = false;
    bool                    failed_    = false;
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
        return take_part_as_outsider(node, params);
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
