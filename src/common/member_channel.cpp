/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "common/member_channel.hpp"

#include "common/ucp_handles.hpp"

#include <ucs/debug/log_def.h>

#include <cstdlib>
#include <cstring>
#include <memory>

namespace tc {

/* --- collective_inbox ------------------------------------------------------ */

ucs_status_t collective_inbox::attach(ucp_worker_h worker, tc_write_lane_h lane)
{
    lane_ = lane;
    ucp_am_handler_param_t param{};
    param.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                       UCP_AM_HANDLER_PARAM_FIELD_ARG;
    param.id         = kAmId;
    param.cb         = &collective_inbox::on_message;
    param.arg        = this;
    ucs_status_t status = ucp_worker_set_am_recv_handler(worker, &param);
    if (status != UCS_OK) {
        ucs_error("member collectives: no active message handler: %s",
                  ucs_status_string(status));
    }
    return status;
}

ucs_status_t collective_inbox::on_message(void *arg, const void *header, size_t header_length,
                                          void *data, size_t length,
                                          const ucp_am_recv_param_t *param)
{
    auto *self = static_cast<collective_inbox*>(arg);
    struct {
        uint64_t channel;
        uint32_t round;
        int32_t  sender;
    } h;
    if (header_length != sizeof(h) || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) ||
        !(param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) || param->reply_ep == nullptr) {
        /* our senders send eager messages with this header only, and with
         * their endpoint (UCP_AM_SEND_FLAG_REPLY) */
        ucs_warn("member collectives: dropped a message of %zu header bytes%s", header_length,
                 (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) ? "" :
                 " without its endpoint");
        return UCS_OK;
    }
    std::memcpy(&h, header, sizeof(h));
    const auto from = reinterpret_cast<uintptr_t>(param->reply_ep);
    size_t &held    = self->per_endpoint_[from];
    const key k{h.channel, h.round, h.sender, from};
    if (held >= kMaxPendingPerEndpoint && self->messages_.count(k) == 0) {
        if (self->overflowed_++ == 0) {
            ucs_warn("member collectives: an endpoint has %zu messages waiting; what it "
                     "sends more is dropped (counted; logged once)", held);
        }
        return UCS_OK;
    }
    const auto *bytes = static_cast<const std::byte*>(data);
    auto [it, fresh]  = self->messages_.try_emplace(k);
    it->second.assign(bytes, bytes + length);
    held += fresh ? 1 : 0;
    return UCS_OK;
}

void collective_inbox::erase(std::map<key, std::vector<std::byte>>::iterator it)
{
    auto held = per_endpoint_.find(std::get<3>(it->first));
    if (held != per_endpoint_.end() && --held->second == 0) {
        per_endpoint_.erase(held);
    }
    messages_.erase(it);
}

bool collective_inbox::take(uint64_t channel, uint32_t round, int sender,
                            std::vector<std::byte> &out)
{
    auto it = messages_.lower_bound({channel, round, sender, 0});
    bool taken = false;
    /* the sender's endpoint is bound (we sent to it before we wait): every
     * other message in its name is another's, whether before or after */
    while (it != messages_.end() && std::get<0>(it->first) == channel &&
           std::get<1>(it->first) == round && std::get<2>(it->first) == sender) {
        const auto from = reinterpret_cast<ucp_ep_h>(std::get<3>(it->first));
        if (sender < 0 || !tc_write_lane_is_sender(lane_, static_cast<uint32_t>(sender), from)) {
            /* not sent on the sender's endpoint: in its name, by another */
            if (forged_++ == 0) {
                ucs_error("member collectives: a message in the name of node %d came in on "
                          "another node's endpoint: dropped (counted; logged once)", sender);
            }
            auto next = std::next(it);
            erase(it);
            it = next;
            continue;
        }
        auto next = std::next(it);
        if (!taken) {
            out   = std::move(it->second);
            taken = true;
            erase(it);
        }
        it = next;
    }
    return taken;
}

void collective_inbox::drop(uint64_t channel)
{
    auto it = messages_.lower_bound({channel, 0, INT32_MIN, 0});
    while (it != messages_.end() && std::get<0>(it->first) == channel) {
        auto next = std::next(it);
        erase(it);
        it = next;
    }
}

/* --- member_channel -------------------------------------------------------- */

uint64_t member_channel::name_of(std::span<const int> ids, uint32_t occurrence)
{
    uint64_t h = 1469598103934665603ull;   /* FNV-1a */
    auto mix   = [&h](uint64_t v) {
        for (int i = 0; i < 8; ++i) {
            h = (h ^ ((v >> (8 * i)) & 0xff)) * 1099511628211ull;
        }
    };
    mix(ids.size());
    for (int id : ids) {
        mix(static_cast<uint64_t>(id));
    }
    mix(occurrence);
    return h;
}

