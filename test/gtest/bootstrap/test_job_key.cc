/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The job key (ucx_ext/bootstrap/job_key.c) and the TCP bootstrap's use of
 * it: loading the key, challenge and answer, and a root that admits only
 * holders of the key while strangers, replays, silent and slow clients and
 * random bytes are dropped and counted without stalling the real members.
 */
#include "common.h"
#include "bootstrap/boot_sockets.h"
#include "flood.h"

#include <bootstrap/tcp/tcp_wire.h>
#include <twochains/bootstrap.h>
#include <twochains/job_key.h>
#include <twochains/sock.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using namespace tc_test;   /* scoped_env, the loopback sockets of boot_sockets.h */

constexpr const char *kKey = "a job key of more than sixteen bytes";

tc_job_key_t key_of(const char *text)
{
    tc_job_key_t key{};
    key.present = 1;
    key.length  = std::strlen(text);
    std::memcpy(key.bytes, text, key.length);
    return key;
}

/* A hand-made member: read the challenge, answer it with @a key (or send
 * @a replay, a hello recorded earlier, as it is), say hello as @a rank of
 * @a size. */
struct hand_member {
    unique_fd               fd;
    tc_job_key_t            key;
    tc_boot_tcp_challenge_t challenge{};
    tc_boot_tcp_hello_t     hello{};
    uint8_t                 endpoints[TC_SOCK_ENDPOINTS_LEN] = {};

    hand_member(int port, const tc_job_key_t &k, int rank, int size,
                const tc_boot_tcp_hello_t *replay = nullptr)
        : fd(connect_loopback(port)), key(k)
    {
        EXPECT_EQ(sizeof(challenge),
                  read_full(fd.get(), &challenge, sizeof(challenge), 3000ms));
        EXPECT_EQ(TC_BOOT_TCP_CHALLENGE, ntohl(challenge.magic));
        EXPECT_EQ(UCS_OK, tc_sock_endpoints(fd.get(), 0, endpoints));
        if (replay != nullptr) {
            hello = *replay;
        } else {
            uint8_t nonce[TC_JOB_KEY_NONCE_LEN];
            EXPECT_EQ(UCS_OK, tc_job_key_challenge(nonce));
            tc_boot_tcp_hello_make(&key, challenge.nonce, nonce, endpoints, rank, size, &hello);
        }
        EXPECT_EQ(static_cast<ssize_t>(sizeof(hello)),
                  ::send(fd.get(), &hello, sizeof(hello), MSG_NOSIGNAL));
    }

    /* the root's proven verdict, then its answer once all are there:
     * UCS_OK admits */
    int32_t welcome()
    {
        tc_boot_tcp_verdict_t v{};
        ucs_status_t verdict = UCS_ERR_NO_PROGRESS;
        if (read_full(fd.get(), &v, sizeof(v), 3000ms) != sizeof(v) ||
            tc_boot_tcp_verdict_check(&key, challenge.nonce, endpoints, &hello, &v, "", 0,
                                      &verdict) != UCS_OK ||
            verdict != UCS_OK) {
            return -2000;
        }
        tc_boot_tcp_status_t st{};
        if (read_full(fd.get(), &st, sizeof(st), 3000ms) != sizeof(st)) {
            return -1000;
        }
        return static_cast<int32_t>(ntohl(static_cast<uint32_t>(st.status)));
    }
};

/* A root of @a size on a loopback listener, in a thread. */
struct root_thread {
    int          port = 0;   /* before lfd: listen_loopback sets it */
    unique_fd    lfd;
    boot_ptr     boot;
    ucs_status_t status = UCS_ERR_NO_PROGRESS;
    std::thread  thread;

    explicit root_thread(int size, double timeout_s = 10.0) : lfd(listen_loopback(port))
    {
        thread = std::thread([this, size, timeout_s] {
            tc_bootstrap_h raw = nullptr;
            status             = tc_bootstrap_tcp_create(nullptr, lfd.get(), 0, size,
                                                         timeout_s, &raw);
            boot.reset(raw);
        });
    }
    ~root_thread()
    {
        if (thread.joinable()) {
            thread.join();
        }
    }
    std::string address() const { return "127.0.0.1:" + std::to_string(port); }
};

} // namespace

