/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * SMC, in urgent and batched modes, with round-robin total order and stable
 * delivery.
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
 * Batched mode: a sender reserves and fills slots (its index counters:
 * reserved >= committed >= pushed) and pushes the committed run [pushed,
 * committed) as one put per peer of the contiguous slots (two on wrap-around;
 * null runs ship only their header slot), a fence, and one counter put. It
 * pushes when B are pending, when the oldest waited T, when the engine finds
 * no commit since its previous pass (idle), or on flush()/an urgent message.
 * A receiver consumes everything new from every sender, then pushes one
 * report. A run of c nulls is one slot whose header says c.
 *
 * Threads (threaded_senders): application threads reserve under mutex_,
 * fill, and mark the slot committed; only the engine's thread issues puts,
 * and never with mutex_ held.
 *
 * Invariants (asserted): delivered <= published; a slot is rewritten only
 * when every member has delivered the message it held.
 */
#include "api/group.hpp"

#include "api/join.hpp"

#include "order/sequence.hpp"
#include "rdmc/engine.hpp"
#include "smc/slot.hpp"
#include "sst/region.hpp"
#include "sst/table.hpp"

#include <twochains/config.h>
#include <ucs/debug/log_def.h>

#include <arpa/inet.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <atomic>
#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unistd.h>

namespace tc {

using sst::put_purpose;

namespace {

/* An idle member pushes its delivered counter alone after this long. */
constexpr double kDeliveryReportIdleS = 20e-6;
/* A wait longer than this (or a quarter of UCX_TC_GROUP_TIMEOUT) logs its
 * state at the diag level and looks for progress. */
constexpr double kSlowWaitS           = 5.0;
/* A joiner's request must be complete this long after it connected. */
constexpr double kJoinRequestTimeoutS = 2.0;
/* How often the join port and a pending joiner's connection are looked at. */
constexpr double kJoinPollIntervalS = 1e-3;

/* The exchange area a failure's view change gathers through (worker
 * addresses, rkeys): per member two alternating slots of a round word, a
 * length and the bytes, so a member one round ahead never overwrites what
 * a slower one still reads. */
constexpr size_t kExchangeSlotBytes = 8192;
constexpr size_t kExchangeSlotSize  = 16 + kExchangeSlotBytes;
constexpr size_t kExchangeRowBytes  = 2 * kExchangeSlotSize;

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
    group_impl(ucp_node &node, const group_params &params, std::vector<int> senders,
               const tc_config_t &config, int64_t epoch = 1)
        : node_(node), params_(params), pusher_(node)
    {
        epoch_        = epoch;
        view_.epoch   = epoch;
        view_.members = params.members;
        view_.senders = std::move(senders);
        n_            = static_cast<int>(view_.members.size());
        s_            = static_cast<int>(view_.senders.size());
        w_            = params.window;
        stride_       = smc::slot_stride(params.max_payload);
        batched_      = params.smc.value_or(config.smc_mode ? smc_mode::batched :
                                                               smc_mode::urgent) ==
                        smc_mode::batched;
        batch_        = std::max(1u, std::min(params.batch.value_or(config.smc_batch), w_));
        flush_s_      = params.flush_us ? *params.flush_us * 1e-6 : config.smc_flush;
        threaded_     = params.threaded_senders;
        heartbeat_s_  = config.heartbeat;
        suspect_s_    = config.suspect_timeout;
        wait_timeout_s_ = config.group_timeout;
        /* Columns are laid out for the creation view (original member and
         * sender indexes) and keep those positions in later views.
         * received, published and delivered are adjacent: one report put. */
        col_sent_      = row_.add<int64_t>();
        col_received_  = row_.add<int64_t>(s_);
        col_published_ = row_.add<int64_t>();
        col_delivered_ = row_.add<int64_t>();
        col_phase_     = row_.add<int64_t>();
        col_epoch_     = row_.add<int64_t>();   /* epoch of this row's counters */
        col_heartbeat_ = row_.add<int64_t>();
        col_suspected_ = row_.add<int64_t>();   /* bitmask of original members */
        col_wedged_    = row_.add<int64_t>();   /* epoch wedged in, 0: not */
        col_trim_      = row_.add<int64_t>(s_); /* per original sender */
        col_admit_     = row_.add<int64_t>();   /* with the trim: 1 + sponsor row, 0: none */
        col_trim_epoch_ = row_.add<int64_t>();  /* epoch of the trim above */
        col_done_      = row_.add<int64_t>();   /* epoch whose trim is delivered */
        col_join_req_  = row_.add<int64_t>();   /* epoch in which we sponsor a joiner */
        col_rdv_addr_  = row_.add<int64_t>();   /* its rendezvous: IPv4 << 16 | port */
        boot_timeout_s_ = config.boot_timeout;
        max_id_ = *std::max_element(view_.members.begin(), view_.members.end());
        original_members_ = view_.members;
        original_senders_ = view_.senders;
        s0_ = s_;
        null_slot_.assign(static_cast<size_t>(s_) * w_, 0);
        map_view();
        committed_flag_ = std::make_unique<std::atomic<int64_t>[]>(w_);
        for (unsigned i = 0; i < w_; ++i) {
            committed_flag_[i].store(0, std::memory_order_relaxed);
        }
    }

    ucs_status_t init()
    {
        ucs_status_t status = sst::table::create(node_, view_.members, row_, table_);
        if (status != UCS_OK) {
            return status;
        }
        status = sst::mirrored_region::create(node_, view_.members, stride_ * w_ * s_, slots_);
        if (status != UCS_OK) {
            return status;
        }
        if (rebuilds_on_failure(params_)) {
            status = sst::mirrored_region::create(node_, view_.members,
                                                  kExchangeRowBytes * view_.members.size(),
                                                  exchange_);
            if (status != UCS_OK) {
                return status;
            }
        }
        me_ = table_->my_index();
        pusher_.on_peer_error([this](int rank) { put_failed_rank_.push_back(rank); });
        const double now = now_s();
        last_seen_.assign(original_members_.size(), now);
        seen_heartbeat_.assign(original_members_.size(), 0);
        last_heartbeat_s_ = now;
        set(col_epoch_, epoch_);
        status = table_->push(pusher_, col_epoch_, put_purpose::other);
        if (status != UCS_OK) {
            return status;
        }
        add_protocol_predicates();
        ucs_debug("group: %d members, %d senders, window %u, slot %zu bytes, %s, smc %s "
                  "(batch %u, flush %.0f us)", n_, s_, w_, stride_,
                  params_.mode == delivery_mode::ordered ? "ordered" : "raw",
                  batched_ ? "batched" : "urgent", batch_, flush_s_ * 1e6);
        return UCS_OK;
    }

    /* After every collective step of creation: a member still busy in one
     * (registering RDMC buffers, say) would otherwise miss heartbeats and be
     * suspected by those already done. */
    ucs_status_t start()
    {
        const double now = now_s();
        std::fill(last_seen_.begin(), last_seen_.end(), now);
        last_heartbeat_s_ = now;
        ucs_status_t status = tc_progress_poller_add(node_.engine(), &group_impl::poll, this,
                                                     &poller_id_);
        if (status != UCS_OK) {
            return status;
        }
        if (params_.on_view) {
            params_.on_view(view_);
        }
        return UCS_OK;
    }

    ~group_impl()
    {
        if (poller_id_ >= 0) {
            tc_progress_poller_remove(node_.engine(), poller_id_);
        }
    }

    /* --- sending ------------------------------------------------------- */

    ucs_status_t check_send(size_t size) const
    {
        if (superseded_) {
            return UCS_ERR_CANCELED;
        }
        if (expelled_ || minority_) {
            ucs_error("group: %s: this member can no longer send",
                      expelled_ ? "expelled from the group" : "left in a minority partition");
            return UCS_ERR_REJECTED;
        }
        if (closed_.load(std::memory_order_acquire)) {
            ucs_error("group: send after close");
            return UCS_ERR_NOT_CONNECTED;
        }
        if (my_sender_ < 0) {
            ucs_error("group: rank %d is not a sender of this group", node_.rank());
            return UCS_ERR_INVALID_PARAM;
        }
        const size_t limit = rdmc_ ? std::max(params_.max_payload, params_.rdmc_max_message) :
                                     params_.max_payload;
        if (size > limit) {
            ucs_error("group: payload of %zu bytes exceeds the maximum of %zu", size, limit);
            return UCS_ERR_EXCEEDS_LIMIT;
        }
        return UCS_OK;
    }

    /* Reserve the next index (and its slot) for a message of @a size. */
    ucs_status_t reserve(size_t size, bool block, int64_t &index)
    {
        ucs_status_t status = check_send(size);
        if (status != UCS_OK) {
            return status;
        }
        for (;;) {
            if (wedged_) {
                /* a view change is under way: the send goes into the next view */
                status = wait_until([this] { return !wedged_; });
                if (status != UCS_OK) {
                    return status;
                }
                if ((status = check_send(size)) != UCS_OK) {
                    return status;
                }
            }
            {
                auto lock = sender_lock();
                if (slot_free(reserved_)) {
                    index = reserved_++;
                    return UCS_OK;
                }
            }
            count(&group_stats::window_stalls);
            if (!block) {
                return UCS_ERR_NO_RESOURCE;
            }
            /* a wedge while we wait sends us back to the top: a slot taken
             * in a wedged view would never be pushed, and the send that
             * returned success for it would be lost at the view change */
            status = wait_for_slot();
            if (status != UCS_OK) {
                return status;
            }
        }
    }

    ucs_status_t send(size_t size, const std::function<void(std::span<std::byte>)> &fill,
                      bool block, bool urgent)
    {
        if (!threaded_ && pending_index_ >= 0) {
            ucs_error("group: send while a get_buffer() slot is held");
            return UCS_ERR_INVALID_PARAM;
        }
        if (size > params_.max_payload && rdmc_ && !threaded_) {
            if (epoch_ != rdmc_epoch_) {
                /* the RDMC engine spans the members of the view it was built
                 * in; a view that only lost members keeps the old SST and SMC
                 * (their survivors' part) but cannot use it: refuse, do not
                 * hang. A view that admits a joiner builds a new one. */
                ucs_error("group: large messages are not available in epoch %ld: RDMC was "
                          "built for epoch %ld and is rebuilt only when a member joins",
                          static_cast<long>(epoch_), static_cast<long>(rdmc_epoch_));
                return UCS_ERR_UNSUPPORTED;
            }
            return send_large(size, fill, block);
        }
        int64_t index;
        ucs_status_t status = reserve(size, block, index);
        if (status != UCS_OK) {
            return status;
        }
        if (fill) {
            fill({slot(my_sender_, index) + sizeof(smc::slot_header), size});
        }
        return commit_index(index, size, 0, urgent);
    }