member_channel::member_channel(ucp_node &node, uint64_t name, std::vector<int> ids, int my_index,
                               double timeout_s)
    : node_(node), name_(name), ids_(std::move(ids)), my_index_(my_index), timeout_s_(timeout_s)
{
    static const tc_bootstrap_ops_t ops = {
            "member collectives",
            [](void *arg, const void *buf, size_t len, void **all_p, size_t *lens) {
                return static_cast<member_channel*>(arg)->allgatherv(buf, len, all_p, lens);
            },
            [](void *) { /* the channel owns the bootstrap, not the reverse */ }};
    status_ = tc_bootstrap_create(&ops, this, my_index_, static_cast<int>(ids_.size()), &boot_);
}

member_channel::~member_channel()
{
    if (boot_ != nullptr) {
        tc_bootstrap_destroy(boot_);
    }
    node_.inbox().drop(name_);
}

ucs_status_t member_channel::allgatherv(const void *buf, size_t len, void **all_p, size_t *lens)
{
    const uint32_t round = ++round_;
    const size_t n       = ids_.size();
    /* the header and the bytes live until every send completed */
    const header h{name_, round, static_cast<int32_t>(node_.rank())};
    std::vector<ucs_status_ptr_t> requests;
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags        = UCP_AM_SEND_FLAG_EAGER | UCP_AM_SEND_FLAG_REPLY;
    ucs_status_t status = UCS_OK;
    for (size_t i = 0; i < n && status == UCS_OK; ++i) {
        if (static_cast<int>(i) == my_index_) {
            continue;
        }
        ucp_ep_h ep = node_.ep(ids_[i]);
        if (ep == nullptr) {
            status = UCS_ERR_UNREACHABLE;   /* ep() logged it */
            break;
        }
        ucs_status_ptr_t req = ucp_am_send_nbx(ep, collective_inbox::kAmId, &h, sizeof(h), buf,
                                               len, &param);
        if (UCS_PTR_IS_ERR(req)) {
            status = UCS_PTR_STATUS(req);
        } else if (req != nullptr) {
            requests.push_back(req);
        }
    }

    std::vector<std::vector<std::byte>> got(n);
    std::vector<bool> have(n, false);
    have[my_index_] = true;
    if (len > 0) {
        got[my_index_].assign(static_cast<const std::byte*>(buf),
                              static_cast<const std::byte*>(buf) + len);
    }
    struct waiter {
        member_channel *self;
        uint32_t round;
        std::vector<std::vector<std::byte>> *got;
        std::vector<bool> *have;
        int failed = -1;
        static int done(void *arg)
        {
            auto *w       = static_cast<waiter*>(arg);
            auto &channel = *w->self;
            bool all      = true;
            for (size_t i = 0; i < channel.ids_.size(); ++i) {
                if ((*w->have)[i]) {
                    continue;
                }
                if (channel.node_.inbox().take(channel.name_, w->round, channel.ids_[i],
                                               (*w->got)[i])) {
                    (*w->have)[i] = true;
                } else if (channel.node_.peer_failed(channel.ids_[i])) {
                    w->failed = channel.ids_[i];
                    return 1;
                } else {
                    all = false;
                }
            }
            return all;
        }
    } w{this, round, &got, &have};
    if (status == UCS_OK) {
        status = tc_progress_until(node_.engine(), &waiter::done, &w, timeout_s_);
        if (status == UCS_OK && w.failed >= 0) {
            ucs_error("member collectives: node %d failed in round %u", w.failed, round);
            status = UCS_ERR_UNREACHABLE;
        } else if (status != UCS_OK) {
            ucs_error("member collectives: round %u among %zu nodes did not complete within "
                      "%.1f s", round, n, timeout_s_);
        }
    }
    for (ucs_status_ptr_t req : requests) {
        const ucs_status_t sent = request_wait(node_.engine(), req, timeout_s_);
        status                  = (status != UCS_OK) ? status : sent;
    }
    if (status != UCS_OK) {
        return status;
    }

    size_t total = 0;
    for (size_t i = 0; i < n; ++i) {
        lens[i] = got[i].size();
        total += lens[i];
    }
    /* tc_bootstrap frees it */
    auto *out = static_cast<std::byte*>(std::malloc(total > 0 ? total : 1));
    if (out == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }
    size_t pos = 0;
    for (size_t i = 0; i < n; ++i) {
        if (!got[i].empty()) {
            std::memcpy(out + pos, got[i].data(), got[i].size());
        }
        pos += got[i].size();
    }
    *all_p = out;
    return UCS_OK;
}

} // namespace tc
