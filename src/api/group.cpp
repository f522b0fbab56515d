/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * SMC in urgent mode with round-robin total order and stable delivery.
 *
 * Row of the group's SST (int64 words, one row per member, each member
 * writes only its own and pushes byte ranges of it):
 *
 *   [0]        sent       messages this member sent (senders only)
 *   [1..S]     received   messages received from each sender
 *   [S+1]      published  1 + highest sequence received contiguously
 *   [S+2]      delivered  1 + highest sequence delivered
 *
 * (Published and delivered are stored plus one so that a row nobody has
 * written yet, all zeros, reads as "nothing", never as "sequence 0".)
 *   [S+3]      phase      0 open, 1 draining (close started), 2 drained
 *
 * received, published and delivered sit side by side and go out as one put
 * (the receive report), so delivery progress rides on the next report and
 * only an idle member pushes it separately.
 *
 * Per message in urgent mode, for N members and one sender: the sender puts
 * the slot and, after a fence, its counter to each peer (2(N-1)); every
 * member, the sender included, pushes one receive report per received
 * message to each peer (N(N-1)): N^2+N-2 puts.
 *
 * Invariants (asserted): delivered <= published; a slot is rewritten only
 * when every member has delivered the message it held.
 */
#include "api/group.hpp"

#include "order/sequence.hpp"
#include "smc/slot.hpp"
#include "sst/region.hpp"
#include "sst/table.hpp"

#include <ucs/debug/log_def.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <string>

namespace tc {

using sst::put_purpose;

namespace {

/* An idle member pushes its delivered counter alone after this long. */
constexpr double kDeliveryReportIdleS = 20e-6;
constexpr double kSendTimeoutS        = 30.0;

double now_s()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
}

/* What every member must agree on, exchanged at creation. */
struct group_digest {
    uint64_t max_payload;
    uint32_t window;
    uint32_t mode;
    uint32_t member_count;
    uint32_t sender_count;
    /* followed by member ranks, then sender ranks (int32 each) */
};

std::vector<std::byte> make_digest(const group_params &p, const std::vector<int> &senders)
{
    group_digest d{p.max_payload, p.window, static_cast<uint32_t>(p.mode),
                   static_cast<uint32_t>(p.members.size()),
                   static_cast<uint32_t>(senders.size())};
    std::vector<std::byte> out(sizeof(d) + sizeof(int32_t) * (p.members.size() + senders.size()));
    std::memcpy(out.data(), &d, sizeof(d));
    size_t off = sizeof(d);
    for (int r : p.members) {
        int32_t v = r;
        std::memcpy(out.data() + off, &v, sizeof(v));
        off += sizeof(v);
    }
    for (int r : senders) {
        int32_t v = r;
        std::memcpy(out.data() + off, &v, sizeof(v));
        off += sizeof(v);
    }
    return out;
}

const char *digest_difference(const std::vector<std::byte> &a, const std::vector<std::byte> &b)
{
    group_digest da, db;
    std::memcpy(&da, a.data(), sizeof(da));
    std::memcpy(&db, b.data(), sizeof(db));
    if (da.max_payload != db.max_payload) return "max_payload";
    if (da.window != db.window) return "window";
    if (da.mode != db.mode) return "mode";
    if (da.member_count != db.member_count) return "member count";
    if (da.sender_count != db.sender_count) return "sender count";
    if (a != b) return "member or sender list";
    return nullptr;
}

} // namespace

class group_impl {
public:
    group_impl(ucp_node &node, const group_params &params, std::vector<int> senders)
        : node_(node), params_(params), pusher_(node)
    {
        view_.epoch   = 1;
        view_.members = params.members;
        view_.senders = std::move(senders);
        n_            = static_cast<int>(view_.members.size());
        s_            = static_cast<int>(view_.senders.size());
        stride_       = smc::slot_stride(params.max_payload);
        /* received, published and delivered are adjacent: one report put */
        col_sent_      = row_.add<int64_t>();
        col_received_  = row_.add<int64_t>(s_);
        col_published_ = row_.add<int64_t>();
        col_delivered_ = row_.add<int64_t>();
        col_phase_     = row_.add<int64_t>();
        for (int i = 0; i < s_; ++i) {
            sender_member_.push_back(static_cast<int>(
                    std::find(view_.members.begin(), view_.members.end(), view_.senders[i]) -
                    view_.members.begin()));
            if (view_.senders[i] == node.rank()) {
                my_sender_ = i;
            }
        }
        received_.assign(s_, 0);
    }