    /* RDMC carries the bytes; an SMC slot carries its place in the order.
     * The engine's transfers of one root arrive in order everywhere, so the
     * slot's transfer index names them. */
    ucs_status_t send_large(size_t size, const std::function<void(std::span<std::byte>)> &fill,
                            bool block)
    {
        ucs_status_t status = check_send(size);
        if (status != UCS_OK) {
            return status;
        }
        /* One large message of ours at a time: the pool has N + 1 buffers, so
         * the N - 1 other roots always find one to receive into, and nobody
         * waits for a buffer that only a later delivery would free. */
        if (!own_large_.empty()) {
            if (!block) {
                return UCS_ERR_NO_RESOURCE;
            }
            status = wait_until([this] { return own_large_.empty(); });
            if (status != UCS_OK) {
                return status;
            }
        }
        std::span<std::byte> buffer;
        status = rdmc_->get_send_buffer(size, buffer);
        if (status == UCS_ERR_NO_RESOURCE && block) {
            /* our earlier large messages hold the buffers until delivered */
            status = wait_until([&] { return rdmc_->get_send_buffer(size, buffer) == UCS_OK; });
        }
        if (status != UCS_OK) {
            return status;
        }
        if (fill) {
            fill(buffer);
        }
        int64_t transfer = -1;
        status = rdmc_->send(buffer, &transfer);
        if (status != UCS_OK && status != UCS_INPROGRESS) {
            return status;
        }
        own_large_[transfer] = {buffer, false, false};
        count(&group_stats::rdmc_sent);
        int64_t index;
        status = reserve(sizeof(smc::rdmc_descriptor), block, index);
        if (status != UCS_OK) {
            return status;
        }
        smc::rdmc_descriptor d{size, transfer};
        std::memcpy(slot(my_sender_, index) + sizeof(smc::slot_header), &d, sizeof(d));
        return commit_index(index, sizeof(d), smc::SLOT_FLAG_RDMC, false);
    }

    ucs_status_t get_buffer(size_t size, std::span<std::byte> &buffer, bool block)
    {
        if (threaded_) {
            ucs_error("group: get_buffer/commit are not for threaded senders; use send()");
            return UCS_ERR_UNSUPPORTED;
        }
        if (pending_index_ >= 0) {
            ucs_error("group: get_buffer called twice without commit");
            return UCS_ERR_INVALID_PARAM;
        }
        int64_t index;
        ucs_status_t status = reserve(size, block, index);
        if (status != UCS_OK) {
            return status;
        }
        buffer         = {slot(my_sender_, index) + sizeof(smc::slot_header), size};
        pending_index_ = index;
        pending_size_  = size;
        return UCS_OK;
    }

    ucs_status_t commit()
    {
        if (pending_index_ < 0) {
            ucs_error("group: commit without get_buffer");
            return UCS_ERR_INVALID_PARAM;
        }
        int64_t index  = pending_index_;
        pending_index_ = -1;
        return commit_index(index, pending_size_, 0, false);
    }

    ucs_status_t flush(bool stable)
    {
        if (closed_.load(std::memory_order_acquire)) {
            return UCS_ERR_NOT_CONNECTED;
        }
        const int64_t target = reserved_.load();
        ucs_status_t status;
        if (threaded_) {
            flush_requested_.store(true, std::memory_order_release);
            status = wait_until([this, target] { return pushed() >= target; });
        } else {
            status = on_driver_thread_push(flush_cause::explicit_call);
            if (status == UCS_OK) {
                status = pusher_.flush();
            }
        }
        if (status == UCS_OK && stable && my_sender_ >= 0 && target > 0) {
            const int64_t last = order::sequence_of(target - 1, my_sender_, s_);
            status = wait_until([this, last] {
                return min_over_members(col_delivered_) - 1 >= last;
            });
        }
        return status;
    }

    ucs_status_t close()
    {
        if (closed_.exchange(true)) {
            return UCS_OK;
        }
        if (pending_index_ >= 0) {
            /* a get_buffer() slot never committed: it is the last reserved
             * (nothing can be reserved while one is held), so give it back */
            ucs_warn("group: closed with an uncommitted get_buffer() slot; it is dropped");
            std::lock_guard<std::mutex> lock(mutex_);
            reserved_      = pending_index_;
            pending_index_ = -1;
        }
        ucs_status_t status = UCS_OK;
        if (!threaded_) {
            status = on_driver_thread_push(flush_cause::explicit_call);
        } else {
            flush_requested_.store(true, std::memory_order_release);
        }
        if (status == UCS_OK) {
            status = set_phase(1);
        }
        if (status == UCS_OK) {
            status = wait_until([this] { return drained(); });
        }
        if (status == UCS_OK) {
            status = set_phase(2);
        }
        if (status == UCS_OK) {
            status = wait_until([this] { return min_phase() >= 2; });
        }
        if (!threaded_) {
            ucs_status_t flushed = pusher_.flush();
            status               = (status != UCS_OK) ? status : flushed;
            tc_progress_poller_remove(node_.engine(), poller_id_);
            poller_id_ = -1;
        }
        return status;
    }

    group_stats stats() const
    {
        group_stats s;
        for (auto field : kCounterFields) {
            s.*field = __atomic_load_n(&(stats_.*field), __ATOMIC_RELAXED);
        }
        s.puts = pusher_.counts();
        return s;
    }

    const view &current_view() const { return view_; }
    bool is_sender() const { return my_sender_ >= 0; }

private:
    enum class flush_cause { full, deadline, idle, explicit_call };

    static constexpr uint64_t group_stats::*kCounterFields[] = {
            &group_stats::sent,           &group_stats::nulls_sent,
            &group_stats::delivered,      &group_stats::callback_errors,
            &group_stats::window_stalls,  &group_stats::batches,
            &group_stats::batched_msgs,   &group_stats::flush_full,
            &group_stats::flush_deadline, &group_stats::flush_idle,
            &group_stats::flush_explicit, &group_stats::views,
            &group_stats::trimmed,        &group_stats::rdmc_sent,
            &group_stats::rdmc_delivered, &group_stats::joins,
            &group_stats::join_rejects};

    /* Counters are written by the engine's and the senders' threads and
     * read by anyone: relaxed atomics, no lock on the fast path. */
    uint64_t count(uint64_t group_stats::*field, uint64_t n = 1)
    {
        return __atomic_fetch_add(&(stats_.*field), n, __ATOMIC_RELAXED);
    }

    /* @a row is an original member index. Counters of a row still in an
     * older (or newer) epoch read as zero: they belong to another view. The
     * epoch is read first; a member resets its counters, fences, then
     * publishes its new epoch. */
    int64_t get(int row, sst::column<int64_t> c, size_t i = 0) const
    {
        if (is_counter(c) && row != me_ && table_->get(row, col_epoch_) != epoch_) {
            return 0;
        }
        return table_->get(row, c, i);
    }
    int64_t raw(int row, sst::column<int64_t> c, size_t i = 0) const
    {
        return table_->get(row, c, i);
    }
    bool is_counter(sst::column<int64_t> c) const
    {
        return c.offset >= col_sent_.offset && c.offset < col_phase_.offset;
    }
    void set(sst::column<int64_t> c, int64_t v, size_t i = 0) { table_->set(c, i, v); }
    /* over the members of the current view */
    int64_t min_over_members(sst::column<int64_t> c) const
    {
        int64_t m = INT64_MAX;
        for (int row : view_rows_) {
            m = std::min(m, get(row, c));
        }
        return m;
    }
    /* view sender @a sender's slot @a index, at its original position */
    std::byte *slot(int sender, int64_t index) const
    {
        return slots_->base() + (orig_sender_[sender] * w_ + index % w_) * stride_;
    }
    smc::slot_header *header(int sender, int64_t index) const
    {
        return reinterpret_cast<smc::slot_header*>(slot(sender, index));
    }
    int64_t pushed() const { return pushed_.load(std::memory_order_acquire); }

    /* Only threaded senders share the sender state; one thread needs no lock. */
    std::unique_lock<std::mutex> sender_lock() const
    {
        return threaded_ ? std::unique_lock<std::mutex>(mutex_) : std::unique_lock<std::mutex>();
    }

    int64_t min_phase() const { return min_over_members(col_phase_); }

    /* The engine's thread; in threaded mode only it issues puts. */
    ucs_status_t set_phase(int64_t phase)
    {
        if (threaded_) {
            phase_request_.store(phase, std::memory_order_release);
            return wait_until([this, phase] { return get(me_, col_phase_) >= phase; });
        }
        return push_phase(phase);
    }

    ucs_status_t push_phase(int64_t phase)
    {
        /* our final counters must reach everyone before we fall silent */
        ucs_status_t status = (phase >= 2) ? push_report(put_purpose::delivery_report) : UCS_OK;
        status = (status != UCS_OK) ? status : pusher_.fence();
        set(col_phase_, phase);
        status = (status != UCS_OK) ? status :
                 table_->push(pusher_, col_phase_, put_purpose::other);
        /* "drained" is our last put: a peer that sees every member drained
         * frees its regions, so nothing may follow it (not even heartbeats) */
        closed_out_ = (phase >= 2);
        return status;
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
        if (my_sender_ >= 0 && pushed() < reserved_snapshot()) {
            return false; /* our own tail has not gone out yet */
        }
        return min_over_members(col_delivered_) - 1 >= last;
    }

    int64_t reserved_snapshot() const { return reserved_.load(); }

    /* Wait for @a pred: by driving the engine, or (threaded) by yielding to
     * the engine's own thread. */
    /* expelled, or left in a minority: this member is out of the group */
    bool out_of_group() const { return expelled_ || minority_; }

    /* UCS_ERR_CANCELED: a view with a joiner replaced this one meanwhile;
     * the group retries the call there */
    template<class Pred> ucs_status_t wait_until(Pred pred_in)
    {
        auto pred = [&] { return out_of_group() || superseded_ || pred_in(); };
        ucs_status_t status = wait_until_impl(pred);
        if (status == UCS_OK && superseded_) {
            return UCS_ERR_CANCELED;
        }
        return (status == UCS_OK && out_of_group()) ? UCS_ERR_REJECTED : status;
    }

