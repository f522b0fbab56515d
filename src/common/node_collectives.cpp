/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "common/node_collectives.hpp"

#include "common/ucp_handles.hpp"

#include <ucs/debug/log_def.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>

namespace tc {

void node_collectives::enter_view(bootstrap_ptr view_boot, std::span<const int> ids,
                                  bool inline_ops)
{
    view_boot_  = std::move(view_boot);
    inline_ops_ = inline_ops;
    view_ids_.assign(ids.begin(), ids.end());
}

ucs_status_t node_collectives::collective(const std::function<ucs_status_t()> &op) const
{
    if (node_.engine() == nullptr || members_ != nullptr || (view_boot_ && inline_ops_)) {
        return op();   /* member collectives progress the engine themselves */
    }
    /* The bootstrap blocks on a socket; peers may need our worker to make
     * progress (acks of emulated puts, flushes) before they reach the same
     * collective, so keep progressing while a helper thread waits in it. */
    std::atomic<int> done{0};
    ucs_status_t status = UCS_OK;
    std::thread waiter([&] {
        status = op();
        done.store(1, std::memory_order_release);
    });
    if (view_boot_) {
        /* inside a poller (enter_view): the worker only, no nested pollers */
        while (!done.load(std::memory_order_acquire)) {
            if (ucp_worker_progress(node_.worker()) == 0) {
                std::this_thread::sleep_for(std::chrono::microseconds(50));
            }
        }
        waiter.join();
        return status;
    }
    auto finished = [](void *arg) -> int {
        return static_cast<std::atomic<int>*>(arg)->load(std::memory_order_acquire);
    };
    while (tc_progress_until(node_.engine(), finished, &done, 1.0) != UCS_OK) {
    }
    waiter.join();
    return status;
}

ucs_status_t node_collectives::barrier() const
{
    return collective([this] { return tc_bootstrap_barrier(current_bootstrap()); });
}

ucs_status_t node_collectives::allgather_blobs(std::span<const std::byte> mine,
                                               std::vector<std::vector<std::byte>> &all) const
{
    tc_bootstrap_h boot = current_bootstrap();
    std::vector<size_t> lens(tc_bootstrap_size(boot));
    void *gathered = nullptr;
    ucs_status_t status = collective([&] {
        return tc_bootstrap_allgatherv(boot, mine.data(), mine.size(), &gathered, lens.data());
    });
    if (status != UCS_OK) {
        return status;
    }
    std::unique_ptr<void, decltype(&std::free)> owner(gathered, &std::free);
    const std::vector<int> *by_id = ids();
    all.assign(by_id ? static_cast<size_t>(node_.size()) : lens.size(), {});
    size_t offset = 0;
    for (size_t r = 0; r < lens.size(); ++r) {
        const auto *p = static_cast<const std::byte*>(gathered) + offset;
        all[by_id ? (*by_id)[r] : r].assign(p, p + lens[r]);
        offset += lens[r];
    }
    return UCS_OK;
}

ucs_status_t node_collectives::exchange_personal(std::span<const int> ids,
                                                 const std::vector<std::vector<std::byte>> &to,
                                                 std::vector<std::vector<std::byte>> &from)
{
    const size_t n    = ids.size();
    const int    self = node_.rank();
    std::vector<int> list(ids.begin(), ids.end());
    /* a channel of its own: not any member scope's (whose names hash the
     * same list with their own count) */
    const uint64_t name = member_channel::name_of(list, personal_exchanges_[list]++) ^
                          0x706572736f6e616cull;   /* "personal" */
    struct header {
        uint64_t channel;
        uint32_t round;
        int32_t  sender;
    } const h{name, 0, static_cast<int32_t>(self)};
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags        = UCP_AM_SEND_FLAG_EAGER | UCP_AM_SEND_FLAG_REPLY;
    std::vector<ucs_status_ptr_t> requests;
    ucs_status_t status = UCS_OK;
    from.assign(n, {});
    std::vector<bool> have(n, false);
    for (size_t i = 0; i < n && status == UCS_OK; ++i) {
        if (ids[i] == self) {
            have[i] = true;
            continue;
        }
        ucp_ep_h e = node_.ep(ids[i]);
        if (e == nullptr) {
            status = UCS_ERR_UNREACHABLE;   /* ep() logged it */
            break;
        }
        ucs_status_ptr_t req = ucp_am_send_nbx(e, collective_inbox::kAmId, &h, sizeof(h),
                                               to[i].data(), to[i].size(), &param);
        if (UCS_PTR_IS_ERR(req)) {
            status = UCS_PTR_STATUS(req);
        } else if (req != nullptr) {
            requests.push_back(req);
        }
    }
    int failed = -1;
    auto all_here = [&]() {
        bool all = true;
        for (size_t i = 0; i < n; ++i) {
            if (have[i]) {
                continue;
            }
            if (inbox_.take(name, 0, ids[i], from[i])) {
                have[i] = true;
            } else if (node_.peer_failed(ids[i])) {
                failed = ids[i];
                return true;
            } else {
                all = false;
            }
        }
        return all;
    };
    ucp_worker_h worker         = node_.worker();
    tc_progress_engine_h engine = node_.engine();
    if (status == UCS_OK) {
        const auto deadline = std::chrono::steady_clock::now() +
                              std::chrono::duration<double>(timeout_s_);
        if (members_ == nullptr && view_boot_) {
            /* inside a poller (a view change): the worker only */
            while (!all_here() && std::chrono::steady_clock::now() < deadline) {
                if (ucp_worker_progress(worker) == 0) {
                    std::this_thread::sleep_for(std::chrono::microseconds(20));
                }
            }
            status = all_here() ? UCS_OK : UCS_ERR_TIMED_OUT;
        } else {
            using check = decltype(all_here);
            status = tc_progress_until(
                    engine, [](void *arg) -> int { return (*static_cast<check*>(arg))(); },
                    &all_here, timeout_s_);
        }
        if (status == UCS_OK && failed >= 0) {
            ucs_error("node %d: node %d failed while exchanging descriptors", self, failed);
            status = UCS_ERR_UNREACHABLE;
        } else if (status != UCS_OK) {
            ucs_error("node %d: an exchange among %zu nodes did not complete within %.1f s",
                      self, n, timeout_s_);
        }
    }
    for (ucs_status_ptr_t req : requests) {
        if (members_ == nullptr && view_boot_) {
            const auto until = std::chrono::steady_clock::now() +
                               std::chrono::duration<double>(timeout_s_);
            while (ucp_request_check_status(req) == UCS_INPROGRESS &&
                   std::chrono::steady_clock::now() < until) {
                ucp_worker_progress(worker);
            }
            if (ucp_request_check_status(req) == UCS_INPROGRESS) {
                ucp_request_cancel(worker, req);
            }
            const ucs_status_t sent = ucp_request_check_status(req);
            ucp_request_free(req);
            status = (status != UCS_OK) ? status : sent;
            continue;
        }
        const ucs_status_t sent = request_wait(engine, req, timeout_s_);
        status                  = (status != UCS_OK) ? status : sent;
    }
    if (status != UCS_OK) {
        inbox_.drop(name);
    }
    return status;
}

} // namespace tc
