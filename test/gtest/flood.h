/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * A flood of connections at a handshake port (the bootstrap root's, a join
 * sponsor's), from several loopback addresses (127.0.0.2 and up: all of
 * 127/8 is loopback): silent ones, and ones that send a few bytes of
 * garbage and then nothing. Opened without blocking, kept open, and, while
 * churning, new ones opened without pause.
 */
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

namespace tc_test {

class flood {
public:
    static constexpr int kSources = 8;   /* 127.0.0.2 .. 127.0.0.9 */

    /* @a garbage_max: at most this many bytes of garbage (fewer than a
     * whole first message, so that it stays in handshake) */
    flood(int port, size_t garbage_max) : port_(port), garbage_max_(garbage_max)
    {
        /* 2,000 here, as many at the listener in this process */
        rlimit rl{};
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
            rl.rlim_cur = rl.rlim_max;
            setrlimit(RLIMIT_NOFILE, &rl);
        }
    }
    ~flood()
    {
        stop_churn();
        for (int fd : fds_) {
            ::close(fd);
        }
    }
    flood(const flood &)            = delete;
    flood &operator=(const flood &) = delete;

    /* @a n more connections, every other one with garbage */
    void open(int n)
    {
        for (int i = 0; i < n; ++i) {
            const int fd = connect_one(i % 2 == 1);
            if (fd >= 0) {
                fds_.push_back(fd);
            }
        }
    }

    /* new silent or garbage connections without pause, each closed at once
     * (the root drops them anyway) */
    void start_churn()
    {
        churning_ = true;
        churn_    = std::thread([this] {
            for (int i = 0; churning_; ++i) {
                const int fd = connect_one(i % 2 == 1);
                churned_ += fd >= 0;
                if (fd >= 0) {
                    churn_fds_.push_back(fd);
                }
                if (churn_fds_.size() >= 256) {   /* keep our own fds bounded */
                    ::close(churn_fds_.front());
                    churn_fds_.erase(churn_fds_.begin());
                }
            }
            for (int fd : churn_fds_) {
                ::close(fd);
            }
            churn_fds_.clear();
        });
    }
    void stop_churn()
    {
        churning_ = false;
        if (churn_.joinable()) {
            churn_.join();
        }
    }

    size_t open_count() const { return fds_.size(); }
    long churned() const { return churned_; }

private:
    int connect_one(bool garbage)
    {
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            return -1;
        }
        sockaddr_in from{};
        from.sin_family      = AF_INET;
        from.sin_addr.s_addr = htonl(0x7f000002u + static_cast<uint32_t>(next_++ % kSources));
        sockaddr_in to{};
        to.sin_family      = AF_INET;
        to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        to.sin_port        = htons(static_cast<uint16_t>(port_));
        if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0 ||
            (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0 &&
             errno != EINPROGRESS)) {
            ::close(fd);
            return -1;
        }
        if (garbage) {
            std::vector<uint8_t> junk(1 + rng_() % garbage_max_);
            for (auto &b : junk) {
                b = static_cast<uint8_t>(rng_());
            }
            (void)::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        }
        return fd;
    }

    int               port_;
    size_t            garbage_max_;
    std::vector<int>  fds_, churn_fds_;
    std::mt19937      rng_{2026};
    unsigned          next_ = 0;
    std::atomic<bool> churning_{false};
    std::atomic<long> churned_{0};
    std::thread       churn_;
};

} // namespace tc_test
