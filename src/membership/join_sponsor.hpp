/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The member side of a join: accept joiners on the join port, run their
 * handshakes (many at once, through a gate: <twochains/sock.h>), check a
 * proven request, ask for a view change that admits it (join_req = epoch,
 * with the rendezvous address), and when the leader's trim admits it,
 * answer it and meet the next view's members at the sponsor's rendezvous.
 *
 * Invariants: one joiner sponsored at a time (another that proves the key
 * meanwhile hears "busy", and asks again); nothing read from the wire is
 * trusted before it is checked, and nothing else before the joiner proved
 * the job key for this connection (a stranger, a relay or a changed field
 * hears only that it was refused); every answer carries the sponsor's
 * proof; connections in handshake are bounded per address and in all (the
 * oldest dropped first), each has kRequestTimeoutS for its request, so
 * any number of silent ones delays a real joiner by its own round trips
 * and the group's progress not at all; refusals are counted (join_rejects)
 * and logged one line per reason per interval; a joiner that leaves before
 * it is admitted withdraws the request; a joiner another member sponsors,
 * or one a change did not admit, asks again in the next view (the
 * sponsor's state moves with hand_over()). Ids are never reused: max_id
 * counts every id a view ever had.
 */
#pragma once

#include "core/context.hpp"
#include "membership/join_wire.hpp"

#include <twochains/bootstrap.h>
#include <twochains/sock.h>

#include <memory>
#include <vector>

namespace tc::membership {

class join_sponsor {
public:
    explicit join_sponsor(group_context &ctx);

    /* on params.join_port (0: admit none) */
    ucs_status_t listen();
    bool serving() const;
    /* accept() and recv() are system calls: they run every
     * kJoinPollIntervalS, not on every pass */
    unsigned serve();

    int max_id() const { return max_id_; }

    /* Meet @a next (the survivors and the joiner, last) at @a sponsor's
     * rendezvous: the sponsor answers its joiner first. @a ids: rendezvous
     * rank -> member id. */
    ucs_status_t meet(int sponsor, const view &next, tc_bootstrap_h &boot,
                      std::vector<int> &ids);

    /* the listener and a joiner still waiting go on in the next view */
    void hand_over(join_sponsor &next, int max_id);

    /* The group ends here: answer the joiner we hold (proven), and every
     * connection in handshake or waiting in the listener's backlog (they
     * cannot believe it: their request never came), with a refusal that
     * says @a why (UCS_ERR_CANCELED), then stop listening. Without it they
     * would see a reset or wait for nothing. */
    void turn_away(const char *why);

private:
    static constexpr double kRequestTimeoutS = 2.0;
    static constexpr double kPollIntervalS   = 1e-3;

    /* the gate's callbacks */
    static ucs_status_t challenge(tc_sock_gate_conn_t *conn, void *arg);
    static tc_sock_gate_verdict_t on_request(tc_sock_gate_conn_t *conn, void *arg,
                                             const char **reason_p);

    const char *refusal(const join::request &r);
    /* a proven refusal of the request @a req on @a fd, in its handshake */
    void answer_refusal(int fd, const uint8_t *nonce, const uint8_t *endpoints,
                        const join::request &req, const char *why, ucs_status_t status);
    void withdraw();

    /* the joiner we sponsor: its connection and its handshake, which our
     * answer proves */
    struct held_joiner {
        join::socket_fd s;
        uint8_t         nonce[TC_JOB_KEY_NONCE_LEN] = {};
        uint8_t         endpoints[TC_SOCK_ENDPOINTS_LEN] = {};
        join::request   request{};
    };

    group_context                       &ctx_;
    std::shared_ptr<const tc_job_key_t> key_;           /* loaded by listen() */
    std::shared_ptr<join::socket_fd>    listener_;      /* lives across views */
    struct gate;                                        /* join_sponsor.cpp */
    std::shared_ptr<gate>               gate_;          /* on listener_, the same */
    held_joiner                         joiner_;
    join::socket_fd                     rendezvous_;    /* its view's meeting point */
    double                              served_s_       = 0;  /* last look */
    int64_t                             rendezvous_addr_ = 0;
    int                                 max_id_         = 0;
    char                                refusal_text_[128] = {};   /* a refusal with values */
};

} // namespace tc::membership
