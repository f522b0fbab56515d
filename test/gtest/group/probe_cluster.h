/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Members of a group as real processes (test/helpers/group_fault_probe, or
 * another probe): started here over the TCP bootstrap, their output read
 * line by line, killed, stopped and joined; and what their results say
 * (hash chain, count, final view).
 */
#pragma once

#include "common.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <mutex>
#include <netinet/in.h>
#include <poll.h>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

namespace tc_test::probe {

using namespace std::chrono_literals;

struct member {
    pid_t       pid = -1;
    int         out = -1;      /* stdout+stderr */
    std::string text;
    int         exit_code = -2;
    bool        killed    = false;
};

class cluster {
public:
    cluster(int n, const std::string &tls, const std::string &args,
            const std::vector<std::pair<int, std::string>> &extra_env = {},
            const std::string &binary = "test/helpers/group_fault_probe")
        : members_(n), tls_(tls), binary_(binary)
    {
        members_.reserve(n + kMaxJoiners);   /* at() references stay valid */
        int lfd = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family      = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
        listen(lfd, 64);
        socklen_t len = sizeof(a);
        getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len);
        const std::string root = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
        for (int r = 0; r < n; ++r) {
            std::vector<std::string> extra;
            for (const auto &[rank, kv] : extra_env) {
                if (rank == r) {
                    extra.push_back(kv);
                }
            }
            members_[r] = spawn(args, extra, [&] {
                if (r != 0) {
                    close(lfd);
                }
                setenv("UCX_TC_SIZE", std::to_string(n).c_str(), 1);
                setenv("UCX_TC_RANK", std::to_string(r).c_str(), 1);
                setenv("UCX_TC_ROOT", root.c_str(), 1);
                if (r == 0) {
                    setenv("UCX_TC_LISTEN_FD", std::to_string(lfd).c_str(), 1);
                }
            });
        }
        close(lfd);
        reader_ = std::thread([this] { read_all(); });
    }

    /* A probe process with @a args, its output piped to us: in the child,
     * @a child_setup (bootstrap environment), the settings every member and
     * joiner runs with, then @a extra_env, which wins */
    member spawn(const std::string &args, const std::vector<std::string> &extra_env,
                 const std::function<void()> &child_setup) const
    {
        int p[2];
        EXPECT_EQ(0, pipe(p));
        member m;
        m.pid = fork();
        if (m.pid == 0) {
            dup2(p[1], 1);
            dup2(p[1], 2);
            close(p[0]);
            child_setup();
            exec_member(args, extra_env);
        }
        close(p[1]);
        m.out = p[0];
        return m;
    }

