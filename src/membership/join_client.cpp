/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The joiner's side of a join: connect to a member's join port, send the
 * request and read the one reply (refusal or admission). Meeting the next
 * view's members and building it with them is the facade's
 * (api/group_join.cpp).
 *
 * Invariants: nothing in the reply is used before the sponsor proved the
 * job key for this connection, our challenge and our request (only the
 * frame's length is read first, bounded by UCX_TC_GROUP_MAX_MEMBERS), nor
 * before it is checked (magic, version, counts and ids in range); every
 * wait is bounded by UCX_TC_BOOTSTRAP_TIMEOUT, and the wait for the
 * admission also by UCX_TC_GROUP_TIMEOUT (the members first finish their
 * current view). A sponsor busy elsewhere is asked again, with backoff,
 * within the same bound: one that sponsors another joiner or timed our
 * request out (we were preempted before sending it), or dropped the
 * connection before its answer (a flood pushed us out). A refusal for any
 * other reason, the group's end included, or a reply without the
 * sponsor's proof, is final.
 */
#include "membership/join_client.hpp"

#include <twochains/sock.h>

#include <ucs/debug/log_def.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <string>
#include <thread>

namespace tc {

namespace {

/* The first words of what a sponsor says: a challenge, or a reply frame
 * in its place when the group is ending. */
struct opening {
    uint32_t magic;
    uint32_t version;
};
static_assert(offsetof(join::challenge, version) + sizeof(uint32_t) == sizeof(opening));
static_assert(offsetof(join::reply_frame, version) + sizeof(uint32_t) == sizeof(opening));

enum class attempt { done, retry };

/* Printable text of a reason we cannot believe, for the log only. */
std::string shown(const join::reply &r)
{
    std::string text(r.reason, strnlen(r.reason, sizeof(r.reason)));
    for (char &c : text) {
        c = (c >= 0x20 && c < 0x7f) ? c : '?';
    }
    return text;
}

/* A reply frame (header @a f, then its body) into @a body: its length is
 * the one field read before the proof, bounded by @a max_members. */
ucs_status_t read_frame_body(const join::socket_fd &s, const std::string &contact,
                             const join::reply_frame &f, unsigned max_members, double timeout,
                             std::vector<std::byte> &body)
{
    size_t len = 0;
    if (const char *why = join::frame_length(f, max_members, len)) {
        ucs_error("group: %s answered the join with garbage: %s (UCX_TC_GROUP_MAX_MEMBERS=%u)",
                  contact.c_str(), why, max_members);
        return UCS_ERR_IO_ERROR;
    }
    body.resize(len);
    ucs_status_t status = join::read_all(s, body.data(), len, timeout);
    if (status != UCS_OK) {
        ucs_error("group: %s sent part of its %zu-byte reply: %s", contact.c_str(), len,
                  ucs_status_string(status));
    }
    return status;
}

/* A last word in place of a challenge (the group is ending): the sponsor
 * cannot prove it, so it is shown and not believed; the join fails. */
void last_word(const join::socket_fd &s, const std::string &contact, const opening &o,
               unsigned max_members, double timeout)
{
    join::reply_frame f{};
    std::vector<std::byte> body;
    join::reply r{};
    std::memcpy(&f, &o, sizeof(o));
    if (join::read_all(s, reinterpret_cast<std::byte*>(&f) + sizeof(o), sizeof(f) - sizeof(o),
                       timeout) == UCS_OK &&
        read_frame_body(s, contact, f, max_members, timeout, body) == UCS_OK &&
        join::decode_reply_header(body, r) == nullptr && r.status != UCS_OK) {
        ucs_error("group: %s turned the join away before its challenge: \"%s\" (not proven: "
                  "the sponsor could not answer a request we never sent)",
                  contact.c_str(), shown(r).c_str());
    } else {
        ucs_error("group: %s is not a join service of protocol %u", contact.c_str(),
                  join::kVersion);
    }
}

/* One try: hear the challenge, answer it with our challenge, proof and
 * request, read the one reply frame, and believe it only with the
 * sponsor's proof: then @a r is its header and @a wire its bytes. */
attempt ask_once(const join::socket_fd &s, const std::string &contact, const tc_job_key_t &key,
                 join::request req, double timeout, double reply_wait_s, unsigned max_members,
                 join::reply &r, std::vector<std::byte> &wire, ucs_status_t &status)
{
    opening o{};
    status = join::read_all(s, &o, sizeof(o), timeout);
    if (status != UCS_OK) {
        /* the sponsor's process went away between accept and challenge, or
         * it dropped a connection it had no time for: ask again */
        ucs_diag("group: %s closed the join connection before its challenge (%s)",
                 contact.c_str(), ucs_status_string(status));
        return attempt::retry;
    }
    if (o.magic == join::kReplyMagic && o.version == join::kVersion) {
        last_word(s, contact, o, max_members, timeout);
        status = UCS_ERR_REJECTED;
        return attempt::done;
    }
    if (o.magic != join::kChallengeMagic || o.version != join::kVersion) {
        ucs_error("group: %s is not a join service of protocol %u", contact.c_str(),
                  join::kVersion);
        status = UCS_ERR_UNSUPPORTED;
        return attempt::done;
    }
    join::challenge c{};
    uint8_t endpoints[TC_SOCK_ENDPOINTS_LEN];
    status = join::read_all(s, c.nonce, sizeof(c.nonce), timeout);
    if (status == UCS_OK) {
        status = tc_sock_endpoints(s.get(), 0, endpoints);
    }
    if (status == UCS_OK) {
        status = tc_job_key_challenge(req.nonce);
    }
    if (status == UCS_OK) {
        join::prove_request(key, c.nonce, endpoints, req);
        status = join::write_all(s, &req, sizeof(req), timeout);
    }
    join::reply_frame f{};
    if (status == UCS_OK) {
        status = join::read_all(s, &f, sizeof(f), timeout + reply_wait_s);
    }
    if (status == UCS_ERR_CONNECTION_RESET) {
        /* dropped before its answer: a flood pushed us out, or we were
         * too slow to finish the request in time; ask again */
        ucs_diag("group: %s closed the join connection before its answer", contact.c_str());
        return attempt::retry;
    }
    if (status != UCS_OK) {
        ucs_error("group: no answer from %s to the join request: %s", contact.c_str(),
                  ucs_status_string(status));
        return attempt::done;
    }
    status = read_frame_body(s, contact, f, max_members, timeout, wire);   /* logs */
    if (status != UCS_OK) {
        return attempt::done;
    }
    /* nothing of the reply is used before the sponsor proved the key */
    if (const char *why = join::open_reply(key, c.nonce, endpoints, req, f, wire)) {
        join::reply shown_r{};
        const bool refusal = join::decode_reply_header(wire, shown_r) == nullptr &&
                             shown_r.status != UCS_OK;
        if (refusal) {
            ucs_error("group: %s refused the join, unproven: %s (it says \"%s\")",
                      contact.c_str(), why, shown(shown_r).c_str());
        } else {
            ucs_error("group: %s answered the join, unproven: %s", contact.c_str(), why);
        }
        status = UCS_ERR_REJECTED;
        return attempt::done;
    }
    if (const char *why = join::decode_reply_header(wire, r)) {
        ucs_error("group: %s answered the join with an invalid reply: %s", contact.c_str(), why);
        status = UCS_ERR_IO_ERROR;
    }
    return attempt::done;
}

/* Ask @a contact until it answers or the bootstrap deadline passes. A
 * sponsor that had no complete request from us in time (we were
 * preempted) or lost the connection before its challenge is asked again
 * after a backoff; a refusal for any other reason is final. */
ucs_status_t ask(const std::string &contact, const tc_job_key_t &key, const join::request &req,
                 double timeout, double reply_wait_s, unsigned max_members, join::socket_fd &s,
                 join::reply &r, std::vector<std::byte> &wire)
{
    constexpr double kBackoffMinS = 0.01, kBackoffMaxS = 0.5;
    const double deadline         = now_s() + timeout;
    double backoff                = kBackoffMinS;
    for (int tries = 1;; ++tries) {
        ucs_status_t status = join::connect_to(contact, deadline - now_s(), s);
        if (status != UCS_OK) {
            return status; /* logged */
        }
        const attempt a = ask_once(s, contact, key, req, deadline - now_s(), reply_wait_s,
                                   max_members, r, wire, status);
        bool again      = (a == attempt::retry);
        if (a == attempt::done && status == UCS_OK) {
            /* a proven reply, its header decoded */
            if (r.status == UCS_OK) {
                return UCS_OK;
            }
            again = (r.status == UCS_ERR_TIMED_OUT) || (r.status == UCS_ERR_BUSY);
            if (!again || now_s() + backoff >= deadline) {
                ucs_error("group: %s refused the join: %s", contact.c_str(), r.reason);
                /* the sponsor's status is input: only an error code passes */
                return (r.status < 0 && r.status > UCS_ERR_LAST) ?
                               static_cast<ucs_status_t>(r.status) : UCS_ERR_REJECTED;
            }
            ucs_diag("group: %s refused the join (%s); asking again", contact.c_str(),
                     r.reason);
        }
        if (!again) {
            return status; /* logged */
        }
        s.reset();
        if (now_s() + backoff >= deadline) {
            ucs_error("group: %s did not answer the join request in %d tries within %.1f s",
                      contact.c_str(), tries, timeout);
            return UCS_ERR_TIMED_OUT;
        }
        std::this_thread::sleep_for(std::chrono::duration<double>(backoff));
        backoff = std::min(2 * backoff, kBackoffMaxS);
    }
}

} // namespace

ucs_status_t join::ask_for_admission(const std::string &contact, const group_params &params,
                                     const group_settings &settings, socket_fd &s,
                                     admission &a)
{
    const double timeout = settings.boot_timeout_s;
    tc_job_key_t key;
    ucs_status_t status = tc_job_key_load(&key);
    if (status != UCS_OK) {
        return status; /* logged */
    }
    join::reply r{};
    std::vector<std::byte> wire;
    status = ask(contact, key, join::request_for(params), timeout, settings.wait_timeout_s,
                 settings.max_members, s, r, wire);
    tc_job_key_clear(&key);
    if (status != UCS_OK) {
        return status; /* logged */
    }
    if (const char *why = join::decode_admission(wire, settings.max_members, a)) {
        ucs_error("group: %s sent an invalid admission: %s", contact.c_str(), why);
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

} // namespace tc
