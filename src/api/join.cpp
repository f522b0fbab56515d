/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "api/join.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace tc::join {

namespace {

double now_s()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
}

void set_nonblocking(int fd)
{
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* Wait until @a fd is ready for @a events or @a deadline passes. */
bool wait_ready(int fd, short events, double deadline)
{
    for (;;) {
        const double left = deadline - now_s();
        if (left <= 0) {
            return false;
        }
        pollfd p{fd, events, 0};
        int rc = ::poll(&p, 1, static_cast<int>(left * 1e3) + 1);
        if (rc > 0) {
            return true;
        }
        if (rc < 0 && errno != EINTR) {
            return false;
        }
    }
}

} // namespace

void socket_fd::reset(int fd)
{
    if (fd_ >= 0) {
        ::close(fd_);
    }
    fd_ = fd;
}

ucs_status_t listen_on(uint16_t port, socket_fd &out, uint16_t *bound_port)
{
    socket_fd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!s.valid()) {
        return UCS_ERR_IO_ERROR;
    }
    int one = 1;
    setsockopt(s.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in a{};
    a.sin_family      = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port        = htons(port);
    if (::bind(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
        ::listen(s.get(), 16) != 0) {
        return UCS_ERR_BUSY;
    }
    socklen_t len = sizeof(a);
    getsockname(s.get(), reinterpret_cast<sockaddr*>(&a), &len);
    if (bound_port != nullptr) {
        *bound_port = ntohs(a.sin_port);
    }
    set_nonblocking(s.get());
    out = std::move(s);
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
        return 0;
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
    const double deadline = now_s() + timeout_s;
    const auto *p         = static_cast<const char*>(buf);
    while (len > 0) {
        ssize_t n = ::send(s.get(), p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= static_cast<size_t>(n);
        } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            if (!wait_ready(s.get(), POLLOUT, deadline)) {
                return UCS_ERR_TIMED_OUT;
            }
        } else {
            return UCS_ERR_CONNECTION_RESET;
        }
    }
    return UCS_OK;
}

ucs_status_t read_all(const socket_fd &s, void *buf, size_t len, double timeout_s)
{
    const double deadline = now_s() + timeout_s;
    auto *p               = static_cast<char*>(buf);
    while (len > 0) {
        ssize_t n = ::recv(s.get(), p, len, MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= static_cast<size_t>(n);
        } else if (n == 0) {
            return UCS_ERR_CONNECTION_RESET;
        } else if (errno == EAGAIN || errno == EINTR) {
            if (!wait_ready(s.get(), POLLIN, deadline)) {
                return UCS_ERR_TIMED_OUT;
            }
        } else {
            return UCS_ERR_CONNECTION_RESET;
        }
    }
    return UCS_OK;
}

std::string host_of(const std::string &host_port)
{
    return host_port.substr(0, host_port.rfind(':'));
}

ucs_status_t connect_to(const std::string &host_port, double timeout_s, socket_fd &out)
{
    const auto colon = host_port.rfind(':');
    if (colon == std::string::npos || colon + 1 == host_port.size()) {
        return UCS_ERR_INVALID_PARAM;
    }
    addrinfo hints{};
    hints.ai_family   = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *res     = nullptr;
    if (getaddrinfo(host_port.substr(0, colon).c_str(), host_port.substr(colon + 1).c_str(),
                    &hints, &res) != 0 || res == nullptr) {
        return UCS_ERR_INVALID_ADDR;
    }
    const double deadline = now_s() + timeout_s;
    ucs_status_t status   = UCS_ERR_UNREACHABLE;
    while (now_s() < deadline) {
        socket_fd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        if (s.valid() && ::connect(s.get(), res->ai_addr, res->ai_addrlen) == 0) {
            int one = 1;
            setsockopt(s.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
            set_nonblocking(s.get());
            out    = std::move(s);
            status = UCS_OK;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    freeaddrinfo(res);
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
