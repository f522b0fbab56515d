/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * A mirrored region: every member of a group holds a copy of the same
 * parts, and a member writes its own parts locally and pushes byte ranges
 * of them to the same offset of the same part at its peers. The SST is one
 * part per member (its row), the SMC slots one part per sender (its
 * window), the view exchange one part per member, RDMC's control words one
 * part per writer; RDMC's buffer pool is one part every member writes
 * (relays pick its blocks per transfer: docs/security.md).
 *
 * Invariants:
 *  - Each part of a member's copy is a ucp_mem_map registration of its
 *    own. A part with an owner is written by that member only: its rkey
 *    (and its write-lane key) goes to the owner alone, point to point, and
 *    the write lane admits the owner's id alone into it. So at each member,
 *    another member can name only the parts it owns: it has no rkey of
 *    anyone else's row or window. Over an RMA lane whose transport checks
 *    rkeys (InfiniBand) nothing else is reachable; over the AM lane the
 *    receiver stores only into a part its writer owns (the lane checks the
 *    range, and that the message came in on the owner's endpoint). Over
 *    shared memory and cma a process of the same user can reach any of our
 *    memory without an rkey (docs/security.md): there the confinement holds
 *    against a member that uses its rkeys, not against arbitrary code.
 *  - A part's copy at a peer is used as a put target only after its range
 *    was checked against the peer's registration where that can be seen
 *    locally (tc_put_target_check): a peer that names an address outside
 *    what it registered fails the creation instead of steering our puts
 *    into our own memory.
 *  - Readers address a part through an array of part pointers: one load
 *    per cell, as base()+offset was; the bytes of a part are contiguous.
 *    (Parts are separate allocations. One reserved range with a
 *    UCP_MEM_MAP_FIXED allocation per part would keep base()+offset: UCX's
 *    posix md maps a FIXED allocation with MAP_FIXED, but it would put a
 *    second mechanism under every region for no gain on the read path.)
 *
 * Creation is collective among the members only: descriptors travel point
 * to point over the node's active messages (ucp_node::exchange_personal),
 * so nodes outside the group take no part.
 */
#pragma once

#include "common/ucp_handles.hpp"
#include "sst/pusher.hpp"

#include <memory>
#include <span>
#include <vector>

namespace tc::sst {

class mirrored_region {
public:
    /* an owner of a part that every member may write */
    static constexpr int kAnyMember = -1;

    /* Collective among @a members (a node outside them returns at once with
     * @a out empty). Part p of @a part_bytes is written by the member of
     * index @a owners[p] alone, or by every member if that is kAnyMember. */
    static ucs_status_t create(ucp_node &node, std::span<const int> members, size_t part_bytes,
                               std::span<const int> owners, std::unique_ptr<mirrored_region> &out);
    /* One part of @a size bytes that every member writes. */
    static ucs_status_t create(ucp_node &node, std::span<const int> members, size_t size,
                               std::unique_ptr<mirrored_region> &out)
    {
        const int any[] = {kAnyMember};
        return create(node, members, size, any, out);
    }

    /* our copy of part @a p */
    std::byte *part(int p) const { return parts_[p]; }
    std::byte *const *parts() const { return parts_.data(); }
    int part_count() const { return static_cast<int>(parts_.size()); }
    size_t part_bytes() const { return part_bytes_; }
    /* a one-part region: the part */
    std::byte *base() const { return parts_[0]; }
    size_t size() const { return part_bytes_; }
    int member_count() const { return static_cast<int>(members_.size()); }
    int my_index() const { return my_index_; }
    int rank_of(int member) const { return members_[member]; }
    /* for puts from our part without registration (zero copy) */
    ucp_mem_h memh(int p = 0) const { return local_[p]->memh(); }
    /* where @a member's copy of part @a p is, for a part we may write */
    const remote_memory &remote(int member, int p = 0) const
    {
        return remotes_[writable_[p]][member];
    }
    /* we hold every member's rkey of part @a p */
    bool may_write(int p) const { return writable_[p] >= 0; }
    /* the write-lane key of our copy of part @a p (its owner names it so) */
    uint64_t local_write_key(int p) const { return local_[p]->write_key(); }
    /* ucp_mem_map registrations and their bytes at this member */
    size_t registrations() const { return local_.size(); }
    size_t registered_bytes() const;

    /* Push our bytes [offset, offset+len) of part @a p (one we may write)
     * to the same place at @a member. */
    ucs_status_t push(pusher &pu, int member, int p, size_t offset, size_t len,
                      put_purpose purpose, bool snapshot = true) const;
    /* Members push_all() reaches (default: all). A view change narrows it
     * to the survivors, so nobody puts to an expelled member. */
    void set_active(std::vector<bool> active) { active_ = std::move(active); }

    /* ... to every active member but us. */
    ucs_status_t push_all(pusher &pu, int p, size_t offset, size_t len, put_purpose purpose,
                          bool snapshot = true) const;

    mirrored_region() = default;  /* empty; filled by create() */
    ~mirrored_region();
    mirrored_region(const mirrored_region &)            = delete;
    mirrored_region &operator=(const mirrored_region &) = delete;

private:
    ucs_status_t map_parts(ucp_node &node, std::span<const int> owners);
    ucs_status_t take_descriptors(ucp_node &node, std::span<const int> owners,
                                  const std::vector<std::vector<std::byte>> &from);

    ucp_node                           *node_ = nullptr;  /* peers write through its lane */
    std::vector<int>                   members_;
    int                                my_index_   = -1;
    size_t                             part_bytes_ = 0;
    std::vector<std::byte*>            parts_;     /* our copy of each part */
    std::vector<std::unique_ptr<registered_memory>> local_;   /* by part */
    std::vector<int>                   writable_;  /* by part: index into remotes_, or -1 */
    std::vector<std::vector<remote_memory>> remotes_;   /* [writable part][member] */
    std::vector<bool>                  active_;    /* empty: all */
};

/* Loads and stores of 8-byte words that peers write with puts. */
inline int64_t load_word(const std::byte *p)
{
    return __atomic_load_n(reinterpret_cast<const int64_t*>(p), __ATOMIC_ACQUIRE);
}

inline void store_word(std::byte *p, int64_t v)
{
    __atomic_store_n(reinterpret_cast<int64_t*>(p), v, __ATOMIC_RELEASE);
}

} // namespace tc::sst