    ucs_status_t init()
    {
        ucs_status_t status = sst::table::create(node_, view_.members, row_, table_);
        if (status != UCS_OK) {
            return status;
        }
        status = sst::mirrored_region::create(node_, view_.members,
                                              stride_ * params_.window * s_, slots_);
        if (status != UCS_OK) {
            return status;
        }
        me_ = table_->my_index();
        add_protocol_predicates();
        status = tc_progress_poller_add(node_.engine(), &group_impl::poll, this, &poller_id_);
        if (status != UCS_OK) {
            return status;
        }
        if (params_.on_view) {
            params_.on_view(view_);
        }
        ucs_debug("group: %d members, %d senders, window %u, slot %zu bytes, mode %s", n_, s_,
                  params_.window, stride_,
                  params_.mode == delivery_mode::ordered ? "ordered" : "raw");
        return UCS_OK;
    }

    ~group_impl()
    {
        if (poller_id_ >= 0) {
            tc_progress_poller_remove(node_.engine(), poller_id_);
        }
    }

    /* --- sending ------------------------------------------------------- */

    ucs_status_t get_buffer(size_t size, std::span<std::byte> &buffer, bool block)
    {
        if (closed_) {
            ucs_error("group: send after close");
            return UCS_ERR_NOT_CONNECTED;
        }
        if (my_sender_ < 0) {
            ucs_error("group: rank %d is not a sender of this group", node_.rank());
            return UCS_ERR_INVALID_PARAM;
        }
        if (size > params_.max_payload) {
            ucs_error("group: payload of %zu bytes exceeds the maximum of %zu", size,
                      params_.max_payload);
            return UCS_ERR_EXCEEDS_LIMIT;
        }
        if (pending_size_ >= 0) {
            ucs_error("group: get_buffer called twice without commit");
            return UCS_ERR_INVALID_PARAM;
        }
        ucs_status_t status = wait_for_slot(block);
        if (status != UCS_OK) {
            return status;
        }
        buffer        = {slot(my_sender_, sent_) + sizeof(smc::slot_header), size};
        pending_size_ = static_cast<int64_t>(size);
        return UCS_OK;
    }

    ucs_status_t commit()
    {
        if (pending_size_ < 0) {
            ucs_error("group: commit without get_buffer");
            return UCS_ERR_INVALID_PARAM;
        }
        size_t size   = static_cast<size_t>(pending_size_);
        pending_size_ = -1;
        ++stats_.sent;
        return publish(size, 0, put_purpose::data);
    }

    ucs_status_t flush() { return closed_ ? UCS_ERR_NOT_CONNECTED : UCS_OK; }

    ucs_status_t close()
    {
        if (closed_) {
            return UCS_OK;
        }
        closed_ = true;
        ucs_status_t status = set_phase(1);
        if (status == UCS_OK) {
            status = progress_until([](group_impl *g) { return g->drained(); });
        }
        if (status == UCS_OK) {
            status = set_phase(2);
        }
        if (status == UCS_OK) {
            status = progress_until([](group_impl *g) { return g->min_phase() >= 2; });
        }
        ucs_status_t flushed = pusher_.flush();
        tc_progress_poller_remove(node_.engine(), poller_id_);
        poller_id_ = -1;
        return (status != UCS_OK) ? status : flushed;
    }

    group_stats stats() const
    {
        group_stats s = stats_;
        s.puts        = pusher_.counts();
        return s;
    }

    const view &current_view() const { return view_; }
    bool is_sender() const { return my_sender_ >= 0; }

private:
    int64_t get(int member, sst::column<int64_t> c, size_t i = 0) const
    {
        return table_->get(member, c, i);
    }
    void set(sst::column<int64_t> c, int64_t v, size_t i = 0) { table_->set(c, i, v); }
    int64_t min_over_members(sst::column<int64_t> c) const { return table_->min_over_members(c); }

    std::byte *slot(int sender, int64_t index) const
    {
        return slots_->base() + (sender * params_.window + index % params_.window) * stride_;
    }

    int64_t min_phase() const { return min_over_members(col_phase_); }

    ucs_status_t set_phase(int64_t phase)
    {
        ucs_status_t status = pusher_.fence();
        set(col_phase_, phase);
        return (status != UCS_OK) ? status : table_->push(pusher_, col_phase_, put_purpose::other);
    }

