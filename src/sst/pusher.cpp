/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "sst/pusher.hpp"

#include <algorithm>

#include <ucs/debug/log_def.h>

#include <cstring>

namespace tc::sst {

namespace {
/* Rows and counters are small; larger snapshots get their own buffer. */
constexpr size_t kStagingBytes = 512;
} // namespace

const char *put_purpose_name(put_purpose p)
{
    switch (p) {
    case put_purpose::data: return "data";
    case put_purpose::counter: return "counter";
    case put_purpose::receive_report: return "receive_report";
    case put_purpose::delivery_report: return "delivery_report";
    case put_purpose::null_message: return "null";
    case put_purpose::heartbeat: return "heartbeat";
    case put_purpose::other: return "other";
    default: return "?";
    }
}

uint64_t put_counts::total() const
{
    uint64_t t = 0;
    for (auto v : by_purpose) {
        t += v;
    }
    return t;
}

pusher::~pusher()
{
    if (!inflight_.empty()) {
        flush(10.0);
    }
    reap();
    for (auto &f : inflight_) {
        /* to a forgotten peer, and still not complete: UCX frees the request
         * when it completes, and may read the bytes until then, so they are
         * left to it (a few bytes per dead peer, once) */
        ucp_request_free(f.request);
        (void)f.staging.release();
        (void)f.header.release();
    }
}

void pusher::forget(int rank)
{
    if (forgotten_.size() <= static_cast<size_t>(rank)) {
        forgotten_.resize(rank + 1, false);
    }
    forgotten_[rank] = true;
}

size_t pusher::waited_in_flight() const
{
    return static_cast<size_t>(std::count_if(inflight_.begin(), inflight_.end(),
                                             [this](const inflight &f) { return waited_for(f); }));
}

std::unique_ptr<std::byte[]> pusher::take_staging(size_t len, size_t &capacity)
{
    if (len <= kStagingBytes) {
        capacity = kStagingBytes;
        if (!free_staging_.empty()) {
            auto buf = std::move(free_staging_.back());
            free_staging_.pop_back();
            return buf;
        }
        return std::make_unique<std::byte[]>(kStagingBytes);
    }
    capacity = len;
    return std::make_unique<std::byte[]>(len);
}

ucs_status_t pusher::put_copy(int peer, const void *src, size_t len, uint64_t raddr,
                              const remote_memory &dst, put_purpose purpose)
{
    size_t capacity;
    auto staging = take_staging(len, capacity);
    std::memcpy(staging.get(), src, len);
    const void *copy = staging.get();
    return issue(peer, copy, len, raddr, dst, purpose, std::move(staging), capacity);
}

ucs_status_t pusher::put_inplace(int peer, const void *src, size_t len, uint64_t raddr,
                                 const remote_memory &dst, put_purpose purpose)
{
    return issue(peer, src, len, raddr, dst, purpose, nullptr, 0);
}

ucs_status_t pusher::issue(int peer, const void *src, size_t len, uint64_t raddr,
                           const remote_memory &dst, put_purpose purpose,
                           std::unique_ptr<std::byte[]> staging, size_t capacity)
{
    ucp_request_param_t param{};
    /* only the active-message lane needs a header that outlives the call */
    tc_write_header_t unused{};
    auto header = node_.writes_over_am(peer) ? std::make_unique<tc_write_header_t>() : nullptr;
    ucs_status_ptr_t req = node_.write(peer, src, len, raddr, dst, param,
                                       header ? *header : unused);
    ++counts_.by_purpose[static_cast<size_t>(purpose)];
    if (UCS_PTR_IS_ERR(req)) {
        peer_error(peer, UCS_PTR_STATUS(req), put_purpose_name(purpose));
        if (staging && capacity == kStagingBytes) {
            free_staging_.push_back(std::move(staging));
        }
        return UCS_OK; /* the peer is gone, not us: the owner was told */
    }
    if (req == nullptr) {
        if (staging && capacity == kStagingBytes) {
            free_staging_.push_back(std::move(staging));
        }
        return UCS_OK;
    }
    inflight_.push_back({peer, req, std::move(staging), capacity, std::move(header)});
    return UCS_OK;
}

void pusher::peer_error(int rank, ucs_status_t status, const char *what)
{
    if (peer_error_logged_.size() <= static_cast<size_t>(rank)) {
        peer_error_logged_.resize(rank + 1, false);
    }
    if (!peer_error_logged_[rank]) {
        peer_error_logged_[rank] = true; /* once per peer, not per put */
        ucs_debug("put (%s) to rank %d failed: %s", what, rank, ucs_status_string(status));
    }
    if (on_peer_error_) {
        on_peer_error_(rank);
    }
}

ucs_status_t pusher::fence()
{
    ucs_status_t status = ucp_worker_fence(node_.worker());
    if (status != UCS_OK) {
        ucs_error("ucp_worker_fence failed: %s", ucs_status_string(status));
    }
    return status;
}

unsigned pusher::reap()
{
    unsigned done = 0;
    size_t keep   = 0;
    for (size_t i = 0; i < inflight_.size(); ++i) {
        auto &f = inflight_[i];
        ucs_status_t status = ucp_request_check_status(f.request);
        if (status == UCS_INPROGRESS) {
            if (keep != i) {
                inflight_[keep] = std::move(f);
            }
            ++keep;
            continue;
        }
        if (status != UCS_OK) {
            peer_error(f.peer, status, "completion");
        }
        ucp_request_free(f.request);
        if (f.staging && f.capacity == kStagingBytes) {
            free_staging_.push_back(std::move(f.staging));
        }
        ++done;
    }
    inflight_.resize(keep);
    return done;
}

ucs_status_t pusher::flush(double timeout_s)
{
    auto all_done = [](void *arg) -> int {
        auto *self = static_cast<pusher*>(arg);
        self->reap();
        return self->waited_in_flight() == 0;
    };
    ucs_status_t status = tc_progress_until(node_.engine(), all_done, this, timeout_s);
    if (status != UCS_OK) {
        ucs_error("%zu puts still in flight after %.1f s", waited_in_flight(), timeout_s);
    }
    return status;
}

} // namespace tc::sst
