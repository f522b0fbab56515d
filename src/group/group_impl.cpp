/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "group/group_impl.hpp"

#include "group/group_config.h"
#include "core/sequence.hpp"

#include <twochains/config.h>
#include <ucs/debug/log_def.h>

#include <algorithm>
#include <cstdio>

namespace tc {

using sst::put_purpose;

ucs_status_t group_settings::resolve(const group_params &p, group_settings &out)
{
    tc_config_t base;
    ucs_status_t status = tc_config_read(&base);
    if (status != UCS_OK) {
        return status;
    }
    const double boot_timeout = base.boot_timeout;
    tc_config_release(&base);
    tc_group_config_t config;
    status = tc_group_config_read(&config);
    if (status != UCS_OK) {
        return status;
    }
    group_settings s;
    s.window         = p.window;
    s.stride         = smc::slot_stride(p.max_payload);
    s.batched        = p.smc.value_or(config.smc_mode ? smc_mode::batched : smc_mode::urgent) ==
                       smc_mode::batched;
    s.batch          = std::max(1u, std::min(p.batch.value_or(config.smc_batch), s.window));
    s.flush_s        = p.flush_us ? *p.flush_us * 1e-6 : config.smc_flush;
    s.threaded       = p.threaded_senders;
    s.heartbeat_s    = config.heartbeat;
    s.suspect_s      = config.suspect_timeout;
    s.wait_timeout_s = config.group_timeout;
    s.boot_timeout_s = boot_timeout;
    s.max_members    = config.max_members;
    s.audit_rows     = std::max(1u, config.audit_rows);
    out              = s;
    return UCS_OK;
}

const char *group_settings::member_count_refusal(size_t members, char *why, size_t len) const
{
    if (members <= max_members) {
        return nullptr;
    }
    std::snprintf(why, len, "%zu members, more than UCX_TC_GROUP_MAX_MEMBERS=%u allows",
                  members, max_members);
    return why;
}

const char *group_settings::refuse_member_count(size_t members, char *why, size_t len)
{
    tc_group_config_t config;
    if (tc_group_config_read(&config) != UCS_OK) {
        std::snprintf(why, len, "the UCX_TC_* group settings do not parse");
        return why;   /* UCX's parser logged which */
    }
    group_settings s;
    s.max_members = config.max_members;
    return s.member_count_refusal(members, why, len);
}

void group_context::fail_on(ucs_status_t status)
{
    if (status != UCS_OK && !failed) {
        failed = true;
        ucs_error("group: protocol error %s; this member stops processing",
                  ucs_status_string(status));
    }
}

namespace {

view creation_view(const group_params &p, std::vector<int> senders, int64_t epoch)
{
    view v;
    v.epoch   = epoch;
    v.members = p.members;
    v.senders = std::move(senders);
    return v;
}

/* The regions of a view, created collectively among its members, in this
 * order. */
struct view_regions {
    std::unique_ptr<sst::table>           table;
    std::unique_ptr<sst::mirrored_region> slots, exchange;
};

ucs_status_t create_view_regions(ucp_node &node, const group_params &p, const sst::layout &row,
                                 size_t window_bytes, std::span<const int> window_owners,
                                 view_regions &out)
{
    ucs_status_t status = sst::table::create(node, p.members, row, out.table);
    if (status == UCS_OK) {
        /* one window per sender column, its sender's alone */
        status = sst::mirrored_region::create(node, p.members, window_bytes, window_owners,
                                              out.slots);
    }
    if (status == UCS_OK && membership::view_exchange::rebuilds_on_failure(p)) {
        std::vector<int> rows(p.members.size());
        for (size_t m = 0; m < rows.size(); ++m) {
            rows[m] = static_cast<int>(m);
        }
        status = sst::mirrored_region::create(node, p.members,
                                              membership::view_exchange::row_bytes(), rows,
                                              out.exchange);
    }
    return status;
}

/* What a wait that timed out logs: where our sending stood. */
void log_sender(const group_context &ctx, const smc::sender &send,
                const large_messages &large, ucs_log_level_t level)
{
    ucs_log(level, "group: epoch %ld%s: reserved %ld pushed %ld, delivered-everywhere bound %ld",
            static_cast<long>(ctx.epoch()), ctx.state.changing_view() ? " (wedged)" : "",
            static_cast<long>(send.reserved()), static_cast<long>(send.pushed()),
            static_cast<long>(send.free_until() - ctx.settings.window));
    if (level == UCS_LOG_LEVEL_ERROR && ucs_log_is_enabled(UCS_LOG_LEVEL_DEBUG)) {
        large.dump(stderr);
    }
}

} // namespace

group_impl::group_impl(ucp_node &node, const group_params &params, std::vector<int> senders,
                       const group_settings &settings, std::shared_ptr<replicated_jams> jams,
                       int64_t epoch)
    : jams_(std::move(jams)),
      ctx_(node, params, settings, creation_view(params, std::move(senders), epoch), *jams_),
      large_(ctx_),
      wait_(ctx_, [this] { return static_cast<uint64_t>(send_.reserved() + send_.pushed()); },
            [this](ucs_log_level_t level) { log_sender(ctx_, send_, large_, level); }),
      receive_(ctx_, deliver_, large_), deliver_(ctx_, receive_, large_),
      send_(ctx_, receive_, wait_), detect_(ctx_), change_(ctx_, send_, deliver_),
      exchange_(ctx_), joins_(ctx_), phases_(ctx_, receive_, send_, wait_), poller_(ctx_),
      next_(*this)
{
}

group_impl::~group_impl()
{
    if (!ctx_.state.is(member_state::superseded)) {
        joins_.turn_away("the group was destroyed before admitting it");
    }
    poller_.remove();   /* before the components it calls go */
}

ucs_status_t group_impl::init()
{
    const auto &s = ctx_.settings;
    view_regions regions;
    std::vector<int> window_owners(static_cast<size_t>(ctx_.map.sender_count()));
    for (int sender = 0; sender < ctx_.map.sender_count(); ++sender) {
        window_owners[ctx_.map.sender_column(sender)] = ctx_.map.sender_row(sender);
    }
    ucs_status_t status = create_view_regions(ctx_.node, ctx_.params, ctx_.layout,
                                              s.stride * s.window, window_owners, regions);
    if (status != UCS_OK) {
        return status;
    }
    ctx_.table = std::move(regions.table);
    ctx_.slots = std::move(regions.slots);
    ctx_.map.set_my_row(ctx_.table->my_index());
    exchange_.adopt(std::move(regions.exchange));   /* after our row is known */
    detect_.restart_clocks();
    ctx_.set(ctx_.cols.epoch, ctx_.epoch());
    status = ctx_.push(ctx_.cols.epoch, put_purpose::other);
    if (status != UCS_OK) {
        return status;
    }
    add_protocol_predicates();
    ucs_debug("group: %d members, %d senders, window %u, slot %zu bytes, %s, smc %s "
              "(batch %u, flush %.0f us)", ctx_.map.member_count(), ctx_.map.sender_count(),
              s.window, s.stride,
              ctx_.params.mode == delivery_mode::ordered ? "ordered" : "raw",
              s.batched ? "batched" : "urgent", s.batch, s.flush_s * 1e6);
    return UCS_OK;
}

ucs_status_t group_impl::add_large_messages()
{
    if (ctx_.params.rdmc_max_message == 0) {
        return UCS_OK;
    }
    std::unique_ptr<rdmc::engine> engine;
    ucs_status_t status = large_messages::create_engine(ctx_.node, ctx_.params, &large_, engine);
    if (status == UCS_OK) {
        large_.attach(std::move(engine));
        send_.allow_large(std::max(ctx_.params.max_payload, ctx_.params.rdmc_max_message));
    }
    return status;
}

ucs_status_t group_impl::start()
{
    detect_.restart_clocks();
    ucs_status_t status = poller_.add(&group_impl::poll, this);
    if (status != UCS_OK) {
        return status;
    }
    if (ctx_.params.on_view) {
        ctx_.params.on_view(ctx_.map.current());
    }
    return UCS_OK;
}

ucs_status_t group_impl::build_view(ucp_node &node, const group_params &p,
                                    std::vector<int> senders, int64_t epoch, int sponsor_id,
                                    bool joiner, std::shared_ptr<replicated_jams> jams,
                                    std::unique_ptr<group_impl> &out)
{
    group_settings settings;
    ucs_status_t status = group_settings::resolve(p, settings);
    if (status != UCS_OK) {
        return status;
    }
    auto impl = std::make_unique<group_impl>(node, p, std::move(senders), settings, jams, epoch);
    status    = impl->init();
    if (status == UCS_OK) {
        status = impl->add_large_messages();
    }
    /* the sponsor's jam state and codes travel with the application's */
    std::vector<std::byte> state;
    if (status == UCS_OK && node.rank() == sponsor_id) {
        state = jams->state_for_joiner(p.get_state ? p.get_state() : std::vector<std::byte>{});
    }
    std::vector<std::vector<std::byte>> all;
    if (status == UCS_OK) {
        status = node.allgather_blobs(state, all);
    }
    std::span<const std::byte> app_state;
    if (status == UCS_OK && joiner) {
        status = jams->take_state(all[sponsor_id], app_state);
    }
    if (status == UCS_OK && joiner && p.set_state) {
        p.set_state(app_state);
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

/* --- the application's calls --------------------------------------------- */

ucs_status_t group_impl::send(size_t size, fill_ref fill,
                              bool block, bool urgent)
{
    poller_.poke();
    return send_as(size, 0, fill, block, urgent);
}

/* An SMC slot, or an RDMC message in the place of one when it is larger
 * than a slot; @a flags mark what the message is (SLOT_FLAG_JAM). */
ucs_status_t group_impl::send_as(size_t size, uint32_t flags, fill_ref fill, bool block,
                                 bool urgent)
{
    const bool threaded = ctx_.settings.threaded;
    if (!threaded && send_.holds_buffer()) {
        ucs_error("group: send while a get_buffer() slot is held");
        return UCS_ERR_INVALID_PARAM;
    }
    if (size > ctx_.params.max_payload && large_.enabled() && !threaded) {
        ucs_status_t status = large_.usable();
        if (status == UCS_OK) {
            status = send_.check_send(size);
        }
        smc::rdmc_descriptor d;
        if (status == UCS_OK) {
            status = large_.send(size, fill, block, wait_, d);
        }
        if (status != UCS_OK) {
            return status;
        }
        /* the descriptor takes the message's place in the total order */
        return send_.send_slot(sizeof(d), smc::SLOT_FLAG_RDMC | flags, block,
                               [&](std::span<std::byte> slot) {
                                   std::memcpy(slot.data(), &d, sizeof(d));
                               });
    }
    return send_.send_slot(size, flags, block, fill, urgent);
}

ucs_status_t group_impl::send_jam(const tc_ifunc_exec_jam_t &jam, bool block)
{
    poller_.poke();
    if (ctx_.params.mode != delivery_mode::ordered) {
        ucs_error("group: replicated jams need the total order (this group delivers raw)");
        return UCS_ERR_INVALID_PARAM;
    }
    if (ctx_.settings.threaded) {
        ucs_error("group: replicated jams are sent from the engine's thread, not by "
                  "threaded senders");
        return UCS_ERR_UNSUPPORTED;
    }
    tc_ifunc_exec_plan_t plan;
    ucs_status_t status = jams_->plan(jam, plan);
    if (status != UCS_OK) {
        return status;
    }
    ucs_status_t written = UCS_OK;
    auto fill = [&](std::span<std::byte> slot) { written = jams_->write(jam, plan, slot); };
    status = send_as(plan.capacity, smc::SLOT_FLAG_JAM, fill, block, false);
    if (status != UCS_OK) {
        return status;
    }
    if (written != UCS_OK) {
        /* its slot went out, as bytes every member rejects alike */
        ucs_error("group: the jam's payload_init failed (%s); its slot goes out as a frame "
                  "every member rejects", ucs_status_string(written));
        return written;
    }
    ctx_.count(&group_stats::jams_sent);
    if (plan.with_code) {
        ctx_.count(&group_stats::jam_codes_sent);
    }
    return UCS_OK;
}

ucs_status_t group_impl::flush(bool stable)
{
    poller_.poke();
    if (ctx_.closed.load(std::memory_order_acquire)) {
        return UCS_ERR_NOT_CONNECTED;
    }
    const int64_t target = send_.reserved();
    ucs_status_t status;
    if (ctx_.settings.threaded) {
        send_.request_push();
        status = wait_.until([this, target] { return send_.pushed() >= target; });
    } else {
        status = send_.push_now(smc::flush_cause::explicit_call);
        if (status == UCS_OK) {
            status = ctx_.pusher.flush();
        }
    }
    const int me = ctx_.map.my_sender();
    if (status == UCS_OK && stable && me >= 0 && target > 0) {
        const int64_t last = order::sequence_of(target - 1, me, ctx_.map.sender_count());
        status = wait_.until([this, last] {
            return ctx_.min_over_members(ctx_.cols.delivered) - 1 >= last;
        });
    }
    return status;
}

ucs_status_t group_impl::close()
{
    poller_.poke();
    if (ctx_.closed.exchange(true)) {
        return UCS_OK;
    }
    send_.drop_held_buffer();
    const bool threaded = ctx_.settings.threaded;
    ucs_status_t status = UCS_OK;
    if (!threaded) {
        status = send_.push_now(smc::flush_cause::explicit_call);
    } else {
        send_.request_push();
    }
    if (status == UCS_OK) {
        status = phases_.set(1);
    }
    if (status == UCS_OK) {
        status = wait_.until([this] { return phases_.drained(); });
    }
    if (status == UCS_OK) {
        status = phases_.set(2);
    }
    if (status == UCS_OK) {
        status = wait_.until([this] { return ctx_.min_over_members(ctx_.cols.phase) >= 2; });
    }
    if (!threaded) {
        ucs_status_t flushed = ctx_.pusher.flush();
        status               = (status != UCS_OK) ? status : flushed;
        poller_.remove();   /* unless a view installed during close took it */
    }
    /* a view installed during close goes on closing in its successor */
    if (!ctx_.state.is(member_state::superseded)) {
        joins_.turn_away("the group closed before admitting it");
    }
    return status;
}

/* --- the engine's pass ---------------------------------------------------- */

unsigned group_impl::poll(void *arg)
{
    auto *g = static_cast<group_impl*>(arg);
    if (g->poller_.quiet()) {
        const quiet_poller::look look = g->poller_.woken();
        if (look == quiet_poller::look::nothing) {
            return 0;
        }
        if (look == quiet_poller::look::everything) {
            g->detect_.look_next_time();
        }
        g->poller_.set_quiet(false);
    }
    unsigned done = g->ctx_.pusher.reap();
    if (g->ctx_.state.is(member_state::drained)) {
        return done;
    }
    if (g->joins_.serving()) {
        done += g->joins_.serve();
    }
    done += g->protocol_.evaluate();
    if ((done == 0) && g->idle()) {
        g->poller_.note_peers_sent();
        g->poller_.set_quiet(true);
    }
    return done;
}

/* Nothing of ours is under way, and only a peer's new message, an
 * application call or a membership event could give us work. A group with
 * RDMC never goes quiet: its blocks arrive without a counter to watch. */
bool group_impl::idle() const
{
    return ok() && !large_.enabled() && !ctx_.closed.load(std::memory_order_relaxed) &&
           !joins_.serving() && !receive_.new_messages() && ctx_.pusher.in_flight() == 0 &&
           send_.reserved() == send_.pushed() && !send_.holds_buffer() &&
           !receive_.report_due() && !receive_.delivery_report_due() &&
           ctx_.mine(ctx_.cols.published) == ctx_.mine(ctx_.cols.delivered) &&
           (ctx_.map.my_sender() < 0 || send_.nulls_needed() == 0);
}

/* The protocol as predicate/trigger pairs, evaluated in this order on every
 * pass of the engine. */
void group_impl::add_protocol_predicates()
{
    const auto sends     = [this] { return ok() && ctx_.map.my_sender() >= 0; };
    /* a wedged view still takes what its senders sent before the wedge */
    const auto receiving = [this] {
        return ok() || (!ctx_.failed && change_.receives_while_wedged());
    };

    /* membership: heartbeats, suspicion, wedge, trim, next view */
    protocol_.add([this] { return detect_.watching(); }, [this] { return detect_.watch(); });
    protocol_.add([this] { return change_.must_wedge(); }, [this] { return change_.wedge(); });
    protocol_.add([this] { return change_.leads(); }, [this] { return change_.lead_trim(); });
    protocol_.add([this] { return change_.follows(); }, [this] { return change_.follow_trim(); });
    protocol_.add([this] { return change_.install_due(); }, [this] { return next_.move_on(); });

    /* threaded senders' requests: phase changes for close() */
    protocol_.add([this] { return phases_.requested(); },
                  [this] { return phases_.push_requested(); });

    /* the data path */
    protocol_.add([=, this] { return sends() && send_.push_may_be_due(); },
                  [this] { return send_.push_pending(); });
    protocol_.add([=, this] { return receiving() && receive_.new_messages(); },
                  [this] { return receive_.receive_new(); });
    protocol_.add([=, this] { return sends() && send_.nulls_needed() > 0; },
                  [this] { return send_.send_nulls(); });
    protocol_.add([this] { return ctx_.state.open() && deliver_.stable_beyond_delivered(); },
                  [this] { return deliver_.deliver_stable(); });
    protocol_.add([=, this] { return receiving() && receive_.report_due(); }, [this] {
        ctx_.fail_on(receive_.push_report(put_purpose::receive_report));
        return 1u;
    });
    protocol_.add([this] { return ok() && receive_.delivery_report_due(); },
                  [this] { return receive_.push_delivery_report_when_idle(); });
}

} // namespace tc