    [[noreturn]] void exec_member(const std::string &args,
                                  const std::vector<std::string> &extra_env) const
    {
        setenv("UCX_TLS", tls_.c_str(), 1);
        setenv("UCX_TC_SUSPECT_TIMEOUT", "500ms", 1);
        setenv("UCX_TC_HEARTBEAT_INTERVAL", "10ms", 1);
        setenv("UCX_TC_BOOTSTRAP_TIMEOUT", "5s", 1);
        for (const auto &kv : extra_env) {   /* these win */
            putenv(strdup(kv.c_str()));
        }
        std::string cmd = tc_test::build_path(binary_) + " " + args;
        execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), nullptr);
        _exit(127);
    }

    /* A process outside the bootstrap that joins with @a args (and
     * @a extra_env, which wins); its index */
    int start_joiner(const std::string &args, const std::vector<std::string> &extra_env = {})
    {
        member m = spawn(args, extra_env, [] {
            for (auto v : {"UCX_TC_SIZE", "UCX_TC_RANK", "UCX_TC_ROOT", "UCX_TC_LISTEN_FD"}) {
                unsetenv(v);
            }
        });
        std::lock_guard<std::mutex> lock(mutex_);
        EXPECT_LT(members_.size(), members_.capacity());
        members_.push_back(std::move(m));
        return static_cast<int>(members_.size()) - 1;
    }

    ~cluster()
    {
        for (auto &m : members_) {
            if (m.exit_code == -2 && m.pid > 0) {
                kill(m.pid, SIGKILL);
            }
        }
        wait_all(10s);
        if (reader_.joinable()) {
            reader_.join();
        }
    }

    /* wait until every listed member printed @a needle */
    bool wait_for(const std::vector<int> &ranks, const std::string &needle,
                  std::chrono::milliseconds timeout)
    {
        auto deadline = std::chrono::steady_clock::now() + timeout;
        while (std::chrono::steady_clock::now() < deadline) {
            bool all = true;
            {
                std::lock_guard<std::mutex> lock(mutex_);
                for (int r : ranks) {
                    all = all && members_[r].text.find(needle) != std::string::npos;
                }
            }
            if (all) {
                return true;
            }
            std::this_thread::sleep_for(2ms);
        }
        return false;
    }

    void signal(int r, int sig)
    {
        kill(members_[r].pid, sig);
        if (sig == SIGKILL) {
            members_[r].killed = true;
        }
    }

    void wait_all(std::chrono::seconds timeout)
    {
        auto deadline = std::chrono::steady_clock::now() + timeout;
        for (auto &m : members_) {   /* no joiner starts meanwhile */
            while (m.exit_code == -2) {
                int st;
                pid_t w = waitpid(m.pid, &st, WNOHANG);
                if (w == m.pid) {
                    m.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
                    break;
                }
                if (std::chrono::steady_clock::now() > deadline) {
                    kill(m.pid, SIGKILL);
                }
                std::this_thread::sleep_for(5ms);
            }
        }
        /* an exited member's last lines may still be in its pipe: the
         * results are read only once the reader saw every pipe's end */
        const auto drained_by = std::chrono::steady_clock::now() + 5s;
        while (std::chrono::steady_clock::now() < drained_by) {
            bool drained = true;
            {
                std::lock_guard<std::mutex> lock(mutex_);
                for (const auto &m : members_) {
                    drained = drained && m.out < 0;
                }
            }
            if (drained) {
                break;
            }
            std::this_thread::sleep_for(2ms);
        }
        done_ = true;
    }

    const member &at(int r)
    {
        std::lock_guard<std::mutex> lock(mutex_);
        return members_[r];
    }

    std::string all_output()
    {
        std::lock_guard<std::mutex> lock(mutex_);
        std::string s;
        for (size_t r = 0; r < members_.size(); ++r) {
            s += "---- rank " + std::to_string(r) + " (exit " +
                 std::to_string(members_[r].exit_code) + ")\n" + members_[r].text;
        }
        return s;
    }

private:
    void read_all()
    {
        for (;;) {
            std::vector<pollfd> fds;
            {
                std::lock_guard<std::mutex> lock(mutex_);
                for (auto &m : members_) {
                    fds.push_back({m.out, POLLIN, 0});  /* -1: ignored by poll */
                }
            }
            if (poll(fds.data(), fds.size(), 100) <= 0) {
                if (done_) {
                    break;
                }
                continue;
            }
            for (size_t i = 0; i < fds.size(); ++i) {
                if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) {
                    continue;
                }
                char buf[4096];
                ssize_t n = read(fds[i].fd, buf, sizeof(buf));
                std::lock_guard<std::mutex> lock(mutex_);
                if (n <= 0) {
                    close(fds[i].fd);
                    members_[i].out = -1;
                    continue;
                }
                members_[i].text.append(buf, n);
            }
        }
    }

    static constexpr size_t kMaxJoiners = 8;

    std::vector<member> members_;
    std::string         tls_;
    std::string         binary_;
    std::mutex          mutex_;
    std::thread         reader_;
    std::atomic<bool>   done_{false};
};

struct outcome {
    std::string chain, final_view;
    unsigned long count = 0, views = 0, trimmed = 0;
};

inline outcome parse(const std::string &text)
{
    outcome o;
    std::smatch m;
    std::regex result(
            R"(result chain ([0-9a-f]+) count (\d+) views (\d+) trimmed (\d+) joins \d+ status Success)");
    if (std::regex_search(text, m, result)) {
        o.chain   = m[1];
        o.count   = std::stoul(m[2]);
        o.views   = std::stoul(m[3]);
        o.trimmed = std::stoul(m[4]);
    }
    std::regex view(R"(view (\d+) ([0-9,]+))");
    for (std::sregex_iterator it(text.begin(), text.end(), view), end; it != end; ++it) {
        o.final_view = (*it)[1].str() + " " + (*it)[2].str();
    }
    return o;
}

