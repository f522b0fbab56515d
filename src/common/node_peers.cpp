/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "common/node_peers.hpp"

#include "common/ucp_handles.hpp"

#include <ucs/debug/log_def.h>

#include <cstdarg>

namespace tc {

namespace {
/* set while this thread asks UCX for an endpoint it may refuse */
thread_local bool mute_this_thread = false;

ucs_log_func_rc_t ucp_node_mute_refusals(const char *, unsigned, const char *, ucs_log_level_t,
                                         const ucs_log_component_config_t *, const char *,
                                         va_list)
{
    return mute_this_thread ? UCS_LOG_FUNC_RC_STOP : UCS_LOG_FUNC_RC_CONTINUE;
}
} // namespace


void node_peers::attach(ucp_worker_h worker, tc_write_lane_h lane)
{
    worker_ = worker;
    lane_   = lane;
}

void node_peers::add(size_t count)
{
    if (eps_.size() < count) {
        eps_.resize(count, nullptr);
        peer_errors_.resize(count, false);
        addresses_.resize(count);
    }
    while (peers_.size() < count) {
        auto p  = std::make_unique<peer>();
        p->rank = static_cast<int>(peers_.size());
        peers_.push_back(std::move(p));
    }
}

void node_peers::set_address(int r, std::vector<std::byte> address)
{
    if (eps_[r] != nullptr && addresses_[r] != address) {
        /* the id now names another process (a joiner): drop the old one */
        ucp_request_param_t param{};
        param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        param.flags        = peer_errors_[r] ? UCP_EP_CLOSE_FLAG_FORCE : 0;
        tc_write_lane_unbind_sender(lane_, static_cast<uint32_t>(r), eps_[r]);
        ucs_status_ptr_t req = ucp_ep_close_nbx(eps_[r], &param);
        if (UCS_PTR_IS_PTR(req)) {
            ucp_request_free(req);   /* completes in the background */
        }
        eps_[r] = nullptr;
        peers_[r]->failed.store(false);
    }
    addresses_[r] = std::move(address);
}

ucp_ep_h node_peers::connect(int r) const
{
    if (r < 0 || static_cast<size_t>(r) >= eps_.size()) {
        ucs_error("no node %d (%zu known)", r, eps_.size());
        return nullptr;
    }
    if (eps_[r] != nullptr) {
        return eps_[r];
    }
    if (addresses_[r].empty()) {
        ucs_error("no worker address of node %d", r);
        return nullptr;
    }
    peers_[r]->failed.store(false);
    const auto *remote = reinterpret_cast<const ucp_address_t*>(addresses_[r].data());
    /* Ask for peer failure reports (a dead peer becomes an error we can
     * act on). UCX 1.13's shared-memory and self transports cannot give
     * them and refuse such endpoints: fall back to plain ones, where the
     * replication layer's heartbeats still detect failures. */
    ucs_status_t status = (r == self_) ? UCS_ERR_UNSUPPORTED : create_ep(remote, r, true);
    peer_errors_[r]     = (status == UCS_OK);
    if (status != UCS_OK) {
        status = create_ep(remote, r, false);
    }
    if (status != UCS_OK) {
        ucs_error("ucp_ep_create to rank %d failed: %s", r, ucs_status_string(status));
        eps_[r] = nullptr;
        return nullptr;
    }
    /* the write lane believes a write from node r only on this endpoint */
    status = tc_write_lane_bind_sender(lane_, static_cast<uint32_t>(r), eps_[r]);
    if (status != UCS_OK) {
        ucs_error("node %d: cannot bind the endpoint to %d to its writes: %s", self_, r,
                  ucs_status_string(status));
    }
    ucs_debug("node %d: endpoint to %d created on first use", self_, r);
    return eps_[r];
}

ucs_status_t node_peers::create_ep(const ucp_address_t *remote, int r, bool peer_errors) const
{
    peers_[r]->lane = TC_WRITE_LANE_AUTO;   /* a new endpoint may have other lanes */
    ucp_ep_params_t ep_params{};
    ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep_params.address    = remote;
    if (!peer_errors) {
        return ucp_ep_create(worker_, &ep_params, &eps_[r]);
    }
    ep_params.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
    ep_params.err_mode        = UCP_ERR_HANDLING_MODE_PEER;
    ep_params.err_handler.cb  = [](void *arg, ucp_ep_h, ucs_status_t st) {
        auto *a = static_cast<peer*>(arg);
        if (!a->failed.exchange(true)) {
            ucs_debug("endpoint to rank %d failed: %s", a->rank, ucs_status_string(st));
        }
    };
    ep_params.err_handler.arg = peers_[r].get();
    /* A refusal is expected on transports without failure reports: keep
     * UCX from logging it as an error, on this thread only. Endpoints are
     * created on first use, while other threads' nodes (in-process tests)
     * log what they must: a process-wide log level would swallow that. */
    static const bool installed = [] {
        ucs_log_push_handler(&ucp_node_mute_refusals);
        return true;
    }();
    (void)installed;
    mute_this_thread = true;
    ucs_status_t status = ucp_ep_create(worker_, &ep_params, &eps_[r]);
    mute_this_thread = false;
    return status;
}

int node_peers::connected() const
{
    int n = 0;
    for (ucp_ep_h e : eps_) {
        n += (e != nullptr);
    }
    return n;
}

bool node_peers::resolve_lane(int r) const
{
    peer &p    = *peers_[r];
    ucp_ep_h e = ep(r);
    if (e == nullptr) {
        return false;   /* the write fails on the missing endpoint */
    }
    p.lane = tc_write_lane_resolve(lane_, e);
    return p.lane == TC_WRITE_LANE_AM;
}

void node_peers::close_all(tc_progress_engine_h engine)
{
    for (size_t r = 0; r < eps_.size(); ++r) {
        if (eps_[r] == nullptr) {
            continue;
        }
        /* UCX accepts a forced close only on endpoints with peer error
         * handling; the others are flushed, which the node made safe */
        ucp_request_param_t param{};
        param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        param.flags        = peer_errors_[r] ? UCP_EP_CLOSE_FLAG_FORCE : 0;
        tc_write_lane_unbind_sender(lane_, static_cast<uint32_t>(r), eps_[r]);
        request_wait(engine, ucp_ep_close_nbx(eps_[r], &param), 10.0);
        eps_[r] = nullptr;
    }
}

} // namespace tc
