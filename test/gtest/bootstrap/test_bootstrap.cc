/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Bootstrap backends: in-process (threads), single member, TCP in one process
 * (threads and raw sockets) and TCP across processes started by twochains-run
 * running test/helpers/boot_probe. Every failure case is bounded in time.
 */
#include "common.h"
#include "bootstrap/boot_sockets.h"

#include <bootstrap/tcp/tcp_wire.h>
#include <twochains/bootstrap.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using namespace tc_test;   /* scoped_env, the loopback sockets of boot_sockets.h */


struct domain_deleter {
    void operator()(tc_bootstrap_inproc_domain *d) const { tc_bootstrap_inproc_domain_destroy(d); }
};
using domain_ptr = std::unique_ptr<tc_bootstrap_inproc_domain, domain_deleter>;

struct malloc_deleter {
    void operator()(void *p) const { std::free(p); }
};
using malloc_ptr = std::unique_ptr<void, malloc_deleter>;



/* A clean slate of UCX_TC_ bootstrap variables. */
struct clean_boot_env {
    scoped_env size{"UCX_TC_SIZE", nullptr}, rank{"UCX_TC_RANK", nullptr},
            root{"UCX_TC_ROOT", nullptr}, lfd{"UCX_TC_LISTEN_FD", nullptr},
            kind{"UCX_TC_BOOTSTRAP", nullptr}, timeout{"UCX_TC_BOOTSTRAP_TIMEOUT", nullptr};
};

uint8_t pattern(int rank, int round, size_t i)
{
    return static_cast<uint8_t>(rank * 59 + round * 13 + static_cast<int>(i) * 7 + 1);
}

/* allgather, allgatherv and barrier, checked byte for byte. */
void exchange_and_check(tc_bootstrap_h boot, int round, size_t fixed_len, size_t var_scale)
{
    const int rank = tc_bootstrap_rank(boot), size = tc_bootstrap_size(boot);
    const auto usize = static_cast<size_t>(size);

    std::vector<uint8_t> mine(fixed_len), all(fixed_len * usize);
    for (size_t i = 0; i < fixed_len; ++i) {
        mine[i] = pattern(rank, round, i);
    }
    ASSERT_EQ(UCS_OK, tc_bootstrap_allgather(boot, mine.data(), fixed_len, all.data()))
            << "rank " << rank << " round " << round;
    for (int r = 0; r < size; ++r) {
        for (size_t i = 0; i < fixed_len; ++i) {
            ASSERT_EQ(pattern(r, round, i), all[static_cast<size_t>(r) * fixed_len + i])
                    << "allgather: rank " << rank << " sees byte " << i << " of rank " << r;
        }
    }

    auto var_len = [&](int r) { return static_cast<size_t>((r * 5 + round) % 9) * var_scale; };
    std::vector<uint8_t> vmine(var_len(rank));
    for (size_t i = 0; i < vmine.size(); ++i) {
        vmine[i] = pattern(rank, round + 1000, i);
    }
    std::vector<size_t> lens(usize);
    void *raw = nullptr;
    ASSERT_EQ(UCS_OK, tc_bootstrap_allgatherv(boot, vmine.data(), vmine.size(), &raw,
                                              lens.data()));
    malloc_ptr owned(raw);
    const auto *bytes = static_cast<const uint8_t*>(raw);
    size_t off        = 0;
    for (int r = 0; r < size; ++r) {
        ASSERT_EQ(var_len(r), lens[static_cast<size_t>(r)]) << "allgatherv length of rank " << r;
        for (size_t i = 0; i < lens[static_cast<size_t>(r)]; ++i) {
            ASSERT_EQ(pattern(r, round + 1000, i), bytes[off + i])
                    << "allgatherv: rank " << rank << " sees byte " << i << " of rank " << r;
        }
        off += lens[static_cast<size_t>(r)];
    }

    ASSERT_EQ(UCS_OK, tc_bootstrap_barrier(boot));
}

/* Run @a body(rank) in @a n threads and join them. */
template <typename F> void run_members(int n, F body)
{
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
        threads.emplace_back(body, r);
    }
    for (auto &t : threads) {
        t.join();
    }
}


/* --- in-process ------------------------------------------------------------ */

