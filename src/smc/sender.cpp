/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "smc/sender.hpp"

#include "core/wait.hpp"
#include "core/sequence.hpp"
#include "smc/receiver.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

namespace tc::smc {

using sst::put_purpose;

sender::sender(group_context &ctx, receiver &received, waiter &wait)
    : ctx_(ctx), received_(received), wait_(wait), max_message_(ctx.params.max_payload),
      committed_flag_(std::make_unique<std::atomic<int64_t>[]>(ctx.settings.window))
{
    for (unsigned i = 0; i < ctx_.settings.window; ++i) {
        committed_flag_[i].store(0, std::memory_order_relaxed);
    }
}

void sender::start_epoch()
{
    ctx_.set(ctx_.cols.sent, 0);
    reserved_   = 0;
    committed_  = 0;
    pushed_     = 0;
    free_until_ = 0;
    for (unsigned i = 0; i < ctx_.settings.window; ++i) {
        committed_flag_[i].store(0, std::memory_order_relaxed);
    }
    oldest_pending_s_ = 0;
}

ucs_status_t sender::check_send(size_t size) const
{
    if (ctx_.state.is(member_state::superseded)) {
        return UCS_ERR_CANCELED;
    }
    if (ctx_.state.out_of_group()) {
        ucs_error("group: %s: this member can no longer send",
                  ctx_.state.is(member_state::expelled) ? "expelled from the group" :
                  ctx_.state.is(member_state::left)     ? "left the group: it could not run "
                                                          "a replicated jam the others ran" :
                                                          "left in a minority partition");
        return UCS_ERR_REJECTED;
    }
    if (ctx_.closed.load(std::memory_order_acquire)) {
        ucs_error("group: send after close");
        return UCS_ERR_NOT_CONNECTED;
    }
    if (ctx_.map.my_sender() < 0) {
        ucs_error("group: rank %d is not a sender of this group", ctx_.node.rank());
        return UCS_ERR_INVALID_PARAM;
    }
    if (size > max_message_) {
        ucs_error("group: payload of %zu bytes exceeds the maximum of %zu", size, max_message_);
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    return UCS_OK;
}

ucs_status_t sender::reserve(size_t size, bool block, int64_t &index)
{
    ucs_status_t status = check_send(size);
    if (status != UCS_OK) {
        return status;
    }
    for (;;) {
        if (!ctx_.state.open()) {
            /* a view change is under way: the send goes into the next view */
            status = wait_.until([this] { return ctx_.state.open(); });
            if (status != UCS_OK) {
                return status;
            }
            if ((status = check_send(size)) != UCS_OK) {
                return status;
            }
        }
        {
            auto guard = lock();
            if (slot_free(reserved_)) {
                index = reserved_++;
                if (ctx_.settings.threaded) {
                    /* only send() reserves when threaded, and commits */
                    ctx_.stats.add(&group_stats::sent, 1);
                }
                return UCS_OK;
            }
        }
        ctx_.count(&group_stats::window_stalls);
        if (!block) {
            return UCS_ERR_NO_RESOURCE;
        }
        /* a wedge while we wait sends us back to the top: a slot taken in a
         * wedged view would never be pushed */
        status = wait_for_slot();
        if (status != UCS_OK) {
            return status;
        }
    }
}

ucs_status_t sender::send_slot(size_t size, uint32_t flags, bool block,
                               fill_ref fill,
                               bool urgent)
{
    int64_t index;
    ucs_status_t status = reserve(size, block, index);
    if (status != UCS_OK) {
        return status;
    }
    fill({ctx_.slot(ctx_.map.my_sender(), index) + sizeof(slot_header), size});
    return commit_index(index, size, flags, urgent);
}

ucs_status_t sender::get_buffer(size_t size, std::span<std::byte> &buffer, bool block)
{
    if (ctx_.settings.threaded) {
        ucs_error("group: get_buffer/commit are not for threaded senders; use send()");
        return UCS_ERR_UNSUPPORTED;
    }
    if (held_.index >= 0) {
        ucs_error("group: get_buffer called twice without commit");
        return UCS_ERR_INVALID_PARAM;
    }
    int64_t index;
    ucs_status_t status = reserve(size, block, index);
    if (status != UCS_OK) {
        return status;
    }
    buffer         = {ctx_.slot(ctx_.map.my_sender(), index) + sizeof(slot_header), size};
    held_.index    = index;
    held_.size     = size;
    return UCS_OK;
}

ucs_status_t sender::commit()
{
    if (held_.index < 0) {
        ucs_error("group: commit without get_buffer");
        return UCS_ERR_INVALID_PARAM;
    }
    const int64_t index = held_.index;
    held_.index         = -1;
    return commit_index(index, held_.size, 0, false);
}

void sender::drop_held_buffer()
{
    if (held_.index < 0) {
        return;
    }
    /* it is the last reserved: nothing can be reserved while one is held */
    ucs_warn("group: closed with an uncommitted get_buffer() slot; it is dropped");
    std::lock_guard<std::mutex> guard(mutex_);
    reserved_      = held_.index;
    held_.index    = -1;
}

bool sender::slot_free(int64_t index) const
{
    if (index < free_until_) {
        return true;
    }
    const int64_t delivered_everywhere = ctx_.min_over_members(ctx_.cols.delivered) - 1;
    free_until_ = order::count_through(delivered_everywhere, ctx_.map.my_sender(),
                                       ctx_.map.sender_count()) +
                  ctx_.settings.window;
    return index < free_until_;
}

ucs_status_t sender::wait_for_slot()
{
    /* our own unpushed messages hold the window: push them first */
    if (!ctx_.settings.threaded) {
        ucs_status_t status = push_now(flush_cause::full);
        if (status != UCS_OK) {
            return status;
        }
    } else {
        request_push();
    }
    return wait_.until([this] {
        auto guard = lock();
        return !ctx_.state.open() || slot_free(reserved_);
    });
}

ucs_status_t sender::commit_index(int64_t index, size_t size, uint32_t flags, bool urgent)
{
    const slot_header h{static_cast<uint32_t>(size), flags, index};
    std::memcpy(ctx_.slot(ctx_.map.my_sender(), index), &h, sizeof(h));
    committed_flag_[index % ctx_.settings.window].store(index + 1, std::memory_order_release);
    if (!ctx_.settings.threaded) {
        ctx_.stats.add(&group_stats::sent, 1);   /* threaded: counted under the lock */
    }
    /* read first: threaded senders would otherwise bounce the line per message */
    if (!committed_since_poll_.load(std::memory_order_relaxed)) {
        committed_since_poll_.store(true, std::memory_order_relaxed);
    }
    if (ctx_.settings.threaded) {
        if (urgent) {
            request_push();
        }
        return UCS_OK;
    }
    if (!ctx_.settings.batched || urgent) {
        return push_now(flush_cause::explicit_call);
    }
    if (index == committed_) {
        committed_ = index + 1; /* one thread commits in order: no flags to scan */
    } else {
        advance_committed();
    }
    if (committed_ - pushed() >= ctx_.settings.batch) {
        return push_batch(flush_cause::full);
    }
    return UCS_OK;
}

void sender::advance_committed()
{
    while (committed_flag_[committed_ % ctx_.settings.window].load(std::memory_order_acquire) ==
           committed_ + 1) {
        ++committed_;
    }
}

ucs_status_t sender::push_now(flush_cause cause)
{
    advance_committed();
    return (committed_ > pushed()) ? push_batch(cause) : UCS_OK;
}

/*
 * Ship [pushed, committed): per peer the contiguous slot segments (a null
 * run contributes its header slot only; wrap-around splits), a fence, then
 * the counter. Then our own copy counts as received.
 */
ucs_status_t sender::push_batch(flush_cause cause)
{
    const int me        = ctx_.map.my_sender();
    const unsigned w    = ctx_.settings.window;
    const int64_t first = pushed(), last = committed_;
    ucs_status_t status = UCS_OK;

    for (int64_t seg = first; seg < last && status == UCS_OK;) {
        int64_t end = seg;
        bool nulls  = false;
        /* extend while contiguous in the ring and not inside a null run */
        while (end < last) {
            const auto *h = ctx_.header(me, end);
            if (end > seg && end % w == 0) {
                break; /* wrap-around */
            }
            if (h->flags & SLOT_FLAG_NULL) {
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
        /* never past the slot, whatever its header says now */
        const size_t last_size = std::min<size_t>(ctx_.header(me, end - 1)->size,
                                                  ctx_.params.max_payload);
        const size_t bytes  = nulls ? sizeof(slot_header) :
                              (nslots - 1) * ctx_.settings.stride + sizeof(slot_header) +
                              last_size;
        status = ctx_.slots->push_all(ctx_.pusher, ctx_.map.sender_column(me),
                                      ctx_.slot(me, seg) - ctx_.slot(me, 0), bytes,
                                      nulls ? put_purpose::null_message : put_purpose::data,
                                      /*snapshot=*/false);
        seg = end;
    }
    if (status == UCS_OK) {
        status = ctx_.pusher.fence();
    }
    pushed_.store(last, std::memory_order_release);
    ctx_.set(ctx_.cols.sent, last);
    if (status == UCS_OK) {
        const bool only_nulls = ctx_.header(me, first)->flags & SLOT_FLAG_NULL &&
                                first + ctx_.header(me, first)->size == last;
        status = ctx_.push(ctx_.cols.sent,
                           only_nulls ? put_purpose::null_message : put_purpose::counter);
    }
    ctx_.count(&group_stats::batches);
    ctx_.count(&group_stats::batched_msgs, static_cast<uint64_t>(last - first));
    switch (cause) {
    case flush_cause::full: ctx_.count(&group_stats::flush_full); break;
    case flush_cause::deadline: ctx_.count(&group_stats::flush_deadline); break;
    case flush_cause::idle: ctx_.count(&group_stats::flush_idle); break;
    case flush_cause::explicit_call: ctx_.count(&group_stats::flush_explicit); break;
    }
    oldest_pending_s_ = 0;
    /* loopback: our own messages are received here without a put */
    if (status == UCS_OK && received_.consume(me, first, last, UINT_MAX).next != last) {
        status = UCS_ERR_IO_ERROR; /* own large messages are always here */
    }
    if (status == UCS_OK && !ctx_.settings.batched) {
        status = received_.push_report(put_purpose::receive_report);
    } else {
        received_.report_later();
    }
    return status;
}

unsigned sender::push_pending()
{
    advance_committed();
    const int64_t pending = committed_ - pushed();
    const bool requested  = flush_requested_.exchange(false, std::memory_order_acq_rel);
    const bool committed  = committed_since_poll_.exchange(false, std::memory_order_relaxed);
    if (pending <= 0) {
        return 0;
    }
    const double now = now_s();   /* one clock read per pass */
    if (oldest_pending_s_ == 0) {
        oldest_pending_s_ = now;
    }
    const auto cause = flush_decision({pending, ctx_.settings.batch, ctx_.settings.flush_s,
                                       now - oldest_pending_s_, !committed,
                                       requested || !ctx_.settings.batched});
    if (!cause) {
        return 1; /* pending: keep the engine awake until the deadline */
    }
    ctx_.fail_on(push_batch(*cause));
    return 1;
}

int64_t sender::nulls_needed() const
{
    const int S           = ctx_.map.sender_count();
    const int me          = ctx_.map.my_sender();
    const int64_t my_next = order::sequence_of(reserved_, me, S);
    int64_t highest       = -1;
    for (int s = 0; s < S; ++s) {
        if (received_.received(s) > 0) {
            highest = std::max(highest, order::sequence_of(received_.received(s) - 1, s, S));
        }
    }
    return (highest > my_next) ? order::count_through(highest, me, S) - reserved_ : 0;
}

unsigned sender::send_nulls()
{
    const bool batched = ctx_.settings.batched;
    int64_t first, count;
    {
        auto guard = lock();
        if (reserved_ != pushed() || (!ctx_.settings.threaded && held_.index >= 0)) {
            return 0; /* messages of our own are on their way */
        }
        count = nulls_needed();
        /* batched: one run as long as the window allows; urgent: one */
        int64_t room = 0;
        while (room < (batched ? count : std::min<int64_t>(count, 1)) &&
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
    commit_null_run(first, batched ? count : 1);
    advance_committed();
    ctx_.fail_on(push_batch(flush_cause::explicit_call));
    return 1;
}

void sender::commit_null_run(int64_t first, int64_t count)
{
    const unsigned w = ctx_.settings.window;
    /* the run's body slots are never read: mark them committed too */
    for (int64_t i = first + 1; i < first + count; ++i) {
        committed_flag_[i % w].store(i + 1, std::memory_order_release);
    }
    const slot_header h{static_cast<uint32_t>(count), SLOT_FLAG_NULL, first};
    std::memcpy(ctx_.slot(ctx_.map.my_sender(), first), &h, sizeof(h));
    committed_flag_[first % w].store(first + 1, std::memory_order_release);
    ctx_.count(&group_stats::nulls_sent, static_cast<uint64_t>(count));
}

} // namespace tc::smc
