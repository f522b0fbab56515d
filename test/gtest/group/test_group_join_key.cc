/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * A group admits only holders of the job key, over posix and tcp: while
 * three members deliver, joiners without the key and with another key, a
 * replayed answer, a silent and a slow client and random bytes are refused
 * at one member's join port; then a joiner with the key gets in. Every
 * member and the joiner deliver exactly the same messages, in one order.
 * Joiners still waiting when the group closes hear why, and do not see a
 * reset.
 */
#include "common.h"
#include "group/probe_cluster.h"
#include "membership/join_wire.hpp"

#include <twochains/job_key.h>
#include <twochains/sock.h>

#include <atomic>
#include <poll.h>
#include <random>
#include <thread>

namespace {

using namespace std::chrono_literals;
using namespace tc_test::probe;

constexpr const char *kKey = "the group's job key, long enough";

/* A reply frame and its body from @a s: the body, or empty when none came
 * within @a timeout_s (the connection closed, or nothing was said). */
std::vector<std::byte> read_reply(const tc::join::socket_fd &s, double timeout_s)
{
    tc::join::reply_frame f{};
    size_t len = 0;
    if (tc::join::read_all(s, &f, sizeof(f), timeout_s) != UCS_OK ||
        tc::join::frame_length(f, 256, len) != nullptr) {
        return {};
    }
    std::vector<std::byte> body(len);
    if (tc::join::read_all(s, body.data(), len, timeout_s) != UCS_OK) {
        return {};
    }
    return body;
}

/* Whether the peer closed @a s within @a timeout_s (what it still sent is
 * read and dropped). */
bool closed_within(const tc::join::socket_fd &s, double timeout_s)
{
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
        pollfd pfd{s.get(), POLLIN, 0};
        if (::poll(&pfd, 1, 10) > 0) {
            char sink[256];
            if (::recv(s.get(), sink, sizeof(sink), MSG_DONTWAIT) <= 0) {
                return true;
            }
        }
    }
    return false;
}

/* A raw connection to a join port, as a stranger would make it. */
struct raw_client {
    tc::join::socket_fd    s;
    tc::join::challenge    challenge{};
    bool                   ok = false;   /* connected and challenged */

    explicit raw_client(int port)
    {
        ok = tc::join::connect_to("127.0.0.1:" + std::to_string(port), 5.0, s) == UCS_OK &&
             tc::join::read_all(s, &challenge, sizeof(challenge), 5.0) == UCS_OK &&
             challenge.magic == tc::join::kChallengeMagic;
    }

    /* the reason of the sponsor's refusal, "" when it admitted or said nothing */
    std::string refusal(double timeout_s = 5.0)
    {
        const std::vector<std::byte> body = read_reply(s, timeout_s);
        tc::join::reply r{};
        if (body.empty() || tc::join::decode_reply_header(body, r) != nullptr ||
            r.status == UCS_OK) {
            return "";
        }
        /* a refused stranger learns nothing of the group */
        EXPECT_EQ(0, r.member_count);
        EXPECT_EQ(0, r.id);
        return r.reason;
    }
};

tc_job_key_t job_key()
{
    tc_job_key_t key{};
    key.present = 1;
    key.length  = std::strlen(kKey);
    std::memcpy(key.bytes, kKey, key.length);
    return key;
}

class group_join_key : public ::testing::TestWithParam<std::string> {};

} // namespace