TEST(bootstrap_inproc, four_threads_allgather_allgatherv_barrier_100_rounds)
{
    constexpr int kSize = 4;
    tc_bootstrap_inproc_domain_h raw_domain;
    ASSERT_EQ(UCS_OK, tc_bootstrap_inproc_domain_create(kSize, 10.0, &raw_domain));
    domain_ptr domain(raw_domain);

    run_members(kSize, [&](int rank) {
        tc_bootstrap_h raw;
        ASSERT_EQ(UCS_OK, tc_bootstrap_inproc_create(domain.get(), rank, &raw));
        boot_ptr boot(raw);
        EXPECT_EQ(rank, tc_bootstrap_rank(boot.get()));
        EXPECT_EQ(kSize, tc_bootstrap_size(boot.get()));
        EXPECT_STREQ("inproc", tc_bootstrap_name(boot.get()));
        for (int round = 0; round < 100; ++round) {
            exchange_and_check(boot.get(), round, 1 + static_cast<size_t>(round % 33), 3);
            if (::testing::Test::HasFatalFailure()) {
                return;
            }
        }
    });
}

TEST(bootstrap_inproc, length_mismatch_gives_invalid_param_on_every_rank)
{
    constexpr int kSize = 4;
    tc_bootstrap_inproc_domain_h raw_domain;
    ASSERT_EQ(UCS_OK, tc_bootstrap_inproc_domain_create(kSize, 10.0, &raw_domain));
    domain_ptr domain(raw_domain);
    tc_test::scoped_log_expect expect;

    ucs_status_t status[kSize];
    ucs_status_t after[kSize];
    run_members(kSize, [&](int rank) {
        tc_bootstrap_h raw;
        ASSERT_EQ(UCS_OK, tc_bootstrap_inproc_create(domain.get(), rank, &raw));
        boot_ptr boot(raw);
        size_t len = (rank == 2) ? 9 : 8;
        std::vector<uint8_t> mine(len, static_cast<uint8_t>(rank)), all(9 * kSize);
        status[rank] = tc_bootstrap_allgather(boot.get(), mine.data(), len, all.data());
        after[rank]  = tc_bootstrap_barrier(boot.get());   // the domain is still usable
    });

    for (int r = 0; r < kSize; ++r) {
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, status[r]) << "rank " << r;
        EXPECT_EQ(UCS_OK, after[r]) << "rank " << r;
    }
    EXPECT_EQ(1u, expect.count("rank 2 contributed 9 bytes")); // said once, not per rank
}

TEST(bootstrap_inproc, member_that_never_arrives_times_out_the_others)
{
    constexpr int kSize = 3;
    tc_bootstrap_inproc_domain_h raw_domain;
    ASSERT_EQ(UCS_OK, tc_bootstrap_inproc_domain_create(kSize, 0.3, &raw_domain));
    domain_ptr domain(raw_domain);
    tc_test::scoped_log_expect expect;

    ucs_status_t status[2], again[2];
    double elapsed[2];
    run_members(2, [&](int rank) {      // rank 2 joins but never calls
        tc_bootstrap_h raw;
        ASSERT_EQ(UCS_OK, tc_bootstrap_inproc_create(domain.get(), rank, &raw));
        boot_ptr boot(raw);
        auto start    = clock_type::now();
        status[rank]  = tc_bootstrap_barrier(boot.get());
        elapsed[rank] = seconds_since(start);
        again[rank]   = tc_bootstrap_barrier(boot.get());  // failed for good, at once
    });

    for (int r = 0; r < 2; ++r) {
        EXPECT_EQ(UCS_ERR_TIMED_OUT, status[r]) << "rank " << r;
        EXPECT_EQ(UCS_ERR_TIMED_OUT, again[r]) << "rank " << r;
        EXPECT_GE(elapsed[r], 0.25) << "rank " << r;
        EXPECT_LT(elapsed[r], 2.0) << "rank " << r;
    }
    EXPECT_EQ(1u, expect.count("timed out"));
}

TEST(bootstrap_inproc, duplicate_and_out_of_range_ranks_are_refused)
{
    tc_bootstrap_inproc_domain_h raw_domain;
    ASSERT_EQ(UCS_OK, tc_bootstrap_inproc_domain_create(2, 1.0, &raw_domain));
    domain_ptr domain(raw_domain);

    tc_bootstrap_h raw;
    ASSERT_EQ(UCS_OK, tc_bootstrap_inproc_create(domain.get(), 1, &raw));
    boot_ptr first(raw);

    tc_test::scoped_log_expect expect;
    EXPECT_EQ(UCS_ERR_ALREADY_EXISTS, tc_bootstrap_inproc_create(domain.get(), 1, &raw));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, tc_bootstrap_inproc_create(domain.get(), 2, &raw));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, tc_bootstrap_inproc_create(domain.get(), -1, &raw));
    EXPECT_EQ(1u, expect.count("rank 1 has already joined"));
    EXPECT_EQ(2u, expect.count("out of range"));

    // a rank that left can join again
    first.reset();
    EXPECT_EQ(UCS_OK, tc_bootstrap_inproc_create(domain.get(), 1, &raw));
    first.reset(raw);
}

