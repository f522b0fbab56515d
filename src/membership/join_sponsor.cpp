/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "membership/join_sponsor.hpp"

#include <ucs/debug/log_def.h>

#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace tc::membership {

using sst::put_purpose;

/* The handshakes on the join port: closed when the last view lets go. */
struct join_sponsor::gate {
    tc_sock_gate_t g{};
    bool           live = false;
    gate()                        = default;
    gate(const gate &)            = delete;
    gate &operator=(const gate &) = delete;
    ~gate()
    {
        if (live) {
            tc_sock_gate_cleanup(&g);
        }
    }
};

namespace {

/* One send on a socket whose buffer takes it (a fresh one, or one that
 * sent us a single request): a peer that does not read loses only its own
 * answer, and never holds us. */
void send_once(int fd, std::span<const std::byte> bytes)
{
    (void)::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

} // namespace

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
    auto g = std::make_shared<gate>();
    status = tc_sock_gate_init(&g->g, "group join", listener->get(), 0, 0, sizeof(join::request),
                               kRequestTimeoutS, &join_sponsor::challenge, nullptr);
    if (status != UCS_OK) {
        return status; /* logged */
    }
    g->live = true;
    key_      = std::move(key);
    listener_ = std::move(listener);
    gate_     = std::move(g);
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

ucs_status_t join_sponsor::challenge(tc_sock_gate_conn_t *conn, void *)
{
    join::challenge c{join::kChallengeMagic, join::kVersion, {}};
    ucs_status_t status = tc_job_key_challenge(conn->nonce);
    if (status != UCS_OK) {
        return status;
    }
    std::copy(conn->nonce, conn->nonce + TC_JOB_KEY_NONCE_LEN, c.nonce);
    /* a fresh socket's buffer takes it at once */
    return ::send(conn->fd, &c, sizeof(c), MSG_NOSIGNAL | MSG_DONTWAIT) ==
                           static_cast<ssize_t>(sizeof(c)) ? UCS_OK : UCS_ERR_IO_ERROR;
}

void join_sponsor::answer_refusal(int fd, const uint8_t *nonce, const uint8_t *endpoints,
                                  const join::request &req, const char *why,
                                  ucs_status_t status)
{
    const std::vector<std::byte> body = join::reply_bytes(join::refusal_reply(status, why));
    send_once(fd, join::seal_reply(*key_, nonce, endpoints, req, body));
    ctx_.count(&group_stats::join_rejects);
}

tc_sock_gate_verdict_t join_sponsor::on_request(tc_sock_gate_conn_t *conn, void *arg,
                                                const char **reason_p)
{
    auto *self = static_cast<join_sponsor*>(arg);
    uint8_t endpoints[TC_SOCK_ENDPOINTS_LEN];
    join::request req{};
    const auto wire = std::as_bytes(std::span(conn->msg, sizeof(join::request)));
    if (tc_sock_endpoints(conn->fd, 1, endpoints) != UCS_OK) {
        *reason_p = "its connection has no address";
        return TC_SOCK_GATE_REFUSED;
    }
    /* before anything else is compared or answered */
    if (const char *why = join::check_request(*self->key_, conn->nonce, endpoints, wire, req)) {
        /* it hears that it was refused (it cannot believe us, nor learn
         * anything of the group) */
        join::request as_sent{};
        std::memcpy(&as_sent, wire.data(), sizeof(as_sent));
        self->answer_refusal(conn->fd, conn->nonce, endpoints, as_sent, why,
                             UCS_ERR_INVALID_PARAM);
        *reason_p = why;
        return TC_SOCK_GATE_REFUSED;
    }
    ucs_status_t status = UCS_ERR_INVALID_PARAM;
    const char *why     = self->refusal(req);
    if (why == nullptr && self->joiner_.s.valid()) {
        why    = "another joiner is being sponsored here; ask again";
        status = UCS_ERR_BUSY;
    }
    uint16_t port = 0;
    if (why == nullptr && join::listen_on(*self->key_, 0, self->rendezvous_, &port) != UCS_OK) {
        why    = "no rendezvous port";
        status = UCS_ERR_IO_ERROR;
    }
    if (why != nullptr) {
        self->answer_refusal(conn->fd, conn->nonce, endpoints, req, why, status);
        *reason_p = why;
        return TC_SOCK_GATE_REFUSED;
    }

    held_joiner &j = self->joiner_;
    j.s.reset(conn->fd);
    std::copy(conn->nonce, conn->nonce + TC_JOB_KEY_NONCE_LEN, j.nonce);
    std::copy(std::begin(endpoints), std::end(endpoints), j.endpoints);
    j.request = req;
    /* where the new view meets: our address as the joiner sees it */
    in_addr a{};
    inet_pton(AF_INET, join::local_address(j.s).c_str(), &a);
    self->rendezvous_addr_ = (static_cast<int64_t>(ntohl(a.s_addr)) << 16) | port;
    ucs_diag("group: epoch %ld: %s asks to enter; sponsoring it",
             static_cast<long>(self->ctx_.epoch()), conn->name);
    return TC_SOCK_GATE_TAKEN;
}

void join_sponsor::turn_away(const char *why)
{
    if (!listener_) {
        return;
    }
    int turned_away = 0;
    if (joiner_.s.valid()) {
        answer_refusal(joiner_.s.get(), joiner_.nonce, joiner_.endpoints, joiner_.request, why,
                       UCS_ERR_CANCELED);
        ++turned_away;
    }
    /* those in handshake and in the backlog never sent us a request we
     * could answer with a proof: a last word they cannot believe, but read */
    const std::vector<std::byte> last =
            join::unsealed_reply(join::reply_bytes(join::refusal_reply(UCS_ERR_CANCELED, why)));
    struct word {
        const std::vector<std::byte> &bytes;
        int                          &count;
    } told{last, turned_away};
    tc_sock_gate_for_each(&gate_->g, [](tc_sock_gate_conn_t *conn, void *arg) {
        auto *t = static_cast<word*>(arg);
        send_once(conn->fd, t->bytes);
        ++t->count;
    }, &told);
    /* the backlog: at most a listen queue's worth, so that a client
     * connecting without pause cannot hold our close */
    for (join::socket_fd s = join::accept_pending(*listener_);
         s.valid() && turned_away <= SOMAXCONN; s = join::accept_pending(*listener_)) {
        send_once(s.get(), last);
        ++turned_away;
    }
    if (turned_away > 0) {
        ucs_diag("group: epoch %ld: turned away %d waiting joiner(s): %s",
                 static_cast<long>(ctx_.epoch()), turned_away, why);
    }
    joiner_ = held_joiner{};
    rendezvous_.reset();
    gate_.reset();
    listener_.reset();
}

void join_sponsor::withdraw()
{
    ucs_warn("group: epoch %ld: the joiner left before it was admitted",
             static_cast<long>(ctx_.epoch()));
    joiner_ = held_joiner{};
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
    /* every handshake in progress moves on; one that completes may become
     * the joiner we sponsor */
    unsigned work = tc_sock_gate_progress(&gate_->g, 0, &join_sponsor::on_request, this) > 0;
    if (!joiner_.s.valid()) {
        return work;
    }
    if (join::peer_gone(joiner_.s)) {
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
    return work;
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
        const std::vector<std::byte> wire =
                join::seal_reply(*key_, joiner_.nonce, joiner_.endpoints, joiner_.request,
                                 join::encode_admission(admit));
        status = join::write_all(joiner_.s, wire.data(), wire.size(),
                                 ctx_.settings.boot_timeout_s);
    }
    const int my_rank = static_cast<int>(std::find(ids.begin(), ids.end(), ctx_.node.rank()) -
                                         ids.begin());
    if (status == UCS_OK) {
        status = tc_bootstrap_tcp_create(root.c_str(), sponsoring ? rendezvous_.get() : -1,
                                         my_rank, static_cast<int>(ids.size()),
                                         ctx_.settings.boot_timeout_s, &boot);
    }
    if (sponsoring) {
        joiner_ = held_joiner{};
        rendezvous_.reset();
    }
    return status;
}

void join_sponsor::hand_over(join_sponsor &next, int max_id)
{
    next.max_id_          = max_id;
    next.key_             = key_;
    next.listener_        = listener_;
    next.gate_            = gate_;
    next.joiner_          = std::move(joiner_);
    next.rendezvous_      = std::move(rendezvous_);
    next.rendezvous_addr_ = rendezvous_addr_;
}

} // namespace tc::membership
