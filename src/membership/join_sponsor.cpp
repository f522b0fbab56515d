/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "membership/join_sponsor.hpp"

#include <ucs/debug/log_def.h>

#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>

namespace tc::membership {

using sst::put_purpose;

join_sponsor::join_sponsor(group_context &ctx) : ctx_(ctx)
{
    const auto &members = ctx.map.current().members;
    max_id_             = *std::max_element(members.begin(), members.end());
}

ucs_status_t join_sponsor::listen()
{
    if (ctx_.params.join_port == 0) {
        return UCS_OK;
    }
    auto key            = std::make_shared<tc_job_key_t>();
    ucs_status_t status = tc_job_key_load(key.get());
    if (status != UCS_OK) {
        return status; /* logged */
    }
    auto listener = std::make_shared<join::socket_fd>();
    status        = join::listen_on(*key, ctx_.params.join_port, *listener);
    if (status != UCS_OK) {
        return status; /* logged, with the port */
    }
    key_      = std::move(key);
    listener_ = std::move(listener);
    return UCS_OK;
}

bool join_sponsor::serving() const
{
    return listener_ && !ctx_.closed.load(std::memory_order_relaxed) &&
           !ctx_.state.out_of_group() && !ctx_.failed;
}

const char *join_sponsor::refusal(const join::request &r)
{
    const join::request ours = join::request_for(ctx_.params);
    if (r.magic != join::kRequestMagic) {
        return "not a join request (bad magic)";
    }
    /* before anything else is compared or answered */
    if (!tc_job_key_verify(key_.get(), TC_JOB_KEY_SERVICE_JOIN, nonce_, r.proof)) {
        return "the joiner did not prove the job key (UCX_TC_JOB_KEY)";
    }
    if (const char *why = join::request_mismatch(r, ours)) {
        return why;
    }
    if (ctx_.settings.threaded) {
        return "this group has threaded senders, which do not support joins";
    }
    if (max_id_ + 1 >= join::kMaxMemberId) {
        return "no member id left";
    }
    if (ctx_.settings.member_count_refusal(ctx_.map.current().members.size() + 1,
                                           refusal_text_, sizeof(refusal_text_))) {
        return refusal_text_;   /* the parameter and its value, for both ends */
    }
    return nullptr;
}

void join_sponsor::answer_refusal(const join::socket_fd &s, const char *why, ucs_status_t status)
{
    const join::reply r = join::refusal_reply(status, why);
    /* a fresh socket's buffer takes it at once; a joiner that does not
     * read it loses only its own answer */
    (void)join::write_all(s, &r, sizeof(r), 0.1);
    ctx_.count(&group_stats::join_rejects);
}

void join_sponsor::refuse(const char *why, ucs_status_t status)
{
    answer_refusal(joiner_, why, status);
    ucs_warn("group: epoch %ld: join request refused: %s", static_cast<long>(ctx_.epoch()), why);
    joiner_.reset();
    rendezvous_.reset();
}

void join_sponsor::turn_away(const char *why)
{
    if (!listener_) {
        return;
    }
    int turned_away = 0;
    if (joiner_.valid()) {
        answer_refusal(joiner_, why, UCS_ERR_CANCELED);
        ++turned_away;
    }
    /* the backlog: connections the kernel accepted while we did not serve;
     * at most a listen queue's worth, so that a client connecting without
     * pause cannot hold our close */
    for (join::socket_fd s = join::accept_pending(*listener_);
         s.valid() && turned_away <= SOMAXCONN; s = join::accept_pending(*listener_)) {
        answer_refusal(s, why, UCS_ERR_CANCELED);
        ++turned_away;
    }
    if (turned_away > 0) {
        ucs_diag("group: epoch %ld: turned away %d waiting joiner(s): %s",
                 static_cast<long>(ctx_.epoch()), turned_away, why);
    }
    joiner_.reset();
    rendezvous_.reset();
    listener_.reset();
}

void join_sponsor::withdraw()
{
    ucs_warn("group: epoch %ld: the joiner left before it was admitted",
             static_cast<long>(ctx_.epoch()));
    joiner_.reset();
    rendezvous_.reset();
    ctx_.set(ctx_.cols.join_req, 0);
    ctx_.fail_on(ctx_.push(ctx_.cols.join_req, ctx_.cols.rdv_addr, put_purpose::other));
}

unsigned join_sponsor::serve()
{
    const double now = now_s();
    if (now - served_s_ < kPollIntervalS) {
        return 0;
    }
    served_s_ = now;
    if (!joiner_.valid()) {
        joiner_ = join::accept_pending(*listener_);
        if (!joiner_.valid()) {
            return 0;
        }
        joiner_since_s_ = now_s();
        checked_        = false;
        join::challenge c{join::kChallengeMagic, join::kVersion, {}};
        if (tc_job_key_challenge(nonce_) != UCS_OK) {
            joiner_.reset();
            return 1;
        }
        std::copy(std::begin(nonce_), std::end(nonce_), c.nonce);
        /* a fresh socket's buffer takes it at once */
        if (join::write_all(joiner_, &c, sizeof(c), 0.1) != UCS_OK) {
            joiner_.reset();
        }
        return 1;
    }
    if (!checked_) {
        join::request req;
        const int got = join::try_read(joiner_, &req, sizeof(req));
        if (got < 0) {
            refuse("the joiner closed the connection before a complete request",
                   UCS_ERR_CONNECTION_RESET);
            return 1;
        }
        if (got == 0) {
            if (now_s() - joiner_since_s_ > kRequestTimeoutS) {
                refuse("no complete join request within 2 s", UCS_ERR_TIMED_OUT);
                return 1;
            }
            return 0;
        }
        if (const char *why = refusal(req)) {
            refuse(why, UCS_ERR_INVALID_PARAM);
            return 1;
        }
        /* where the new view meets: our address as the joiner sees it */
        uint16_t port = 0;
        if (join::listen_on(*key_, 0, rendezvous_, &port) != UCS_OK) {
            refuse("no rendezvous port", UCS_ERR_IO_ERROR);
            return 1;
        }
        in_addr a{};
        inet_pton(AF_INET, join::local_address(joiner_).c_str(), &a);
        rendezvous_addr_ = (static_cast<int64_t>(ntohl(a.s_addr)) << 16) | port;
        checked_         = true;
        ucs_diag("group: epoch %ld: a joiner asks to enter; sponsoring it",
                 static_cast<long>(ctx_.epoch()));
    }
    if (join::peer_gone(joiner_)) {
        withdraw();
        return 1;
    }
    /* ask in this epoch (again, after a change that did not admit it) */
    if (ctx_.state.open() && ctx_.mine(ctx_.cols.join_req) != ctx_.epoch()) {
        ctx_.set(ctx_.cols.rdv_addr, rendezvous_addr_);
        ctx_.set(ctx_.cols.join_req, ctx_.epoch());
        ctx_.fail_on(ctx_.push(ctx_.cols.join_req, ctx_.cols.rdv_addr, put_purpose::other));
        return 1;
    }
    return 0;
}

ucs_status_t join_sponsor::meet(int sponsor, const view &next, tc_bootstrap_h &boot,
                                std::vector<int> &ids)
{
    const int joiner_id  = next.members.back();
    const int sponsor_id = ctx_.map.rank_of_row(sponsor);
    ids.assign(1, sponsor_id);
    for (int id : next.members) {
        if (id != sponsor_id) {
            ids.push_back(id);
        }
    }
    const int64_t addr = ctx_.raw(sponsor, ctx_.cols.rdv_addr);
    in_addr a{};
    a.s_addr = htonl(static_cast<uint32_t>(addr >> 16));
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &a, ip, sizeof(ip));
    const std::string root = std::string(ip) + ":" + std::to_string(addr & 0xffff);

