/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "large/large.hpp"

#include "core/wait.hpp"

#include <cstring>

namespace tc {

namespace {
/* one receive buffer per root that may send at once, and ours */
unsigned rdmc_buffers(const group_params &p)
{
    return static_cast<unsigned>(p.members.size()) + 1;
}
} // namespace

const char *check_rdmc_descriptor(const smc::rdmc_descriptor &d, uint64_t max_message,
                                  int64_t taken, int64_t accepted, int64_t ahead)
{
    if (d.size == 0 || d.size > max_message) {
        return "an RDMC descriptor of a size the group does not carry";
    }
    if (d.transfer < taken) {
        return "an RDMC descriptor of a transfer an earlier slot named";
    }
    if (d.transfer < 0 || d.transfer >= accepted + ahead) {
        return "an RDMC descriptor of a transfer its root could not have started";
    }
    return nullptr;
}

ucs_status_t large_messages::create_engine(ucp_node &node, const group_params &p,
                                           large_messages *owner,
                                           std::unique_ptr<rdmc::engine> &out)
{
    rdmc::engine_params ep;
    ep.members       = p.members;
    ep.max_message   = p.rdmc_max_message;
    ep.block_size    = p.rdmc_block;
    ep.buffers       = rdmc_buffers(p);
    ep.auto_release  = false;
    ep.manual_accept = true;
    if (owner != nullptr) {
        ep.on_receive = [owner](const rdmc::transfer_info &t) {
            owner->arrived_[{t.root, t.index}] = t.data;
        };
        /* engine member indices are the rows of the view it was built in */
        ep.on_peer_fault = [owner](int member, const char *what) {
            owner->ctx_.blame(member, what);
        };
        ep.on_sent = [owner](const rdmc::transfer_info &t) {
            auto it = owner->own_.find(t.index);
            if (it != owner->own_.end()) {
                it->second.sent = true;
                owner->release_own_when_done(it);
            }
        };
    }
    return rdmc::engine::create(node, ep, out);
}

void large_messages::attach(std::unique_ptr<rdmc::engine> engine)
{
    engine_ = std::move(engine);
    epoch_  = ctx_.epoch();
}

ucs_status_t large_messages::usable() const
{
    if (ctx_.epoch() != epoch_) {
        /* a view that only lost members keeps the old SST and SMC (their
         * survivors' part) but cannot use this engine: refuse, do not hang */
        ucs_error("group: large messages are not available in epoch %ld: RDMC was "
                  "built for epoch %ld and is rebuilt only when a member joins",
                  static_cast<long>(ctx_.epoch()), static_cast<long>(epoch_));
        return UCS_ERR_UNSUPPORTED;
    }
    return UCS_OK;
}

ucs_status_t large_messages::send(size_t size, fill_ref fill, bool block, waiter &wait,
                                  smc::rdmc_descriptor &out)
{
    ucs_status_t status = UCS_OK;
    if (!own_.empty()) {
        if (!block) {
            return UCS_ERR_NO_RESOURCE;
        }
        status = wait.until([this] { return own_.empty(); });
        if (status != UCS_OK) {
            return status;
        }
    }
    std::span<std::byte> buffer;
    status = engine_->get_send_buffer(size, buffer);
    if (status == UCS_ERR_NO_RESOURCE && block) {
        /* our earlier large messages hold the buffers until delivered */
        status = wait.until([&] { return engine_->get_send_buffer(size, buffer) == UCS_OK; });
    }
    if (status != UCS_OK) {
        return status;
    }
    fill(buffer);
    int64_t transfer = -1;
    status = engine_->send(buffer, &transfer);
    if (status != UCS_OK && status != UCS_INPROGRESS) {
        return status;
    }
    own_[transfer] = {buffer, false, false};
    ctx_.count(&group_stats::rdmc_sent);
    out = smc::rdmc_descriptor{size, transfer};
    return UCS_OK;
}

smc::rdmc_descriptor large_messages::descriptor(int sender, int64_t index) const
{
    smc::rdmc_descriptor d;
    std::memcpy(&d, ctx_.slot(sender, index) + sizeof(smc::slot_header), sizeof(d));
    return d;
}

large_messages::arrival large_messages::arrived(int sender, int64_t index)
{
    const smc::rdmc_descriptor d = descriptor(sender, index);   /* read once */
    if (sender == ctx_.map.my_sender()) {
        return own_.count(d.transfer) != 0 ? arrival::arrived : arrival::pending;
    }
    const int root = ctx_.map.sender_row(sender);
    auto &accepted = accepted_[root];
    /* a root has at most as many transfers in flight as it has buffers */
    const int64_t ahead = rdmc_buffers(ctx_.params);
    int64_t &taken = taken_[root];
    if (check_rdmc_descriptor(d, engine_->max_message(), taken, accepted, ahead) != nullptr) {
        return arrival::invalid;
    }
    while (accepted <= d.transfer) {
        if (engine_->accept(root) != UCS_OK) {
            return arrival::pending;
        }
        ++accepted;
    }
    auto it = arrived_.find({root, d.transfer});
    if (it == arrived_.end()) {
        return arrival::pending;
    }
    if (it->second.size() != d.size) {
        return arrival::invalid;   /* the descriptor names another transfer's size */
    }
    checked_[{sender, index}] = d.transfer;
    taken                     = d.transfer + 1;   /* the next slot names a later one */
    return arrival::arrived;
}

std::span<const std::byte> large_messages::data(int sender, int64_t index, int64_t &transfer)
{
    if (sender == ctx_.map.my_sender()) {
        /* our own: we wrote its descriptor, and we deliver only what we sent */
        transfer = descriptor(sender, index).transfer;
        auto own = own_.find(transfer);
        if (own == own_.end()) {
            transfer = -1;
            return {};
        }
        return own->second.data;
    }
    auto c = checked_.find({sender, index});
    if (c == checked_.end()) {
        transfer = -1;
        return {};
    }
    transfer = c->second;
    checked_.erase(c);
    auto it = arrived_.find({ctx_.map.sender_row(sender), transfer});
    return it != arrived_.end() ? it->second : std::span<const std::byte>{};
}

void large_messages::release(int sender, int64_t transfer)
{
    if (sender == ctx_.map.my_sender()) {
        auto it = own_.find(transfer);
        if (it != own_.end()) {
            it->second.delivered = true;
            release_own_when_done(it);
        }
        return;
    }
    const int root = ctx_.map.sender_row(sender);
    engine_->release(root, transfer);
    arrived_.erase({root, transfer});
}

void large_messages::release_own_when_done(std::map<int64_t, own_message>::iterator it)
{
    if (it->second.sent && it->second.delivered) {
        engine_->release(ctx_.me(), it->first);   /* RDMC's members are the creation view's */
        own_.erase(it);
    }
}

void large_messages::dump(FILE *out) const
{
    if (engine_) {
        engine_->dump(out);
    }
}

} // namespace tc
