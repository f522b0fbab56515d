/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Which transport carries an endpoint's puts, as UCP chose it: the one
 * answer for the mailbox's report and the replication layer's alike.
 */
#ifndef TWOCHAINS_LANE_H_
#define TWOCHAINS_LANE_H_

#include <ucp/api/ucp.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

#include <stddef.h>

BEGIN_C_DECLS

/**
 * From the text of ucp_ep_print_info(): the transport of the lane that
 * "put[N]" names ("posix/memory.0"), or, when the endpoint has no RMA lane
 * and UCP emulates puts with active messages, the am lane's transport with
 * " (put emulated over am)". "unknown" and UCS_ERR_NO_ELEM when the text
 * names neither. @a out is always terminated.
 */
ucs_status_t tc_put_lane_parse(const char *ep_info, char *out, size_t max);

/** tc_put_lane_parse() of @a ep's own info. */
ucs_status_t tc_put_lane_describe(ucp_ep_h ep, char *out, size_t max);

END_C_DECLS

#endif