TEST(bootstrap_inproc, members_outlive_the_domain_handle)
{
    tc_bootstrap_inproc_domain_h raw_domain;
    ASSERT_EQ(UCS_OK, tc_bootstrap_inproc_domain_create(1, 1.0, &raw_domain));
    tc_bootstrap_h raw;
    ASSERT_EQ(UCS_OK, tc_bootstrap_inproc_create(raw_domain, 0, &raw));
    boot_ptr boot(raw);
    tc_bootstrap_inproc_domain_destroy(raw_domain);     // the member keeps it alive
    exchange_and_check(boot.get(), 0, 5, 1);
}

/* --- single member and the environment ------------------------------------- */

TEST(bootstrap_env, single_member_without_size)
{
    clean_boot_env env;
    tc_bootstrap_h raw;
    ASSERT_EQ(UCS_OK, tc_bootstrap_create_from_env(&raw));
    boot_ptr boot(raw);
    EXPECT_STREQ("single", tc_bootstrap_name(boot.get()));
    EXPECT_EQ(0, tc_bootstrap_rank(boot.get()));
    EXPECT_EQ(1, tc_bootstrap_size(boot.get()));
    exchange_and_check(boot.get(), 0, 12, 2);
    exchange_and_check(boot.get(), 1, 0, 0);

    scoped_env size1("UCX_TC_SIZE", "1");
    ASSERT_EQ(UCS_OK, tc_bootstrap_create_from_env(&raw));
    boot_ptr boot1(raw);
    EXPECT_STREQ("single", tc_bootstrap_name(boot1.get()));
}

TEST(bootstrap_env, rank_out_of_range_is_an_error)
{
    clean_boot_env env;
    scoped_env size("UCX_TC_SIZE", "3"), rank("UCX_TC_RANK", "3"),
            root("UCX_TC_ROOT", "127.0.0.1:1");
    tc_test::scoped_log_expect expect;
    tc_bootstrap_h raw;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, tc_bootstrap_create_from_env(&raw));
    EXPECT_EQ(1u, expect.count("UCX_TC_RANK=3 is out of range"));
}

TEST(bootstrap_env, missing_root_is_an_error)
{
    clean_boot_env env;
    scoped_env size("UCX_TC_SIZE", "3"), rank("UCX_TC_RANK", "1");
    tc_test::scoped_log_expect expect;
    tc_bootstrap_h raw;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, tc_bootstrap_create_from_env(&raw));
    EXPECT_EQ(1u, expect.count("UCX_TC_ROOT"));
}

TEST(bootstrap_env, missing_rank_is_an_error)
{
    clean_boot_env env;
    scoped_env size("UCX_TC_SIZE", "2"), root("UCX_TC_ROOT", "127.0.0.1:1");
    tc_test::scoped_log_expect expect;
    tc_bootstrap_h raw;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, tc_bootstrap_create_from_env(&raw));
    EXPECT_EQ(1u, expect.count("UCX_TC_RANK is not set"));
}

TEST(bootstrap_env, unknown_backend_and_port_zero_are_errors)
{
    clean_boot_env env;
    tc_test::scoped_log_expect expect;
    tc_bootstrap_h raw;
    {
        scoped_env kind("UCX_TC_BOOTSTRAP", "carrier-pigeon");
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, tc_bootstrap_create_from_env(&raw));
    }
    EXPECT_EQ(1u, expect.count("carrier-pigeon"));

    EXPECT_EQ(UCS_ERR_INVALID_PARAM, tc_bootstrap_tcp_create("127.0.0.1:0", -1, 0, 2, 1.0, &raw));
    EXPECT_EQ(1u, expect.count("port 0 is not allowed"));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, tc_bootstrap_tcp_create("no-port", -1, 1, 2, 1.0, &raw));
    EXPECT_EQ(1u, expect.count("expected host:port"));
}