TEST(job_key, loads_from_the_variable_and_refuses_a_short_one)
{
    tc_job_key_t key;
    {
        scoped_env k("UCX_TC_JOB_KEY", nullptr), f("UCX_TC_JOB_KEY_FILE", nullptr);
        ASSERT_EQ(UCS_OK, tc_job_key_load(&key));
        EXPECT_EQ(0, key.present);
    }
    {
        scoped_env k("UCX_TC_JOB_KEY", kKey);
        ASSERT_EQ(UCS_OK, tc_job_key_load(&key));
        EXPECT_EQ(1, key.present);
        EXPECT_EQ(std::strlen(kKey), key.length);
        EXPECT_EQ(0, std::memcmp(kKey, key.bytes, key.length));
        tc_job_key_clear(&key);
        EXPECT_EQ(0, key.present);
    }
    {
        scoped_env k("UCX_TC_JOB_KEY", "short");
        tc_test::scoped_log_expect logs;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, tc_job_key_load(&key));
        EXPECT_EQ(1u, logs.count("at least 16 are needed"));
    }
}

TEST(job_key, a_key_file_must_be_private)
{
    char path[] = "/tmp/tc_job_key_XXXXXX";
    const int fd = ::mkstemp(path);
    ASSERT_GE(fd, 0);
    const std::string text = std::string(kKey) + "\n";
    ASSERT_EQ(static_cast<ssize_t>(text.size()), ::write(fd, text.data(), text.size()));
    ::close(fd);
    scoped_env k("UCX_TC_JOB_KEY", nullptr), f("UCX_TC_JOB_KEY_FILE", path);
    tc_job_key_t key;

    ASSERT_EQ(0, ::chmod(path, 0600));
    ASSERT_EQ(UCS_OK, tc_job_key_load(&key));
    EXPECT_EQ(1, key.present);
    EXPECT_EQ(std::strlen(kKey), key.length) << "the trailing newline is not the key's";

    ASSERT_EQ(0, ::chmod(path, 0644));
    {
        tc_test::scoped_log_expect logs;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, tc_job_key_load(&key));
        EXPECT_EQ(1u, logs.count("readable by no one else"));
    }
    ::unlink(path);
    {
        tc_test::scoped_log_expect logs;
        EXPECT_NE(UCS_OK, tc_job_key_load(&key));
        EXPECT_EQ(1u, logs.count("UCX_TC_JOB_KEY_FILE="));
    }
}

/* A key file of the longest key (and its newline) loads whole; one byte
 * more is refused, not cut to a key nobody chose */
TEST(job_key, a_key_file_longer_than_the_longest_key_is_refused)
{
    for (size_t len : {size_t{TC_JOB_KEY_MAX_LEN}, size_t{TC_JOB_KEY_MAX_LEN} + 1}) {
        SCOPED_TRACE(len);
        char path[] = "/tmp/tc_job_key_XXXXXX";
        const int fd = ::mkstemp(path);
        ASSERT_GE(fd, 0);
        const std::string text = std::string(len, 'k') + "\n";
        ASSERT_EQ(static_cast<ssize_t>(text.size()), ::write(fd, text.data(), text.size()));
        ::close(fd);
        ASSERT_EQ(0, ::chmod(path, 0600));
        scoped_env k("UCX_TC_JOB_KEY", nullptr), f("UCX_TC_JOB_KEY_FILE", path);
        tc_job_key_t key;
        if (len == TC_JOB_KEY_MAX_LEN) {
            ASSERT_EQ(UCS_OK, tc_job_key_load(&key));
            EXPECT_EQ(len, key.length);
        } else {
            tc_test::scoped_log_expect logs;
            EXPECT_EQ(UCS_ERR_INVALID_PARAM, tc_job_key_load(&key));
            EXPECT_EQ(0, key.present);
            EXPECT_EQ(1u, logs.count("holds more than"));
        }
        ::unlink(path);
    }
}

/* A proof covers its role, service, both challenges, the endpoints and the
 * exact bytes: change any one, and it fails (a replay, a reflection, a
 * relay, a changed field); another key fails too. */
