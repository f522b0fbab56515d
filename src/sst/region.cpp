/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "sst/region.hpp"

#include <twochains/lane.h>
#include <ucs/debug/log_def.h>

#include <algorithm>
#include <cstring>

namespace tc::sst {

namespace {

/* Who may write part @a p: the member of that index, or all of them. */
bool writes(std::span<const int> owners, int p, int member)
{
    return owners[p] == mirrored_region::kAnyMember || owners[p] == member;
}

/* a descriptor of one part in a personal blob: part index, length, bytes */
struct entry_header {
    uint32_t part;
    uint32_t length;
};

} // namespace

ucs_status_t mirrored_region::create(ucp_node &node, std::span<const int> members,
                                     size_t part_bytes, std::span<const int> owners,
                                     std::unique_ptr<mirrored_region> &out)
{
    out.reset();
    auto me = std::find(members.begin(), members.end(), node.rank());
    if (me == members.end()) {
        return UCS_OK;   /* the members agree among themselves */
    }
    for (int o : owners) {
        if (o != kAnyMember && (o < 0 || static_cast<size_t>(o) >= members.size())) {
            ucs_error("mirrored region: a part's owner %d is not a member index", o);
            return UCS_ERR_INVALID_PARAM;
        }
    }

    auto region         = std::make_unique<mirrored_region>();
    region->members_.assign(members.begin(), members.end());
    region->my_index_   = static_cast<int>(me - members.begin());
    region->part_bytes_ = part_bytes;
    const bool mapped   = (region->map_parts(node, owners) == UCS_OK);

    /* to each member the descriptors of the parts it may write here; empty
     * if we could not map ours, so that it fails too instead of waiting */
    std::vector<std::vector<std::byte>> to(members.size()), from;
    for (size_t m = 0; mapped && m < members.size(); ++m) {
        for (int p = 0; p < static_cast<int>(owners.size()); ++p) {
            if (static_cast<int>(m) == region->my_index_ || !writes(owners, p, static_cast<int>(m))) {
                continue;
            }
            const auto &d = region->local_[p]->packed_descriptor();
            const entry_header h{static_cast<uint32_t>(p), static_cast<uint32_t>(d.size())};
            const auto *hb    = reinterpret_cast<const std::byte*>(&h);
            to[m].insert(to[m].end(), hb, hb + sizeof(h));
            to[m].insert(to[m].end(), d.begin(), d.end());
        }
        if (to[m].empty()) {
            to[m].push_back(std::byte{0});   /* "mapped, nothing for you" */
        }
    }
    ucs_status_t status = node.exchange_personal(members, to, from);
    if (status != UCS_OK) {
        return status;
    }
    if (!mapped) {
        return UCS_ERR_NO_MEMORY;   /* map_parts logged why */
    }
    status = region->take_descriptors(node, owners, from);
    if (status != UCS_OK) {
        return status;
    }
    out = std::move(region);
    return UCS_OK;
}

ucs_status_t mirrored_region::map_parts(ucp_node &node, std::span<const int> owners)
{
    node_ = &node;
    for (size_t p = 0; p < owners.size(); ++p) {
        auto mem = std::make_unique<registered_memory>(node.context(), part_bytes_);
        if (mem->status() != UCS_OK) {
            return mem->status();   /* logged */
        }
        /* over the AM lane, as over the rkey: the owner alone, or every member */
        rank_set senders;
        for (int m = 0; m < member_count(); ++m) {
            if (writes(owners, static_cast<int>(p), m)) {
                senders.insert(members_[m]);
            }
        }
        ucs_status_t status = node.allow_writes(*mem, senders);
        if (status != UCS_OK) {
            return status;   /* logged */
        }
        parts_.push_back(static_cast<std::byte*>(mem->address()));
        local_.push_back(std::move(mem));
    }
    return UCS_OK;
}

ucs_status_t mirrored_region::take_descriptors(ucp_node &node, std::span<const int> owners,
                                               const std::vector<std::vector<std::byte>> &from)
{
    writable_.assign(owners.size(), -1);
    for (size_t p = 0; p < owners.size(); ++p) {
        if (writes(owners, static_cast<int>(p), my_index_)) {
            writable_[p] = static_cast<int>(remotes_.size());
            remotes_.emplace_back(members_.size());
        }
    }
    std::vector<remote_memory_request> requests;
    std::vector<std::pair<int, size_t>> request_part;   /* (member, part) */
    for (int m = 0; m < member_count(); ++m) {
        if (m == my_index_) {
            continue;
        }
        const std::vector<std::byte> &blob = from[m];
        if (blob.empty()) {
            ucs_error("member rank %d could not register its region of %zu parts of %zu bytes",
                      members_[m], owners.size(), part_bytes_);
            return UCS_ERR_NO_MEMORY;
        }
        /* exactly the parts we may write, in order, and nothing else */
        size_t pos = 0;
        for (size_t p = 0; p < owners.size(); ++p) {
            if (writable_[p] < 0) {
                continue;
            }
            entry_header h;
            if (blob.size() - pos < sizeof(h)) {
                ucs_error("member rank %d sent too few region descriptors", members_[m]);
                return UCS_ERR_INVALID_PARAM;
            }
            std::memcpy(&h, blob.data() + pos, sizeof(h));
            pos += sizeof(h);
            if (h.part != p || h.length > blob.size() - pos) {
                ucs_error("member rank %d sent a descriptor of part %u (%u bytes) where part "
                          "%zu was due", members_[m], h.part, h.length, p);
                return UCS_ERR_INVALID_PARAM;
            }
            requests.push_back({node.ep(members_[m]), {blob.data() + pos, h.length},
                                part_bytes_, &remotes_[writable_[p]][m]});
            request_part.emplace_back(m, p);
            pos += h.length;
        }
    }
    /* every member's parts at once: a mapping check per batch, not per part */
    ucs_status_t status = remote_memory_unpack_all(requests);
    for (size_t i = 0; i < requests.size(); ++i) {
        if (requests[i].status != UCS_OK) {
            ucs_error("member rank %d: its copy of part %zu is no put target: %s",
                      members_[request_part[i].first], request_part[i].second,
                      ucs_status_string(requests[i].status));
        }
    }
    return status;
}

size_t mirrored_region::registered_bytes() const
{
    size_t bytes = 0;
    for (const auto &mem : local_) {
        bytes += mem->mapped_length();
    }
    return bytes;
}

mirrored_region::~mirrored_region()
{
    if (node_ != nullptr) {
        for (const auto &mem : local_) {
            node_->forbid_writes(*mem);
        }
    }
}

ucs_status_t mirrored_region::push(pusher &pu, int member, int p, size_t offset, size_t len,
                                   put_purpose purpose, bool snapshot) const
{
    const auto &r   = remote(member, p);
    const void *src = parts_[p] + offset;
    return snapshot ? pu.put_copy(members_[member], src, len, r.address + offset, r, purpose) :
                      pu.put_inplace(members_[member], src, len, r.address + offset, r, purpose);
}

ucs_status_t mirrored_region::push_all(pusher &pu, int p, size_t offset, size_t len,
                                       put_purpose purpose, bool snapshot) const
{
    for (int m = 0; m < member_count(); ++m) {
        if (m == my_index_ || (!active_.empty() && !active_[m])) {
            continue;
        }
        ucs_status_t status = push(pu, m, p, offset, len, purpose, snapshot);
        if (status != UCS_OK) {
            return status;
        }
    }
    return UCS_OK;
}

} // namespace tc::sst