TEST_P(group_join_key, only_holders_of_the_key_get_in)
{
    const int base = free_port_base(3);
    ASSERT_NE(0, base);
    const std::string key = std::string("UCX_TC_JOB_KEY=") + kKey;
    const long count = 60000;   /* ~12 s of traffic: the attacks take ~5 s */
    cluster c(3, GetParam(), "-c " + std::to_string(count) + " -r 4000 -J " +
                                     std::to_string(base),
              {{0, key}, {1, key}, {2, key}});
    ASSERT_TRUE(c.wait_for(all_ranks(3), "ready", 20s)) << c.all_output();
    const int port          = base + 2;
    const std::string where = " -j 127.0.0.1:" + std::to_string(port);

    /* joiners without the key and with another one */
    const int none = c.start_joiner("-c 10" + where);
    ASSERT_TRUE(c.wait_for({none}, "refused the join", 20s)) << c.all_output();
    const int other = c.start_joiner("-c 10" + where,
                                     {"UCX_TC_JOB_KEY=another key, just as long"});
    ASSERT_TRUE(c.wait_for({other}, "refused the join", 20s)) << c.all_output();

    const tc_job_key_t k = job_key();
    tc::join::request req{};
    req.magic   = tc::join::kRequestMagic;
    req.version = tc::join::kVersion;
    {
        /* a valid request, recorded, then replayed to a new challenge */
        raw_client recorded(port);
        ASSERT_TRUE(recorded.ok) << c.all_output();
        uint8_t endpoints[TC_SOCK_ENDPOINTS_LEN];
        ASSERT_EQ(UCS_OK, tc_sock_endpoints(recorded.s.get(), 0, endpoints));
        ASSERT_EQ(UCS_OK, tc_job_key_challenge(req.nonce));
        tc::join::prove_request(k, recorded.challenge.nonce, endpoints, req);
        recorded.s.reset();
        raw_client replay(port);
        ASSERT_TRUE(replay.ok) << c.all_output();
        ASSERT_EQ(UCS_OK, tc::join::write_all(replay.s, &req, sizeof(req), 5.0));
        EXPECT_NE(std::string::npos, replay.refusal().find("did not prove the job key"));
    }
    {
        /* silent, then slow: each dropped without a word within its 2 s */
        raw_client silent(port);
        ASSERT_TRUE(silent.ok) << c.all_output();
        EXPECT_TRUE(closed_within(silent.s, 4.0));
        raw_client slow(port);
        ASSERT_TRUE(slow.ok) << c.all_output();
        const auto *bytes = reinterpret_cast<const uint8_t*>(&req);
        for (size_t i = 0; i < 6; ++i) {   /* a byte every 250 ms, for 1.5 s */
            ASSERT_EQ(UCS_OK, tc::join::write_all(slow.s, bytes + i, 1, 1.0));
            std::this_thread::sleep_for(250ms);
        }
        EXPECT_TRUE(closed_within(slow.s, 4.0));
    }
    /* random bytes, some of them with the request's magic: a whole request's
     * worth is refused with a reason, less is dropped without a word */
    std::mt19937 rng(4242);
    int refused = 0, judged = 0, closed = 0;
    for (int i = 0; i < 40; ++i) {
        raw_client fuzz(port);
        ASSERT_TRUE(fuzz.ok) << c.all_output();
        std::vector<uint8_t> junk(rng() % (2 * sizeof(req)));
        for (auto &b : junk) {
            b = static_cast<uint8_t>(rng());
        }
        if (i % 2 == 0 && junk.size() >= sizeof(req.magic)) {
            std::memcpy(junk.data(), &req.magic, sizeof(req.magic));
        }
        (void)tc::join::write_all(fuzz.s, junk.data(), junk.size(), 1.0);
        ::shutdown(fuzz.s.get(), SHUT_WR);
        judged  += junk.size() >= sizeof(req);
        refused += !fuzz.refusal(3.0).empty();
        closed  += closed_within(fuzz.s, 3.0);
    }
    EXPECT_EQ(judged, refused);
    EXPECT_EQ(40, closed);

    /* the holder of the key */
    const int good = c.start_joiner("-c 1000 -r 4000" + where, {key});
    c.wait_all(90s);

    EXPECT_EQ(4, c.at(none).exit_code) << c.all_output();
    EXPECT_EQ(4, c.at(other).exit_code) << c.all_output();
    EXPECT_NE(std::string::npos, c.at(none).text.find("did not prove the job key"))
            << c.all_output();
    std::string chain;
    for (int r : {0, 1, 2, good}) {
        ASSERT_EQ(0, c.at(r).exit_code) << c.all_output();
        auto o = parse(c.at(r).text);
        EXPECT_EQ("2 0,1,2,3", o.final_view) << "one view change, the good joiner's\n"
                                             << c.all_output();
        chain = chain.empty() ? o.chain : chain;
        EXPECT_EQ(chain, o.chain) << c.all_output();
    }
    const auto all = static_cast<uint64_t>(3 * count + 1000);
    EXPECT_EQ(all, parse(c.at(0).text).count) << c.all_output();
    EXPECT_EQ(all, parse(c.at(good).text).count) << c.all_output();
}