TEST(job_key, a_proof_covers_role_service_challenges_endpoints_and_bytes)
{
    const tc_job_key_t key = key_of(kKey), other = key_of("another key, also long enough");
    uint8_t n1[TC_JOB_KEY_NONCE_LEN], n2[TC_JOB_KEY_NONCE_LEN], proof[TC_JOB_KEY_PROOF_LEN];
    uint8_t ends[TC_SOCK_ENDPOINTS_LEN] = {1, 2, 3}, relayed[TC_SOCK_ENDPOINTS_LEN] = {1, 2, 4};
    ASSERT_EQ(UCS_OK, tc_job_key_challenge(n1));
    ASSERT_EQ(UCS_OK, tc_job_key_challenge(n2));
    EXPECT_NE(0, std::memcmp(n1, n2, sizeof(n1))) << "challenges must be fresh";
    const char hello[] = "rank 3 of 8", changed[] = "rank 4 of 8";

    tc_job_key_transcript_t t{};
    t.role          = TC_JOB_KEY_ROLE_RANK;
    t.service       = TC_JOB_KEY_SERVICE_BOOTSTRAP;
    t.server_nonce  = n1;
    t.client_nonce  = n2;
    t.endpoints     = ends;
    t.endpoints_len = sizeof(ends);
    t.nparts        = 1;
    t.parts[0]      = hello;
    t.part_lens[0]  = sizeof(hello);
    tc_job_key_prove(&key, &t, proof);

    const uint64_t refused = tc_job_key_refusals();
    EXPECT_TRUE(tc_job_key_verify(&key, &t, proof));
    int failures = 0;
    auto expect_fails = [&](tc_job_key_transcript_t v, const tc_job_key_t &k, const char *what) {
        EXPECT_FALSE(tc_job_key_verify(&k, &v, proof)) << what;
        ++failures;
    };
    tc_job_key_transcript_t v = t;
    v.server_nonce = n2;
    expect_fails(v, key, "replayed to another challenge");
    v = t;
    v.role = TC_JOB_KEY_ROLE_ROOT;
    expect_fails(v, key, "reflected: the other side's role");
    v = t;
    v.service = TC_JOB_KEY_SERVICE_JOIN;
    expect_fails(v, key, "another service");
    v = t;
    v.endpoints = relayed;
    expect_fails(v, key, "relayed: other endpoints");
    v = t;
    v.parts[0] = changed;
    expect_fails(v, key, "a changed field");
    v = t;
    v.part_lens[0] = sizeof(hello) - 1;
    expect_fails(v, key, "fewer bytes");
    expect_fails(t, other, "another key");
    EXPECT_EQ(refused + failures, tc_job_key_refusals());

    /* without a key a proof is zeros, and with one zeros never pass */
    const tc_job_key_t none{};
    uint8_t zeros[TC_JOB_KEY_PROOF_LEN];
    tc_job_key_prove(&none, &t, zeros);
    EXPECT_EQ(std::vector<uint8_t>(sizeof(zeros), 0), std::vector<uint8_t>(zeros, zeros + 32));
    EXPECT_FALSE(tc_job_key_verify(&key, &t, zeros));
}

TEST(job_key, without_a_key_services_listen_on_loopback_only)
{
    const tc_job_key_t none{}, key = key_of(kKey);
    char out[64];
    EXPECT_EQ(UCS_OK, tc_job_key_listen_address(&none, TC_JOB_KEY_SERVICE_JOIN, "0.0.0.0:7000",
                                                out, sizeof(out)));
    EXPECT_STREQ("127.0.0.1:7000", out);
    EXPECT_EQ(UCS_OK, tc_job_key_listen_address(&none, TC_JOB_KEY_SERVICE_BOOTSTRAP,
                                                "localhost:7001", out, sizeof(out)));
    EXPECT_STREQ("localhost:7001", out);
    {
        tc_test::scoped_log_expect logs;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  tc_job_key_listen_address(&none, TC_JOB_KEY_SERVICE_BOOTSTRAP,
                                            "10.1.2.3:7002", out, sizeof(out)));
        EXPECT_EQ(1u, logs.count("Set UCX_TC_JOB_KEY"));
    }
    EXPECT_EQ(UCS_OK, tc_job_key_listen_address(&key, TC_JOB_KEY_SERVICE_BOOTSTRAP,
                                                "10.1.2.3:7002", out, sizeof(out)));
    EXPECT_STREQ("10.1.2.3:7002", out);
    EXPECT_EQ(UCS_OK, tc_job_key_listen_address(&key, TC_JOB_KEY_SERVICE_JOIN, "0.0.0.0:7000",
                                                out, sizeof(out)));
    EXPECT_STREQ("0.0.0.0:7000", out);
}