/* --- TCP inside one process ------------------------------------------------- */

TEST(bootstrap_tcp, three_threads_over_loopback)
{
    constexpr int kSize = 3;
    int port;
    unique_fd lfd = listen_loopback(port);
    const std::string root = "127.0.0.1:" + std::to_string(port);

    run_members(kSize, [&](int rank) {
        tc_bootstrap_h raw;
        ASSERT_EQ(UCS_OK, tc_bootstrap_tcp_create(root.c_str(), (rank == 0) ? lfd.get() : -1,
                                                  rank, kSize, 10.0, &raw));
        boot_ptr boot(raw);
        EXPECT_STREQ("tcp", tc_bootstrap_name(boot.get()));
        for (int round = 0; round < 20; ++round) {
            // large rounds make every socket do partial reads and writes
            size_t scale = (round % 5 == 4) ? 64 * 1024 : 1;
            exchange_and_check(boot.get(), round, 1 + static_cast<size_t>(round), scale);
            if (::testing::Test::HasFatalFailure()) {
                return;
            }
        }
    });
}

TEST(bootstrap_tcp, unreachable_root_fails_within_the_timeout_and_logs_once)
{
    int port;
    {
        unique_fd probe = listen_loopback(port);   // a port nobody listens on afterwards
    }
    const std::string root = "127.0.0.1:" + std::to_string(port);
    tc_test::scoped_log_expect expect;
    tc_bootstrap_h raw;

    auto start          = clock_type::now();
    ucs_status_t status = tc_bootstrap_tcp_create(root.c_str(), -1, 1, 2, 0.5, &raw);
    double elapsed      = seconds_since(start);

    EXPECT_EQ(UCS_ERR_UNREACHABLE, status);
    EXPECT_GE(elapsed, 0.3);
    EXPECT_LT(elapsed, 2.0);
    EXPECT_EQ(1u, expect.messages().size()) << "one error, not one per retry";
    EXPECT_EQ(1u, expect.count("bootstrap rank 1: cannot connect to " + root));
}

TEST(bootstrap_tcp, root_times_out_waiting_for_a_missing_rank)
{
    int port;
    unique_fd lfd = listen_loopback(port);
    tc_test::scoped_log_expect expect;
    tc_bootstrap_h raw;

    auto start = clock_type::now();
    EXPECT_EQ(UCS_ERR_TIMED_OUT, tc_bootstrap_tcp_create(nullptr, lfd.get(), 0, 3, 0.3, &raw));
    EXPECT_LT(seconds_since(start), 2.0);
    EXPECT_EQ(1u, expect.count("waiting for rank(s) 1,2 of 3"));
}

TEST(bootstrap_tcp, garbage_on_the_socket_is_rejected_and_the_root_carries_on)
{
    int port;
    unique_fd lfd = listen_loopback(port);
    const std::string root = "127.0.0.1:" + std::to_string(port);
    tc_test::scoped_log_expect expect;

    boot_ptr root_boot;
    ucs_status_t root_status = UCS_ERR_NO_PROGRESS;
    std::thread root_thread([&] {
        tc_bootstrap_h raw = nullptr;
        root_status        = tc_bootstrap_tcp_create(nullptr, lfd.get(), 0, 2, 5.0, &raw);
        root_boot.reset(raw);
    });

    // a short hello, then hang-up (the root counts and logs refusals one
    // line per reason per interval: each reason here is its first)
    unique_fd shorty = connect_loopback(port);
    ASSERT_EQ(5, ::send(shorty.get(), "hello", 5, MSG_NOSIGNAL));
    ::shutdown(shorty.get(), SHUT_WR);
    EXPECT_TRUE(wait_eof(shorty.get(), 3000ms)) << "the root did not drop a short hello";

    // junk long enough to be judged as a hello
    unique_fd junk = connect_loopback(port);
    const char text[] = "GET / HTTP/1.0\r\nHost: example.invalid\r\nUser-Agent: probe\r\n"
                        "Accept: */*\r\nConnection: close\r\n\r\n";
    static_assert(sizeof(text) >= sizeof(tc_boot_tcp_hello_t));
    ASSERT_EQ(static_cast<ssize_t>(sizeof(text)),
              ::send(junk.get(), text, sizeof(text), MSG_NOSIGNAL));
    EXPECT_TRUE(wait_eof(junk.get(), 3000ms)) << "the root did not drop junk";

    // a real member still gets in, and the pair works
    tc_bootstrap_h raw;
    ASSERT_EQ(UCS_OK, tc_bootstrap_tcp_create(root.c_str(), -1, 1, 2, 5.0, &raw));
    boot_ptr member(raw);
    root_thread.join();
    ASSERT_EQ(UCS_OK, root_status);

    std::thread t([&] { exchange_and_check(root_boot.get(), 0, 8, 1); });
    exchange_and_check(member.get(), 0, 8, 1);
    t.join();

    EXPECT_EQ(1u, expect.count("hung up in the middle of its first message"));
    EXPECT_EQ(1u, expect.count("not a bootstrap hello"));
    EXPECT_EQ(2u, expect.messages().size());
}