    template<class Pred> ucs_status_t wait_until_impl(Pred pred)
    {
        /* the limit is on waiting without progress: an overloaded machine
         * may move slowly, but it moves; a group that stands still for
         * UCX_TC_GROUP_TIMEOUT has peers that do not respond */
        const double look  = std::min(kSlowWaitS, wait_timeout_s_ / 4);
        uint64_t mark      = progress_mark();
        double still_since = now_s();
        bool reported      = false;
        for (;;) {
            ucs_status_t status = wait_for(pred, look);
            if (status != UCS_ERR_TIMED_OUT) {
                return status;
            }
            const uint64_t now_mark = progress_mark();
            if (now_mark != mark) {
                mark        = now_mark;
                still_since = now_s();
            } else if (now_s() - still_since >= wait_timeout_s_) {
                ucs_error("group: no progress for %.1f s: peers did not respond",
                          wait_timeout_s_);
                log_counters(UCS_LOG_LEVEL_ERROR);
                if (rdmc_ && ucs_log_is_enabled(UCS_LOG_LEVEL_DEBUG)) {
                    rdmc_->dump(stderr);
                }
                return UCS_ERR_TIMED_OUT;
            }
            if (!reported && ucs_log_is_enabled(UCS_LOG_LEVEL_DIAG)) {
                reported = true;
                ucs_diag("group: still waiting after %.1f s", look);
                log_counters(UCS_LOG_LEVEL_DIAG);
            }
        }
    }

