/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * A group's join port against outsiders: a flood of 2,000 silent and
 * garbage connections while a real joiner joins; a relay without the key
 * between a joiner and the sponsor, passing the bytes on as they are or
 * changing a field; and fake sponsors, without the key or with it but with
 * ids out of range, answering a real joiner. The outsiders are refused and
 * counted, the joiner refuses what it cannot believe, nobody crashes.
 */
#include "common.h"
#include "flood.h"
#include "group/probe_cluster.h"
#include "membership/join_wire.hpp"

#include <twochains/job_key.h>
#include <twochains/sock.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <poll.h>
#include <thread>

namespace {

using namespace std::chrono_literals;
using namespace tc_test::probe;

constexpr const char *kKey = "the group's job key, long enough";

std::string key_env() { return std::string("UCX_TC_JOB_KEY=") + kKey; }

tc_job_key_t job_key()
{
    tc_job_key_t key{};
    key.present = 1;
    key.length  = std::strlen(kKey);
    std::memcpy(key.bytes, kKey, key.length);
    return key;
}

/* the number after "join rejects " in @a text, -1 when absent */
long join_rejects(const std::string &text)
{
    const size_t at = text.rfind("join rejects ");
    return at == std::string::npos ? -1 : std::stol(text.substr(at + 13));
}

size_t lines_with(const std::string &text, const std::string &needle)
{
    size_t n = 0;
    for (size_t pos = text.find(needle); pos != std::string::npos;
         pos = text.find(needle, pos + 1)) {
        ++n;
    }
    return n;
}

/* Seconds until joiner @a j printed "ready", or a negative number. */
double time_to_ready(cluster &c, int j, std::chrono::steady_clock::time_point start)
{
    return c.wait_for({j}, "ready", 30s) ? tc_test::seconds_since(start) : -1;
}

} // namespace

/* 2,000 connections from eight loopback addresses, silent or with part of
 * a request, are open at a sponsor's join port, and more keep coming,
 * while a joiner joins: it is in within 1 s of the time a joiner took
 * alone, and the sponsor logs a few lines for thousands of refusals. */
TEST(group_join_flood, a_flood_of_2000_connections_does_not_hold_off_a_joiner)
{
    const int base = free_port_base(3);
    ASSERT_NE(0, base);
    cluster c(3, "posix,self", "-c 24000 -r 4000 -J " + std::to_string(base),
              {{0, key_env()}, {1, key_env()}, {2, key_env()}});
    ASSERT_TRUE(c.wait_for(all_ranks(3), "ready", 20s)) << c.all_output();
    const int port          = base + 2;
    const std::string where = " -j 127.0.0.1:" + std::to_string(port);

    auto start         = std::chrono::steady_clock::now();
    const int first    = c.start_joiner("-c 16000 -r 4000" + where, {key_env()});
    const double alone = time_to_ready(c, first, start);
    ASSERT_GT(alone, 0) << c.all_output();

    tc_test::flood f(port, sizeof(tc::join::request) - 1);
    f.open(2000);
    ASSERT_GE(f.open_count(), 1900u);
    f.start_churn();
    start                = std::chrono::steady_clock::now();
    const int second     = c.start_joiner("-c 8000 -r 4000" + where, {key_env()});
    const double flooded = time_to_ready(c, second, start);
    f.stop_churn();
    ASSERT_GT(flooded, 0) << c.all_output();
    std::printf("a joiner's join: %.3f s alone, %.3f s with %zu connections open and %ld more "
                "during it\n", alone, flooded, f.open_count(), f.churned());
    EXPECT_LT(flooded, alone + 1.0) << "the joiner waited behind the flood";

    c.wait_all(90s);
    for (int r : {0, 1, 2, first, second}) {
        EXPECT_EQ(0, c.at(r).exit_code) << c.all_output();
    }
    const size_t lines = lines_with(c.at(2).text, "group join: refused");
    std::printf("refusal log lines at the sponsor: %zu\n", lines);
    EXPECT_GE(lines, 1u);
    EXPECT_LE(lines, 12u) << "one line per reason per interval, not per connection";
}