TEST(bootstrap_tcp, oversized_length_from_a_member_is_refused_without_allocating)
{
    int port;
    unique_fd lfd = listen_loopback(port);
    tc_test::scoped_log_expect expect;

    ucs_status_t root_status = UCS_ERR_NO_PROGRESS, coll_status = UCS_ERR_NO_PROGRESS;
    std::thread root_thread([&] {
        tc_bootstrap_h raw = nullptr;
        root_status        = tc_bootstrap_tcp_create(nullptr, lfd.get(), 0, 2, 5.0, &raw);
        boot_ptr boot(raw);
        if (root_status == UCS_OK) {
            char one = 1;
            void *all;
            size_t lens[2];
            coll_status = tc_bootstrap_allgatherv(boot.get(), &one, 1, &all, lens);
        }
    });

    // a hand-made member: a valid hello, then a frame claiming 1 TiB
    unique_fd fd = connect_loopback(port);
    tc_boot_tcp_challenge_t challenge;
    ASSERT_EQ(sizeof(challenge), read_full(fd.get(), &challenge, sizeof(challenge), 3000ms));
    /* no job key here: a proof of zeros, as an unkeyed member sends */
    tc_boot_tcp_hello_t hello{htonl(TC_BOOT_TCP_MAGIC), htons(TC_BOOT_TCP_VERSION), 0,
                              static_cast<int32_t>(htonl(1)), static_cast<int32_t>(htonl(2)), {},
                              {}};
    ASSERT_EQ(static_cast<ssize_t>(sizeof(hello)),
              ::send(fd.get(), &hello, sizeof(hello), MSG_NOSIGNAL));
    tc_boot_tcp_verdict_t verdict;
    ASSERT_EQ(sizeof(verdict), read_full(fd.get(), &verdict, sizeof(verdict), 3000ms));
    EXPECT_EQ(UCS_OK, static_cast<int32_t>(ntohl(static_cast<uint32_t>(verdict.status))));
    tc_boot_tcp_status_t welcome;
    ASSERT_EQ(sizeof(welcome), read_full(fd.get(), &welcome, sizeof(welcome), 3000ms));
    EXPECT_EQ(UCS_OK, static_cast<int32_t>(ntohl(static_cast<uint32_t>(welcome.status))));

    tc_boot_tcp_data_t data{htonl(TC_BOOT_TCP_MAGIC), htonl(1), htobe64(1ull << 40)};
    auto start = clock_type::now();
    ASSERT_EQ(static_cast<ssize_t>(sizeof(data)),
              ::send(fd.get(), &data, sizeof(data), MSG_NOSIGNAL));

    tc_boot_tcp_status_t reply;
    ASSERT_EQ(sizeof(reply), read_full(fd.get(), &reply, sizeof(reply), 3000ms));
    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT, static_cast<int32_t>(ntohl(static_cast<uint32_t>(reply.status))));
    std::string reason(ntohl(reply.reason_len), '\0');
    ASSERT_EQ(reason.size(), read_full(fd.get(), reason.data(), reason.size(), 3000ms));
    EXPECT_NE(std::string::npos, reason.find("above the limit")) << reason;
    EXPECT_TRUE(wait_eof(fd.get(), 3000ms)) << "the root did not hang up";
    fd.reset();

    root_thread.join();
    EXPECT_LT(seconds_since(start), 2.0);
    EXPECT_EQ(UCS_OK, root_status);
    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT, coll_status);
    EXPECT_EQ(1u, expect.count("above the limit"));
}

/* --- TCP across processes, under twochains-run ------------------------------ */

struct probe_run {
    tc_test::run_result result;
    double              seconds;
};