    /* @a pred within @a seconds: by driving the engine, or (threaded) by
     * leaving it to the engine's own thread. UCS_ERR_TIMED_OUT if not. */
    template<class Pred> ucs_status_t wait_for(Pred &pred, double seconds)
    {
        if (!threaded_) {
            auto done = [](void *arg) -> int { return (*static_cast<Pred*>(arg))(); };
            return tc_progress_until(node_.engine(), done, &pred, seconds);
        }
        const double deadline = now_s() + seconds;
        while (!pred()) {
            if (now_s() > deadline) {
                return UCS_ERR_TIMED_OUT;
            }
            /* sleep, not yield: many sender threads spinning on yield
             * starve the engine's thread that has to free their slots */
            std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
        return UCS_OK;
    }

    /* A row's counters as this member sees them (the engine's thread writes
     * them; a sender thread's read of them is as racy as its slot_free()) */
    struct row_counters {
        int64_t epoch, phase, sent, delivered;
        std::vector<int64_t> received;   /* by view sender */
    };
    row_counters counters_of(int row) const
    {
        row_counters c{raw(row, col_epoch_), raw(row, col_phase_), get(row, col_sent_),
                       get(row, col_delivered_), {}};
        for (int s = 0; s < s_; ++s) {
            c.received.push_back(get(row, col_received_, orig_sender_[s]));
        }
        return c;
    }

    /* Changes whenever the group moves: anything sent, received or
     * delivered anywhere, as this member sees it */
    uint64_t progress_mark() const
    {
        uint64_t mark = static_cast<uint64_t>(reserved_.load() + pushed() + epoch_);
        for (int row : view_rows_) {
            const row_counters c = counters_of(row);
            mark += static_cast<uint64_t>(c.phase + c.sent + c.delivered);
            for (int64_t r : c.received) {
                mark += static_cast<uint64_t>(r);
            }
        }
        return mark;
    }

    /* What a stuck member waits for: its sender state and every row's
     * counters as it sees them (once, on a timeout). */
    void log_counters(ucs_log_level_t level) const
    {
        ucs_log(level, "group: epoch %ld%s: reserved %ld pushed %ld, "
                "delivered-everywhere bound %ld", static_cast<long>(epoch_),
                wedged_ ? " (wedged)" : "", static_cast<long>(reserved_.load()),
                static_cast<long>(pushed()), static_cast<long>(free_until_ - w_));
        for (int row : view_rows_) {
            const row_counters c = counters_of(row);
            std::string received;
            for (int64_t r : c.received) {
                received += (received.empty() ? "" : ",") + std::to_string(r);
            }
            ucs_log(level, "group:   rank %d%s: epoch %ld phase %ld sent %ld delivered %ld "
                    "received [%s]", original_members_[row], row == me_ ? " (us)" : "",
                    static_cast<long>(c.epoch), static_cast<long>(c.phase),
                    static_cast<long>(c.sent), static_cast<long>(c.delivered),
                    received.c_str());
        }
    }

    /* Callers hold sender_lock(). free_until_ caches the first index whose
     * slot may still hold a message not delivered everywhere; the SST is
     * read again only when a sender reaches it. */
    bool slot_free(int64_t index) const
    {
        if (index < free_until_) {
            return true;
        }
        const int64_t delivered_everywhere = min_over_members(col_delivered_) - 1;
        free_until_ = order::count_through(delivered_everywhere, my_sender_, s_) + w_;
        return index < free_until_;
    }

    ucs_status_t wait_for_slot()
    {
        /* our own unpushed messages hold the window: push them first */
        if (!threaded_) {
            ucs_status_t status = on_driver_thread_push(flush_cause::full);
            if (status != UCS_OK) {
                return status;
            }
        } else {
            flush_requested_.store(true, std::memory_order_release);
        }
        return wait_until([this] {
            auto lock = sender_lock();
            return wedged_ || slot_free(reserved_);
        });
    }

    /* Mark @a index committed; push now if the mode says so. */
    ucs_status_t commit_index(int64_t index, size_t size, uint32_t flags, bool urgent)
    {
        smc::slot_header h{static_cast<uint32_t>(size), flags, index};
        std::memcpy(slot(my_sender_, index), &h, sizeof(h));
        committed_flag_[index % w_].store(index + 1, std::memory_order_release);
        count(&group_stats::sent);
        commits_since_poll_.fetch_add(1, std::memory_order_relaxed);
        if (threaded_) {
            if (urgent) {
                flush_requested_.store(true, std::memory_order_release);
            }
            return UCS_OK;
        }
        if (!batched_ || urgent) {
            return on_driver_thread_push(flush_cause::explicit_call);
        }
        advance_committed();
        if (committed_ - pushed() >= batch_) {
            return push_batch(flush_cause::full);
        }
        return UCS_OK;
    }

    /* committed_ moves over contiguous committed slots (engine's thread). */
    void advance_committed()
    {
        while (committed_flag_[committed_ % w_].load(std::memory_order_acquire) ==
               committed_ + 1) {
            ++committed_;
        }
    }

    ucs_status_t on_driver_thread_push(flush_cause cause)
    {
        advance_committed();
        return (committed_ > pushed()) ? push_batch(cause) : UCS_OK;
    }

    /*
     * Ship [pushed, committed): per peer the contiguous slot segments (a null
     * run contributes its header slot only; wrap-around splits), a fence,
     * then the counter. Then our own copy counts as received.
     */
    ucs_status_t push_batch(flush_cause cause)
    {
        const int64_t first = pushed(), last = committed_;
        ucs_status_t status = UCS_OK;

        for (int64_t seg = first; seg < last && status == UCS_OK;) {
            int64_t end = seg;
            bool nulls  = false;
            /* extend while contiguous in the ring and not inside a null run */
            while (end < last) {
                const auto *h = header(my_sender_, end);
                if (end > seg && end % w_ == 0) {
                    break; /* wrap-around */
                }
                if (h->flags & smc::SLOT_FLAG_NULL) {
                    if (end > seg) {
                        break; /* a null run starts its own segment */
                    }
                    nulls = true;
                    end  += h->size; /* skip the run's body */
                    break;
                }
                ++end;
            }
            const size_t nslots = nulls ? 1 : static_cast<size_t>(end - seg);
            const size_t bytes  = nulls ? sizeof(smc::slot_header) :
                                  (nslots - 1) * stride_ + sizeof(smc::slot_header) +
                                  header(my_sender_, end - 1)->size;
            status = slots_->push_all(pusher_, slot(my_sender_, seg) - slots_->base(), bytes,
                                      nulls ? put_purpose::null_message : put_purpose::data,
                                      /*snapshot=*/false);
            seg = end;
        }
        if (status == UCS_OK) {
            status = pusher_.fence();
        }
        pushed_.store(last, std::memory_order_release);
        set(col_sent_, last);
        if (status == UCS_OK) {
            const bool only_nulls = header(my_sender_, first)->flags & smc::SLOT_FLAG_NULL &&
                                    first + header(my_sender_, first)->size == last;
            status = table_->push(pusher_, col_sent_,
                                  only_nulls ? put_purpose::null_message : put_purpose::counter);
        }
        count(&group_stats::batches);
        count(&group_stats::batched_msgs, static_cast<uint64_t>(last - first));
        switch (cause) {
        case flush_cause::full: count(&group_stats::flush_full); break;
        case flush_cause::deadline: count(&group_stats::flush_deadline); break;
        case flush_cause::idle: count(&group_stats::flush_idle); break;
        case flush_cause::explicit_call: count(&group_stats::flush_explicit); break;
        }
        oldest_pending_s_ = 0;
        /* loopback: our own messages are received here without a put */
        for (int64_t i = first; i < last && status == UCS_OK;) {
            i = consume(my_sender_, i);
            if (i < 0) {
                status = UCS_ERR_IO_ERROR; /* own large messages are always here */
            }
        }
        if (status == UCS_OK && !batched_) {
            status = push_report(put_purpose::receive_report);
        } else {
            report_due_ = true;
        }
        return status;
    }

    /* A quiet sender that holds up the order fills its turns with nulls. */
    unsigned send_nulls()
    {
        int64_t first, count;
        {
            auto lock = sender_lock();
            if (reserved_ != pushed() || (!threaded_ && pending_index_ >= 0)) {
                return 0; /* messages of our own are on their way */
            }
            count = nulls_needed();
            /* batched: one run as long as the window allows; urgent: one */
            int64_t room = 0;
            while (room < (batched_ ? count : std::min<int64_t>(count, 1)) &&
                   slot_free(reserved_ + room)) {
                ++room;
            }
            if (room == 0) {
                return 0;
            }
            first      = reserved_;
            count      = room;
            reserved_ += count;
        }
        if (batched_) {
            commit_null_run(first, count);
        } else {
            commit_index_nopush(first, 1);
        }
        advance_committed();
        fail_on(push_batch(flush_cause::explicit_call));
        return 1;
    }

    void commit_null_run(int64_t first, int64_t count)
    {
        /* the run's body slots are never read: mark them committed too */
        for (int64_t i = first + 1; i < first + count; ++i) {
            committed_flag_[i % w_].store(i + 1, std::memory_order_release);
        }
        commit_index_nopush(first, count);
    }

    void commit_index_nopush(int64_t index, int64_t run_length)
    {
        smc::slot_header h{static_cast<uint32_t>(run_length), smc::SLOT_FLAG_NULL, index};
        std::memcpy(slot(my_sender_, index), &h, sizeof(h));
        committed_flag_[index % w_].store(index + 1, std::memory_order_release);
        count(&group_stats::nulls_sent, static_cast<uint64_t>(run_length));
    }

    /* How many of our turns lie below the highest sequence received. */
    int64_t nulls_needed() const
    {
        const int64_t my_next = order::sequence_of(reserved_, my_sender_, s_);
        int64_t highest       = -1;
        for (int s = 0; s < s_; ++s) {
            if (received_[s] > 0) {
                highest = std::max(highest, order::sequence_of(received_[s] - 1, s, s_));
            }
        }
        return (highest > my_next) ? order::count_through(highest, my_sender_, s_) - reserved_ : 0;
    }

    /* --- views and failures -------------------------------------------- */

    /* Index maps of the current view onto the creation layout. */
    void map_view()
    {
        auto index_in = [](const std::vector<int> &v, int x) {
            return static_cast<int>(std::find(v.begin(), v.end(), x) - v.begin());
        };
        n_ = static_cast<int>(view_.members.size());
        s_ = static_cast<int>(view_.senders.size());
        view_rows_.clear();
        for (int m : view_.members) {
            view_rows_.push_back(index_in(original_members_, m));
        }
        sender_member_.clear();
        orig_sender_.clear();
        my_sender_ = -1;
        for (int i = 0; i < s_; ++i) {
            sender_member_.push_back(index_in(original_members_, view_.senders[i]));
            orig_sender_.push_back(index_in(original_senders_, view_.senders[i]));
            if (view_.senders[i] == node_.rank()) {
                my_sender_ = i;
            }
        }
        received_.assign(s_, 0);
    }

    uint64_t view_mask() const
    {
        uint64_t mask = 0;
        for (int row : view_rows_) {
            mask |= uint64_t(1) << row;
        }
        return mask;
    }

    uint64_t suspected() const { return static_cast<uint64_t>(raw(me_, col_suspected_)); }

    std::vector<int> survivors() const
    {
        std::vector<int> rows;
        for (int row : view_rows_) {
            if (!(suspected() & (uint64_t(1) << row))) {
                rows.push_back(row);
            }
        }
        return rows;
    }

    int leader() const
    {
        auto rows = survivors();
        return rows.empty() ? -1 : rows.front();
    }

    void suspect(int row, const char *why)
    {
        const uint64_t bit = uint64_t(1) << row;
        if (row == me_ || (suspected() & bit)) {
            return;
        }
        ucs_diag("group: epoch %ld: suspecting rank %d (%s)", static_cast<long>(epoch_),
                 original_members_[row], why);
        set(col_suspected_, static_cast<int64_t>(suspected() | bit));
        fail_on(table_->push(pusher_, col_suspected_, put_purpose::other));
    }

    /* Heartbeats, timeouts and endpoint errors; suspicion spreads through
     * the SST: every member ORs every view member's mask into its own. */
    unsigned watch_members()
    {
        const double now = now_s();
        unsigned events  = 0;
        if (now - last_heartbeat_s_ >= heartbeat_s_) {
            last_heartbeat_s_ = now;
            set(col_heartbeat_, raw(me_, col_heartbeat_) + 1);
            fail_on(table_->push(pusher_, col_heartbeat_, put_purpose::heartbeat));
        }
        for (int rank : put_failed_rank_) {
            int row = static_cast<int>(std::find(original_members_.begin(),
                                                 original_members_.end(), rank) -
                                       original_members_.begin());
            if (row < static_cast<int>(original_members_.size())) {
                suspect(row, "put failed");
            }
        }
        put_failed_rank_.clear();
        for (int row : view_rows_) {
            const int64_t hb = raw(row, col_heartbeat_);
            if (row != me_ && hb != seen_heartbeat_[row]) {
                seen_heartbeat_[row] = hb;
                last_seen_[row]      = now;
            }
        }
        /* expelled: a member we still trust suspects us (after a stall, say);
         * checked before our own timeouts, which a stall also trips */
        for (int row : view_rows_) {
            if (row != me_ && !(suspected() & (uint64_t(1) << row)) &&
                ((raw(row, col_suspected_) >> me_) & 1)) {
                expelled_ = true;
                ucs_error("group: expelled from the group in epoch %ld: rank %d suspects this "
                          "member; it stops and its calls fail", static_cast<long>(epoch_),
                          original_members_[row]);
                return 1;
            }
        }
        uint64_t spread = 0;
        for (int row : view_rows_) {
            if (row == me_) {
                continue;
            }
            if (raw(row, col_phase_) >= 2) {
                continue; /* left cleanly: silent on purpose */
            }
            if (now - last_seen_[row] > suspect_s_) {
                char why[96];
                std::snprintf(why, sizeof(why), "no heartbeat for %.0f ms",
                              (now - last_seen_[row]) * 1e3);
                suspect(row, why);
            }
            if (node_.peer_failed(original_members_[row])) {
                suspect(row, "endpoint error");
            }
            spread |= static_cast<uint64_t>(raw(row, col_suspected_));
        }
        spread &= ~(uint64_t(1) << me_);
        if ((spread | suspected()) != suspected()) {
            set(col_suspected_, static_cast<int64_t>(spread | suspected()));
            fail_on(table_->push(pusher_, col_suspected_, put_purpose::other));
            ++events;
        }
        return events;
    }

    /* A held get_buffer() slot defers our wedge to its commit(): the slot
     * is ours in this view, and a message committed after the wedge would
     * miss the trim. */
    bool must_wedge() const
    {
        return !wedged_ && (threaded_ || pending_index_ < 0) &&
               ((suspected() & view_mask()) || sponsor_row() >= 0);
    }

    /* The first survivor sponsoring a joiner in this epoch, or -1 */
    int sponsor_row() const
    {
        /* a predicate of every engine pass: no allocation (as survivors()) */
        const uint64_t out = suspected();
        for (int row : view_rows_) {
            if (!((out >> row) & 1) && raw(row, col_join_req_) == epoch_) {
                return row;
            }
        }
        return -1;
    }

    /* Stop sending, receiving and delivering; say so in the SST. */
    unsigned wedge()
    {
        /* what we committed goes out before our counters freeze: a batch
         * still waiting for B or T would otherwise vanish with the view */
        if (my_sender_ >= 0 && !threaded_ && !failed_) {
            fail_on(on_driver_thread_push(flush_cause::explicit_call));
        }
        /* whoever sees us wedged sees our final counters: a join-only trim
         * takes "sent" from them (over tcp the puts could pass each other) */
        fail_on(pusher_.fence());
        wedged_ = true;
        wedge_started_s_ = now_s();
        ucs_diag("group: epoch %ld wedged", static_cast<long>(epoch_));
        set(col_wedged_, epoch_);
        fail_on(table_->push(pusher_, col_wedged_, put_purpose::other));
        return 1;
    }

    /* The leader of the survivors publishes the ragged trim: per sender, the
     * fewest messages any survivor received. A trim some survivor already
     * adopted wins, so a new leader repeats an old leader's decision. */
    unsigned lead_cleanup()
    {
        auto rows = survivors();
        if (2 * rows.size() <= view_rows_.size()) {
            if (!minority_) {
                minority_ = true;
                ucs_error("group: epoch %ld: only %zu of %zu members left: a minority "
                          "cannot install a view; wedged", static_cast<long>(epoch_),
                          rows.size(), view_rows_.size());
            }
            return 0;
        }
        if (raw(me_, col_trim_epoch_) == epoch_) {
            return 0;
        }
        for (int row : rows) {
            if (raw(row, col_wedged_) != epoch_) {
                return 0; /* not all survivors have frozen their counters yet */
            }
        }
        if (!(suspected() & view_mask()) && raw(me_, col_trim_epoch_) != epoch_ &&
            !everything_received_everywhere()) {
            return 0; /* a join only: nobody died, so nothing needs trimming */
        }
        std::vector<int64_t> trim(s0_, INT64_MAX);
        int adopted = -1;
        for (int row : rows) {
            if (raw(row, col_trim_epoch_) == epoch_) {
                adopted = row;
            }
        }
        /* at most one joiner per view change; the others ask again */
        const int64_t admit = adopted >= 0 ? raw(adopted, col_admit_) : sponsor_row() + 1;
        for (int s = 0; s < s_; ++s) {
            for (int row : rows) {
                const int o = orig_sender_[s];
                trim[o] = std::min(trim[o], adopted >= 0 ? raw(adopted, col_trim_, o) :
                                                           get(row, col_received_, o));
            }
        }
        publish_trim(trim, admit);
        return 1;
    }

    /* Every view member received every message every sender pushed */
    bool everything_received_everywhere() const
    {
        for (int s = 0; s < s_; ++s) {
            const int64_t sent = get(sender_member_[s], col_sent_);
            for (int row : view_rows_) {
                if (row != sender_member_[s] && get(row, col_received_, orig_sender_[s]) < sent) {
                    return false;
                }
            }
        }
        return true;
    }

    void publish_trim(const std::vector<int64_t> &trim, int64_t admit)
    {
        for (int o = 0; o < s0_; ++o) {
            set(col_trim_, trim[o] == INT64_MAX ? 0 : trim[o], o);
        }
        set(col_admit_, admit);
        set(col_trim_epoch_, epoch_);
        fail_on(table_->push(pusher_, col_trim_, col_trim_epoch_, put_purpose::other));
    }

    /* Adopt the leader's trim; once every survivor shows the same one,
     * deliver up to it in sequence order and discard the rest. */
    unsigned follow_cleanup()
    {
        const int lead = leader();
        if (lead < 0 || minority_ || trim_applied_ || raw(lead, col_trim_epoch_) != epoch_) {
            return 0;
        }
        bool same_as_leader = raw(me_, col_trim_epoch_) == epoch_ &&
                              raw(me_, col_admit_) == raw(lead, col_admit_);
        for (int o = 0; o < s0_ && same_as_leader; ++o) {
            same_as_leader = raw(me_, col_trim_, o) == raw(lead, col_trim_, o);
        }
        if (!same_as_leader) {
            std::vector<int64_t> trim(s0_);
            for (int o = 0; o < s0_; ++o) {
                trim[o] = raw(lead, col_trim_, o);
            }
            publish_trim(trim, raw(lead, col_admit_));
            return 1;
        }
        for (int row : survivors()) {
            if (raw(row, col_trim_epoch_) != epoch_ ||
                raw(row, col_admit_) != raw(me_, col_admit_)) {
                return 0;
            }
            for (int o = 0; o < s0_; ++o) {
                if (raw(row, col_trim_, o) != raw(me_, col_trim_, o)) {
                    return 0;
                }
            }
        }
        deliver_ragged_edge();
        trim_applied_ = true;
        set(col_done_, epoch_);
        fail_on(table_->push(pusher_, col_done_, put_purpose::other));
        return 1;
    }

    void deliver_ragged_edge()
    {
        int64_t delivered = get(me_, col_delivered_) - 1;
        int64_t last      = -1;
        for (int s = 0; s < s_; ++s) {
            const int64_t t = raw(me_, col_trim_, orig_sender_[s]);
            if (t > 0) {
                last = std::max(last, order::sequence_of(t - 1, s, s_));
            }
        }
        uint64_t trimmed = 0;
        for (int s = 0; s < s_; ++s) {
            trimmed += static_cast<uint64_t>(received_[s] - raw(me_, col_trim_, orig_sender_[s]));
        }
        for (int64_t seq = delivered + 1; seq <= last; ++seq) {
            const int s       = order::sender_of(seq, s_);
            const int64_t idx = order::index_of(seq, s_);
            if (idx < raw(me_, col_trim_, orig_sender_[s]) &&
                params_.mode == delivery_mode::ordered) {
                deliver_one(s, idx, seq);
            }
        }
        count(&group_stats::trimmed, trimmed);
        ucs_diag("group: epoch %ld: delivered up to the trim, %lu received messages beyond it "
                 "discarded", static_cast<long>(epoch_), static_cast<unsigned long>(trimmed));
    }

    bool all_survivors_done() const
    {
        if (!trim_applied_) {
            return false;
        }
        for (int row : survivors()) {
            if (raw(row, col_done_) != epoch_) {
                return false;
            }
        }
        return true;
    }

    /* Every survivor delivered the same prefix: move on together. */
    unsigned install_next_view()
    {
        std::vector<int> members, senders;
        for (int row : survivors()) {
            members.push_back(original_members_[row]);
        }
        for (int rank : view_.senders) {
            if (std::find(members.begin(), members.end(), rank) != members.end()) {
                senders.push_back(rank);
            }
        }
        const double took = now_s() - wedge_started_s_;
        {
            auto lock = sender_lock();
            /* our counters restart for the new epoch: reset, fence, then the
             * epoch, so that nobody reads old counters as new ones */
            for (auto c : {col_sent_, col_published_, col_delivered_}) {
                set(c, 0);
            }
            for (int o = 0; o < s0_; ++o) {
                set(col_received_, 0, o);
            }
            fail_on(table_->push(pusher_, col_sent_, col_delivered_, put_purpose::other));
            fail_on(pusher_.fence());
            ++epoch_;
            set(col_epoch_, epoch_);
            set(col_wedged_, 0);
            std::vector<bool> active(original_members_.size(), false);
            for (int rank : members) {
                active[std::find(original_members_.begin(), original_members_.end(), rank) -
                       original_members_.begin()] = true;
            }
            table_->set_active(active);
            slots_->set_active(active);
            fail_on(table_->push(pusher_, col_epoch_, col_heartbeat_, put_purpose::other));

            view_.epoch   = epoch_;
            view_.members = members;
            view_.senders = senders;
            map_view();
            reserved_   = 0;
            committed_  = 0;
            pushed_     = 0;
            free_until_ = 0;
            for (unsigned i = 0; i < w_; ++i) {
                committed_flag_[i].store(0, std::memory_order_relaxed);
            }
            std::fill(null_slot_.begin(), null_slot_.end(), 0);
            wedged_       = false;
            trim_applied_ = false;
            report_due_   = delivery_report_due_ = false;
            oldest_pending_s_ = 0;
        }
        const double now = now_s();
        std::fill(last_seen_.begin(), last_seen_.end(), now);
        count(&group_stats::views);
        ucs_diag("group: installed epoch %ld with %d members, %.3f ms after the wedge",
                 static_cast<long>(epoch_), n_, took * 1e3);
        last_view_change_ms_.store(took * 1e3);
        if (params_.on_view) {
            params_.on_view(view_);
        }
        return 1;
    }

    bool active() const { return !wedged_ && !expelled_ && !minority_ && !superseded_; }

    /* --- joins ---------------------------------------------------------- */

public:
    static join::request join_request_for(const group_params &p)
    {
        join::request r{};
        r.magic            = join::kRequestMagic;
        r.version          = join::kVersion;
        r.max_payload      = p.max_payload;
        r.rdmc_max_message = p.rdmc_max_message;
        r.rdmc_block       = p.rdmc_block;
        r.window           = p.window;
        r.mode             = static_cast<uint32_t>(p.mode);
        r.smc_batched      = p.smc ? (*p.smc == smc_mode::batched) + 1 : 0;
        return r;
    }

private:
    /* Why a joiner's request cannot be admitted here, or nullptr */
    const char *join_refusal(const join::request &r) const
    {
        const join::request ours = join_request_for(params_);
        if (r.magic != join::kRequestMagic) {
            return "not a join request (bad magic)";
        }
        if (r.version != join::kVersion) {
            return "unsupported join protocol version";
        }
        if (r.max_payload != ours.max_payload || r.window != ours.window ||
            r.mode != ours.mode || r.rdmc_max_message != ours.rdmc_max_message ||
            r.rdmc_block != ours.rdmc_block || r.smc_batched != ours.smc_batched) {
            return "group parameters differ (max_payload, window, mode, smc or rdmc)";
        }
        if (threaded_) {
            return "this group has threaded senders, which do not support joins";
        }
        if (max_id_ + 1 >= join::kMaxMembers) {
            return "no member id left";
        }
        return nullptr;
    }

    void refuse_joiner(const char *why, ucs_status_t status)
    {
        join::reply r{};
        r.magic   = join::kReplyMagic;
        r.version = join::kVersion;
        r.status  = status;
        std::snprintf(r.reason, sizeof(r.reason), "%s", why);
        (void)join::write_all(joiner_, &r, sizeof(r), 1.0);
        count(&group_stats::join_rejects);
        ucs_warn("group: epoch %ld: join request refused: %s", static_cast<long>(epoch_), why);
        joiner_.reset();
        rendezvous_.reset();
    }

    /* Accept a joiner on our join port, check its request, and ask for a
     * view change that admits it (one at a time). */
    unsigned serve_joins()
    {
        if (!joiner_.valid()) {
            joiner_ = join::accept_pending(*join_listener_);
            if (!joiner_.valid()) {
                return 0;
            }
            joiner_since_s_ = now_s();
            joiner_checked_ = false;
            return 1;
        }
        if (!joiner_checked_) {
            join::request req;
            const int got = join::try_read(joiner_, &req, sizeof(req));
            if (got < 0) {
                refuse_joiner("the joiner closed the connection before a complete request",
                              UCS_ERR_CONNECTION_RESET);
                return 1;
            }
            if (got == 0) {
                if (now_s() - joiner_since_s_ > kJoinRequestTimeoutS) {
                    refuse_joiner("no complete join request within 2 s", UCS_ERR_TIMED_OUT);
                    return 1;
                }
                return 0;
            }
            if (const char *why = join_refusal(req)) {
                refuse_joiner(why, UCS_ERR_INVALID_PARAM);
                return 1;
            }
            /* where the new view meets: our address as the joiner sees it */
            uint16_t port = 0;
            if (join::listen_on(0, rendezvous_, &port) != UCS_OK) {
                refuse_joiner("no rendezvous port", UCS_ERR_IO_ERROR);
                return 1;
            }
            in_addr a{};
            inet_pton(AF_INET, join::local_address(joiner_).c_str(), &a);
            rendezvous_addr_ = (static_cast<int64_t>(ntohl(a.s_addr)) << 16) | port;
            joiner_checked_  = true;
            ucs_diag("group: epoch %ld: a joiner asks to enter; sponsoring it",
                     static_cast<long>(epoch_));
        }
        if (join::peer_gone(joiner_)) {
            ucs_warn("group: epoch %ld: the joiner left before it was admitted",
                     static_cast<long>(epoch_));
            joiner_.reset();
            rendezvous_.reset();
            set(col_join_req_, 0);
            fail_on(table_->push(pusher_, col_join_req_, col_rdv_addr_, put_purpose::other));
            return 1;
        }
        /* ask in this epoch (again, after a change that did not admit it) */
        if (!wedged_ && raw(me_, col_join_req_) != epoch_) {
            set(col_rdv_addr_, rendezvous_addr_);
            set(col_join_req_, epoch_);
            fail_on(table_->push(pusher_, col_join_req_, col_rdv_addr_, put_purpose::other));
            return 1;
        }
        return 0;
    }

    /* Every survivor delivered the same prefix and the leader admitted the
     * joiner of @a sponsor: meet at the sponsor's rendezvous, build the new
     * view's SST, SMC and RDMC over survivors and joiner, hand the state
     * over, and retire this view. false: the rendezvous failed everywhere
     * alike (the joiner died, say); the caller installs the view without it. */
    bool admit_joiner(int sponsor)
    {
        const double took_trim = now_s() - wedge_started_s_;
        const int joiner_id    = max_id_ + 1;
        std::vector<int> members, senders, rendezvous_ids;
        for (int row : survivors()) {
            members.push_back(original_members_[row]);
        }
        for (int rank : view_.senders) {
            if (std::find(members.begin(), members.end(), rank) != members.end()) {
                senders.push_back(rank);
            }
        }
        members.push_back(joiner_id);
        if (params_.senders.empty()) {
            senders.push_back(joiner_id);   /* everyone sends: the joiner too */
        }
        const int sponsor_id = original_members_[sponsor];
        rendezvous_ids.push_back(sponsor_id);
        for (int id : members) {
            if (id != sponsor_id) {
                rendezvous_ids.push_back(id);
            }
        }
        const int64_t addr = raw(sponsor, col_rdv_addr_);
        in_addr a{};
        a.s_addr = htonl(static_cast<uint32_t>(addr >> 16));
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &a, ip, sizeof(ip));
        const std::string root = std::string(ip) + ":" + std::to_string(addr & 0xffff);

        ucs_status_t status = UCS_OK;
        if (me_ == sponsor) {
            join::reply r{};
            r.magic           = join::kReplyMagic;
            r.version         = join::kVersion;
            r.status          = UCS_OK;
            r.id              = joiner_id;
            r.epoch           = epoch_ + 1;
            r.sponsor         = sponsor_id;
            r.rendezvous_port = static_cast<uint32_t>(addr & 0xffff);
            r.rendezvous_size = static_cast<int32_t>(rendezvous_ids.size());
            r.member_count    = static_cast<int32_t>(members.size());
            r.sender_count    = static_cast<int32_t>(senders.size());
            std::copy(members.begin(), members.end(), r.members);
            std::copy(senders.begin(), senders.end(), r.senders);
            std::copy(rendezvous_ids.begin(), rendezvous_ids.end(), r.rendezvous);
            status = join::write_all(joiner_, &r, sizeof(r), boot_timeout_s_);
        }
        const int my_rank = static_cast<int>(
                std::find(rendezvous_ids.begin(), rendezvous_ids.end(), node_.rank()) -
                rendezvous_ids.begin());
        tc_bootstrap_h boot = nullptr;
        if (status == UCS_OK) {
            status = tc_bootstrap_tcp_create(root.c_str(), me_ == sponsor ? rendezvous_.get() : -1,
                                             my_rank, static_cast<int>(rendezvous_ids.size()),
                                             boot_timeout_s_, &boot);
        }
        if (me_ == sponsor) {
            joiner_.reset();
            rendezvous_.reset();
        }
        if (status != UCS_OK) {
            ucs_error("group: epoch %ld: the rendezvous with the joiner failed (%s); the next "
                      "view goes on without it", static_cast<long>(epoch_),
                      ucs_status_string(status));
            return false;
        }
        status = node_.enter_view(boot, rendezvous_ids, node_.rank());
        if (status == UCS_OK) {
            ucs_diag("group: epoch %ld: admitting joiner %d, %.3f ms after the wedge "
                     "(%.3f ms to the trim)", static_cast<long>(epoch_), joiner_id,
                     (now_s() - wedge_started_s_) * 1e3, took_trim * 1e3);
        }
        move_to_next_view(status, members, senders, sponsor_id, joiner_id, true);
        return true;
    }

