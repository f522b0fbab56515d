/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "ucp_handles.hpp"

#include <twochains/config.h>
#include <twochains/lane.h>
#include <ucs/debug/log_def.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>

namespace tc {

namespace {
/* a descriptor: remote address, write-lane key, then the packed rkey */
constexpr size_t kDescriptorPrefix = 2 * sizeof(uint64_t);

/* set while this thread asks UCX for an endpoint it may refuse */
thread_local bool mute_this_thread = false;

ucs_log_func_rc_t ucp_node_mute_refusals(const char *, unsigned, const char *, ucs_log_level_t,
                                         const ucs_log_component_config_t *, const char *,
                                         va_list)
{
    return mute_this_thread ? UCS_LOG_FUNC_RC_STOP : UCS_LOG_FUNC_RC_CONTINUE;
}
} // namespace


ucs_status_t request_wait(tc_progress_engine_h engine, ucs_status_ptr_t request,
                          double timeout_s)
{
    if (request == nullptr) {
        return UCS_OK;
    }
    if (UCS_PTR_IS_ERR(request)) {
        return UCS_PTR_STATUS(request);
    }
    auto done = [](void *arg) -> int {
        return ucp_request_check_status(arg) != UCS_INPROGRESS;
    };
    ucs_status_t status = tc_progress_until(engine, done, request, timeout_s);
    if (status == UCS_OK) {
        status = ucp_request_check_status(request);
    } else {
        ucs_error("ucp request %p did not complete within %.1f s", request, timeout_s);
        ucp_request_cancel(tc_progress_engine_worker(engine), request);
    }
    ucp_request_free(request);
    return status;
}

registered_memory::registered_memory(ucp_context_h context, size_t length)
    : context_(context), length_(length)
{
    ucp_mem_map_params_t params{};
    params.field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    params.length     = length;
    params.flags      = UCP_MEM_MAP_ALLOCATE;
    status_           = ucp_mem_map(context, &params, &memh_);
    if (status_ != UCS_OK) {
        ucs_error("ucp_mem_map of %zu bytes failed: %s", length, ucs_status_string(status_));
        memh_ = nullptr;
        return;
    }

    ucp_mem_attr_t attr{};
    attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
    status_         = ucp_mem_query(memh_, &attr);
    if (status_ != UCS_OK) {
        return;
    }
    address_       = attr.address;
    mapped_length_ = attr.length;
    std::memset(address_, 0, length);

    void *rkey_buf   = nullptr;
    size_t rkey_size = 0;
    status_          = ucp_rkey_pack(context, memh_, &rkey_buf, &rkey_size);
    if (status_ != UCS_OK) {
        ucs_error("ucp_rkey_pack failed: %s", ucs_status_string(status_));
        return;
    }
    uint64_t addr = reinterpret_cast<uintptr_t>(address_);
    descriptor_.resize(kDescriptorPrefix + rkey_size);
    std::memcpy(descriptor_.data(), &addr, sizeof(addr));
    std::memcpy(descriptor_.data() + kDescriptorPrefix, rkey_buf, rkey_size);
    ucp_rkey_buffer_release(rkey_buf);
}

void registered_memory::set_write_key(uint64_t key)
{
    write_key_ = key;
    if (descriptor_.size() >= kDescriptorPrefix) {
        std::memcpy(descriptor_.data() + sizeof(uint64_t), &key, sizeof(key));
    }
}

registered_memory::~registered_memory()
{
    if (memh_ != nullptr) {
        ucp_mem_unmap(context_, memh_);
    }
}

ucs_status_t remote_memory_unpack(ucp_ep_h ep, std::span<const std::byte> descriptor,
                                  remote_memory &out, size_t length)
{
    if (ep == nullptr) {
        return UCS_ERR_UNREACHABLE;   /* ucp_node::ep() logged why */
    }
    if (descriptor.size() <= kDescriptorPrefix) {
        ucs_error("remote memory descriptor of %zu bytes is too short", descriptor.size());
        return UCS_ERR_INVALID_PARAM;
    }
    std::memcpy(&out.address, descriptor.data(), sizeof(out.address));
    std::memcpy(&out.write_key, descriptor.data() + sizeof(out.address), sizeof(out.write_key));
    ucp_rkey_h rkey;
    const void *packed  = descriptor.data() + kDescriptorPrefix;
    ucs_status_t status = (length > 0) ?
                          tc_put_target_unpack(ep, packed, out.address, length, &rkey) :
                          ucp_ep_rkey_unpack(ep, packed, &rkey);
    if (status != UCS_OK) {
        ucs_error("%s failed: %s", (length > 0) ? "unpacking a peer's put target" :
                                                  "ucp_ep_rkey_unpack",
                  ucs_status_string(status));
        return status;
    }
    out.rkey.reset(rkey);
    return UCS_OK;
}

ucs_status_t remote_memory_unpack_all(std::span<remote_memory_request> requests)
{
    std::vector<tc_put_target_t> targets(requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
        remote_memory_request &r = requests[i];
        r.status = (r.ep == nullptr) ? UCS_ERR_UNREACHABLE :
                   (r.descriptor.size() <= kDescriptorPrefix) ? UCS_ERR_INVALID_PARAM :
                   UCS_OK;
        targets[i] = tc_put_target_t{r.ep, nullptr, 0, 0, nullptr, UCS_OK};
        if (r.status != UCS_OK) {
            continue;   /* length 0: refused without unpacking */
        }
        std::memcpy(&r.out->address, r.descriptor.data(), sizeof(r.out->address));
        std::memcpy(&r.out->write_key, r.descriptor.data() + sizeof(r.out->address),
                    sizeof(r.out->write_key));
        targets[i].packed  = r.descriptor.data() + kDescriptorPrefix;
        targets[i].address = r.out->address;
        targets[i].length  = r.length;
    }
    ucs_status_t status = tc_put_targets_unpack(targets.data(), targets.size());
    if (status != UCS_OK) {
        ucs_error("unpacking %zu put targets failed: %s", targets.size(),
                  ucs_status_string(status));
        return status;
    }
    for (size_t i = 0; i < requests.size(); ++i) {
        remote_memory_request &r = requests[i];
        if (r.status == UCS_OK) {
            r.status = targets[i].status;
        }
        if (r.status != UCS_OK) {
            if (r.ep != nullptr) {   /* else ucp_node::ep() logged why */
                ucs_error("unpacking a peer's put target failed: %s",
                          ucs_status_string(r.status));
            }
            status = (status == UCS_OK) ? r.status : status;
            continue;
        }
        r.out->rkey.reset(targets[i].rkey);
    }
    return status;
}

ucp_node::ucp_node(tc_bootstrap_h boot, uint64_t features)
    : boot_(boot), rank_(tc_bootstrap_rank(boot))
{
    ucp_config_t *config;
    status_ = ucp_config_read(nullptr, nullptr, &config);
    if (status_ != UCS_OK) {
        return;
    }
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features   = features | UCP_FEATURE_AM;   /* the write lane */
    ucp_context_h context;
    status_ = ucp_init(&params, config, &context);
    ucp_config_release(config);
    if (status_ != UCS_OK) {
        ucs_error("ucp_init failed: %s", ucs_status_string(status_));
        return;
    }
    context_.reset(context);

    ucp_worker_params_t wparams{};
    wparams.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = UCS_THREAD_MODE_SINGLE;
    ucp_worker_h worker;
    status_ = ucp_worker_create(context, &wparams, &worker);
    if (status_ != UCS_OK) {
        ucs_error("ucp_worker_create failed: %s", ucs_status_string(status_));
        return;
    }
    worker_.reset(worker);

    tc_write_lane_h lane;
    status_ = tc_write_lane_create(worker, &lane);
    if (status_ != UCS_OK) {
        return;
    }
    write_lane_.reset(lane);

    status_ = inbox_.attach(worker, lane);
    if (status_ != UCS_OK) {
        return;
    }

    tc_progress_engine_h engine;
    status_ = tc_progress_engine_create(worker, nullptr, &engine);
    if (status_ != UCS_OK) {
        return;
    }
    engine_.reset(engine);

    tc_config_t tc_config;
    if (tc_config_read(&tc_config) == UCS_OK) {
        boot_timeout_s_ = tc_config.boot_timeout;
        tc_config_release(&tc_config);
    }

    ucp_address_t *address;
    size_t address_len;
    status_ = ucp_worker_get_address(worker, &address, &address_len);
    if (status_ != UCS_OK) {
        return;
    }
    std::vector<std::vector<std::byte>> addresses;
    status_ = allgather_blobs({reinterpret_cast<const std::byte*>(address), address_len},
                              addresses);
    ucp_worker_release_address(worker, address);
    if (status_ != UCS_OK) {
        return;
    }

    const int size = static_cast<int>(addresses.size());
    if (size > kMaxNodeId) {
        ucs_error("%d ranks: at most %d are supported", size, kMaxNodeId);
        status_ = UCS_ERR_EXCEEDS_LIMIT;
        return;
    }
    add_peers(size);
    for (int r = 0; r < size; ++r) {
        addresses_[r] = std::move(addresses[r]);   /* endpoints come on first use */
    }
}

void ucp_node::add_peers(size_t count)
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

void ucp_node::set_address(int r, const std::vector<std::byte> &address)
{
    if (eps_[r] != nullptr && addresses_[r] != address) {
        /* the id now names another process (a joiner): drop the old one */
        ucp_request_param_t param{};
        param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        param.flags        = peer_errors_[r] ? UCP_EP_CLOSE_FLAG_FORCE : 0;
        tc_write_lane_unbind_sender(write_lane_.get(), static_cast<uint32_t>(r), eps_[r]);
        ucs_status_ptr_t req = ucp_ep_close_nbx(eps_[r], &param);
        if (UCS_PTR_IS_PTR(req)) {
            ucp_request_free(req);   /* completes in the background */
        }
        eps_[r] = nullptr;
        peers_[r]->failed.store(false);
    }
    addresses_[r] = address;
}

ucp_ep_h ucp_node::ep(int r) const
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
    ucs_status_t status = (r == rank_) ? UCS_ERR_UNSUPPORTED : create_ep(remote, r, true);
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
    status = tc_write_lane_bind_sender(write_lane_.get(), static_cast<uint32_t>(r), eps_[r]);
    if (status != UCS_OK) {
        ucs_error("node %d: cannot bind the endpoint to %d to its writes: %s", rank_, r,
                  ucs_status_string(status));
    }
    ucs_debug("node %d: endpoint to %d created on first use", rank_, r);
    return eps_[r];
}