    /* Everything any sender sent is delivered at every member. */
    bool drained() const
    {
        if (min_phase() < 1) {
            return false;
        }
        int64_t last = -1;
        for (int s = 0; s < s_; ++s) {
            int64_t sent = get(sender_member_[s], col_sent_);
            if (sent > 0) {
                last = std::max(last, order::sequence_of(sent - 1, s, s_));
            }
        }
        return min_over_members(col_delivered_) - 1 >= last;
    }

    template<class Pred> ucs_status_t progress_until(Pred pred)
    {
        struct ctx {
            group_impl *g;
            Pred       *p;
        } c{this, &pred};
        auto done = [](void *arg) -> int {
            auto *cc = static_cast<ctx*>(arg);
            return (*cc->p)(cc->g);
        };
        ucs_status_t status = tc_progress_until(node_.engine(), done, &c, kSendTimeoutS);
        if (status != UCS_OK) {
            ucs_error("group: peers did not respond within %.0f s", kSendTimeoutS);
        }
        return status;
    }

    bool slot_free() const
    {
        if (sent_ < params_.window) {
            return true;
        }
        int64_t previous = order::sequence_of(sent_ - params_.window, my_sender_, s_);
        return min_over_members(col_delivered_) - 1 >= previous;
    }

    ucs_status_t wait_for_slot(bool block)
    {
        if (slot_free()) {
            return UCS_OK;
        }
        ++stats_.window_stalls;
        if (!block) {
            return UCS_ERR_NO_RESOURCE;
        }
        return progress_until([](group_impl *g) { return g->slot_free(); });
    }

    /* The slot of message sent_ is written: ship it, then count it received. */
    ucs_status_t publish(size_t size, uint32_t flags, put_purpose purpose)
    {
        std::byte *s = slot(my_sender_, sent_);
        smc::slot_header h{static_cast<uint32_t>(size), flags, sent_};
        std::memcpy(s, &h, sizeof(h));

        const size_t slot_offset = s - slots_->base();
        ucs_status_t status = slots_->push_all(pusher_, slot_offset, sizeof(h) + size, purpose,
                                               /*snapshot=*/false);
        if (status == UCS_OK) {
            status = pusher_.fence();
        }
        ++sent_;
        set(col_sent_, sent_);
        if (status == UCS_OK) {
            status = table_->push(pusher_, col_sent_,
                                  (purpose == put_purpose::null_message) ?
                                  put_purpose::null_message : put_purpose::counter);
        }
        if (status == UCS_OK) {
            status = receive(my_sender_, sent_ - 1);
        }
        return status;
    }

    ucs_status_t send_null()
    {
        ++stats_.nulls_sent;
        return publish(0, smc::SLOT_FLAG_NULL, put_purpose::null_message);
    }

    /* --- receiving and delivery ----------------------------------------- */

    ucs_status_t receive(int sender, int64_t index)
    {
        const auto *h = reinterpret_cast<const smc::slot_header*>(slot(sender, index));
        if ((h->index != index) || (h->size > params_.max_payload)) {
            if (!malformed_logged_) {
                malformed_logged_ = true;
                ucs_error("group: malformed slot from rank %d: index %ld (expected %ld), "
                          "size %u (max %zu)", view_.senders[sender], static_cast<long>(h->index),
                          static_cast<long>(index), h->size, params_.max_payload);
            }
            return UCS_ERR_IO_ERROR;
        }
        received_[sender] = index + 1;
        set(col_received_, received_[sender], sender);
        set(col_published_, order::contiguous_received(received_) + 1);

        if (params_.mode == delivery_mode::raw && !(h->flags & smc::SLOT_FLAG_NULL)) {
            deliver_one(sender, index, order::sequence_of(index, sender, s_));
        }
        return push_report(put_purpose::receive_report);
    }

    ucs_status_t push_report(put_purpose purpose)
    {
        delivery_report_due_ = false;
        last_report_s_       = now_s();
        return table_->push(pusher_, col_received_, col_delivered_, purpose);
    }

    void deliver_one(int sender, int64_t index, int64_t seq)
    {
        const auto *h = reinterpret_cast<const smc::slot_header*>(slot(sender, index));
        if (h->flags & smc::SLOT_FLAG_NULL) {
            return;
        }
        ++stats_.delivered;
        if (!params_.on_deliver) {
            return;
        }
        message m{view_.senders[sender], index, seq,
                  {reinterpret_cast<const std::byte*>(h + 1), h->size}};
        try {
            params_.on_deliver(m);
        } catch (const std::exception &e) {
            report_callback_error(e.what());
        } catch (...) {
            report_callback_error("unknown exception");
        }
    }

