/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "membership/join_wire.hpp"

#include "jam/replicated_jams.hpp"

#include <twochains/sock.h>

#include <arpa/inet.h>
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <utility>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

namespace tc::join {

request request_for(const group_params &p)
{
    request r{};
    r.magic            = kRequestMagic;
    r.version          = kVersion;
    r.max_payload      = p.max_payload;
    r.rdmc_max_message = p.rdmc_max_message;
    r.rdmc_block       = p.rdmc_block;
    r.window           = p.window;
    r.mode             = static_cast<uint32_t>(p.mode);
    r.smc_batched      = p.smc ? (*p.smc == smc_mode::batched) + 1 : 0;
    tc_ifunc_security_t security = TC_IFUNC_SECURITY_LAST;   /* unreadable: never matches */
    (void)replicated_jams::resolve_security(p, security);
    r.jam_security   = static_cast<uint32_t>(security);
    r.jam_state_size = p.jam_state.size();
    r.jam_packages   = replicated_jams::packages_digest(p);
    return r;
}

const char *request_mismatch(const request &r, const request &ours)
{
    if (r.version != kVersion) {
        return "unsupported join protocol version";
    }
    if (r.max_payload != ours.max_payload || r.window != ours.window || r.mode != ours.mode ||
        r.rdmc_max_message != ours.rdmc_max_message || r.rdmc_block != ours.rdmc_block ||
        r.smc_batched != ours.smc_batched) {
        return "group parameters differ (max_payload, window, mode, smc or rdmc)";
    }
    if (r.jam_security != ours.jam_security || r.jam_state_size != ours.jam_state_size) {
        return "replicated jam parameters differ (security mode or state size)";
    }
    if (r.jam_packages != ours.jam_packages) {
        return "the code of the jam packages differs";
    }
    return nullptr;
}

namespace {

void put_list(std::vector<std::byte> &out, size_t &pos, const std::vector<int> &list)
{
    for (int v : list) {
        const int32_t w = v;
        std::memcpy(out.data() + pos, &w, sizeof(w));
        pos += sizeof(w);
    }
}

/* @a count int32 of @a wire at @a pos (the caller checked the length) */
const char *take_list(std::span<const std::byte> wire, size_t &pos, int32_t count,
                      std::vector<int> &out)
{
    out.resize(static_cast<size_t>(count));
    for (auto &v : out) {
        int32_t w;
        std::memcpy(&w, wire.data() + pos, sizeof(w));
        pos += sizeof(w);
        if (!valid_member_id(w)) {
            return "a member id out of range";
        }
        v = w;
    }
    return nullptr;
}

} // namespace

std::vector<std::byte> encode_admission(const admission &a)
{
    reply h{};
    h.magic           = kReplyMagic;
    h.version         = kVersion;
    h.status          = UCS_OK;
    h.id              = a.id;
    h.epoch           = a.epoch;
    h.sponsor         = a.sponsor;
    h.rendezvous_port = a.rendezvous_port;
    h.rendezvous_size = static_cast<int32_t>(a.rendezvous.size());
    h.member_count    = static_cast<int32_t>(a.members.size());
    h.sender_count    = static_cast<int32_t>(a.senders.size());
    std::vector<std::byte> out(sizeof(h) + sizeof(int32_t) * (a.members.size() + a.senders.size() +
                                                               a.rendezvous.size()));
    std::memcpy(out.data(), &h, sizeof(h));
    size_t pos = sizeof(h);
    put_list(out, pos, a.members);
    put_list(out, pos, a.senders);
    put_list(out, pos, a.rendezvous);
    return out;
}

reply refusal_reply(ucs_status_t status, const char *why)
{
    reply r{};
    r.magic   = kReplyMagic;
    r.version = kVersion;
    r.status  = status;
    std::snprintf(r.reason, sizeof(r.reason), "%s", why);
    return r;
}

namespace {

/* the joiner's proof: the request up to its proof */
tc_job_key_transcript_t joiner_transcript(const uint8_t *sponsor_nonce, const uint8_t *endpoints,
                                          const request &r)
{
    tc_job_key_transcript_t t{};
    t.role          = TC_JOB_KEY_ROLE_JOINER;
    t.service       = TC_JOB_KEY_SERVICE_JOIN;
    t.server_nonce  = sponsor_nonce;
    t.client_nonce  = r.nonce;
    t.endpoints     = endpoints;
    t.endpoints_len = TC_SOCK_ENDPOINTS_LEN;
    t.nparts        = 1;
    t.parts[0]      = &r;
    t.part_lens[0]  = offsetof(request, proof);
    return t;
}

/* the sponsor's proof: the whole request, the frame up to its proof, the body */
tc_job_key_transcript_t sponsor_transcript(const uint8_t *sponsor_nonce, const uint8_t *endpoints,
                                           const request &r, const reply_frame &f,
                                           std::span<const std::byte> body)
{
    tc_job_key_transcript_t t{};
    t.role          = TC_JOB_KEY_ROLE_SPONSOR;
    t.service       = TC_JOB_KEY_SERVICE_JOIN;
    t.server_nonce  = sponsor_nonce;
    t.client_nonce  = r.nonce;
    t.endpoints     = endpoints;
    t.endpoints_len = TC_SOCK_ENDPOINTS_LEN;
    t.nparts        = 3;
    t.parts[0]      = &r;
    t.part_lens[0]  = sizeof(r);
    t.parts[1]      = &f;
    t.part_lens[1]  = offsetof(reply_frame, proof);
    t.parts[2]      = body.data();
    t.part_lens[2]  = body.size();
    return t;
}

reply_frame frame_for(std::span<const std::byte> body)
{
    reply_frame f{};
    f.magic   = kReplyMagic;
    f.version = kVersion;
    f.length  = static_cast<uint32_t>(body.size());
    return f;
}

std::vector<std::byte> frame_bytes(const reply_frame &f, std::span<const std::byte> body)
{
    std::vector<std::byte> out(sizeof(f) + body.size());
    std::memcpy(out.data(), &f, sizeof(f));
    if (!body.empty()) {
        std::memcpy(out.data() + sizeof(f), body.data(), body.size());
    }
    return out;
}

} // namespace

void prove_request(const tc_job_key_t &key, const uint8_t *sponsor_nonce,
                   const uint8_t *endpoints, request &r)
{
    const tc_job_key_transcript_t t = joiner_transcript(sponsor_nonce, endpoints, r);
    tc_job_key_prove(&key, &t, r.proof);
}

const char *check_request(const tc_job_key_t &key, const uint8_t *sponsor_nonce,
                          const uint8_t *endpoints, std::span<const std::byte> wire,
                          request &out)
{
    request r;
    if (wire.size() != sizeof(r)) {
        return "not a join request (wrong length)";
    }
    std::memcpy(&r, wire.data(), sizeof(r));   /* read once, into our copy */
    if (r.magic != kRequestMagic) {
        return "not a join request (bad magic)";
    }
    if (r.version != kVersion) {
        return "unsupported join protocol version";
    }
    const tc_job_key_transcript_t t = joiner_transcript(sponsor_nonce, endpoints, r);
    if (!tc_job_key_verify(&key, &t, r.proof)) {
        return "the joiner did not prove the job key (UCX_TC_JOB_KEY), or a relay or NAT is "
               "between us";
    }
    out = r;
    return nullptr;
}

std::vector<std::byte> seal_reply(const tc_job_key_t &key, const uint8_t *sponsor_nonce,
                                  const uint8_t *endpoints, const request &req,
                                  std::span<const std::byte> body)
{
    reply_frame f                   = frame_for(body);
    const tc_job_key_transcript_t t = sponsor_transcript(sponsor_nonce, endpoints, req, f, body);
    tc_job_key_prove(&key, &t, f.proof);
    return frame_bytes(f, body);
}

std::vector<std::byte> unsealed_reply(std::span<const std::byte> body)
{
    return frame_bytes(frame_for(body), body);
}

const char *frame_length(const reply_frame &f, unsigned max_members, size_t &len)
{
    if (f.magic != kReplyMagic || f.version != kVersion) {
        return "not a join reply of this protocol version";
    }
    /* three lists of at most max_members ids each */
    const size_t longest = sizeof(reply) + 3 * sizeof(int32_t) * static_cast<size_t>(max_members);
    if (f.length < sizeof(reply) || f.length > longest) {
        return "a reply length out of range";
    }
    len = f.length;
    return nullptr;
}

const char *open_reply(const tc_job_key_t &key, const uint8_t *sponsor_nonce,
                       const uint8_t *endpoints, const request &req, const reply_frame &f,
                       std::span<const std::byte> body)
{
    if (body.size() != f.length) {
        return "a reply of another length than its frame says";
    }
    const tc_job_key_transcript_t t = sponsor_transcript(sponsor_nonce, endpoints, req, f, body);
    if (!tc_job_key_verify(&key, &t, f.proof)) {
        return "the reply does not prove the job key (UCX_TC_JOB_KEY): not the group's "
               "sponsor, or a relay or NAT is between us";
    }
    return nullptr;
}

const char *decode_reply_header(std::span<const std::byte> body, reply &h)
{
    if (body.size() < sizeof(h)) {
        return "truncated header";
    }
    std::memcpy(&h, body.data(), sizeof(h));
    if (h.magic != kReplyMagic || h.version != kVersion) {
        return "not a join reply of this protocol version";
    }
    if (h.status != UCS_OK) {
        if (body.size() != sizeof(h)) {
            return "a refusal with bytes past its header";
        }
        if (std::memchr(h.reason, '\0', sizeof(h.reason)) == nullptr) {
            return "a refusal whose reason does not end";
        }
    }
    return nullptr;
}

std::vector<std::byte> reply_bytes(const reply &r)
{
    std::vector<std::byte> out(sizeof(r));
    std::memcpy(out.data(), &r, sizeof(r));
    return out;
}

const char *list_bytes(const reply &h, unsigned max_members, size_t &bytes)
{
    if (h.member_count < 1) {
        return "no members";
    }
    if (static_cast<uint32_t>(h.member_count) > max_members) {
        return "more members than UCX_TC_GROUP_MAX_MEMBERS";
    }
    if (h.sender_count < 0 || h.sender_count > h.member_count) {
        return "a sender count out of range";
    }
    if (h.rendezvous_size != h.member_count) {
        return "a rendezvous that is not the members";
    }
    /* each count is at most max_members (unsigned): no overflow */
    bytes = sizeof(int32_t) * (static_cast<size_t>(h.member_count) +
                               static_cast<size_t>(h.sender_count) +
                               static_cast<size_t>(h.rendezvous_size));
    return nullptr;
}

const char *decode_admission(std::span<const std::byte> wire, unsigned max_members,
                             admission &out)
{
    reply h;
    if (wire.size() < sizeof(h)) {
        return "truncated header";
    }
    std::memcpy(&h, wire.data(), sizeof(h));
    if (h.magic != kReplyMagic || h.version != kVersion) {
        return "not a join reply of this protocol version";
    }
    if (h.status != UCS_OK) {
        return "a refusal, not an admission";
    }
    size_t lists = 0;
    if (const char *why = list_bytes(h, max_members, lists)) {
        return why;
    }
    if (wire.size() < sizeof(h) + lists) {
        return "truncated lists";
    }
    if (wire.size() > sizeof(h) + lists) {
        return "bytes past the lists";
    }
    if (h.epoch < 1) {
        return "an epoch out of range";
    }
    if (!valid_member_id(h.id) || !valid_member_id(h.sponsor)) {
        return "the joiner's or the sponsor's id out of range";
    }
    admission a;
    size_t pos = sizeof(h);
    for (auto [count, list] : {std::pair{h.member_count, &a.members},
                               std::pair{h.sender_count, &a.senders},
                               std::pair{h.rendezvous_size, &a.rendezvous}}) {
        if (const char *why = take_list(wire, pos, count, *list)) {
            return why;
        }
    }
    /* one membership: members without repeats, the rendezvous the same ids,
     * the senders among them, the joiner and the sponsor in it */
    std::vector<int> sorted = a.members, rendezvous = a.rendezvous;
    std::sort(sorted.begin(), sorted.end());
    std::sort(rendezvous.begin(), rendezvous.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
        return "a member listed twice";
    }
    if (sorted != rendezvous) {
        return "a rendezvous that is not the members";
    }
    const auto member = [&](int id) { return std::binary_search(sorted.begin(), sorted.end(), id); };
    std::vector<int> senders = a.senders;
    std::sort(senders.begin(), senders.end());
    if (!std::all_of(senders.begin(), senders.end(), member) ||
        std::adjacent_find(senders.begin(), senders.end()) != senders.end()) {
        return "a sender that is not a member, or listed twice";
    }
    if (!member(h.id) || !member(h.sponsor)) {
        return "the joiner or the sponsor is not a member";
    }
    if (h.rendezvous_port == 0 || h.rendezvous_port > UINT16_MAX) {
        return "no rendezvous port";
    }
    a.id              = h.id;
    a.epoch           = h.epoch;
    a.sponsor         = h.sponsor;
    a.rendezvous_port = static_cast<uint16_t>(h.rendezvous_port);
    out               = std::move(a);
    return nullptr;
}

void socket_fd::reset(int fd)
{
    tc_sock_close(&fd_);
    fd_ = fd;
}

ucs_status_t listen_on(const tc_job_key_t &key, uint16_t port, socket_fd &out,
                       uint16_t *bound_port)
{
    /* IPv4: the sponsor hands the joiner its rendezvous as an IPv4 address */
    const std::string any = "0.0.0.0:" + std::to_string(port);
    char addr[64];
    ucs_status_t status = tc_job_key_listen_address(&key, TC_JOB_KEY_SERVICE_JOIN, any.c_str(),
                                                    addr, sizeof(addr));
    if (status != UCS_OK) {
        return status;
    }
    int fd = -1;
    status = tc_sock_listen(addr, 1, &fd);
    if (status != UCS_OK) {
        return status;
    }
    out.reset(fd);
    if (bound_port != nullptr) {
        *bound_port = static_cast<uint16_t>(tc_sock_local_port(fd));
    }
    return UCS_OK;
}

socket_fd accept_pending(const socket_fd &listener)
{
    int fd = ::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    return socket_fd(fd);
}

int try_read(const socket_fd &s, void *buf, size_t len)
{
    ssize_t n = ::recv(s.get(), buf, len, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0) {
        return -1;
    }
    if (n < 0) {
        return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
    }
    if (static_cast<size_t>(n) < len) {
        /* part of it, and the peer will send no more: it never completes */
        pollfd pfd{s.get(), POLLRDHUP, 0};
        return (::poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR))) ? -1 : 0;
    }
    return (::recv(s.get(), buf, len, MSG_DONTWAIT) == static_cast<ssize_t>(len)) ? 1 : -1;
}