namespace {

/* A process without the key between joiners and a sponsor: it accepts a
 * joiner, connects to the sponsor, and passes the bytes on both ways;
 * with @a alter, it changes one byte of the request on its way (the
 * window), as one that wanted the joiner in with other parameters would. */
class relay {
public:
    relay(int sponsor_port, bool alter) : sponsor_port_(sponsor_port), alter_(alter)
    {
        const tc_job_key_t none{};
        uint16_t port = 0;
        EXPECT_EQ(UCS_OK, tc::join::listen_on(none, 0, listener_, &port));
        port_   = port;
        thread_ = std::thread([this] { run(); });
    }
    ~relay()
    {
        stop_ = true;
        thread_.join();
    }
    int port() const { return port_; }
    long passed() const { return passed_; }

private:
    void run()
    {
        tc::join::socket_fd joiner;
        while (!stop_ && !joiner.valid()) {
            joiner = tc::join::accept_pending(listener_);
            std::this_thread::sleep_for(1ms);
        }
        tc::join::socket_fd sponsor;
        if (stop_ || tc::join::connect_to("127.0.0.1:" + std::to_string(sponsor_port_), 5.0,
                                          sponsor) != UCS_OK) {
            return;
        }
        size_t upstream = 0;   /* bytes of the joiner passed on so far */
        for (bool open = true; open && !stop_;) {
            pollfd pfd[2] = {{joiner.get(), POLLIN, 0}, {sponsor.get(), POLLIN, 0}};
            if (::poll(pfd, 2, 10) <= 0) {
                continue;
            }
            for (int i = 0; i < 2 && open; ++i) {
                if (pfd[i].revents == 0) {
                    continue;
                }
                std::byte buf[4096];
                const ssize_t n = ::recv(pfd[i].fd, buf, sizeof(buf), 0);
                if (n <= 0) {
                    open = false;
                    break;
                }
                if (i == 0 && alter_) {
                    const size_t at = offsetof(tc::join::request, window);
                    if (at >= upstream && at < upstream + static_cast<size_t>(n)) {
                        buf[at - upstream] ^= std::byte{1};
                    }
                    upstream += static_cast<size_t>(n);
                }
                const int to = (i == 0) ? sponsor.get() : joiner.get();
                open         = ::send(to, buf, static_cast<size_t>(n), MSG_NOSIGNAL) == n;
                passed_ += n;
            }
        }
    }

    tc::join::socket_fd listener_;
    int                 port_ = 0, sponsor_port_;
    bool                alter_;
    std::atomic<bool>   stop_{false};
    std::atomic<long>   passed_{0};
    std::thread         thread_;
};

} // namespace

/* A relay without the key passes a joiner's handshake on to the sponsor,
 * as it is and with the window changed: the sponsor refuses both (the
 * proof covers the endpoints each end sees, and the bytes), counts them,
 * and the joiner does not believe the refusal either (the sponsor's proof
 * names the relay's endpoints). Then a joiner that comes straight in is
 * admitted. */
TEST(group_join_relay, a_relay_without_the_key_gets_nobody_in)
{
    const int base = free_port_base(3);
    ASSERT_NE(0, base);
    cluster c(3, "posix,self", "-c 16000 -r 4000 -J " + std::to_string(base),
              {{0, key_env()}, {1, key_env()}, {2, key_env()}});
    ASSERT_TRUE(c.wait_for(all_ranks(3), "ready", 20s)) << c.all_output();
    const int port = base + 2;

    int relayed[2];
    for (bool alter : {false, true}) {
        relay r(port, alter);
        relayed[alter] = c.start_joiner("-c 10 -j 127.0.0.1:" + std::to_string(r.port()),
                                        {key_env()});
        ASSERT_TRUE(c.wait_for({relayed[alter]}, "join failed", 20s)) << c.all_output();
        EXPECT_GT(r.passed(), static_cast<long>(sizeof(tc::join::request)))
                << "the relay passed no handshake on";
    }
    const int direct = c.start_joiner("-c 1000 -r 4000 -j 127.0.0.1:" + std::to_string(port),
                                      {key_env()});
    c.wait_all(90s);

    for (int j : relayed) {
        const std::string &text = c.at(j).text;
        EXPECT_EQ(4, c.at(j).exit_code) << c.all_output();
        EXPECT_NE(std::string::npos, text.find("refused the join, unproven")) << text;
        EXPECT_NE(std::string::npos, text.find("a relay or NAT is between us")) << text;
    }
    for (int r : {0, 1, 2, direct}) {
        ASSERT_EQ(0, c.at(r).exit_code) << c.all_output();
        EXPECT_EQ("2 0,1,2,3", parse(c.at(r).text).final_view)
                << "one view change, the direct joiner's\n" << c.all_output();
    }
    EXPECT_EQ(2, join_rejects(c.at(2).text)) << c.all_output();
    EXPECT_NE(std::string::npos, c.at(2).text.find("did not prove the job key")) << c.all_output();
}

namespace {

/* A played sponsor on a loopback port: for each connection, a challenge,
 * the joiner's request, then what @a answer makes of it (the bytes to
 * send), given the challenge, the endpoints and the request. */
class fake_sponsor {
public:
    using answer_fn = std::function<std::vector<std::byte>(
            const uint8_t *nonce, const uint8_t *endpoints, const tc::join::request &req)>;