    void report_callback_error(const char *what)
    {
        if (stats_.callback_errors++ == 0) {
            ucs_warn("group: delivery callback threw (%s); contained, delivery goes on", what);
        }
    }

    unsigned deliver_stable()
    {
        const int64_t stable    = min_over_members(col_published_) - 1;
        int64_t       delivered = get(me_, col_delivered_) - 1;
        unsigned      count     = 0;
        while (delivered < stable) {
            ++delivered;
            int s = order::sender_of(delivered, s_);
            if (params_.mode == delivery_mode::ordered) {
                deliver_one(s, order::index_of(delivered, s_), delivered);
            }
            ++count;
        }
        if (count != 0) {
            /* invariant: we deliver only what we have ourselves received */
            if (delivered > get(me_, col_published_) - 1) {
                ucs_error("group: invariant broken: delivered %ld beyond published %ld",
                          static_cast<long>(delivered), static_cast<long>(get(me_, col_published_)));
                std::abort();
            }
            set(col_delivered_, delivered + 1);
            delivery_report_due_ = true;
        }
        return count;
    }

    /* A quiet sender that holds up the order sends a null. */
    bool blocking_order() const
    {
        if (my_sender_ < 0 || pending_size_ >= 0 || !slot_free()) {
            return false;
        }
        const int64_t my_next = order::sequence_of(sent_, my_sender_, s_);
        for (int s = 0; s < s_; ++s) {
            if (received_[s] > 0 && order::sequence_of(received_[s] - 1, s, s_) > my_next) {
                return true;
            }
        }
        return false;
    }

    /* The protocol as predicate/trigger pairs, evaluated in this order on
     * every pass of the engine: receive, fill our turn, deliver, report. */
    void add_protocol_predicates()
    {
        protocol_.add([this] { return status_ok() && new_messages(); },
                      [this] { return receive_new(); });
        protocol_.add([this] { return status_ok() && blocking_order(); }, [this] {
            fail_on(send_null());
            return 1u;
        });
        protocol_.add([this] { return stable_beyond_delivered(); },
                      [this] { return deliver_stable(); });
        protocol_.add([this] { return status_ok() && delivery_report_due_; }, [this] {
            if ((now_s() - last_report_s_) > kDeliveryReportIdleS) {
                fail_on(push_report(put_purpose::delivery_report));
            }
            return 1u; /* keep the engine from sleeping past the deadline */
        });
    }

    bool status_ok() const { return !failed_; }

    void fail_on(ucs_status_t status)
    {
        if (status != UCS_OK && !failed_) {
            failed_ = true;
            ucs_error("group: protocol error %s; this member stops processing",
                      ucs_status_string(status));
        }
    }

    bool new_messages() const
    {
        for (int s = 0; s < s_; ++s) {
            if (s != my_sender_ && received_[s] < get(sender_member_[s], col_sent_)) {
                return true;
            }
        }
        return false;
    }

    unsigned receive_new()
    {
        unsigned events = 0;
        for (int s = 0; s < s_ && !failed_; ++s) {
            if (s == my_sender_) {
                continue;
            }
            const int64_t sent = get(sender_member_[s], col_sent_);
            while (received_[s] < sent && !failed_) {
                fail_on(receive(s, received_[s]));
                ++events;
            }
        }
        return events;
    }

    bool stable_beyond_delivered() const
    {
        return min_over_members(col_published_) > get(me_, col_delivered_);
    }

    static unsigned poll(void *arg)
    {
        auto *g = static_cast<group_impl*>(arg);
        return g->pusher_.reap() + g->protocol_.evaluate();
    }

    ucp_node                              &node_;
    group_params                          params_;
    view                                  view_;
    sst::pusher                           pusher_;
    sst::layout                           row_;
    sst::column<int64_t>                  col_sent_, col_received_, col_published_,
                                          col_delivered_, col_phase_;
    std::unique_ptr<sst::table>           table_;
    std::unique_ptr<sst::mirrored_region> slots_;
    sst::predicates                       protocol_;
    int                                   n_ = 0, s_ = 0, me_ = -1, my_sender_ = -1;
    std::vector<int>                      sender_member_;  /* sender index -> member */
    size_t                                stride_ = 0;
    std::vector<int64_t>                  received_;       /* mirror of our row */
    int64_t                               sent_             = 0;
    int64_t                               pending_size_     = -1;
    int                                   poller_id_        = -1;
    bool                                  delivery_report_due_ = false;
    double                                last_report_s_    = 0;
    bool                                  closed_           = false;
    bool                                  failed_           = false;
    bool                                  malformed_logged_ = false;
    group_stats                           stats_;
};