    /* --- a failure's view rebuilt over the survivors --------------------- */

    /* An allgather among the survivors over the old view's exchange area:
     * a tc_bootstrap backend whose operations put with this view's pusher
     * and progress the worker themselves (inside our poller). */
    struct exchange_ctx {
        group_impl       *impl;
        std::vector<int> rows;     /* rank -> row in the old view */
        uint64_t         round = 0;
    };

    static ucs_status_t exchange_allgatherv(void *arg, const void *buf, size_t len, void **all_p,
                                            size_t *lens)
    {
        auto *x = static_cast<exchange_ctx*>(arg);
        return x->impl->exchange_round(*x, buf, len, all_p, lens);
    }

    ucs_status_t exchange_round(exchange_ctx &x, const void *buf, size_t len, void **all_p,
                                size_t *lens)
    {
        if (len > kExchangeSlotBytes) {
            ucs_error("group: %zu bytes do not fit the view change exchange (%zu)", len,
                      kExchangeSlotBytes);
            return UCS_ERR_EXCEEDS_LIMIT;
        }
        const uint64_t round = ++x.round;
        const size_t slot    = (round % 2) * kExchangeSlotSize;
        auto at = [&](int row) { return exchange_->base() + row * kExchangeRowBytes + slot; };
        std::byte *mine = at(me_);
        if (len > 0) {
            std::memcpy(mine + 16, buf, len);   /* a barrier passes no buffer */
        }
        sst::store_word(mine + 8, static_cast<int64_t>(len));
        const size_t off = static_cast<size_t>(me_) * kExchangeRowBytes + slot;
        ucs_status_t status = UCS_OK;
        for (int row : x.rows) {
            if (row != me_ && status == UCS_OK) {
                status = exchange_->push(pusher_, row, off + 8, 8 + len, put_purpose::other);
            }
        }
        status = (status != UCS_OK) ? status : pusher_.fence();
        sst::store_word(mine, static_cast<int64_t>(round));   /* the round last */
        for (int row : x.rows) {
            if (row != me_ && status == UCS_OK) {
                status = exchange_->push(pusher_, row, off, 8, put_purpose::other);
            }
        }
        if (status != UCS_OK) {
            return status;
        }
        const double deadline = now_s() + boot_timeout_s_;
        for (;;) {
            bool all = true;
            for (int row : x.rows) {
                all = all && sst::load_word(at(row)) >= static_cast<int64_t>(round);
            }
            if (all) {
                break;
            }
            if (now_s() > deadline) {
                return UCS_ERR_TIMED_OUT;
            }
            pusher_.reap();
            if (ucp_worker_progress(node_.worker()) == 0) {
                std::this_thread::sleep_for(std::chrono::microseconds(20));
            }
        }
        size_t total = 0;
        for (size_t r = 0; r < x.rows.size(); ++r) {
            lens[r] = static_cast<size_t>(sst::load_word(at(x.rows[r]) + 8));
            total += lens[r];
        }
        auto *out = static_cast<std::byte*>(std::malloc(std::max<size_t>(total, 1)));
        if (out == nullptr) {
            return UCS_ERR_NO_MEMORY;
        }
        size_t pos = 0;
        for (size_t r = 0; r < x.rows.size(); ++r) {
            std::memcpy(out + pos, at(x.rows[r]) + 16, lens[r]);
            pos += lens[r];
        }
        *all_p = out;
        return UCS_OK;
    }

