/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "sst/region.hpp"

#include <ucs/debug/log_def.h>

#include <algorithm>

namespace tc::sst {

ucs_status_t mirrored_region::create(ucp_node &node, std::span<const int> members, size_t size,
                                     std::unique_ptr<mirrored_region> &out)
{
    out.reset();
    auto me          = std::find(members.begin(), members.end(), node.rank());
    const bool inside = (me != members.end());

    auto region = std::make_unique<mirrored_region>();
    std::vector<std::byte> descriptor;
    if (inside) {
        region->members_.assign(members.begin(), members.end());
        region->my_index_ = static_cast<int>(me - members.begin());
        region->local_    = std::make_unique<registered_memory>(node.context(), size);
        if (region->local_->status() != UCS_OK) {
            /* still take part in the exchange, so that no peer hangs */
            region->local_.reset();
        } else {
            region->node_ = &node;
            /* only the region's members may write it over the AM lane */
            rank_set senders;
            for (int m : members) {
                senders.insert(m);
            }
            if (node.allow_writes(*region->local_, senders) != UCS_OK) {
                region->local_.reset();   /* logged; the peers hear it below */
                region->node_ = nullptr;
                descriptor.clear();
            } else {
                descriptor = region->local_->packed_descriptor();  /* with its key */
            }
        }
    }

    std::vector<std::vector<std::byte>> all;
    ucs_status_t status = node.allgather_blobs(descriptor, all);
    if (status != UCS_OK) {
        return status;
    }
    if (!inside) {
        return UCS_OK;
    }
    for (int m : members) {
        if (all[m].empty()) {
            ucs_error("member rank %d could not register its region of %zu bytes", m, size);
            return UCS_ERR_NO_MEMORY;
        }
    }

    region->remotes_.resize(members.size());
    for (size_t i = 0; i < members.size(); ++i) {
        status = remote_memory_unpack(node.ep(members[i]), all[members[i]], region->remotes_[i]);
        if (status != UCS_OK) {
            return status;
        }
    }
    out = std::move(region);
    return UCS_OK;
}

mirrored_region::~mirrored_region()
{
    if (node_ != nullptr) {
        node_->forbid_writes(*local_);
    }
}

ucs_status_t mirrored_region::push(pusher &p, int member, size_t offset, size_t len,
                                   put_purpose purpose, bool snapshot) const
{
    const auto &r   = remotes_[member];
    const void *src = base() + offset;
    return snapshot ? p.put_copy(members_[member], src, len, r.address + offset, r, purpose) :
                      p.put_inplace(members_[member], src, len, r.address + offset, r, purpose);
}

ucs_status_t mirrored_region::push_all(pusher &p, size_t offset, size_t len, put_purpose purpose,
                                       bool snapshot) const
{
    for (int m = 0; m < member_count(); ++m) {
        if (m == my_index_ || (!active_.empty() && !active_[m])) {
            continue;
        }
        ucs_status_t status = push(p, m, offset, len, purpose, snapshot);
        if (status != UCS_OK) {
            return status;
        }
    }
    return UCS_OK;
}

} // namespace tc::sst