TEST(job_key, an_unkeyed_root_refuses_a_socket_on_every_address)
{
    scoped_env k("UCX_TC_JOB_KEY", nullptr);
    unique_fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in addr{};
    addr.sin_family      = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    ASSERT_EQ(0, ::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)));
    ASSERT_EQ(0, ::listen(fd.get(), 4));
    tc_test::scoped_log_expect logs;
    tc_bootstrap_h raw;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, tc_bootstrap_tcp_create(nullptr, fd.get(), 0, 2, 1.0, &raw));
    EXPECT_EQ(1u, logs.count("without a job key"));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              tc_bootstrap_tcp_create("192.0.2.1:1", -1, 0, 2, 1.0, &raw));
}

/* With the key: members that hold it get in; a member without it, one with
 * another key and one replaying a recorded hello are dropped and counted,
 * and the root carries on. */
TEST(job_key, the_root_admits_only_holders_of_the_key)
{
    scoped_env k("UCX_TC_JOB_KEY", kKey);
    tc_test::scoped_log_expect logs;
    const uint64_t refused = tc_job_key_refusals();
    root_thread root(3);

    /* rank 1, by hand, with the key: its hello is recorded */
    hand_member first(root.port, key_of(kKey), 1, 3);
    const tc_boot_tcp_hello_t recorded = first.hello;

    const tc_job_key_t none{};
    hand_member stranger(root.port, none, 2, 3);
    EXPECT_TRUE(wait_eof(stranger.fd.get(), 3000ms)) << "a member without the key got in";
    hand_member wrong(root.port, key_of("not the job's key, though long"), 2, 3);
    EXPECT_TRUE(wait_eof(wrong.fd.get(), 3000ms)) << "a member with another key got in";
    hand_member replay(root.port, none, 2, 3, &recorded);
    EXPECT_TRUE(wait_eof(replay.fd.get(), 3000ms)) << "a replayed hello got in";

    /* the real rank 2 */
    tc_bootstrap_h raw;
    std::thread last([&] {
        ASSERT_EQ(UCS_OK, tc_bootstrap_tcp_create(root.address().c_str(), -1, 2, 3, 5.0, &raw));
    });
    EXPECT_EQ(UCS_OK, first.welcome());
    last.join();
    boot_ptr member(raw);
    root.thread.join();
    ASSERT_EQ(UCS_OK, root.status);
    EXPECT_EQ(refused + 3, tc_job_key_refusals());
    /* one line at once, then the other two counted in one more line (the
     * gate's last word), not a line each */
    EXPECT_EQ(1u, logs.count("refused 127.0.0.1:"));
    EXPECT_EQ(1u, logs.count("refused 2 connections in"));
    EXPECT_EQ(2u, logs.count("did not prove the job key"));
}

/* A silent client, a slow one and 200 connections of random bytes, all at
 * once, do not keep the members from meeting. */
