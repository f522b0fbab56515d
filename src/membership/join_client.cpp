/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The joiner's side of a join: connect to a member's join port, send the
 * request, read the one reply (refusal or admission), meet the next view's
 * members at the sponsor's rendezvous, and build that view with them.
 *
 * Invariants: nothing in the reply is used before it is checked (magic,
 * version, counts and ids in range); every wait is bounded by
 * UCX_TC_BOOTSTRAP_TIMEOUT, and the wait for the admission also by
 * UCX_TC_GROUP_TIMEOUT (the members first finish their current view).
 */
#include "group/group_impl.hpp"
#include "membership/join_wire.hpp"

#include <ucs/debug/log_def.h>

#include <algorithm>

namespace tc {

ucs_status_t group::join(ucp_node &node, const group_params &params, const std::string &contact,
                         std::unique_ptr<group> &out)
{
    out.reset();
    group_settings settings;
    ucs_status_t status = group_settings::resolve(params, settings);
    if (status != UCS_OK) {
        return status;
    }
    const double timeout = settings.boot_timeout_s;
    if (params.threaded_senders) {
        ucs_error("group: joins are not supported with threaded senders");
        return UCS_ERR_UNSUPPORTED;
    }

    tc_job_key_t key;
    status = tc_job_key_load(&key);
    if (status != UCS_OK) {
        return status; /* logged */
    }
    join::socket_fd s;
    status = join::connect_to(contact, timeout, s);
    if (status != UCS_OK) {
        tc_job_key_clear(&key);
        return status; /* logged */
    }
    join::challenge c{};
    join::request req = join::request_for(params);
    status = join::read_all(s, &c, sizeof(c), timeout);
    if (status == UCS_OK && (c.magic != join::kChallengeMagic || c.version != join::kVersion)) {
        ucs_error("group: %s is not a join service of protocol %u", contact.c_str(),
                  join::kVersion);
        status = UCS_ERR_UNSUPPORTED;
    }
    tc_job_key_prove(&key, TC_JOB_KEY_SERVICE_JOIN, c.nonce, req.proof);
    tc_job_key_clear(&key);
    if (status == UCS_OK) {
        status = join::write_all(s, &req, sizeof(req), timeout);
    }
    join::reply r{};
    if (status == UCS_OK) {
        status = join::read_all(s, &r, sizeof(r), timeout + settings.wait_timeout_s);
    }
    if (status != UCS_OK) {
        ucs_error("group: no answer from %s to the join request: %s", contact.c_str(),
                  ucs_status_string(status));
        return status;
    }
    r.reason[sizeof(r.reason) - 1] = '\0';
    if (r.magic != join::kReplyMagic || r.version != join::kVersion) {
        ucs_error("group: %s answered the join request with garbage", contact.c_str());
        return UCS_ERR_IO_ERROR;
    }
    if (r.status != UCS_OK) {
        ucs_error("group: %s refused the join: %s", contact.c_str(), r.reason);
        return static_cast<ucs_status_t>(r.status);
    }
    if (r.member_count < 1 || r.member_count > join::kMaxMembers || r.sender_count < 0 ||
        r.sender_count > r.member_count || r.rendezvous_size != r.member_count ||
        r.id < 0 || r.id >= join::kMaxMembers) {
        ucs_error("group: %s sent an invalid admission", contact.c_str());
        return UCS_ERR_IO_ERROR;
    }
    std::vector<int> members(r.members, r.members + r.member_count);
    std::vector<int> senders(r.senders, r.senders + r.sender_count);
    std::vector<int> ids(r.rendezvous, r.rendezvous + r.rendezvous_size);
    const int my_rank = static_cast<int>(std::find(ids.begin(), ids.end(), r.id) - ids.begin());
    const std::string root = join::host_of(contact) + ":" + std::to_string(r.rendezvous_port);
    tc_bootstrap_h boot;
    status = tc_bootstrap_tcp_create(root.c_str(), -1, my_rank, r.rendezvous_size, timeout,
                                     &boot);
    if (status == UCS_OK) {
        status = node.enter_view(boot, ids, r.id);
    }
    std::unique_ptr<group_impl> impl;
    if (status == UCS_OK) {
        group_params p = params;
        p.members      = members;
        p.senders      = params.senders.empty() ? std::vector<int>{} : senders;
        std::shared_ptr<replicated_jams> jams;
        status = replicated_jams::create(p, jams);
        if (status == UCS_OK) {
            status = group_impl::build_view(node, p, senders, r.epoch, r.sponsor, true,
                                            std::move(jams), impl);
        }
    }
    if (status == UCS_OK) {
        status = impl->listen_for_joiners();
    }
    if (status != UCS_OK) {
        ucs_error("group: joining view %ld failed: %s", static_cast<long>(r.epoch),
                  ucs_status_string(status));
        return status;
    }
    out = std::make_unique<group>(std::move(impl));
    return UCS_OK;
}

} // namespace tc