/* Eight silent clients, all in handshake at once, when a group that
 * delivers for about a second closes: each hears a last word with its
 * reason, "the group closed before admitting it" (after its challenge, or
 * in place of it for the backlog), never a reset; one dropped after its
 * 2 s closes without a word. */
TEST_P(group_join_key, joiners_waiting_when_the_group_closes_hear_why)
{
    const int base = free_port_base(3);
    ASSERT_NE(0, base);
    const std::string key = std::string("UCX_TC_JOB_KEY=") + kKey;
    cluster c(3, GetParam(), "-c 4000 -r 4000 -J " + std::to_string(base),
              {{0, key}, {1, key}, {2, key}});
    ASSERT_TRUE(c.wait_for(all_ranks(3), "ready", 20s)) << c.all_output();
    const std::string where = "127.0.0.1:" + std::to_string(base);

    constexpr int kClients = 8;
    std::vector<tc::join::socket_fd> clients(kClients);
    for (auto &s : clients) {
        ASSERT_EQ(UCS_OK, tc::join::connect_to(where, 5.0, s));
    }
    int timed_out = 0, closed = 0;
    for (auto &s : clients) {
        /* a challenge (then nothing from us), and then a last word, or the
         * last word in place of the challenge */
        struct {
            uint32_t magic, version;
        } opening{};
        ASSERT_EQ(UCS_OK, tc::join::read_all(s, &opening, sizeof(opening), 60.0))
                << "a waiting joiner got no answer\n" << c.all_output();
        std::vector<std::byte> body;
        if (opening.magic == tc::join::kChallengeMagic) {
            uint8_t nonce[TC_JOB_KEY_NONCE_LEN];
            ASSERT_EQ(UCS_OK, tc::join::read_all(s, nonce, sizeof(nonce), 5.0));
            body = read_reply(s, 60.0);
        } else {
            ASSERT_EQ(tc::join::kReplyMagic, opening.magic);
            tc::join::reply_frame f{};
            std::memcpy(&f, &opening, sizeof(opening));
            ASSERT_EQ(UCS_OK, tc::join::read_all(s, reinterpret_cast<char*>(&f) +
                                                        sizeof(opening),
                                                 sizeof(f) - sizeof(opening), 5.0));
            size_t len = 0;
            ASSERT_EQ(nullptr, tc::join::frame_length(f, 256, len));
            body.resize(len);
            ASSERT_EQ(UCS_OK, tc::join::read_all(s, body.data(), len, 5.0));
        }
        tc::join::reply r{};
        if (body.empty()) {
            ++timed_out;       /* dropped after its 2 s, without a word */
            continue;
        }
        ASSERT_EQ(nullptr, tc::join::decode_reply_header(body, r));
        const std::string why = r.reason;
        EXPECT_EQ(UCS_ERR_CANCELED, r.status) << why;
        EXPECT_NE(std::string::npos, why.find("the group closed before admitting it")) << why;
        ++closed;
        EXPECT_EQ(0, r.member_count);
    }
    c.wait_all(60s);
    EXPECT_EQ(kClients, timed_out + closed);
    EXPECT_GE(closed, 1) << "the group outlasted " << timed_out << " silent joiners";
    const auto all = static_cast<uint64_t>(3 * 4000);
    for (int r : {0, 1, 2}) {
        ASSERT_EQ(0, c.at(r).exit_code) << c.all_output();
        EXPECT_EQ(all, parse(c.at(r).text).count) << c.all_output();
    }
}