TEST(job_key, silent_slow_and_random_clients_do_not_stall_the_members)
{
    scoped_env k("UCX_TC_JOB_KEY", kKey);
    tc_test::scoped_log_expect logs;
    root_thread root(2);

    unique_fd silent = connect_loopback(root.port);
    std::atomic<bool> done{false};
    std::atomic<int> dropped{0};
    std::thread slow([&] {
        unique_fd fd = connect_loopback(root.port);
        const char byte = 'T';
        while (!done.load()) {
            if (::send(fd.get(), &byte, 1, MSG_NOSIGNAL) != 1) {
                break;
            }
            std::this_thread::sleep_for(100ms);
        }
    });
    std::thread fuzz([&] {
        std::mt19937 rng(12345);
        for (int i = 0; i < 200; ++i) {
            unique_fd fd = connect_loopback(root.port);
            std::vector<uint8_t> junk(rng() % 96);
            for (auto &b : junk) {
                b = static_cast<uint8_t>(rng());
            }
            if (i % 3 == 0 && junk.size() >= 4) {
                const uint32_t magic = htonl(TC_BOOT_TCP_MAGIC); /* past the first check */
                std::memcpy(junk.data(), &magic, sizeof(magic));
            }
            (void)::send(fd.get(), junk.data(), junk.size(), MSG_NOSIGNAL);
            ::shutdown(fd.get(), SHUT_WR);
            /* one at a time: a flood would only overflow the listen backlog */
            if (wait_eof(fd.get(), 3000ms)) {
                ++dropped;
            }
        }
    });

    /* the strangers first (the root's backlog takes no more once it is
     * done), the silent and the slow one still connected */
    fuzz.join();
    const auto start = clock_type::now();
    tc_bootstrap_h raw = nullptr;
    const ucs_status_t status = tc_bootstrap_tcp_create(root.address().c_str(), -1, 1, 2, 5.0,
                                                        &raw);
    boot_ptr member(raw);
    const double took = seconds_since(start);
    done = true;
    slow.join();
    root.thread.join();
    ASSERT_EQ(UCS_OK, status);
    ASSERT_EQ(UCS_OK, root.status);
    EXPECT_LT(took, 2.0) << "the member waited behind strangers";
    EXPECT_EQ(200, dropped.load()) << "the root kept a stranger";

    /* and the pair works */
    uint32_t mine = 7, all[2] = {};
    std::thread peer([&] {
        uint32_t r = 9, a[2] = {};
        EXPECT_EQ(UCS_OK, tc_bootstrap_allgather(root.boot.get(), &r, sizeof(r), a));
    });
    EXPECT_EQ(UCS_OK, tc_bootstrap_allgather(member.get(), &mine, sizeof(mine), all));
    peer.join();
    EXPECT_EQ(9u, all[0]);
    EXPECT_EQ(7u, all[1]);
}

namespace {

/* A job of @a size ranks on @a listen_fd: the root and the members in
 * threads, each member's create timed; true when every rank got through. */
bool start_job(int listen_fd, int port, int size, std::vector<double> &took)
{
    const std::string root = "127.0.0.1:" + std::to_string(port);
    std::vector<ucs_status_t> status(size, UCS_ERR_NO_PROGRESS);
    std::vector<boot_ptr> boots(size);
    std::vector<std::thread> ranks;
    took.assign(size, 0);
    for (int r = 0; r < size; ++r) {
        ranks.emplace_back([&, r] {
            const auto start   = clock_type::now();
            tc_bootstrap_h raw = nullptr;
            status[r] = tc_bootstrap_tcp_create(r ? root.c_str() : nullptr, r ? -1 : listen_fd,
                                                r, size, 20.0, &raw);
            took[r]   = seconds_since(start);
            boots[r].reset(raw);
        });
    }
    for (auto &t : ranks) {
        t.join();
    }
    bool ok = true;
    for (int r = 0; r < size; ++r) {
        EXPECT_EQ(UCS_OK, status[r]) << "rank " << r;
        ok = ok && status[r] == UCS_OK;
    }
    /* and the job works */
    std::vector<std::thread> gather;
    for (int r = 0; ok && r < size; ++r) {
        gather.emplace_back([&, r] {
            uint32_t mine = 100 + r;
            std::vector<uint32_t> all(size);
            EXPECT_EQ(UCS_OK, tc_bootstrap_allgather(boots[r].get(), &mine, sizeof(mine),
                                                     all.data()));
            for (int i = 0; i < size; ++i) {
                EXPECT_EQ(100u + i, all[i]);
            }
        });
    }
    for (auto &t : gather) {
        t.join();
    }
    return ok;
}

double slowest(const std::vector<double> &took)
{
    return *std::max_element(took.begin(), took.end());
}

} // namespace

/* 2,000 connections from eight loopback addresses, silent or with a few
 * bytes of garbage, are open at the root, and more keep coming, while a
 * job of four ranks starts: every rank gets through, within 1 s of the time
 * the same job takes alone, and the refusals are a few log lines, counted. */
