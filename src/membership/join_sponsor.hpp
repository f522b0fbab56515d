/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The member side of a join: accept a joiner on the join port, check its
 * request, ask for a view change that admits it (join_req = epoch, with the
 * rendezvous address), and when the leader's trim admits it, answer it and
 * meet the next view's members at the sponsor's rendezvous.
 *
 * Invariants: one joiner at a time per sponsor; nothing read from the wire
 * is trusted before it is checked, and nothing else before the joiner
 * proved the job key (a stranger hears only that it was refused); a joiner
 * that sends no complete request within kRequestTimeoutS is refused, so a
 * silent or slow client delays the next joiner by that at most and the
 * group's progress not at all; a joiner that leaves before it is
 * admitted withdraws the request; a joiner another member sponsors, or one
 * a change did not admit, asks again in the next view (the sponsor's state
 * moves with hand_over()). Ids are never reused: max_id counts every id a
 * view ever had.
 */
#pragma once

#include "group/context.hpp"
#include "membership/join_wire.hpp"

#include <twochains/bootstrap.h>

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

    /* The group ends here: answer the joiner we hold and every connection
     * waiting in the listener's backlog with a refusal that says @a why
     * (UCS_ERR_CANCELED, which a joiner does not retry), then stop
     * listening. Without it they would see a reset or wait for nothing. */
    void turn_away(const char *why);

private:
    static constexpr double kRequestTimeoutS = 2.0;
    static constexpr double kPollIntervalS   = 1e-3;

    const char *refusal(const join::request &r);
    void refuse(const char *why, ucs_status_t status);
    void answer_refusal(const join::socket_fd &s, const char *why, ucs_status_t status);
    void withdraw();

    group_context                    &ctx_;
    std::shared_ptr<const tc_job_key_t> key_;           /* loaded by listen() */
    uint8_t                          nonce_[TC_JOB_KEY_NONCE_LEN] = {};  /* joiner_'s */
    std::shared_ptr<join::socket_fd> listener_;         /* lives across views */
    join::socket_fd                  joiner_;           /* the one we sponsor */
    join::socket_fd                  rendezvous_;       /* its view's meeting point */
    double                           joiner_since_s_ = 0;
    double                           served_s_       = 0;  /* last look */
    int64_t                          rendezvous_addr_ = 0;
    bool                             checked_        = false;
    int                              max_id_         = 0;
    char                             refusal_text_[128] = {};   /* a refusal with values */
};

} // namespace tc::membership
