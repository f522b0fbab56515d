/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * A replication group (one shard): atomic multicast of small messages over
 * SMC, in round-robin total order with stable delivery, as UCP-level
 * protocols on the node's shared progress engine.
 *
 * Threads: every call, and every callback, happens on the thread that drives
 * the node's progress engine; except that with threaded_senders (batched
 * mode), any thread may call send(), flush() and stats() while the engine's
 * own thread drives it and runs the callbacks.
 */
#pragma once

#include "core/group_types.hpp"
#include "core/view_owner.hpp"

#include <memory>
#include <string>

namespace tc {

class group_impl;

class group final : private view_owner {
public:
    /*
     * Collective over params.members only: the members exchange what the
     * group needs among themselves, over active messages between them (the
     * node's bootstrap is not used, and a rank pays nothing for groups it is
     * not in). A rank outside params.members may call it too: it returns at
     * once with an empty @a out and UCS_OK. Members that share several
     * groups create them in the same order. Parameters that differ between
     * members fail on every member with UCS_ERR_INVALID_PARAM, except a
     * different member list: the members then wait for each other in vain
     * and fail with UCS_ERR_TIMED_OUT after UCX_TC_BOOTSTRAP_TIMEOUT. More
     * members than UCX_TC_GROUP_MAX_MEMBERS (256 by default; each membership
     * mask costs ceil(members / 64) words of every SST row) fail on every
     * member with UCS_ERR_INVALID_PARAM. The job may be of any size.
     */
    static ucs_status_t create(ucp_node &node, const group_params &params,
                               std::unique_ptr<group> &out);

    /*
     * Join a running group through the join port of one of its members,
     * @a contact ("host:port"): this process (its own single-member
     * bootstrap) enters the group's next view, once the members have
     * delivered the current view's last messages. params.members and
     * params.senders are ignored (the view says who is in it); the rest must
     * match the group's, or the join is refused with UCS_ERR_INVALID_PARAM
     * and the reason logged. params.set_state receives the sponsor's state
     * before the first message of the new view. The joiner sends if every
     * member of the group sends. Waits up to UCX_TC_BOOTSTRAP_TIMEOUT for
     * the contact, then for the view change.
     */
    static ucs_status_t join(ucp_node &node, const group_params &params,
                             const std::string &contact, std::unique_ptr<group> &out);
    ~group();
    group(const group &)            = delete;
    group &operator=(const group &) = delete;

    /*
     * Multicast @a size bytes that @a fill writes in place into the slot.
     * With @a block, waits (progressing the engine) while the window is
     * full; without, returns UCS_ERR_NO_RESOURCE. Any wait here, in flush()
     * and in close() fails with UCS_ERR_TIMED_OUT when the group makes no
     * progress for UCX_TC_GROUP_TIMEOUT (30 s).
     */
    ucs_status_t send(size_t size, fill_ref fill,
                      bool block = true, bool urgent = false);

    /*
     * Multicast a jam: element @a element of @a pkg, its payload written in
     * place by the element's payload_init from @a source_args (else a copy
     * of them), in @a mode (unset: params.jam_mode). Local frames name the
     * element; Injected ones carry the code; Cached ones carry it until a
     * frame with it was delivered here, then its hash. Frames above
     * max_payload go over RDMC when the group has it. Every member runs it
     * at delivery (params.jam_state, on_jam). Blocks as send() does.
     */
    ucs_status_t send_jam(tc_ifunc_pkg_h pkg, uint32_t element, void *source_args,
                          size_t size, std::optional<tc_ifunc_mode_t> mode = {},
                          bool block = true);

    /* Two-step form of send(): a slot to write into, then commit(). Not for
     * threaded senders (use send()). A held slot defers this member's part in
     * a view change until commit(), so do not wait on the group in between. */
    ucs_status_t get_buffer(size_t size, std::span<std::byte> &buffer, bool block = true);
    ucs_status_t commit();

    /*
     * Returns once everything this member committed before the call has been
     * pushed to every peer (urgent mode: at once); with @a stable, once it is
     * delivered at every member.
     */
    ucs_status_t flush(bool stable = false);

    /* Collective over the group's members: finish, then release. */
    ucs_status_t close();

    const view &current_view() const;
    bool is_sender() const;
    /* this member left: it could not run a replicated jam the others ran */
    bool has_left() const;
    group_stats stats() const;

    explicit group(std::unique_ptr<group_impl> impl);

private:
    friend struct fault_injection_access;   /* api/own_row_writer.hpp */
    /* A view that admitted a joiner is a new SST, SMC and RDMC over the new
     * members: the old ones retire (kept, not destroyed: late puts into
     * them stay harmless) and calls move on to the new. */
    void replace(std::unique_ptr<group_impl> next) override;
    /* send()/flush() retried on the new view when the old one retired */
    template<class Op> ucs_status_t on_current_view(Op op);

    std::unique_ptr<group_impl>              impl_;
    std::vector<std::unique_ptr<group_impl>> retired_;
};

} // namespace tc
