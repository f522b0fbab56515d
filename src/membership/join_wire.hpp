/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The join wire: a joiner connects over TCP to a member's join port (the
 * group's "bootstrap endpoint"), hears a fresh challenge, sends one request
 * with its own challenge and its proof of the job key
 * (<twochains/job_key.h>), and gets one reply with the sponsor's proof,
 * that either refuses it or admits it into the next view, with where to
 * meet the new view's members for the rendezvous (a TCP bootstrap whose
 * root is the member it contacted, the sponsor). Magic and version first;
 * nothing read from the wire is trusted before it is checked.
 *
 * Both proofs (service TC_JOB_KEY_SERVICE_JOIN) cover both challenges and
 * the connection's endpoints (tc_sock_endpoints), and:
 *   the joiner's   role "joiner", the request's bytes before its proof;
 *   the sponsor's  role "sponsor", the whole request, the reply frame's
 *                  header before its proof, and the reply's bytes.
 * So a relay, a reflected or replayed answer and a changed field all fail.
 *
 * The challenge and the request are fixed-size. A reply is a frame header
 * {magic, version, length, proof}, then `length` bytes: a fixed header with
 * counts, then (an admission only) the view's lists of any length, int32
 * each: members, senders, rendezvous. A joiner reads the frame's length,
 * bounded by what UCX_TC_GROUP_MAX_MEMBERS allows, before the proof (it
 * says which bytes the proof covers), and no other field of the reply
 * before the sponsor's proof held; then it decodes the reply
 * (decode_reply_header, decode_admission: the length again, every count and
 * id, and that the lists are one membership). These are pure functions of
 * the bytes, for the tests and a fuzzer.
 */
#pragma once

#include "core/group_types.hpp"
#include "common/ucp_handles.hpp"

#include <twochains/job_key.h>
#include <ucs/type/status.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tc::join {

constexpr uint32_t kRequestMagic = 0x524a4354; /* "TCJR" */
constexpr uint32_t kReplyMagic   = 0x414a4354; /* "TCJA" */
constexpr uint32_t kChallengeMagic = 0x434a4354; /* "TCJC" */
constexpr uint32_t kVersion      = 5;
/* member ids are node ids, of any job size below ucp_node::kMaxNodeId; how
 * many a view lists is bounded by UCX_TC_GROUP_MAX_MEMBERS */
constexpr int      kMaxMemberId  = ucp_node::kMaxNodeId;

inline bool valid_member_id(int32_t id) { return id >= 0 && id < kMaxMemberId; }

/* The sponsor's first words to a new connection. */
struct challenge {
    uint32_t magic;
    uint32_t version;
    uint8_t  nonce[TC_JOB_KEY_NONCE_LEN];
};

/* What the joiner must share with the group; the rest is assigned. */
struct request {
    uint32_t magic;
    uint32_t version;
    uint64_t max_payload;
    uint64_t rdmc_max_message;
    uint64_t rdmc_block;
    uint32_t window;
    uint32_t mode;
    uint32_t smc_batched;
    uint32_t jam_security;   /* tc_ifunc_security_t of its replicated jams */
    uint64_t jam_state_size; /* bytes of its jam state */
    uint64_t jam_packages;   /* replicated_jams::packages_digest */
    uint8_t  nonce[TC_JOB_KEY_NONCE_LEN];   /* the joiner's challenge to the sponsor */
    uint8_t  proof[TC_JOB_KEY_PROOF_LEN];   /* the joiner's proof */
};
static_assert(sizeof(request) == 128);

/* What the sponsor sends first after the request: its proof of the reply's
 * `length` bytes that follow. */
struct reply_frame {
    uint32_t magic;           /* kReplyMagic */
    uint32_t version;
    uint32_t length;          /* bytes of the reply after this header */
    uint32_t reserved;
    uint8_t  proof[TC_JOB_KEY_PROOF_LEN];
};
static_assert(sizeof(reply_frame) == 48);

/* The request a joiner with @a p sends (without its proof); a sponsor
 * compares it with its own. */
request request_for(const group_params &p);

/* A request as it arrived (its magic and proof already checked) against
 * @a ours: nullptr when it speaks this version and shares every parameter
 * the group must share, else why not. */
const char *request_mismatch(const request &r, const request &ours);

/* A reply's fixed header. An admission's lists follow it, int32 each, in
 * this order: members (member_count, view order), senders (sender_count),
 * rendezvous (rendezvous_size: rendezvous rank -> id). A refusal has all
 * counts zero and nothing after it. */
struct reply {
    uint32_t magic;
    uint32_t version;
    int32_t  status;          /* ucs_status_t: UCS_OK admits */
    int32_t  id;              /* the joiner's id in the group */
    int64_t  epoch;           /* of the view it enters */
    int32_t  sponsor;         /* id of the member it contacted */
    uint32_t rendezvous_port; /* on the sponsor's address */
    int32_t  rendezvous_size;
    int32_t  member_count;
    int32_t  sender_count;
    int32_t  reserved;
    char     reason[128];     /* why it was refused */
};

/* An admission, as the sponsor sends it and the joiner uses it. */
struct admission {
    int32_t          id      = -1;
    int64_t          epoch   = 0;
    int32_t          sponsor = -1;
    uint16_t         rendezvous_port = 0;
    std::vector<int> members;      /* view order */
    std::vector<int> senders;
    std::vector<int> rendezvous;   /* rendezvous rank -> id */
};

