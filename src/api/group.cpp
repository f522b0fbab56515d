/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The group facade: creation (parameters agreed by every member before any
 * region exists), and calls moved on to the current view's object when a
 * view with a joiner, or one rebuilt after a failure, replaced the old.
 * The protocols live in src/group, src/smc, src/order and src/membership
 * (group/group_impl.hpp names them in the order the poller runs them).
 */
#include "api/group.hpp"

#include "group/group_impl.hpp"

#include <ucs/debug/log_def.h>

#include <algorithm>
#include <cstring>

namespace tc {

namespace {

/* What every member must agree on, exchanged at creation. */
struct group_digest {
    uint64_t max_payload;
    uint32_t window;
    uint32_t mode;
    uint32_t member_count;
    uint32_t sender_count;
    uint64_t jam_state_size;
    uint64_t jam_packages;
    uint32_t jam_security;
    uint32_t reserved;
    /* followed by member ranks, then sender ranks (int32 each) */
};

std::vector<std::byte> make_digest(const group_params &p, const std::vector<int> &senders,
                                   tc_ifunc_security_t jam_security)
{
    group_digest d{p.max_payload, p.window, static_cast<uint32_t>(p.mode),
                   static_cast<uint32_t>(p.members.size()),
                   static_cast<uint32_t>(senders.size()), p.jam_state.size(),
                   replicated_jams::packages_digest(p), static_cast<uint32_t>(jam_security),
                   0};
    std::vector<std::byte> out(sizeof(d) + sizeof(int32_t) * (p.members.size() + senders.size()));
    std::memcpy(out.data(), &d, sizeof(d));
    size_t off = sizeof(d);
    for (int r : p.members) {
        int32_t v = r;
        std::memcpy(out.data() + off, &v, sizeof(v));
        off += sizeof(v);
    }
    for (int r : senders) {
        int32_t v = r;
        std::memcpy(out.data() + off, &v, sizeof(v));
        off += sizeof(v);
    }
    return out;
}

const char *digest_difference(const std::vector<std::byte> &a, const std::vector<std::byte> &b)
{
    group_digest da, db;
    std::memcpy(&da, a.data(), sizeof(da));
    std::memcpy(&db, b.data(), sizeof(db));
    if (da.max_payload != db.max_payload) return "max_payload";
    if (da.window != db.window) return "window";
    if (da.mode != db.mode) return "mode";
    if (da.member_count != db.member_count) return "member count";
    if (da.sender_count != db.sender_count) return "sender count";
    if (da.jam_state_size != db.jam_state_size) return "jam state size";
    if (da.jam_security != db.jam_security) return "jam security mode";
    if (da.jam_packages != db.jam_packages) return "jam packages (their code differs)";
    if (a != b) return "member or sender list";
    return nullptr;
}

} // namespace

/* --- group ------------------------------------------------------------- */

group::group(std::unique_ptr<group_impl> impl) : impl_(std::move(impl))
{
    impl_->set_owner(this);
}

void group::replace(std::unique_ptr<group_impl> next)
{
    retired_.push_back(std::move(impl_));
    impl_ = std::move(next);
    impl_->set_owner(this);
}

template<class Op> ucs_status_t group::on_current_view(Op op)
{
    for (;;) {
        group_impl *impl    = impl_.get();
        ucs_status_t status = op(*impl);
        if (status != UCS_ERR_CANCELED || !impl->superseded() || impl_.get() == impl) {
            return status;
        }
    }
}

group::~group()
{
    if (impl_) {
        impl_->close();
    }
}

ucs_status_t group::create(ucp_node &node, const group_params &params, std::unique_ptr<group> &out)
{
    out.reset();
    const bool member = std::find(params.members.begin(), params.members.end(), node.rank()) !=
                        params.members.end();
    if (!member) {
        return UCS_OK;   /* nothing to take part in: the members agree among themselves */
    }
    std::vector<int> senders = params.senders.empty() ? params.members : params.senders;

    /* The members' collectives below run among them only. A member list
     * that cannot name them fails here; any other bad parameter is found
     * below, while every member still takes part in every collective step,
     * so that one member's bad parameters fail everyone, not hang them. */
    for (int m : params.members) {
        if (m < 0 || m >= node.size() ||
            std::count(params.members.begin(), params.members.end(), m) != 1) {
            ucs_error("group: invalid parameters: members must be distinct ranks of the "
                      "bootstrap (0..%d)", node.size() - 1);
            return UCS_ERR_INVALID_PARAM;
        }
    }
    std::unique_ptr<ucp_node::member_scope> among_members;
    ucs_status_t status = node.open_member_scope(params.members, among_members);
    if (status != UCS_OK) {
        return status;
    }

    const char *local_error = nullptr;
    if (params.window == 0 || params.max_payload == 0 || params.max_payload > UINT32_MAX) {
        local_error = "members, window and max_payload must be positive";
    }
    for (int s : senders) {
        if (std::find(params.members.begin(), params.members.end(), s) ==
            params.members.end()) {
            local_error = "every sender must be a member";
        }
    }
    char member_limit_error[128];
    if (const char *why = group_settings::refuse_member_count(
                params.members.size(), member_limit_error, sizeof(member_limit_error))) {
        local_error = why;
    }
    if (params.on_deliver && params.on_deliver_span) {
        local_error = "set on_deliver or on_deliver_span, not both";
    }
    if (params.jam_mode >= TC_IFUNC_MODE_LAST) {
        local_error = "jam_mode is not a tc_ifunc_mode_t";
    }
    std::shared_ptr<replicated_jams> jams;
    if (!local_error && replicated_jams::create(params, jams) != UCS_OK) {
        local_error = "the replicated jam executor could not be created";
    }

    const std::vector<std::byte> digest = local_error ? std::vector<std::byte>{std::byte{0}} :
                                          make_digest(params, senders, jams->security());
    std::vector<std::vector<std::byte>> all;
    status = node.allgather_blobs(digest, all);
    if (status != UCS_OK) {
        return status;
    }

    /* every member checks the same blobs and so agrees */
    const char *mismatch = nullptr;
    int         culprit  = -1;
    for (int r : params.members) {
        if (all[r].size() < sizeof(group_digest)) {
            mismatch = "invalid parameters";
            culprit  = r;
            break;
        }
        if (const char *diff = digest_difference(all[params.members[0]], all[r])) {
            mismatch = diff;
            culprit  = r;
            break;
        }
    }
    if (local_error != nullptr) {
        ucs_error("group: invalid parameters: %s", local_error);
        return UCS_ERR_INVALID_PARAM;
    }
    if (mismatch != nullptr) {
        ucs_error("group: parameters differ between members (%s, rank %d)", mismatch, culprit);
        return UCS_ERR_INVALID_PARAM;
    }

    group_settings settings;
    status = group_settings::resolve(params, settings);
    if (status != UCS_OK) {
        return status;
    }
    auto impl = std::make_unique<group_impl>(node, params, senders, settings, std::move(jams));
    status    = impl->init();
    if (status == UCS_OK) {
        status = impl->listen_for_joiners();
    }
    if (status == UCS_OK) {
        status = impl->add_large_messages();
    }
    /* Creation ends when every member has unpacked every rkey: a member
     * that dies right after it (on posix its shared memory goes with it)
     * must not die under a peer still unpacking its rkey, which then fails,
     * and UCX 1.13 crashes in that failure's cleanup (ucp_ep_rkey_unpack ->
     * uct_posix_rkey_release). */
    if (status == UCS_OK) {
        status = node.barrier();
    }
    among_members.reset();   /* the node's collectives are the job's again */
    if (status == UCS_OK) {
        status = impl->start();
    }
    if (status != UCS_OK) {
        return status;
    }
    out = std::make_unique<group>(std::move(impl));
    return UCS_OK;
}

ucs_status_t group::send(size_t size, fill_ref fill,
                         bool block, bool urgent)
{
    return on_current_view([&](group_impl &g) { return g.send(size, fill, block, urgent); });
}

ucs_status_t group::send_jam(tc_ifunc_pkg_h pkg, uint32_t element, void *source_args,
                             size_t size, std::optional<tc_ifunc_mode_t> mode, bool block)
{
    return on_current_view([&](group_impl &g) {
        const tc_ifunc_exec_jam_t jam{pkg, element, mode.value_or(g.jam_mode()), source_args,
                                      size};
        return g.send_jam(jam, block);
    });
}

ucs_status_t group::get_buffer(size_t size, std::span<std::byte> &buffer, bool block)
{
    return on_current_view([&](group_impl &g) { return g.get_buffer(size, buffer, block); });
}

ucs_status_t group::commit() { return impl_->commit(); }
ucs_status_t group::flush(bool stable)
{
    return on_current_view([&](group_impl &g) { return g.flush(stable); });
}
ucs_status_t group::close()
{
    return on_current_view([](group_impl &g) { return g.close(); });
}
const view &group::current_view() const { return impl_->current_view(); }
bool group::is_sender() const { return impl_->is_sender(); }
bool group::has_left() const { return impl_->has_left(); }
group_stats group::stats() const { return impl_->stats(); }

} // namespace tc