probe_run run_probe(int nranks, const std::string &probe_args, const char *boot_timeout = "5s")
{
    std::string cmd = "UCX_TC_BOOTSTRAP_TIMEOUT=" + std::string(boot_timeout) + " " +
                      tc_test::build_path("src/tools/twochains-run") + " -n " +
                      std::to_string(nranks) + " --timeout 20 -- " +
                      tc_test::build_path("test/helpers/boot_probe") + " " + probe_args;
    auto start = clock_type::now();
    auto res   = tc_test::run_command(cmd);
    return {res, seconds_since(start)};
}

size_t count_lines_with(const std::string &out, const std::string &prefix,
                        const std::string &needle)
{
    size_t n = 0, pos = 0;
    while (pos < out.size()) {
        size_t end       = out.find('\n', pos);
        std::string line = out.substr(pos, (end == std::string::npos ? out.size() : end) - pos);
        if (line.starts_with(prefix) && (line.find(needle) != std::string::npos)) {
            ++n;
        }
        pos = (end == std::string::npos) ? out.size() : end + 1;
    }
    return n;
}

TEST(bootstrap_tcp_procs, three_processes_exchange_exactly)
{
    auto run = run_probe(3, "");
    EXPECT_EQ(0, run.result.exit_code) << run.result.output;
    for (int r = 0; r < 3; ++r) {
        std::string prefix = "[" + std::to_string(r) + "] ";
        EXPECT_EQ(1u, count_lines_with(run.result.output, prefix, "rounds of 3 ranks ok"))
                << run.result.output;
    }
}

TEST(bootstrap_tcp_procs, allgather_length_mismatch_fails_on_every_rank)
{
    auto run = run_probe(3, "--mismatch-rank 1");
    EXPECT_EQ(0, run.result.exit_code) << run.result.output;
    for (int r = 0; r < 3; ++r) {
        std::string prefix = "[" + std::to_string(r) + "] ";
        EXPECT_EQ(1u, count_lines_with(run.result.output, prefix, "length mismatch detected"))
                << run.result.output;
    }
    EXPECT_EQ(1u, count_lines_with(run.result.output, "[0] ", "rank 1 contributed 17 bytes"))
            << run.result.output;
}

TEST(bootstrap_tcp_procs, duplicate_rank_fails_everyone_quickly)
{
    auto run = run_probe(3, "--dup-rank");
    EXPECT_EQ(0, run.result.exit_code) << run.result.output;
    EXPECT_EQ(3u, count_lines_with(run.result.output, "[", "create failed as expected"))
            << run.result.output;
    EXPECT_EQ(1u, count_lines_with(run.result.output, "[0] ", "Element already exists"))
            << run.result.output;
    EXPECT_NE(std::string::npos, run.result.output.find("duplicate rank 1")) << run.result.output;
    EXPECT_LT(run.seconds, 4.0);
}

TEST(bootstrap_tcp_procs, size_mismatch_in_hello_fails_everyone)
{
    auto run = run_probe(3, "--bad-size", "2s");
    EXPECT_EQ(0, run.result.exit_code) << run.result.output;
    EXPECT_EQ(3u, count_lines_with(run.result.output, "[", "create failed as expected"))
            << run.result.output;
    EXPECT_NE(std::string::npos, run.result.output.find("announced size 4, the root has size 3"))
            << run.result.output;
    EXPECT_LT(run.seconds, 4.0);
}

TEST(bootstrap_tcp_procs, peer_that_dies_mid_exchange_fails_the_others_quickly)
{
    // rank 2 exits 0 after create, so only the survivors' failure makes the
    // launcher fail, and it must come from EOF, not from the 5 s timeout.
    // The first survivor to fail makes the launcher stop the other, so only
    // the root's log (written before it tells rank 1) is certain to be there.
    auto run = run_probe(3, "--vanish-rank 2", "5s");
    EXPECT_EQ(3, run.result.exit_code) << run.result.output;
    EXPECT_EQ(1u, count_lines_with(run.result.output, "[0] ",
                                   "rank 2 closed its connection during collective 1"))
            << run.result.output;
    EXPECT_LE(1u, count_lines_with(run.result.output, "[", "allgather failed as expected"))
            << run.result.output;
    EXPECT_EQ(0u, count_lines_with(run.result.output, "[", "succeeded although"))
            << run.result.output;
    EXPECT_LT(run.seconds, 3.0);
}

} // namespace