    explicit fake_sponsor(answer_fn answer) : answer_(std::move(answer))
    {
        const tc_job_key_t none{};
        uint16_t port = 0;
        EXPECT_EQ(UCS_OK, tc::join::listen_on(none, 0, listener_, &port));
        port_   = port;
        thread_ = std::thread([this] { run(); });
    }
    ~fake_sponsor()
    {
        stop_ = true;
        thread_.join();
    }
    int port() const { return port_; }

private:
    void run()
    {
        tc::join::socket_fd s;
        while (!stop_ && !s.valid()) {
            s = tc::join::accept_pending(listener_);
            std::this_thread::sleep_for(1ms);
        }
        if (stop_) {
            return;
        }
        tc::join::challenge c{tc::join::kChallengeMagic, tc::join::kVersion, {}};
        ASSERT_EQ(UCS_OK, tc_job_key_challenge(c.nonce));
        uint8_t endpoints[TC_SOCK_ENDPOINTS_LEN];
        ASSERT_EQ(UCS_OK, tc_sock_endpoints(s.get(), 1, endpoints));
        tc::join::request req{};
        ASSERT_EQ(UCS_OK, tc::join::write_all(s, &c, sizeof(c), 5.0));
        ASSERT_EQ(UCS_OK, tc::join::read_all(s, &req, sizeof(req), 10.0));
        const std::vector<std::byte> out = answer_(c.nonce, endpoints, req);
        (void)tc::join::write_all(s, out.data(), out.size(), 5.0);
        /* until the joiner hangs up */
        while (!stop_ && !tc::join::peer_gone(s)) {
            std::this_thread::sleep_for(1ms);
        }
    }

    answer_fn           answer_;
    tc::join::socket_fd listener_;
    int                 port_ = 0;
    std::atomic<bool>   stop_{false};
    std::thread         thread_;
};

/* an admission of members 0, 1, 2 and the joiner 3, the sponsor 0 */
tc::join::admission plausible()
{
    tc::join::admission a;
    a.id              = 3;
    a.epoch           = 2;
    a.sponsor         = 0;
    a.rendezvous_port = 9;
    a.members         = {0, 1, 2, 3};
    a.senders         = {0, 1, 2, 3};
    a.rendezvous      = {0, 1, 2, 3};
    return a;
}

/* @a wire's reply header, changed by @a change */
std::vector<std::byte> with_header(std::vector<std::byte> wire,
                                   const std::function<void(tc::join::reply &)> &change)
{
    tc::join::reply h;
    std::memcpy(&h, wire.data(), sizeof(h));
    change(h);
    std::memcpy(wire.data(), &h, sizeof(h));
    return wire;
}

} // namespace

/* Fake sponsors answer a joiner that holds the key: one without the key
 * (its admission names sponsor 1000), and ones with the key whose
 * admissions name sponsor 1000, announce more members than they list, list
 * ids out of range, or announce a reply longer than any admission. The
 * joiner refuses each with a clear error, before it uses a field, and does
 * not crash (run under ASan too). */
TEST(group_join_fake_sponsor, a_joiner_refuses_what_a_fake_sponsor_says)
{
    const tc_job_key_t key = job_key(), none{};
    struct fake_case {
        const char                                         *expect;
        bool                                                keyed;
        std::function<std::vector<std::byte>()>             body;
        uint32_t                                            length = 0;   /* 0: the body's */
    };
    const std::vector<fake_case> cases = {
        {"answered the join, unproven: the reply does not prove the job key", false,
         [] { auto a = plausible(); a.sponsor = 1000; return tc::join::encode_admission(a); }},
        {"the joiner or the sponsor is not a member", true,
         [] { auto a = plausible(); a.sponsor = 1000; return tc::join::encode_admission(a); }},
        {"truncated lists", true,
         [] {
             return with_header(tc::join::encode_admission(plausible()),
                                [](tc::join::reply &h) { h.member_count = 5; h.rendezvous_size = 5; });
         }},
        {"a member id out of range", true,
         [] { auto a = plausible(); a.members[1] = -7; a.rendezvous[1] = -7;
              return tc::join::encode_admission(a); }},
        {"a sender count out of range", true,
         [] {
             return with_header(tc::join::encode_admission(plausible()),
                                [](tc::join::reply &h) { h.sender_count = 1 << 30; });
         }},
        {"a reply length out of range", true,
         [] { return tc::join::encode_admission(plausible()); }, 1u << 31},
    };
    cluster c(0, "tcp,self", "");
    for (const auto &fc : cases) {
        SCOPED_TRACE(fc.expect);
        fake_sponsor fake([&](const uint8_t *nonce, const uint8_t *endpoints,
                              const tc::join::request &req) {
            std::vector<std::byte> out =
                    tc::join::seal_reply(fc.keyed ? key : none, nonce, endpoints, req, fc.body());
            if (fc.length != 0) {
                tc::join::reply_frame f;
                std::memcpy(&f, out.data(), sizeof(f));
                f.length = fc.length;
                std::memcpy(out.data(), &f, sizeof(f));
            }
            return out;
        });
        const int j = c.start_joiner("-c 10 -j 127.0.0.1:" + std::to_string(fake.port()),
                                     {key_env()});
        ASSERT_TRUE(c.wait_for({j}, "join failed", 20s)) << c.at(j).text;
        EXPECT_NE(std::string::npos, c.at(j).text.find(fc.expect)) << c.at(j).text;
    }
    c.wait_all(30s);
    for (size_t j = 0; j < cases.size(); ++j) {
        EXPECT_EQ(4, c.at(static_cast<int>(j)).exit_code) << c.all_output();
    }
}
