/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Raw sockets for the bootstrap tests: a listener and a client on loopback,
 * bounded reads, and waiting for the peer to hang up.
 */
#pragma once

#include <twochains/bootstrap.h>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>

namespace tc_test {

using clock_type = std::chrono::steady_clock;

struct boot_deleter {
    void operator()(tc_bootstrap *b) const { tc_bootstrap_destroy(b); }
};
using boot_ptr = std::unique_ptr<tc_bootstrap, boot_deleter>;

class unique_fd {
public:
    explicit unique_fd(int fd = -1) : fd_(fd) {}
    unique_fd(unique_fd &&o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    unique_fd(const unique_fd &)            = delete;
    unique_fd &operator=(const unique_fd &) = delete;
    ~unique_fd() { reset(); }
    int get() const { return fd_; }
    void reset()
    {
        if (fd_ >= 0) {
            ::close(fd_);
        }
        fd_ = -1;
    }

private:
    int fd_;
};

/* A listening socket on 127.0.0.1 with a kernel-chosen port. */
inline unique_fd listen_loopback(int &port)
{
    unique_fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in addr{};
    addr.sin_family      = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len        = sizeof(addr);
    EXPECT_EQ(0, ::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)));
    EXPECT_EQ(0, ::listen(fd.get(), 16));
    EXPECT_EQ(0, ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len));
    port = ntohs(addr.sin_port);
    return fd;
}

inline unique_fd connect_loopback(int port)
{
    unique_fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in addr{};
    addr.sin_family      = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port        = htons(static_cast<uint16_t>(port));
    EXPECT_EQ(0, ::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)));
    return fd;
}

/* Read exactly @a len bytes within @a timeout; the count read is returned. */
inline size_t read_full(int fd, void *buf, size_t len, std::chrono::milliseconds timeout)
{
    auto deadline = clock_type::now() + timeout;
    size_t got    = 0;
    while (got < len) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                          clock_type::now());
        pollfd pfd{fd, POLLIN, 0};
        if ((left.count() <= 0) || (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0)) {
            break;
        }
        ssize_t n = ::recv(fd, static_cast<char*>(buf) + got, len - got, 0);
        if (n <= 0) {
            break;
        }
        got += static_cast<size_t>(n);
    }
    return got;
}

/* true when the peer closed @a fd within @a timeout */
inline bool wait_eof(int fd, std::chrono::milliseconds timeout)
{
    char c;
    auto deadline = clock_type::now() + timeout;
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                          clock_type::now());
        pollfd pfd{fd, POLLIN, 0};
        if ((left.count() <= 0) || (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0)) {
            return false;
        }
        ssize_t n = ::recv(fd, &c, 1, 0);
        if (n <= 0) {
            return true;
        }
    }
}

} // namespace tc_test