int ucp_node::connected_peers() const
{
    int n = 0;
    for (ucp_ep_h e : eps_) {
        n += (e != nullptr);
    }
    return n;
}

ucp_node::member_scope::member_scope(ucp_node &node, uint64_t name, std::vector<int> ids,
                                     int my_index)
    : node_(node), channel_(node, name, std::move(ids), my_index, node.boot_timeout_s_),
      outer_(node.members_)
{
    node_.members_ = &channel_;
}

ucp_node::member_scope::~member_scope() { node_.members_ = outer_; }

ucs_status_t ucp_node::open_member_scope(std::span<const int> ids,
                                         std::unique_ptr<member_scope> &out)
{
    int my_index = -1;
    for (size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] < 0 || ids[i] >= size() ||
            std::count(ids.begin(), ids.end(), ids[i]) != 1) {
            ucs_error("member collectives: ids must be distinct nodes below %d", size());
            return UCS_ERR_INVALID_PARAM;
        }
        if (ids[i] == rank_) {
            my_index = static_cast<int>(i);
        }
    }
    if (my_index < 0) {
        ucs_error("member collectives: node %d is not among the members", rank_);
        return UCS_ERR_INVALID_PARAM;
    }
    std::vector<int> list(ids.begin(), ids.end());
    const uint32_t occurrence = scopes_opened_[list]++;
    const uint64_t name       = member_channel::name_of(list, occurrence);
    /* not make_unique: the constructor is private to ucp_node */
    out.reset(new member_scope(*this, name, std::move(list), my_index));
    return out->status();
}