TEST(job_key, a_flood_of_2000_connections_does_not_hold_off_the_ranks)
{
    scoped_env k("UCX_TC_JOB_KEY", kKey);
    constexpr int kSize = 4;
    std::vector<double> alone, flooded;
    {
        int fd = -1;
        ASSERT_EQ(UCS_OK, tc_sock_listen("127.0.0.1:0", 1, &fd));
        unique_fd lfd(fd);
        ASSERT_TRUE(start_job(lfd.get(), tc_sock_local_port(lfd.get()), kSize, alone));
    }

    int fd = -1;
    ASSERT_EQ(UCS_OK, tc_sock_listen("127.0.0.1:0", 1, &fd));
    unique_fd lfd(fd);
    const int port = tc_sock_local_port(lfd.get());
    tc_test::scoped_log_expect logs;
    tc_test::flood f(port, sizeof(tc_boot_tcp_hello_t) - 1);
    /* the backlog takes the first ones before the root listens */
    f.open(2000);
    ASSERT_GE(f.open_count(), 1900u);
    f.start_churn();
    const bool ok = start_job(lfd.get(), port, kSize, flooded);
    f.stop_churn();
    ASSERT_TRUE(ok);

    std::printf("bootstrap of %d ranks: %.3f s alone, %.3f s with %zu connections open and "
                "%ld more during it\n", kSize, slowest(alone), slowest(flooded), f.open_count(),
                f.churned());
    EXPECT_LT(slowest(flooded), slowest(alone) + 1.0) << "the ranks waited behind the flood";
    size_t lines = 0;
    for (const auto &m : logs.messages()) {
        lines += m.find("bootstrap root: refused") != std::string::npos;
    }
    std::printf("refusal log lines: %zu\n", lines);
    EXPECT_LE(lines, 12u) << "one line per reason per interval, not per connection";
    EXPECT_GE(lines, 1u);
}

/* The gate's bounds are UCX_TC_HANDSHAKE_MAX and UCX_TC_HANDSHAKE_MAX_PER_SOURCE:
 * with 4 per source, ten silent connections from one address leave four in
 * handshake, the oldest six dropped as the newer ones arrive. */
TEST(job_key, the_handshake_bounds_are_parameters)
{
    scoped_env per_source("UCX_TC_HANDSHAKE_MAX_PER_SOURCE", "4");
    scoped_env max("UCX_TC_HANDSHAKE_MAX", "32");
    int fd = -1;
    ASSERT_EQ(UCS_OK, tc_sock_listen("127.0.0.1:0", 16, &fd));
    unique_fd lfd(fd);
    tc_sock_gate_t gate;
    auto greet = [](tc_sock_gate_conn_t*, void*) { return UCS_OK; };
    auto ready = [](tc_sock_gate_conn_t*, void*, const char**) {
        return TC_SOCK_GATE_REFUSED;   /* silent clients: never called */
    };
    ASSERT_EQ(UCS_OK, tc_sock_gate_init(&gate, "bounds test", lfd.get(), 0, 0, 8, 30.0,
                                        greet, nullptr));
    EXPECT_EQ(32u, gate.max_pending);
    EXPECT_EQ(4u, gate.max_per_source);
    std::vector<unique_fd> clients;
    tc_test::scoped_log_expect logs;
    for (int i = 0; i < 10; ++i) {
        int c = -1;
        const std::string addr = "127.0.0.1:" + std::to_string(tc_sock_local_port(lfd.get()));
        ASSERT_EQ(UCS_OK, tc_sock_connect(addr.c_str(), tc_sock_now() + 5.0, "bounds test", &c));
        clients.emplace_back(c);
        for (int k = 0; k < 5; ++k) {   /* accept it before the next one comes */
            tc_sock_gate_progress(&gate, 10, ready, nullptr);
        }
    }
    EXPECT_EQ(10u, gate.accepted);
    EXPECT_EQ(4u, gate.npending);
    EXPECT_EQ(6u, gate.dropped);
    EXPECT_EQ(6u, tc_sock_gate_refusals(
                          &gate, "too many handshakes from one address: dropped its oldest"));
    tc_sock_gate_cleanup(&gate);
}
