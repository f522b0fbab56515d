/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * group::join: ask a member for admission (membership/join_client.hpp),
 * meet the next view's members at the sponsor's rendezvous, and build that
 * view with them. Every wait is bounded by UCX_TC_BOOTSTRAP_TIMEOUT.
 */
#include "api/group.hpp"
#include "group/group_impl.hpp"
#include "membership/join_client.hpp"

#include <ucs/debug/log_def.h>

#include <algorithm>
#include <string>

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

    /* held until the view is built: the sponsor's end of it stays open too */
    join::socket_fd s;
    join::admission a;
    status = join::ask_for_admission(contact, params, settings, s, a);
    if (status != UCS_OK) {
        return status; /* logged */
    }
    const std::vector<int> &members = a.members, &senders = a.senders, &ids = a.rendezvous;
    const int my_rank = static_cast<int>(std::find(ids.begin(), ids.end(), a.id) - ids.begin());
    const std::string root = join::host_of(contact) + ":" + std::to_string(a.rendezvous_port);
    tc_bootstrap_h boot;
    status = tc_bootstrap_tcp_create(root.c_str(), -1, my_rank, static_cast<int>(ids.size()),
                                     timeout, &boot);
    if (status == UCS_OK) {
        status = node.enter_view(boot, ids, a.id);
    }
    std::unique_ptr<group_impl> impl;
    if (status == UCS_OK) {
        group_params p = params;
        p.members      = members;
        p.senders      = params.senders.empty() ? std::vector<int>{} : senders;
        std::shared_ptr<replicated_jams> jams;
        status = replicated_jams::create(p, jams);
        if (status == UCS_OK) {
            status = group_impl::build_view(node, p, senders, a.epoch, a.sponsor, true,
                                            std::move(jams), impl);
        }
    }
    if (status == UCS_OK) {
        status = impl->listen_for_joiners();
    }
    if (status != UCS_OK) {
        ucs_error("group: joining view %ld failed: %s", static_cast<long>(a.epoch),
                  ucs_status_string(status));
        return status;
    }
    out = std::make_unique<group>(std::move(impl));
    return UCS_OK;
}

} // namespace tc
