/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "ucp_handles.hpp"

#include <twochains/config.h>
#include <twochains/lane.h>
#include <ucs/debug/log_def.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace tc {

namespace {
/* a descriptor: remote address, write-lane key, then the packed rkey */
constexpr size_t kDescriptorPrefix = 2 * sizeof(uint64_t);
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
    : collectives_(*this, boot), peers_(tc_bootstrap_rank(boot))
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
    peers_.attach(worker, lane);

    status_ = collectives_.attach(worker, lane);
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
        collectives_.set_timeout(tc_config.boot_timeout);
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
    peers_.add(size);
    for (int r = 0; r < size; ++r) {
        peers_.set_address(r, std::move(addresses[r]));   /* endpoints come on first use */
    }
}

ucp_node::member_scope::member_scope(ucp_node &node, uint64_t name, std::vector<int> ids,
                                     int my_index)
    : node_(node), channel_(node, name, std::move(ids), my_index, node.collectives_.timeout()),
      outer_(node.collectives_.set_scope(&channel_))
{
}

ucp_node::member_scope::~member_scope() { node_.collectives_.set_scope(outer_); }

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
        if (ids[i] == rank()) {
            my_index = static_cast<int>(i);
        }
    }
    if (my_index < 0) {
        ucs_error("member collectives: node %d is not among the members", rank());
        return UCS_ERR_INVALID_PARAM;
    }
    std::vector<int> list(ids.begin(), ids.end());
    const uint64_t name = collectives_.next_scope_name(list);
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

    collectives_.enter_view(std::move(boot), ids, inline_ops);
    peers_.set_self(my_id);
    peers_.add(static_cast<size_t>(*std::max_element(ids.begin(), ids.end())) + 1);
    std::vector<std::vector<std::byte>> all;
    status = allgather_blobs(mine, all);
    if (status != UCS_OK) {
        return status;
    }
    for (int id : ids) {
        peers_.set_address(id, all[id]);   /* connected on first use */
    }
    return UCS_OK;
}

ucp_node::~ucp_node()
{
    if (peers_.size() > 0 && status_ == UCS_OK) {
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
    collectives_.leave_view();
    peers_.close_all(engine_.get());
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
        if (collectives_.ids() != nullptr && all[r].empty()) {
            continue;   /* not in the view or among the members */
        }
        status = remote_memory_unpack(ep(r), all[r], remotes[r]);
        if (status != UCS_OK) {
            return status;
        }
    }
    return UCS_OK;
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
    return tc_write_lane_write(write_lane_.get(), kind, e, static_cast<uint32_t>(peers_.self()),
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