ucs_status_t ucp_node::enter_view(tc_bootstrap_h view_boot, std::span<const int> ids, int my_id,
                                  bool inline_ops)
{
    bootstrap_ptr boot(view_boot);
    for (int id : ids) {
        if (id < 0 || id >= kMaxNodeId) {
            ucs_error("node id %d outside [0, %d)", id, kMaxNodeId);
            return UCS_ERR_EXCEEDS_LIMIT;
        }
    }
    ucp_address_t *address;
    size_t address_len;
    ucs_status_t status = ucp_worker_get_address(worker_.get(), &address, &address_len);
    if (status != UCS_OK) {
        return status;
    }
    std::vector<std::byte> mine(reinterpret_cast<const std::byte*>(address),
                                reinterpret_cast<const std::byte*>(address) + address_len);
    ucp_worker_release_address(worker_.get(), address);

    view_boot_ = std::move(boot);
    inline_ops_ = inline_ops;
    view_ids_.assign(ids.begin(), ids.end());
    rank_      = my_id;
    add_peers(static_cast<size_t>(*std::max_element(ids.begin(), ids.end())) + 1);
    std::vector<std::vector<std::byte>> all;
    status = allgather_blobs(mine, all);
    if (status != UCS_OK) {
        return status;
    }
    for (int id : ids) {
        set_address(id, all[id]);   /* connected on first use */
    }
    return UCS_OK;
}