/* Header and lists of @a a, ready for the wire. */
std::vector<std::byte> encode_admission(const admission &a);

/* A refusal (header only) saying @a why. */
reply refusal_reply(ucs_status_t status, const char *why);

/* The handshake's proofs and checks, pure functions of the bytes.
 * @a endpoints: tc_sock_endpoints of the connection. */

/* Set @a r.proof: the joiner's proof of @a r (its nonce set) for the
 * challenge @a sponsor_nonce. */
void prove_request(const tc_job_key_t &key, const uint8_t *sponsor_nonce,
                   const uint8_t *endpoints, request &r);

/* A request as it arrived (@a wire, exactly sizeof(request) bytes): nullptr
 * and @a out when it is a request of this version that proves the key for
 * @a sponsor_nonce, else why not (nothing else of it is looked at). */
const char *check_request(const tc_job_key_t &key, const uint8_t *sponsor_nonce,
                          const uint8_t *endpoints, std::span<const std::byte> wire,
                          request &out);

/* The frame for the reply @a body to the request @a req (as it arrived),
 * header and body, with the sponsor's proof. */
std::vector<std::byte> seal_reply(const tc_job_key_t &key, const uint8_t *sponsor_nonce,
                                  const uint8_t *endpoints, const request &req,
                                  std::span<const std::byte> body);

/* The same frame without a proof: a last word to a connection whose request
 * never came (the group closed), which a joiner cannot believe. */
std::vector<std::byte> unsealed_reply(std::span<const std::byte> body);

/* The length a frame header announces: nullptr and @a len, or why it
 * cannot be (not a reply frame of this version, shorter than a reply
 * header, longer than an admission of @a max_members). */
const char *frame_length(const reply_frame &f, unsigned max_members, size_t &len);

/* Whether the sponsor proved the key for the frame @a f and its @a body, in
 * answer to our @a req: nullptr, or why not. */
const char *open_reply(const tc_job_key_t &key, const uint8_t *sponsor_nonce,
                       const uint8_t *endpoints, const request &req, const reply_frame &f,
                       std::span<const std::byte> body);

/* A reply's header, from its @a body (a proven one, or a last word to
 * show): nullptr and @a h, or why it is not one: the wrong magic or
 * version, a refusal that is not exactly a header or an admission shorter
 * than one. A refusal's reason ends within the header. */
const char *decode_reply_header(std::span<const std::byte> body, reply &h);

/* The bytes of the lists that the header @a h announces, in @a bytes; or
 * why its counts cannot be (negative, above @a max_members, more senders
 * than members, a rendezvous that is not the members). Nothing else of
 * @a h is looked at. */
const char *list_bytes(const reply &h, unsigned max_members, size_t &bytes);

/* The reply @a r (a refusal) as bytes. */
std::vector<std::byte> reply_bytes(const reply &r);

/* A whole admission as it arrived (header, then lists: exactly
 * @a wire.size() bytes): nullptr and @a out, or why it is rejected. */
const char *decode_admission(std::span<const std::byte> wire, unsigned max_members,
                             admission &out);

/* A socket that closes itself. */
class socket_fd {
public:
    socket_fd() = default;
    explicit socket_fd(int fd) : fd_(fd) {}
    ~socket_fd() { reset(); }
    socket_fd(socket_fd &&o) noexcept : fd_(o.release()) {}
    socket_fd &operator=(socket_fd &&o) noexcept
    {
        reset(o.release());
        return *this;
    }
    socket_fd(const socket_fd &)            = delete;
    socket_fd &operator=(const socket_fd &) = delete;

    int get() const { return fd_; }
    bool valid() const { return fd_ >= 0; }
    int release()
    {
        int fd = fd_;
        fd_    = -1;
        return fd;
    }
    void reset(int fd = -1);

private:
    int fd_ = -1;
};

/* Non-blocking listener on every address, or on loopback only when there
 * is no job key (tc_job_key_listen_address); @a port 0 picks one. */
ucs_status_t listen_on(const tc_job_key_t &key, uint16_t port, socket_fd &out,
                       uint16_t *bound_port = nullptr);

/* A connection waiting on @a listener, or an invalid fd. */
socket_fd accept_pending(const socket_fd &listener);

/* 1: @a len bytes were waiting and are now in @a buf; 0: not all there yet;
 * -1: the peer closed or the connection failed. Never blocks. */
int try_read(const socket_fd &s, void *buf, size_t len);

/* The peer closed (or reset) a connection we expect nothing more on. */
bool peer_gone(const socket_fd &s);

ucs_status_t write_all(const socket_fd &s, const void *buf, size_t len, double timeout_s);
ucs_status_t read_all(const socket_fd &s, void *buf, size_t len, double timeout_s);

/* Connect to "host:port", retrying until @a timeout_s; logs its failure. */
ucs_status_t connect_to(const std::string &host_port, double timeout_s, socket_fd &out);

/* This end's IPv4 address of a connected socket, as text. */
std::string local_address(const socket_fd &s);

/* "host" of "host:port" */
std::string host_of(const std::string &host_port);

} // namespace tc::join