    /* Every survivor delivered the same prefix after a failure: build the
     * next view's SST, SMC and RDMC over the survivors (so large messages go
     * on), exchanging what that needs through the old view. false: the
     * exchange failed (another failure meanwhile); install the old way. */
    bool rebuild_over_survivors()
    {
        std::vector<int> members, senders, rows = survivors();
        for (int row : rows) {
            members.push_back(original_members_[row]);
        }
        for (int rank : view_.senders) {
            if (std::find(members.begin(), members.end(), rank) != members.end()) {
                senders.push_back(rank);
            }
        }
        static const tc_bootstrap_ops_t ops = {
                "view exchange", &group_impl::exchange_allgatherv,
                [](void *ctx) { delete static_cast<exchange_ctx*>(ctx); }};
        auto ctx        = std::make_unique<exchange_ctx>();
        ctx->impl       = this;
        ctx->rows       = rows;
        const int rank  = static_cast<int>(std::find(rows.begin(), rows.end(), me_) - rows.begin());
        tc_bootstrap_h boot;
        ucs_status_t status = tc_bootstrap_create(&ops, ctx.get(), rank,
                                                  static_cast<int>(rows.size()), &boot);
        if (status != UCS_OK) {
            return false;
        }
        ctx.release();   /* the bootstrap owns it now */
        status = node_.enter_view(boot, members, node_.rank(), true);
        move_to_next_view(status, members, senders, -1, max_id_, false);
        return true;
    }

    /* Every member of the next view is here (the node's collectives run over
     * their bootstrap after @a entered): build that view, hand it what
     * outlives a view, and retire this one. A failure fails the group: the
     * others have left this view too. */
    void move_to_next_view(ucs_status_t entered, const std::vector<int> &members,
                           const std::vector<int> &senders, int sponsor_id, int max_id,
                           bool with_joiner)
    {
        std::unique_ptr<group_impl> next;
        ucs_status_t status = entered;
        if (status == UCS_OK) {
            group_params p = params_;
            p.members      = members;
            p.senders      = params_.senders.empty() ? std::vector<int>{} : senders;
            status = build_view(node_, p, senders, epoch_ + 1, sponsor_id, false, next);
        }
        if (status != UCS_OK) {
            ucs_error("group: epoch %ld: building the next view failed: %s",
                      static_cast<long>(epoch_), ucs_status_string(status));
            fail_on(status);
            return;
        }
        next->max_id_          = max_id;
        next->join_listener_   = join_listener_;
        /* a joiner another member sponsors asks again in the new view */
        next->joiner_          = std::move(joiner_);
        next->rendezvous_      = std::move(rendezvous_);
        next->rendezvous_addr_ = rendezvous_addr_;
        next->joiner_checked_  = joiner_checked_;
        next->joiner_since_s_  = joiner_since_s_;
        next->inherit_counters(*this);
        next->count(&group_stats::views);
        if (with_joiner) {
            next->count(&group_stats::joins);
        }
        const double took = now_s() - wedge_started_s_;
        next->last_view_change_ms_.store(took * 1e3);
        ucs_diag("group: installed epoch %ld with %zu members (%s), %.3f ms after the wedge",
                 static_cast<long>(epoch_ + 1), members.size(),
                 with_joiner ? "with a joiner" : "rebuilt", took * 1e3);
        superseded_ = true;
        tc_progress_poller_remove(node_.engine(), poller_id_);
        poller_id_ = -1;
        owner_->replace(std::move(next));   /* keeps this object alive, retired */
    }

    void inherit_counters(const group_impl &old)
    {
        for (auto field : kCounterFields) {
            stats_.*field = __atomic_load_n(&(old.stats_.*field), __ATOMIC_RELAXED);
        }
    }

public:
    /* The part of creating a view every member of it does together: SST,
     * SMC and RDMC, the sponsor's state to a joiner, then start. */
    static ucs_status_t build_view(ucp_node &node, const group_params &p,
                                   std::vector<int> senders, int64_t epoch, int sponsor_id,
                                   bool joiner, std::unique_ptr<group_impl> &out)
    {
        tc_config_t config;
        ucs_status_t status = tc_config_read(&config);
        if (status != UCS_OK) {
            return status;
        }
        auto impl = std::make_unique<group_impl>(node, p, std::move(senders), config, epoch);
        tc_config_release(&config);
        status = impl->init();
        if (status == UCS_OK && p.rdmc_max_message > 0) {
            std::unique_ptr<rdmc::engine> engine;
            status = create_rdmc(node, p, impl.get(), engine);
            impl->attach_rdmc(std::move(engine));
        }
        std::vector<std::byte> state;
        if (status == UCS_OK && node.rank() == sponsor_id && p.get_state) {
            state = p.get_state();
        }
        std::vector<std::vector<std::byte>> all;
        if (status == UCS_OK) {
            status = node.allgather_blobs(state, all);
        }
        if (status == UCS_OK && joiner && p.set_state) {
            p.set_state(all[sponsor_id]);
        }
        if (status == UCS_OK) {
            status = node.barrier();   /* nobody's first message before the state */
        }
        if (status == UCS_OK) {
            status = impl->start();
        }
        if (status == UCS_OK) {
            out = std::move(impl);
        }
        return status;
    }

    void set_owner(group *owner) { owner_ = owner; }

    /* Views after failures are rebuilt (not narrowed) when the group has
     * RDMC: its engine must span exactly the members. Same on every rank. */
    static bool rebuilds_on_failure(const group_params &p)
    {
        return p.rdmc_max_message > 0 && !p.threaded_senders;
    }
    bool superseded() const { return superseded_; }

    ucs_status_t listen_for_joiners()
    {
        if (params_.join_port == 0) {
            return UCS_OK;
        }
        auto listener = std::make_shared<join::socket_fd>();
        ucs_status_t status = join::listen_on(params_.join_port, *listener);
        if (status != UCS_OK) {
            return status; /* logged, with the port */
        }
        join_listener_ = std::move(listener);
        return UCS_OK;
    }

private:

    /* --- receiving and delivery ----------------------------------------- */

    /* Take message @a index of @a sender (or a null run starting there);
     * returns the next index, or -1 on a malformed slot. */
    static constexpr int64_t kNotYet = -2;  /* consume(): RDMC data still on its way */

