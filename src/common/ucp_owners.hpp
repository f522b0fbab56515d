/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * unique_ptr owners of UCP and Two-Chains handles: each releases its handle
 * with the call UCX or the runtime pairs with its creation. They live apart
 * from common/ucp_handles.hpp (which includes them for its users) so that
 * the node's parts (common/node_collectives.hpp) can own handles too
 * without seeing the node.
 *
 * Invariant: a null owner releases nothing (unique_ptr never calls the
 * deleter on nullptr), so an object that failed halfway through its
 * construction holds null owners for what it never created.
 */
#pragma once

#include <twochains/bootstrap.h>
#include <twochains/lane.h>
#include <twochains/progress.h>
#include <ucp/api/ucp.h>

#include <memory>
#include <type_traits>

namespace tc {

struct ucp_context_deleter { void operator()(ucp_context_h c) const { ucp_cleanup(c); } };
struct ucp_worker_deleter  { void operator()(ucp_worker_h w) const { ucp_worker_destroy(w); } };
struct ucp_rkey_deleter    { void operator()(ucp_rkey_h k) const { ucp_rkey_destroy(k); } };
struct engine_deleter {
    void operator()(tc_progress_engine_h e) const { tc_progress_engine_destroy(e); }
};
struct bootstrap_deleter {
    void operator()(tc_bootstrap_h b) const { tc_bootstrap_destroy(b); }
};
struct write_lane_deleter {
    void operator()(tc_write_lane_h l) const { tc_write_lane_destroy(l); }
};

using context_ptr   = std::unique_ptr<std::remove_pointer_t<ucp_context_h>, ucp_context_deleter>;
using worker_ptr    = std::unique_ptr<std::remove_pointer_t<ucp_worker_h>, ucp_worker_deleter>;
using rkey_ptr      = std::unique_ptr<std::remove_pointer_t<ucp_rkey_h>, ucp_rkey_deleter>;
using engine_ptr    = std::unique_ptr<std::remove_pointer_t<tc_progress_engine_h>, engine_deleter>;
using bootstrap_ptr = std::unique_ptr<std::remove_pointer_t<tc_bootstrap_h>, bootstrap_deleter>;
using write_lane_ptr = std::unique_ptr<std::remove_pointer_t<tc_write_lane_h>, write_lane_deleter>;

} // namespace tc
