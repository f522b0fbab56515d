/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The joiner's side of the join protocol (join_client.cpp): ask a member
 * to admit us into the group's next view.
 */
#pragma once

#include "core/context.hpp"
#include "membership/join_wire.hpp"

#include <string>

namespace tc::join {

/* Ask the member at @a contact ("host:port") to admit us with @a params,
 * again with backoff while it is busy, until UCX_TC_BOOTSTRAP_TIMEOUT:
 * UCS_OK and the admission, decoded and checked, in @a a, the connection
 * in @a s (held open until the view is built), or why not (logged). */
ucs_status_t ask_for_admission(const std::string &contact, const group_params &params,
                               const group_settings &settings, socket_fd &s, admission &a);

} // namespace tc::join