    /* For a large message's slot: accept its transfer (once, in this
     * sender's order) and say whether all its blocks are here. */
    bool large_arrived(int sender, int64_t index)
    {
        smc::rdmc_descriptor d;
        std::memcpy(&d, slot(sender, index) + sizeof(smc::slot_header), sizeof(d));
        const int root = sender_member_[sender];
        if (sender == my_sender_) {
            return own_large_.count(d.transfer) != 0;
        }
        auto &accepted = rdmc_accepted_[root];
        while (accepted <= d.transfer) {
            if (rdmc_->accept(root) != UCS_OK) {
                return false;
            }
            ++accepted;
        }
        return rdmc_arrived_.count({root, d.transfer}) != 0;
    }

    std::span<const std::byte> large_data(int sender, int64_t index, int64_t &transfer) const
    {
        smc::rdmc_descriptor d;
        std::memcpy(&d, slot(sender, index) + sizeof(smc::slot_header), sizeof(d));
        transfer = d.transfer;
        if (sender == my_sender_) {
            return own_large_.at(d.transfer).data;
        }
        return rdmc_arrived_.at({sender_member_[sender], d.transfer});
    }

    void release_large(int sender, int64_t transfer)
    {
        if (sender == my_sender_) {
            auto &o     = own_large_[transfer];
            o.delivered = true;
            if (o.sent) {
                rdmc_->release(me_, transfer);  /* RDMC's members are the creation view's */
                own_large_.erase(transfer);
                    }
            return;
        }
        const int root = sender_member_[sender];
        rdmc_->release(root, transfer);
        rdmc_arrived_.erase({root, transfer});
    }

    int64_t consume(int sender, int64_t index)
    {
        const auto *h     = header(sender, index);
        const bool is_null = h->flags & smc::SLOT_FLAG_NULL;
        const int64_t sent = (sender == my_sender_) ? pushed() : get(sender_member_[sender],
                                                                      col_sent_);
        const int64_t count = is_null ? h->size : 1;
        const bool is_large = (h->flags & smc::SLOT_FLAG_RDMC) && rdmc_;
        if (is_large && h->index == index && h->size == sizeof(smc::rdmc_descriptor) &&
            !large_arrived(sender, index)) {
            return kNotYet;
        }
        if ((h->index != index) || (!is_null && h->size > params_.max_payload) ||
            (is_null && (count < 1 || count > w_ || index + count > sent))) {
            if (!malformed_logged_) {
                malformed_logged_ = true;
                ucs_error("group: malformed slot from rank %d: index %ld (expected %ld), "
                          "size %u (max %zu), flags %u", view_.senders[sender],
                          static_cast<long>(h->index), static_cast<long>(index), h->size,
                          params_.max_payload, h->flags);
            }
            return -1;
        }
        for (int64_t i = index; i < index + count; ++i) {
            null_slot_[orig_sender_[sender] * w_ + i % w_] = is_null;
        }
        received_[sender] = index + count;
        set(col_received_, received_[sender], orig_sender_[sender]);
        set(col_published_, order::contiguous_received(received_) + 1);
        if (params_.mode == delivery_mode::raw && !is_null) {
            deliver_one(sender, index, order::sequence_of(index, sender, s_));
        }
        return index + count;
    }

    ucs_status_t push_report(put_purpose purpose)
    {
        report_due_          = false;
        delivery_report_due_ = false;
        last_report_s_       = now_s();
        return table_->push(pusher_, col_received_, col_delivered_, purpose);
    }

    void deliver_one(int sender, int64_t index, int64_t seq)
    {
        if (null_slot_[orig_sender_[sender] * w_ + index % w_]) {
            return;
        }
        const auto *h = header(sender, index);
        count(&group_stats::delivered);
        std::span<const std::byte> data{reinterpret_cast<const std::byte*>(h + 1), h->size};
        int64_t transfer = -1;
        if ((h->flags & smc::SLOT_FLAG_RDMC) && rdmc_) {
            data = large_data(sender, index, transfer);
            count(&group_stats::rdmc_delivered);
        }
        struct release_after {
            group_impl *g;
            int        sender;
            int64_t    transfer;
            ~release_after()
            {
                if (transfer >= 0) {
                    g->release_large(sender, transfer);
                }
            }
        } releaser{this, sender, transfer};
        if (!params_.on_deliver) {
            return;
        }
        message m{view_.senders[sender], index, seq, data};
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
        if (count(&group_stats::callback_errors) == 0) {
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

    /* The protocol as predicate/trigger pairs, evaluated in this order on
     * every pass of the engine. */
    void add_protocol_predicates()
    {
        /* membership: heartbeats, suspicion, wedge, cleanup, next view */
        protocol_.add([this] { return !expelled_; }, [this] { return watch_members(); });
        protocol_.add([this] { return !expelled_ && must_wedge(); }, [this] { return wedge(); });
        protocol_.add([this] { return wedged_ && !expelled_ && leader() == me_; },
                      [this] { return lead_cleanup(); });
        protocol_.add([this] { return wedged_ && !expelled_; },
                      [this] { return follow_cleanup(); });
        protocol_.add([this] { return wedged_ && !expelled_ && !superseded_ &&
                                      all_survivors_done(); },
                      [this] {
                          const int64_t admit = raw(me_, col_admit_);
                          if (admit > 0 && admit_joiner(static_cast<int>(admit - 1))) {
                              return 1u;
                          }
                          if (admit == 0 && exchange_ && rebuild_over_survivors()) {
                              return 1u;
                          }
                          return install_next_view();
                      });

        /* threaded senders' requests: phase changes for close() */
        protocol_.add([this] { return phase_request_.load(std::memory_order_acquire) >
                                      raw(me_, col_phase_); },
                      [this] {
                          fail_on(push_phase(phase_request_.load(std::memory_order_acquire)));
                          return 1u;
                      });
        protocol_.add([this] { return ok() && my_sender_ >= 0 && batched_or_threaded(); },
                      [this] { return maybe_push_pending(); });
        protocol_.add([this] { return receiving() && new_messages(); },
                      [this] { return receive_new(); });
        protocol_.add([this] { return ok() && my_sender_ >= 0 && nulls_needed() > 0; },
                      [this] { return send_nulls(); });
        protocol_.add([this] { return active() && stable_beyond_delivered(); },
                      [this] { return deliver_stable(); });
        protocol_.add([this] { return receiving() && report_due_; }, [this] {
            fail_on(push_report(put_purpose::receive_report));
            return 1u;
        });
        protocol_.add([this] { return ok() && delivery_report_due_; }, [this] {
            if ((now_s() - last_report_s_) > kDeliveryReportIdleS) {
                fail_on(push_report(put_purpose::delivery_report));
            }
            return 1u; /* keep the engine from sleeping past the deadline */
        });
    }

    /* the ordinary protocol runs only in an undisturbed view */
    bool ok() const { return status_ok() && active(); }

    /* Receiving and reporting go on in a wedge that only admits a joiner:
     * every member is alive, so the trim can wait until nothing is in flight */
    bool receiving() const
    {
        return ok() || (status_ok() && wedged_ && !expelled_ && !minority_ && !superseded_ &&
                        !(suspected() & view_mask()) && raw(me_, col_trim_epoch_) != epoch_);
    }

    bool batched_or_threaded() const { return batched_ || threaded_; }

    /* Batched sender, on the engine's pass: push by size, age, idleness or
     * request. */
    unsigned maybe_push_pending()
    {
        advance_committed();
        const int64_t pending = committed_ - pushed();
        const bool requested  = flush_requested_.exchange(false, std::memory_order_acq_rel);
        const int commits     = commits_since_poll_.exchange(0, std::memory_order_relaxed);
        if (pending <= 0) {
            return 0;
        }
        if (oldest_pending_s_ == 0) {
            oldest_pending_s_ = now_s();
        }
        flush_cause cause;
        if (requested || !batched_) {
            cause = flush_cause::explicit_call;
        } else if (pending >= batch_) {
            cause = flush_cause::full;
        } else if (flush_s_ <= 0 || now_s() - oldest_pending_s_ >= flush_s_) {
            cause = flush_cause::deadline;
        } else if (commits == 0) {
            cause = flush_cause::idle;
        } else {
            return 1; /* pending: keep the engine awake until the deadline */
        }
        fail_on(push_batch(cause));
        return 1;
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
                const int64_t next = consume(s, received_[s]);
                if (next == kNotYet) {
                    break; /* RDMC blocks still arriving: later passes retry */
                }
                if (next < 0) {
                    fail_on(UCS_ERR_IO_ERROR);
                    break;
                }
                ++events;
                if (!batched_) {
                    fail_on(push_report(put_purpose::receive_report));
                }
            }
        }
        if (batched_ && events != 0) {
            report_due_ = true; /* one report after consuming everything new */
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
        unsigned done = g->pusher_.reap();
        if (g->closed_out_) {
            return done;
        }
        if (g->join_listener_ && !g->closed_.load(std::memory_order_relaxed) &&
            !g->out_of_group() && !g->failed_) {
            /* accept() and recv() are system calls: not on every pass */
            const double now = now_s();
            if (now - g->joins_served_s_ >= kJoinPollIntervalS) {
                g->joins_served_s_ = now;
                done += g->serve_joins();
            }
        }
        return done + g->protocol_.evaluate();
    }

    ucp_node                                 &node_;
    group_params                             params_;
    view                                     view_;
    sst::pusher                              pusher_;
    sst::layout                              row_;
    sst::column<int64_t>                     col_sent_, col_received_, col_published_,
                                             col_delivered_, col_phase_;
    std::unique_ptr<sst::table>              table_;
    std::unique_ptr<sst::mirrored_region>    slots_;
    sst::predicates                          protocol_;
    int                                      n_ = 0, s_ = 0, me_ = -1, my_sender_ = -1;
    unsigned                                 w_ = 0, batch_ = 1;
    double                                   flush_s_  = 0;
    bool                                     batched_  = false;
    bool                                     threaded_ = false;
    std::vector<int>                         sender_member_;  /* view sender -> row */
    std::vector<int>                         orig_sender_;    /* view sender -> column */
    std::vector<int>                         view_rows_;      /* view member -> row */
    std::vector<int>                         original_members_, original_senders_;
    int                                      s0_ = 0;         /* senders at creation */
    int64_t                                  epoch_ = 1;
    sst::column<int64_t>                     col_epoch_, col_heartbeat_, col_suspected_,
                                             col_wedged_, col_trim_, col_trim_epoch_,
                                             col_done_;
    double                                   heartbeat_s_ = 0.01, suspect_s_ = 1.0;
    double                                   last_heartbeat_s_ = 0, wedge_started_s_ = 0;
    double                                   wait_timeout_s_   = 30.0;
    std::vector<double>                      last_seen_;      /* by row */
    std::vector<int64_t>                     seen_heartbeat_; /* by row */
    std::vector<int>                         put_failed_rank_;
    bool                                     wedged_ = false, trim_applied_ = false;
    bool                                     closed_out_ = false; /* drained: no more puts */
    /* RDMC for messages above max_payload */
    std::unique_ptr<rdmc::engine>            rdmc_;
    int64_t                                  rdmc_epoch_ = 0;  /* the view it spans */
    struct own_large {
        std::span<const std::byte> data;
        bool                       sent, delivered;
    };
    std::map<int64_t, own_large>             own_large_;      /* by transfer */
    std::map<std::pair<int, int64_t>, std::span<const std::byte>> rdmc_arrived_;
    std::map<int, int64_t>                   rdmc_accepted_;  /* per root: accepted */

public:
    /* collective, from group::create; members and non-members alike */
    static ucs_status_t create_rdmc(ucp_node &node, const group_params &p,
                                    group_impl *impl, std::unique_ptr<rdmc::engine> &out)
    {
        rdmc::engine_params ep;
        ep.members       = p.members;
        ep.max_message   = p.rdmc_max_message;
        ep.block_size    = p.rdmc_block;
        ep.buffers       = static_cast<unsigned>(p.members.size()) + 1;
        ep.auto_release  = false;
        ep.manual_accept = true;
        if (impl != nullptr) {
            ep.on_receive = [impl](const rdmc::transfer_info &t) {
                impl->rdmc_arrived_[{t.root, t.index}] = t.data;
            };
            ep.on_sent = [impl](const rdmc::transfer_info &t) {
                auto it = impl->own_large_.find(t.index);
                if (it == impl->own_large_.end()) {
                    return;
                }
                it->second.sent = true;
                if (it->second.delivered) {
                    impl->rdmc_->release(impl->me_, t.index);
                    impl->own_large_.erase(it);
                }
            };
        }
        return rdmc::engine::create(node, ep, out);
    }

    void attach_rdmc(std::unique_ptr<rdmc::engine> e)
    {
        rdmc_       = std::move(e);
        rdmc_epoch_ = epoch_;
    }

private:
    bool                                     expelled_ = false, minority_ = false;
    std::atomic<double>                      last_view_change_ms_{0};
    /* joins */
    group                                    *owner_ = nullptr;
    sst::column<int64_t>                     col_admit_, col_join_req_, col_rdv_addr_;
    std::shared_ptr<join::socket_fd>         join_listener_;  /* lives across views */
    join::socket_fd                          joiner_;         /* the one we sponsor */
    join::socket_fd                          rendezvous_;     /* its view's meeting point */
    double                                   joiner_since_s_ = 0;
    double                                   joins_served_s_ = 0;  /* last look */
    int64_t                                  rendezvous_addr_ = 0;
    bool                                     joiner_checked_ = false;
    bool                                     superseded_     = false;
    int                                      max_id_         = 0;  /* ids ever used */
    double                                   boot_timeout_s_ = 30;
    std::unique_ptr<sst::mirrored_region>    exchange_;       /* rebuilds after failures */
    size_t                                   stride_ = 0;
    std::vector<int64_t>                     received_;       /* mirror of our row */
    std::vector<uint8_t>                     null_slot_;      /* [sender][slot]: a null */

    /* sender side: reserved_ >= committed_ >= pushed_ */
    mutable std::mutex                       mutex_;          /* guards reserved_ */
    std::atomic<int64_t>                     reserved_{0};    /* written under mutex_ */
    mutable int64_t                          free_until_ = 0; /* under mutex_ */
    int64_t                                  committed_ = 0;  /* engine's thread */
    std::atomic<int64_t>                     pushed_{0};
    std::unique_ptr<std::atomic<int64_t>[]>  committed_flag_; /* per slot: index + 1 */
    std::atomic<int>                         commits_since_poll_{0};
    std::atomic<bool>                        flush_requested_{false};
    std::atomic<int64_t>                     phase_request_{0};
    double                                   oldest_pending_s_ = 0;
    int64_t                                  pending_index_ = -1;  /* get_buffer() */
    size_t                                   pending_size_  = 0;

    bool                                     report_due_          = false;
    bool                                     delivery_report_due_ = false;
    double                                   last_report_s_       = 0;
    int                                      poller_id_           = -1;
    std::atomic<bool>                        closed_{false};
    bool                                     failed_              = false;
    bool                                     malformed_logged_    = false;
    group_stats                              stats_;  /* relaxed atomic updates */
};

/* --- group ------------------------------------------------------------- */

group::group(std::unique_ptr<group_impl> impl) : impl_(std::move(impl))
{
    impl_->set_owner(this);
}

void group::replace(std::unique_ptr<group_impl> next)
{
    retired_.push_back(std::move(impl_));
    impl_ = std::move(next);
    impl_->set_owner(this);
}

template<class Op> ucs_status_t group::on_current_view(Op op)
{
    for (;;) {
        group_impl *impl    = impl_.get();
        ucs_status_t status = op(*impl);
        if (status != UCS_ERR_CANCELED || !impl->superseded() || impl_.get() == impl) {
            return status;
        }
    }
}

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
        tc_config_t config;
        status = tc_config_read(&config);
        if (status != UCS_OK) {
            return status;
        }
        impl = std::make_unique<group_impl>(node, params, senders, config);
        tc_config_release(&config);
    }
    /* the regions are created collectively: non-members take part too */
    std::unique_ptr<sst::mirrored_region> none;
    if (!member) {
        size_t ignored = 0;
        status = sst::mirrored_region::create(node, params.members, ignored, none);
        if (status == UCS_OK) {
            status = sst::mirrored_region::create(node, params.members, ignored, none);
        }
        if (status == UCS_OK && group_impl::rebuilds_on_failure(params)) {
            status = sst::mirrored_region::create(node, params.members, ignored, none);
        }
        if (status == UCS_OK && params.rdmc_max_message > 0) {
            std::unique_ptr<rdmc::engine> no_engine;
            status = group_impl::create_rdmc(node, params, nullptr, no_engine);
        }
        return status;
    }
    status = impl->init();
    if (status == UCS_OK) {
        status = impl->listen_for_joiners();
    }
    if (status != UCS_OK) {
        return status;
    }
    if (params.rdmc_max_message > 0) {
        std::unique_ptr<rdmc::engine> engine;
        status = group_impl::create_rdmc(node, params, impl.get(), engine);
        if (status != UCS_OK) {
            return status;
        }
        impl->attach_rdmc(std::move(engine));
    }
    status = impl->start();
    if (status != UCS_OK) {
        return status;
    }
    out = std::make_unique<group>(std::move(impl));
    return UCS_OK;
}

