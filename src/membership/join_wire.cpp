/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "membership/join_wire.hpp"

#include "jam/replicated_jams.hpp"

#include <twochains/sock.h>

#include <arpa/inet.h>
#include <cerrno>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

namespace tc::join {

request request_for(const group_params &p)
{
    request r{};
    r.magic            = kRequestMagic;
    r.version          = kVersion;
    r.max_payload      = p.max_payload;
    r.rdmc_max_message = p.rdmc_max_message;
    r.rdmc_block       = p.rdmc_block;
    r.window           = p.window;
    r.mode             = static_cast<uint32_t>(p.mode);
    r.smc_batched      = p.smc ? (*p.smc == smc_mode::batched) + 1 : 0;
    tc_ifunc_security_t security = TC_IFUNC_SECURITY_LAST;   /* unreadable: never matches */
    (void)replicated_jams::resolve_security(p, security);
    r.jam_security   = static_cast<uint32_t>(security);
    r.jam_state_size = p.jam_state.size();
    r.jam_packages   = replicated_jams::packages_digest(p);
    return r;
}

void socket_fd::reset(int fd)
{
    tc_sock_close(&fd_);
    fd_ = fd;
}

ucs_status_t listen_on(const tc_job_key_t &key, uint16_t port, socket_fd &out,
                       uint16_t *bound_port)
{
    /* IPv4: the sponsor hands the joiner its rendezvous as an IPv4 address */
    const std::string any = "0.0.0.0:" + std::to_string(port);
    char addr[64];
    ucs_status_t status = tc_job_key_listen_address(&key, TC_JOB_KEY_SERVICE_JOIN, any.c_str(),
                                                    addr, sizeof(addr));
    if (status != UCS_OK) {
        return status;
    }
    int fd = -1;
    status = tc_sock_listen(addr, 1, &fd);
    if (status != UCS_OK) {
        return status;
    }
    out.reset(fd);
    if (bound_port != nullptr) {
        *bound_port = static_cast<uint16_t>(tc_sock_local_port(fd));
    }
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
        /* part of it, and the peer will send no more: it never completes */
        pollfd pfd{s.get(), POLLRDHUP, 0};
        return (::poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR))) ? -1 : 0;
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
    int err = 0;
    return tc_sock_send(s.get(), buf, len, tc_sock_now() + timeout_s, &err);
}

ucs_status_t read_all(const socket_fd &s, void *buf, size_t len, double timeout_s)
{
    int err = 0;
    return tc_sock_recv(s.get(), buf, len, tc_sock_now() + timeout_s, &err);
}

std::string host_of(const std::string &host_port)
{
    return host_port.substr(0, host_port.rfind(':'));
}

ucs_status_t connect_to(const std::string &host_port, double timeout_s, socket_fd &out)
{
    int fd              = -1;
    ucs_status_t status = tc_sock_connect(host_port.c_str(), tc_sock_now() + timeout_s,
                                          "group join", &fd);
    out.reset(fd);
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
