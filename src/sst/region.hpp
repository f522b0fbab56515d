/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * A mirrored region: every member of a group registers a region of the same
 * size with ucp_mem_map and learns every other member's address and rkey.
 * The SST table and the SMC slot windows are both mirrored regions; a member
 * writes its own part locally and pushes byte ranges of it to the same offset
 * at its peers.
 *
 * Creation is collective over every rank of the node's bootstrap (like
 * MPI_Comm_split), so groups with any membership can be formed over one
 * worker; ranks outside the group take part with nothing to share.
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
    /* Collective. @a out is left empty on ranks that are not in @a members. */
    static ucs_status_t create(ucp_node &node, std::span<const int> members, size_t size,
                               std::unique_ptr<mirrored_region> &out);

    std::byte *base() const { return static_cast<std::byte*>(local_->address()); }
    size_t size() const { return local_->length(); }
    int member_count() const { return static_cast<int>(members_.size()); }
    int my_index() const { return my_index_; }
    int rank_of(int member) const { return members_[member]; }
    /* for puts from our region without registration (zero copy) */
    ucp_mem_h memh() const { return local_->memh(); }
    /* where @a member's copy is: for puts to another offset than ours */
    const remote_memory &remote(int member) const { return remotes_[member]; }

    /* Push our bytes [offset, offset+len) to the same offset at @a member. */
    ucs_status_t push(pusher &p, int member, size_t offset, size_t len, put_purpose purpose,
                      bool snapshot = true) const;
    /* Members push_all() reaches (default: all). A view change narrows it
     * to the survivors, so nobody puts to an expelled member. */
    void set_active(std::vector<bool> active) { active_ = std::move(active); }

    /* ... to every active member but us. */
    ucs_status_t push_all(pusher &p, size_t offset, size_t len, put_purpose purpose,
                          bool snapshot = true) const;

    mirrored_region() = default;  /* empty; filled by create() */
    ~mirrored_region();
    mirrored_region(const mirrored_region &)            = delete;
    mirrored_region &operator=(const mirrored_region &) = delete;

private:
    ucp_node                           *node_ = nullptr;  /* peers write through its lane */
    std::vector<int>                   members_;
    int                                my_index_ = -1;
    std::unique_ptr<registered_memory> local_;
    std::vector<remote_memory>         remotes_;  /* by member index */
    std::vector<bool>                  active_;   /* empty: all */
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