/* Survivors: exit 0, identical chains and final views, without @a dead. */
inline void expect_survivors_agree(cluster &c, int n, const std::set<int> &dead)
{
    std::string chain, view;
    for (int r = 0; r < n; ++r) {
        if (dead.count(r)) {
            continue;
        }
        const auto &m = c.at(r);
        ASSERT_EQ(0, m.exit_code) << c.all_output();
        auto o = parse(m.text);
        ASSERT_FALSE(o.chain.empty()) << c.all_output();
        EXPECT_GE(o.views, 1u) << c.all_output();
        if (chain.empty()) {
            chain = o.chain;
            view  = o.final_view;
        }
        EXPECT_EQ(chain, o.chain) << "survivors delivered different sequences\n" << c.all_output();
        EXPECT_EQ(view, o.final_view) << c.all_output();
        std::set<int> in_view;
        const std::string list = o.final_view.substr(o.final_view.find(' ') + 1);
        for (size_t pos = 0; pos < list.size();) {
            size_t comma = list.find(',', pos);
            in_view.insert(std::stoi(list.substr(pos, comma - pos)));
            pos = (comma == std::string::npos) ? list.size() : comma + 1;
        }
        for (int d : dead) {
            EXPECT_EQ(0u, in_view.count(d)) << "failed member " << d << " is still in view "
                                            << o.final_view;
        }
        EXPECT_EQ(static_cast<size_t>(n) - dead.size(), in_view.size()) << o.final_view;
    }
}

/* As expect_survivors_agree, where a member that the others suspected
 * wrongly (it was starved for longer than the suspicion timeout: a CPU hog
 * and other tests beside it) may also be out, if it was told so: exit 3,
 * "expelled". Virtual synchrony turns a false suspicion into an exclusion;
 * what must hold is that the survivors, a majority, agree without the
 * dead. */
inline void expect_survivors_agree_despite_false_suspicion(cluster &c, int n,
                                                           const std::set<int> &dead)
{
    std::set<int> out = dead;
    for (int r = 0; r < n; ++r) {
        const auto &m = c.at(r);
        if (!dead.count(r) && m.exit_code == 3 &&
            m.text.find("expelled from the group") != std::string::npos) {
            out.insert(r);
            std::printf("rank %d was suspected wrongly and expelled (told so)\n", r);
        }
    }
    ASSERT_LT(2 * out.size(), static_cast<size_t>(n)) << c.all_output();
    expect_survivors_agree(c, n, out);
}

/* Some member of @a ranks printed @a text (a blame is logged by the
 * members that read the bad value, not necessarily by all). */
inline bool some_member_printed(cluster &c, std::initializer_list<int> ranks,
                                const std::string &text)
{
    for (int r : ranks) {
        if (c.at(r).text.find(text) != std::string::npos) {
            return true;
        }
    }
    return false;
}

inline std::vector<int> all_ranks(int n)
{
    std::vector<int> v;
    for (int r = 0; r < n; ++r) {
        v.push_back(r);
    }
    return v;
}


/* A free block of @a n consecutive TCP ports for the members' join ports,
 * below the kernel's ephemeral range (32768-60999), where an outgoing
 * connection could take one between this check and the member's bind */
inline int free_port_base(int n)
{
    std::mt19937 rng(static_cast<unsigned>(getpid()) ^
                     static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count()));
    for (int attempt = 0; attempt < 100; ++attempt) {
        const int base = std::uniform_int_distribution<int>(20000, 32000 - n)(rng);
        bool free = true;
        for (int i = 0; i < n && free; ++i) {
            int fd = socket(AF_INET, SOCK_STREAM, 0);
            sockaddr_in a{};
            a.sin_family      = AF_INET;
            a.sin_addr.s_addr = htonl(INADDR_ANY);
            a.sin_port        = htons(static_cast<uint16_t>(base + i));
            free = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
            close(fd);
        }
        if (free) {
            return base;
        }
    }
    return 0;
}

} // namespace tc_test::probe