    const bool sponsoring = ctx_.me() == sponsor;
    ucs_status_t status   = UCS_OK;
    if (sponsoring) {
        join::admission admit;
        admit.id              = joiner_id;
        admit.epoch           = next.epoch;
        admit.sponsor         = sponsor_id;
        admit.rendezvous_port = static_cast<uint16_t>(addr & 0xffff);
        admit.members         = next.members;
        admit.senders         = next.senders;
        admit.rendezvous      = ids;
        const std::vector<std::byte> wire = join::encode_admission(admit);
        status = join::write_all(joiner_, wire.data(), wire.size(), ctx_.settings.boot_timeout_s);
    }
    const int my_rank = static_cast<int>(std::find(ids.begin(), ids.end(), ctx_.node.rank()) -
                                         ids.begin());
    if (status == UCS_OK) {
        status = tc_bootstrap_tcp_create(root.c_str(), sponsoring ? rendezvous_.get() : -1,
                                         my_rank, static_cast<int>(ids.size()),
                                         ctx_.settings.boot_timeout_s, &boot);
    }
    if (sponsoring) {
        joiner_.reset();
        rendezvous_.reset();
    }
    return status;
}

void join_sponsor::hand_over(join_sponsor &next, int max_id)
{
    next.max_id_          = max_id;
    next.key_             = key_;
    next.listener_        = listener_;
    std::copy(std::begin(nonce_), std::end(nonce_), next.nonce_);
    next.joiner_          = std::move(joiner_);
    next.rendezvous_      = std::move(rendezvous_);
    next.rendezvous_addr_ = rendezvous_addr_;
    next.checked_         = checked_;
    next.joiner_since_s_  = joiner_since_s_;
}

} // namespace tc::membership