bool peer_gone(const socket_fd &s)
{
    char c;
    ssize_t n = ::recv(s.get(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

ucs_status_t write_all(const socket_fd &s, const void *buf, size_t len, double timeout_s)
{
    int err = 0;
    return tc_sock_send(s.get(), buf, len, tc_sock_now() + timeout_s, &err);
}

ucs_status_t read_all(const socket_fd &s, void *buf, size_t len, double timeout_s)
{
    int err = 0;
    return tc_sock_recv(s.get(), buf, len, tc_sock_now() + timeout_s, &err);
}

std::string host_of(const std::string &host_port)
{
    return host_port.substr(0, host_port.rfind(':'));
}

ucs_status_t connect_to(const std::string &host_port, double timeout_s, socket_fd &out)
{
    int fd              = -1;
    ucs_status_t status = tc_sock_connect(host_port.c_str(), tc_sock_now() + timeout_s,
                                          "group join", &fd);
    out.reset(fd);
    return status;
}

std::string local_address(const socket_fd &s)
{
    sockaddr_in a{};
    socklen_t len = sizeof(a);
    char text[INET_ADDRSTRLEN] = "127.0.0.1";
    if (getsockname(s.get(), reinterpret_cast<sockaddr*>(&a), &len) == 0) {
        inet_ntop(AF_INET, &a.sin_addr, text, sizeof(text));
    }
    return text;
}

} // namespace tc::join