ucs_status_t ucp_node::create_ep(const ucp_address_t *remote, int r, bool peer_errors) const
{
    peers_[r]->lane = TC_WRITE_LANE_AUTO;   /* a new endpoint may have other lanes */
    ucp_ep_params_t ep_params{};
    ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep_params.address    = remote;
    if (!peer_errors) {
        return ucp_ep_create(worker_.get(), &ep_params, &eps_[r]);
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
    ucs_status_t status = ucp_ep_create(worker_.get(), &ep_params, &eps_[r]);
    mute_this_thread = false;
    return status;
}

ucs_status_t ucp_node::collective(const std::function<ucs_status_t()> &op) const
{
    if (!engine_ || members_ != nullptr || (view_boot_ && inline_ops_)) {
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
            if (ucp_worker_progress(worker_.get()) == 0) {
                std::this_thread::sleep_for(std::chrono::microseconds(50));
            }
        }
        waiter.join();
        return status;
    }
    auto finished = [](void *arg) -> int {
        return static_cast<std::atomic<int>*>(arg)->load(std::memory_order_acquire);
    };
    while (tc_progress_until(engine_.get(), finished, &done, 1.0) != UCS_OK) {
    }
    waiter.join();
    return status;
}

ucs_status_t ucp_node::barrier() const
{
    return collective([this] { return tc_bootstrap_barrier(current_bootstrap()); });
}

