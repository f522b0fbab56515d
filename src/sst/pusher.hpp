/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * One-sided puts for the replication layer, counted by purpose.
 *
 * ucp_put_nbx may read its source after it returns (zero-copy over tcp), so a
 * value that keeps changing (a counter, an SST row) is put from a staging copy
 * that lives until the request completes: the receiver then sees exactly the
 * bytes we meant, never a later mix. Slot payloads that stay unchanged until
 * delivered everywhere are put in place.
 *
 * Threads: confined to the thread that drives the node's progress engine.
 */
#pragma once

#include "common/ucp_handles.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace tc::sst {

enum class put_purpose : uint8_t {
    data,             /* SMC slot or RDMC block */
    counter,          /* a sender's message counter */
    receive_report,   /* a member's received/published/delivered counters */
    delivery_report,  /* delivered counter alone, from an idle member */
    null_message,     /* slot + counter of a null message */
    heartbeat,
    other,
    count_
};

const char *put_purpose_name(put_purpose p);

struct put_counts {
    std::array<uint64_t, static_cast<size_t>(put_purpose::count_)> by_purpose{};
    uint64_t operator[](put_purpose p) const { return by_purpose[static_cast<size_t>(p)]; }
    uint64_t total() const;
};

class pusher {
public:
    explicit pusher(ucp_node &node) : node_(node) {}
    ~pusher();
    pusher(const pusher &)            = delete;
    pusher &operator=(const pusher &) = delete;

    /* Put a snapshot of [src, src+len) to (peer, raddr). */
    ucs_status_t put_copy(int peer, const void *src, size_t len, uint64_t raddr,
                          const remote_memory &dst, put_purpose purpose);

    /* Put [src, src+len), which the caller keeps unchanged until completion. */
    ucs_status_t put_inplace(int peer, const void *src, size_t len, uint64_t raddr,
                             const remote_memory &dst, put_purpose purpose);

    /* Order every put issued so far before every put issued after. */
    ucs_status_t fence();

    /* Release completed requests; returns how many completed. */
    unsigned reap();

    /* Wait until every issued put has completed locally, but for puts to
     * forgotten peers. */
    ucs_status_t flush(double timeout_s = 30.0);

    /* @a rank left the view: its puts may never complete (a cut link
     * completes them only when UCX gives up on the endpoint), so flush()
     * stops waiting for them; they are still reaped when they do. */
    void forget(int rank);

    const put_counts &counts() const { return counts_; }

    /* A put to @a rank failed (peer gone): the owner decides what that
     * means (the group suspects the member). The put is dropped. */
    void on_peer_error(std::function<void(int rank)> cb) { on_peer_error_ = std::move(cb); }
    size_t in_flight() const { return inflight_.size(); }

private:
    void peer_error(int rank, ucs_status_t status, const char *what);

    struct inflight {
        int                          peer;
        void                         *request;
        std::unique_ptr<std::byte[]> staging;  /* null for in-place puts */
        size_t                       capacity;
        std::unique_ptr<tc_write_header_t> header;   /* the write lane's, until completion */
    };

    ucs_status_t issue(int peer, const void *src, size_t len, uint64_t raddr,
                       const remote_memory &dst,
                       put_purpose purpose, std::unique_ptr<std::byte[]> staging,
                       size_t capacity);
    std::unique_ptr<std::byte[]> take_staging(size_t len, size_t &capacity);

    ucp_node                                  &node_;
    put_counts                                counts_;
    std::vector<inflight>                     inflight_;
    std::vector<std::unique_ptr<std::byte[]>> free_staging_;  /* kStagingBytes each */
    std::function<void(int)>                  on_peer_error_;
    std::vector<bool>                         peer_error_logged_;
    std::vector<bool>                         forgotten_;   /* by rank */

    bool waited_for(const inflight &f) const
    {
        return static_cast<size_t>(f.peer) >= forgotten_.size() || !forgotten_[f.peer];
    }
    size_t waited_in_flight() const;
};

} // namespace tc::sst