/* A joiner against a sponsor played here over a real socket: the first
 * connection is reset before its challenge, the second is refused for a
 * request that came too late (as if the joiner had been preempted), the
 * third for a reason that is final. The joiner asks three times, and stops
 * at the final refusal with its reason. */
TEST(group_join_retry, a_joiner_asks_again_after_a_reset_or_a_timeout_and_not_after_a_refusal)
{
    tc_job_key_t key = job_key();
    tc::join::socket_fd listener;
    uint16_t port = 0;
    ASSERT_EQ(UCS_OK, tc::join::listen_on(key, 0, listener, &port));
    std::atomic<int> connections{0}, requests{0};
    std::thread sponsor([&] {
        const auto deadline = std::chrono::steady_clock::now() + 30s;
        while (connections < 3 && std::chrono::steady_clock::now() < deadline) {
            tc::join::socket_fd s = tc::join::accept_pending(listener);
            if (!s.valid()) {
                std::this_thread::sleep_for(1ms);
                continue;
            }
            const int n = ++connections;
            if (n == 1) {
                const linger reset{1, 0};   /* close with a reset */
                setsockopt(s.get(), SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
                continue;
            }
            tc::join::challenge c{tc::join::kChallengeMagic, tc::join::kVersion, {}};
            ASSERT_EQ(UCS_OK, tc_job_key_challenge(c.nonce));
            uint8_t endpoints[TC_SOCK_ENDPOINTS_LEN];
            ASSERT_EQ(UCS_OK, tc_sock_endpoints(s.get(), 1, endpoints));
            std::vector<std::byte> wire(sizeof(tc::join::request));
            tc::join::request req{};
            ASSERT_EQ(UCS_OK, tc::join::write_all(s, &c, sizeof(c), 5.0));
            ASSERT_EQ(UCS_OK, tc::join::read_all(s, wire.data(), wire.size(), 10.0));
            requests += tc::join::check_request(key, c.nonce, endpoints, wire, req) == nullptr;
            const auto answer = [&](ucs_status_t status, const char *why) {
                const auto body = tc::join::reply_bytes(tc::join::refusal_reply(status, why));
                const auto out  = tc::join::seal_reply(key, c.nonce, endpoints, req, body);
                EXPECT_EQ(UCS_OK, tc::join::write_all(s, out.data(), out.size(), 5.0));
            };
            if (n == 2) {
                answer(UCS_ERR_TIMED_OUT, "no complete join request within 2 s");
            } else {
                answer(UCS_ERR_INVALID_PARAM, "group parameters differ (played)");
            }
        }
    });
    cluster c(0, "tcp,self", "");
    const int j = c.start_joiner("-c 10 -j 127.0.0.1:" + std::to_string(port),
                                 {std::string("UCX_TC_JOB_KEY=") + kKey});
    c.wait_all(60s);
    sponsor.join();
    EXPECT_EQ(3, connections.load()) << c.all_output();
    EXPECT_EQ(2, requests.load()) << c.all_output();
    EXPECT_EQ(4, c.at(j).exit_code) << c.all_output();
    EXPECT_NE(std::string::npos,
              c.at(j).text.find("refused the join: group parameters differ (played)"))
            << c.all_output();
}

INSTANTIATE_TEST_SUITE_P(transports, group_join_key, ::testing::Values("posix,self", "tcp,self"),
                         [](const auto &tl) { return tl.param.substr(0, tl.param.find(',')); });