ucp_node::~ucp_node()
{
    if (!eps_.empty() && status_ == UCS_OK) {
        /* Complete our own operations, then wait until every peer has too:
         * after that nobody needs a close handshake, which a peer already
         * blocked in the bootstrap could not answer. */
        ucp_request_param_t param{};
        request_wait(engine_.get(), ucp_worker_flush_nbx(worker_.get(), &param), 10.0);
        barrier();
    }
    /* a view's bootstrap may own registered memory and puts in flight (a
     * group's view exchange, which outlives the group): release it while
     * the endpoints, the worker and the context still exist */
    view_boot_.reset();
    for (size_t r = 0; r < eps_.size(); ++r) {
        if (eps_[r] == nullptr) {
            continue;
        }
        /* UCX accepts a forced close only on endpoints with peer error
         * handling; the others are flushed, which the barrier made safe */
        ucp_request_param_t param{};
        param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        param.flags        = peer_errors_[r] ? UCP_EP_CLOSE_FLAG_FORCE : 0;
        tc_write_lane_unbind_sender(write_lane_.get(), static_cast<uint32_t>(r), eps_[r]);
        request_wait(engine_.get(), ucp_ep_close_nbx(eps_[r], &param), 10.0);
    }
}

ucs_status_t ucp_node::allgather_blobs(std::span<const std::byte> mine,
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
    const std::vector<int> *ids = collective_ids();
    all.assign(ids ? eps_.size() : lens.size(), {});
    size_t offset = 0;
    for (size_t r = 0; r < lens.size(); ++r) {
        const auto *p = static_cast<const std::byte*>(gathered) + offset;
        all[ids ? (*ids)[r] : r].assign(p, p + lens[r]);
        offset += lens[r];
    }
    return UCS_OK;
}

ucs_status_t ucp_node::exchange_personal(std::span<const int> ids,
                                         const std::vector<std::vector<std::byte>> &to,
                                         std::vector<std::vector<std::byte>> &from)
{
    const size_t n = ids.size();
    std::vector<int> list(ids.begin(), ids.end());
    /* a channel of its own: not any member scope's (whose names hash the
     * same list with their own count) */
    const uint64_t name = member_channel::name_of(list, personal_exchanges_[list]++) ^
                          0x706572736f6e616cull;   /* "personal" */
    struct header {
        uint64_t channel;
        uint32_t round;
        int32_t  sender;
    } const h{name, 0, static_cast<int32_t>(rank_)};
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags        = UCP_AM_SEND_FLAG_EAGER | UCP_AM_SEND_FLAG_REPLY;
    std::vector<ucs_status_ptr_t> requests;
    ucs_status_t status = UCS_OK;
    from.assign(n, {});
    std::vector<bool> have(n, false);
    for (size_t i = 0; i < n && status == UCS_OK; ++i) {
        if (ids[i] == rank_) {
            have[i] = true;
            continue;
        }
        ucp_ep_h e = ep(ids[i]);
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
            } else if (peer_failed(ids[i])) {
                failed = ids[i];
                return true;
            } else {
                all = false;
            }
        }
        return all;
    };
    if (status == UCS_OK) {
        const auto deadline = std::chrono::steady_clock::now() +
                              std::chrono::duration<double>(boot_timeout_s_);
        if (members_ == nullptr && view_boot_) {
            /* inside a poller (a view change): the worker only */
            while (!all_here() && std::chrono::steady_clock::now() < deadline) {
                if (ucp_worker_progress(worker_.get()) == 0) {
                    std::this_thread::sleep_for(std::chrono::microseconds(20));
                }
            }
            status = all_here() ? UCS_OK : UCS_ERR_TIMED_OUT;
        } else {
            using check = decltype(all_here);
            status = tc_progress_until(
                    engine_.get(), [](void *arg) -> int { return (*static_cast<check*>(arg))(); },
                    &all_here, boot_timeout_s_);
        }
        if (status == UCS_OK && failed >= 0) {
            ucs_error("node %d: node %d failed while exchanging descriptors", rank_, failed);
            status = UCS_ERR_UNREACHABLE;
        } else if (status != UCS_OK) {
            ucs_error("node %d: an exchange among %zu nodes did not complete within %.1f s",
                      rank_, n, boot_timeout_s_);
        }
    }
    for (ucs_status_ptr_t req : requests) {
        if (members_ == nullptr && view_boot_) {
            const auto until = std::chrono::steady_clock::now() +
                               std::chrono::duration<double>(boot_timeout_s_);
            while (ucp_request_check_status(req) == UCS_INPROGRESS &&
                   std::chrono::steady_clock::now() < until) {
                ucp_worker_progress(worker_.get());
            }
            if (ucp_request_check_status(req) == UCS_INPROGRESS) {
                ucp_request_cancel(worker_.get(), req);
            }
            const ucs_status_t sent = ucp_request_check_status(req);
            ucp_request_free(req);
            status = (status != UCS_OK) ? status : sent;
            continue;
        }
        const ucs_status_t sent = request_wait(engine_.get(), req, boot_timeout_s_);
        status                  = (status != UCS_OK) ? status : sent;
    }
    if (status != UCS_OK) {
        inbox_.drop(name);
    }
    return status;
}