ucs_status_t group::join(ucp_node &node, const group_params &params, const std::string &contact,
                         std::unique_ptr<group> &out)
{
    out.reset();
    tc_config_t config;
    ucs_status_t status = tc_config_read(&config);
    if (status != UCS_OK) {
        return status;
    }
    const double timeout      = config.boot_timeout;
    const double wait_timeout = config.group_timeout;
    tc_config_release(&config);
    if (params.threaded_senders) {
        ucs_error("group: joins are not supported with threaded senders");
        return UCS_ERR_UNSUPPORTED;
    }

    join::socket_fd s;
    status = join::connect_to(contact, timeout, s);
    if (status != UCS_OK) {
        return status; /* logged */
    }
    const join::request req = group_impl::join_request_for(params);
    status = join::write_all(s, &req, sizeof(req), timeout);
    join::reply r{};
    if (status == UCS_OK) {
        /* the members first finish the current view: bounded by the same
         * timeout plus the time a view change may take */
        status = join::read_all(s, &r, sizeof(r), timeout + wait_timeout);
    }
    if (status != UCS_OK) {
        ucs_error("group: no answer from %s to the join request: %s", contact.c_str(),
                  ucs_status_string(status));
        return status;
    }
    r.reason[sizeof(r.reason) - 1] = '\0';
    if (r.magic != join::kReplyMagic || r.version != join::kVersion) {
        ucs_error("group: %s answered the join request with garbage", contact.c_str());
        return UCS_ERR_IO_ERROR;
    }
    if (r.status != UCS_OK) {
        ucs_error("group: %s refused the join: %s", contact.c_str(), r.reason);
        return static_cast<ucs_status_t>(r.status);
    }
    if (r.member_count < 1 || r.member_count > join::kMaxMembers || r.sender_count < 0 ||
        r.sender_count > r.member_count || r.rendezvous_size != r.member_count ||
        r.id < 0 || r.id >= join::kMaxMembers) {
        ucs_error("group: %s sent an invalid admission", contact.c_str());
        return UCS_ERR_IO_ERROR;
    }
    std::vector<int> members(r.members, r.members + r.member_count);
    std::vector<int> senders(r.senders, r.senders + r.sender_count);
    std::vector<int> ids(r.rendezvous, r.rendezvous + r.rendezvous_size);
    const int my_rank = static_cast<int>(std::find(ids.begin(), ids.end(), r.id) - ids.begin());
    const std::string root = join::host_of(contact) + ":" + std::to_string(r.rendezvous_port);
    tc_bootstrap_h boot;
    status = tc_bootstrap_tcp_create(root.c_str(), -1, my_rank, r.rendezvous_size, timeout,
                                     &boot);
    if (status == UCS_OK) {
        status = node.enter_view(boot, ids, r.id);
    }
    std::unique_ptr<group_impl> impl;
    if (status == UCS_OK) {
        group_params p = params;
        p.members      = members;
        p.senders      = params.senders.empty() ? std::vector<int>{} : senders;
        status = group_impl::build_view(node, p, senders, r.epoch, r.sponsor, true, impl);
    }
    if (status == UCS_OK) {
        status = impl->listen_for_joiners();
    }
    if (status != UCS_OK) {
        ucs_error("group: joining view %ld failed: %s", static_cast<long>(r.epoch),
                  ucs_status_string(status));
        return status;
    }
    out = std::make_unique<group>(std::move(impl));
    return UCS_OK;
}

ucs_status_t group::send(size_t size, const std::function<void(std::span<std::byte>)> &fill,
                         bool block, bool urgent)
{
    return on_current_view([&](group_impl &g) { return g.send(size, fill, block, urgent); });
}

ucs_status_t group::get_buffer(size_t size, std::span<std::byte> &buffer, bool block)
{
    return on_current_view([&](group_impl &g) { return g.get_buffer(size, buffer, block); });
}

ucs_status_t group::commit() { return impl_->commit(); }
ucs_status_t group::flush(bool stable)
{
    return on_current_view([&](group_impl &g) { return g.flush(stable); });
}
ucs_status_t group::close()
{
    return on_current_view([](group_impl &g) { return g.close(); });
}
const view &group::current_view() const { return impl_->current_view(); }
bool group::is_sender() const { return impl_->is_sender(); }
group_stats group::stats() const { return impl_->stats(); }

} // namespace tc