/* --- group ------------------------------------------------------------- */

group::group(std::unique_ptr<group_impl> impl) : impl_(std::move(impl)) {}

group::~group()
{
    if (impl_) {
        impl_->close();
    }
}

ucs_status_t group::create(ucp_node &node, const group_params &params, std::unique_ptr<group> &out)
{
    out.reset();
    const bool member = std::find(params.members.begin(), params.members.end(), node.rank()) !=
                        params.members.end();
    std::vector<int> senders = params.senders.empty() ? params.members : params.senders;

    /* Validate locally, but take part in every collective step regardless,
     * so that one member's bad parameters fail everyone, not hang them. */
    const char *local_error = nullptr;
    if (member) {
        if (params.members.size() < 1 || params.window == 0 || params.max_payload == 0 ||
            params.max_payload > UINT32_MAX) {
            local_error = "members, window and max_payload must be positive";
        }
        for (int s : senders) {
            if (std::find(params.members.begin(), params.members.end(), s) ==
                params.members.end()) {
                local_error = "every sender must be a member";
            }
        }
        for (int m : params.members) {
            if (m < 0 || m >= node.size()) {
                local_error = "member rank out of the bootstrap's range";
            }
        }
    }

    std::vector<std::byte> digest;
    if (member) {
        digest = local_error ? std::vector<std::byte>{std::byte{0}} : make_digest(params, senders);
    }
    std::vector<std::vector<std::byte>> all;
    ucs_status_t status = node.allgather_blobs(digest, all);
    if (status != UCS_OK) {
        return status;
    }

    /* every rank, members or not, checks the same blobs and so agrees */
    const char *mismatch = nullptr;
    int         culprit  = -1;
    const std::vector<std::byte> *reference = nullptr;
    for (int r = 0; r < node.size(); ++r) {
        if (all[r].empty()) {
            continue;
        }
        if (all[r].size() < sizeof(group_digest)) {
            mismatch = "invalid parameters";
            culprit  = r;
            break;
        }
        if (reference == nullptr) {
            reference = &all[r];
        } else if (const char *diff = digest_difference(*reference, all[r])) {
            mismatch = diff;
            culprit  = r;
            break;
        }
    }
    if (local_error != nullptr) {
        ucs_error("group: invalid parameters: %s", local_error);
        return UCS_ERR_INVALID_PARAM;
    }
    if (mismatch != nullptr) {
        if (member) {
            ucs_error("group: parameters differ between members (%s, rank %d)", mismatch, culprit);
        }
        return UCS_ERR_INVALID_PARAM;
    }

    std::unique_ptr<group_impl> impl;
    if (member) {
        impl = std::make_unique<group_impl>(node, params, senders);
    }
    /* the regions are created collectively: non-members take part too */
    std::unique_ptr<sst::mirrored_region> none;
    if (!member) {
        size_t ignored = 0;
        status = sst::mirrored_region::create(node, params.members, ignored, none);
        if (status == UCS_OK) {
            status = sst::mirrored_region::create(node, params.members, ignored, none);
        }
        return status;
    }
    status = impl->init();
    if (status != UCS_OK) {
        return status;
    }
    out = std::make_unique<group>(std::move(impl));
    return UCS_OK;
}

ucs_status_t group::send(size_t size, const std::function<void(std::span<std::byte>)> &fill,
                         bool block)
{
    std::span<std::byte> buffer;
    ucs_status_t status = impl_->get_buffer(size, buffer, block);
    if (status != UCS_OK) {
        return status;
    }
    if (fill) {
        fill(buffer);
    }
    return impl_->commit();
}

ucs_status_t group::get_buffer(size_t size, std::span<std::byte> &buffer, bool block)
{
    return impl_->get_buffer(size, buffer, block);
}

ucs_status_t group::commit() { return impl_->commit(); }
ucs_status_t group::flush() { return impl_->flush(); }
ucs_status_t group::close() { return impl_->close(); }
const view &group::current_view() const { return impl_->current_view(); }
bool group::is_sender() const { return impl_->is_sender(); }
group_stats group::stats() const { return impl_->stats(); }

} // namespace tc