ucs_status_t ucp_node::exchange(const registered_memory &mem, std::vector<remote_memory> &remotes)
{
    std::vector<std::vector<std::byte>> all;
    ucs_status_t status = allgather_blobs(mem.packed_descriptor(), all);
    if (status != UCS_OK) {
        return status;
    }
    remotes.clear();
    remotes.resize(size());
    for (int r = 0; r < size(); ++r) {
        if (collective_ids() != nullptr && all[r].empty()) {
            continue;   /* not in the view or among the members */
        }
        status = remote_memory_unpack(ep(r), all[r], remotes[r]);
        if (status != UCS_OK) {
            return status;
        }
    }
    return UCS_OK;
}

bool ucp_node::writes_over_am(int rank) const
{
    peer &p = *peers_[rank];
    if (p.lane == TC_WRITE_LANE_AUTO) {
        ucp_ep_h e = ep(rank);
        if (e == nullptr) {
            return false;   /* the write fails on the missing endpoint */
        }
        p.lane = tc_write_lane_resolve(write_lane_.get(), e);
    }
    return p.lane == TC_WRITE_LANE_AM;
}

std::string ucp_node::write_lane_name(int rank) const
{
    char name[80] = "none";
    if (ucp_ep_h e = ep(rank)) {
        tc_write_lane_describe(write_lane_.get(), e, name, sizeof(name));
    }
    return name;
}

ucs_status_ptr_t ucp_node::write(int rank, const void *src, size_t len, uint64_t raddr,
                                 const remote_memory &dst, const ucp_request_param_t &param,
                                 tc_write_header_t &header)
{
    ucp_ep_h e = ep(rank);
    if (e == nullptr) {
        return UCS_STATUS_PTR(UCS_ERR_UNREACHABLE);
    }
    const tc_write_lane_mode_t kind = writes_over_am(rank) ? TC_WRITE_LANE_AM :
                                                             TC_WRITE_LANE_RMA;
    return tc_write_lane_write(write_lane_.get(), kind, e, static_cast<uint32_t>(rank_),
                               src, len, raddr, dst.rkey.get(), dst.write_key, &param, &header);
}

ucs_status_t ucp_node::allow_writes(registered_memory &mem, const rank_set &senders)
{
    uint64_t key        = 0;
    ucs_status_t status = tc_write_lane_allow(write_lane_.get(), mem.address(), mem.length(),
                                              senders.words(), senders.bits(), &key);
    if (status == UCS_OK) {
        mem.set_write_key(key);
    }
    return status;
}

void ucp_node::forbid_writes(const registered_memory &mem)
{
    tc_write_lane_forbid(write_lane_.get(), mem.address());
}

tc_write_lane_stats_t ucp_node::write_lane_stats() const
{
    tc_write_lane_stats_t stats{};
    tc_write_lane_query(write_lane_.get(), &stats);
    return stats;
}

std::string ucp_node::rma_transport(int rank) const
{
    char name[64] = "none";
    if (ucp_ep_h e = ep(rank)) {
        (void)tc_put_lane_describe(e, name, sizeof(name));
    }
    return name;
}

} // namespace tc
