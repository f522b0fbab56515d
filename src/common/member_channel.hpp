/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Collectives among a few nodes of a job (a group's members), over UCP
 * active messages between them, so that a node pays nothing for the
 * collectives of groups it is not in: the job's bootstrap is not involved.
 *
 * A channel is a fixed list of node ids (the same list, in the same order,
 * at each of them) and a 64-bit name they agree on without talking: the
 * hash of the list and of how many channels over that list this node
 * opened before (nodes that share channels open them in the same order, as
 * they create their groups). Each collective on a channel is a round: every
 * node sends its bytes once to every other node of the channel, and the
 * round ends when it holds a message of that round from each of them.
 *
 * Invariants:
 *  - a message is named (channel, round, sender) and is taken exactly once;
 *    one that arrives before its receiver reaches the round (or opens the
 *    channel) waits in the node's inbox;
 *  - the sender is the endpoint a message came in on, not its header: sent
 *    with UCP_AM_SEND_FLAG_REPLY, a message is kept under its reply
 *    endpoint too, and a round takes only the one that came in on an
 *    endpoint bound to the sender it names (tc_write_lane_is_sender). One
 *    in another member's name is dropped when that sender's round is taken,
 *    counted and logged once, and cannot displace the genuine one;
 *  - the inbox holds at most kMaxPendingPerEndpoint messages that came in
 *    on one endpoint: past it, what that endpoint sends is dropped, counted
 *    and logged once (a member that floods it cannot exhaust our memory;
 *    an honest member has a round or two in flight);
 *  - rounds on a channel are numbered alike at every node (one counter,
 *    advanced once per collective), so a node a round ahead never mixes its
 *    bytes with the previous round's;
 *  - sends are eager active messages (no rendezvous: the handler holds the
 *    whole message), completed before the round returns, so the buffers
 *    they read outlive them;
 *  - a round fails (UCS_ERR_UNREACHABLE) once UCX reports an error on the
 *    endpoint to a node it still waits for, or after the bootstrap timeout.
 *
 * Threads: the thread that drives the node's progress engine, outside its
 * pollers (the round progresses the engine while it waits, so the groups
 * this node is already in keep their heartbeats).
 */
#pragma once

#include <twochains/am_ids.h>
#include <twochains/bootstrap.h>
#include <twochains/lane.h>
#include <ucp/api/ucp.h>

#include <cstddef>
#include <cstdint>
#include <cstdint>
#include <map>
#include <span>
#include <tuple>
#include <vector>

namespace tc {

class ucp_node;

/* Messages of member collectives, kept until their round takes them. */
class collective_inbox {
public:
    static constexpr unsigned kAmId = TC_MEMBER_CHANNEL_AM_ID;
    static constexpr size_t kMaxPendingPerEndpoint = 4096;

    /* @a lane knows which endpoint is whose (the node binds each it makes) */
    ucs_status_t attach(ucp_worker_h worker, tc_write_lane_h lane);
    /* the message of (channel, round, sender) that came in on the sender's
     * endpoint, moved out; false: not yet */
    bool take(uint64_t channel, uint32_t round, int sender, std::vector<std::byte> &out);
    /* messages of a channel no collective will take any more */
    void drop(uint64_t channel);
    size_t pending() const { return messages_.size(); }
    /* messages dropped: in another's name, or past an endpoint's bound */
    uint64_t forged() const { return forged_; }
    uint64_t overflowed() const { return overflowed_; }

private:
    /* channel, round, named sender, the endpoint it came in on */
    using key = std::tuple<uint64_t, uint32_t, int, uintptr_t>;

    static ucs_status_t on_message(void *arg, const void *header, size_t header_length,
                                   void *data, size_t length, const ucp_am_recv_param_t *param);
    void erase(std::map<key, std::vector<std::byte>>::iterator it);

    tc_write_lane_h                           lane_ = nullptr;
    std::map<key, std::vector<std::byte>>     messages_;
    std::map<uintptr_t, size_t>               per_endpoint_;
    uint64_t                                  forged_ = 0, overflowed_ = 0;
};

/* One channel: its rounds, and a tc_bootstrap over them. */
class member_channel {
public:
    member_channel(ucp_node &node, uint64_t name, std::vector<int> ids, int my_index,
                   double timeout_s);
    ~member_channel();
    member_channel(const member_channel &)            = delete;
    member_channel &operator=(const member_channel &) = delete;

    /* @a ids: distinct node ids, this node among them; the name as above */
    static uint64_t name_of(std::span<const int> ids, uint32_t occurrence);

    const std::vector<int> &ids() const { return ids_; }
    /* a bootstrap (rank = index in ids) whose collectives are rounds here */
    tc_bootstrap_h bootstrap() const { return boot_; }
    ucs_status_t status() const { return status_; }

    /* tc_bootstrap's allgatherv contract: *all_p malloc'd, lens[i] per index */
    ucs_status_t allgatherv(const void *buf, size_t len, void **all_p, size_t *lens);

private:
    struct header {
        uint64_t channel;
        uint32_t round;
        int32_t  sender;
    };

    ucp_node         &node_;
    uint64_t         name_;
    std::vector<int> ids_;
    int              my_index_;
    double           timeout_s_;
    uint32_t         round_ = 0;
    tc_bootstrap_h   boot_  = nullptr;
    ucs_status_t     status_;
};

} // namespace tc
