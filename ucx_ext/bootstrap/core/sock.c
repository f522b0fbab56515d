/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Stream sockets with deadlines (<twochains/sock.h>); the gate of many
 * handshakes at once is in sock_gate.c.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include <twochains/sock.h>

#include <ucs/debug/log_def.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Connect retry backoff. */
#define TC_SOCK_BACKOFF_MIN_S  0.01
#define TC_SOCK_BACKOFF_MAX_S  0.25

double tc_sock_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Milliseconds left until @a deadline, rounded up, for poll(). */
int tc_sock_poll_ms(double deadline)
{
    double left = deadline - tc_sock_now();

    if (left <= 0) {
        return 0;
    }
    if (left > INT_MAX / 1000.0) {
        return INT_MAX;
    }
    return (int)(left * 1000.0) + 1;
}

static void tc_sock_sleep(double seconds)
{
    struct timespec ts;

    if (seconds <= 0) {
        return;
    }
    ts.tv_sec  = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, NULL);          /* EINTR: the caller re-checks its deadline */
}

void tc_sock_close(int *fd_p)
{
    if (*fd_p >= 0) {
        close(*fd_p);
        *fd_p = -1;
    }
}

ucs_status_t tc_sock_set_nonblock(int fd)
{
    int flags = fcntl(fd, F_GETFL);

    if ((flags < 0) || (fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)) {
        ucs_error("fcntl(fd %d, O_NONBLOCK) failed: %s", fd, strerror(errno));
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

void tc_sock_set_nodelay(int fd)
{
    int one = 1;

    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0) {
        ucs_debug("setsockopt(fd %d, TCP_NODELAY) failed: %s", fd,
                  strerror(errno));
    }
}

void tc_sock_peer_name(int fd, char *name, size_t max)
{
    struct sockaddr_storage ss;
    socklen_t sslen = sizeof(ss);
    char host[INET6_ADDRSTRLEN];
    const void *addr;
    int port;

    if (getpeername(fd, (struct sockaddr*)&ss, &sslen) < 0) {
        snprintf(name, max, "fd %d", fd);
        return;
    }
    if (ss.ss_family == AF_INET6) {
        addr = &((struct sockaddr_in6*)&ss)->sin6_addr;
        port = ntohs(((struct sockaddr_in6*)&ss)->sin6_port);
    } else {
        addr = &((struct sockaddr_in*)&ss)->sin_addr;
        port = ntohs(((struct sockaddr_in*)&ss)->sin_port);
    }
    if (inet_ntop(ss.ss_family, addr, host, sizeof(host)) == NULL) {
        snprintf(name, max, "fd %d", fd);
        return;
    }
    snprintf(name, max, "%s:%d", host, port);
}

/* Text for a failed transfer: errno, or what the status says. */
const char *tc_sock_io_str(ucs_status_t status, int err)
{
    switch (status) {
    case UCS_ERR_CONNECTION_RESET:
        return (err == 0) ? "peer closed the connection" : strerror(err);
    case UCS_ERR_TIMED_OUT:
        return "timed out";
    default:
        return (err == 0) ? ucs_status_string(status) : strerror(err);
    }
}

static ucs_status_t tc_sock_errno_status(int err)
{
    switch (err) {
    case ECONNRESET:
    case EPIPE:
    case ENOTCONN:
    case ECONNABORTED:
        return UCS_ERR_CONNECTION_RESET;
    default:
        return UCS_ERR_IO_ERROR;
    }
}

/* Receive what is available into @a rx. UCS_OK once complete,
 * UCS_INPROGRESS when more is to come, else the error (and *err_p). */
ucs_status_t tc_sock_rx_progress(int fd, tc_sock_rx_t *rx,
                                            int *err_p)
{
    ssize_t n;

    while (rx->got < rx->len) {
        n = recv(fd, (char*)rx->buf + rx->got, rx->len - rx->got, 0);
        if (n > 0) {
            rx->got += n;
        } else if (n == 0) {
            *err_p = 0;
            return UCS_ERR_CONNECTION_RESET;
        } else if (errno == EINTR) {
            continue;
        } else if ((errno == EAGAIN) || (errno == EWOULDBLOCK)) {
            return UCS_INPROGRESS;
        } else {
            *err_p = errno;
            return tc_sock_errno_status(errno);
        }
    }
    return UCS_OK;
}

/* Wait until @a fd is ready for @a events (POLLIN, POLLOUT), or has an
 * error to report. UCS_ERR_TIMED_OUT after @a deadline. */
static ucs_status_t tc_sock_wait(int fd, short events, double deadline,
                                int *err_p)
{
    struct pollfd pfd = {.fd = fd, .events = events};
    int ret;

    for (;;) {
        ret = poll(&pfd, 1, tc_sock_poll_ms(deadline));
        if (ret > 0) {
            return UCS_OK;   /* readable, writable, or an error to read */
        } else if ((ret == 0) && (tc_sock_now() >= deadline)) {
            *err_p = ETIMEDOUT;
            return UCS_ERR_TIMED_OUT;
        } else if ((ret < 0) && (errno != EINTR)) {
            *err_p = errno;
            return UCS_ERR_IO_ERROR;
        }
    }
}

ucs_status_t tc_sock_recv(int fd, void *buf, size_t len,
                                     double deadline, int *err_p)
{
    tc_sock_rx_t rx = {.buf = buf, .len = len, .got = 0};
    ucs_status_t status;

    for (;;) {
        status = tc_sock_rx_progress(fd, &rx, err_p);
        if (status != UCS_INPROGRESS) {
            return status;
        }
        status = tc_sock_wait(fd, POLLIN, deadline, err_p);
        if (status != UCS_OK) {
            return status;
        }
    }
}

ucs_status_t tc_sock_send(int fd, const void *buf, size_t len,
                                     double deadline, int *err_p)
{
    size_t sent = 0;
    ucs_status_t status;
    ssize_t n;

    while (sent < len) {
        n = send(fd, (const char*)buf + sent, len - sent, MSG_NOSIGNAL);
        if (n >= 0) {
            sent += n;
        } else if (errno == EINTR) {
            continue;
        } else if ((errno == EAGAIN) || (errno == EWOULDBLOCK)) {
            status = tc_sock_wait(fd, POLLOUT, deadline, err_p);
            if (status != UCS_OK) {
                return status;
            }
        } else {
            *err_p = errno;
            return tc_sock_errno_status(errno);
        }
    }
    return UCS_OK;
}

/* --- addresses ----------------------------------------------------------- */

/* "host:port" or "[v6addr]:port" into host and port. */
static ucs_status_t tc_sock_parse_addr(const char *addr, char *host,
                                       size_t host_max, char *port,
                                       size_t port_max, int allow_port0)
{
    const char *colon, *hbegin, *hend;
    char *end;
    long num;

    if ((addr == NULL) || (addr[0] == '\0')) {
        ucs_error("address is empty (expected host:port)");
        return UCS_ERR_INVALID_PARAM;
    }

    colon = strrchr(addr, ':');
    if (colon == NULL) {
        goto err_format;
    }

    hbegin = addr;
    hend   = colon;
    if (addr[0] == '[') {
        if ((colon == addr) || (colon[-1] != ']')) {
            goto err_format;
        }
        hbegin = addr + 1;
        hend   = colon - 1;
    }
    if ((size_t)(hend - hbegin) >= host_max) {
        goto err_format;
    }
    memcpy(host, hbegin, hend - hbegin);
    host[hend - hbegin] = '\0';

    errno = 0;
    num   = strtol(colon + 1, &end, 10);
    if ((colon[1] == '\0') || (*end != '\0') || (errno != 0) || (num < 0) ||
        (num > 65535) || (strlen(colon + 1) >= port_max)) {
        goto err_format;
    }
    if ((num == 0) && !allow_port0) {
        ucs_error("address '%s': port 0 is not allowed (pass a listening "
                  "socket to let the system choose)", addr);
        return UCS_ERR_INVALID_PARAM;
    }
    snprintf(port, port_max, "%ld", num);
    return UCS_OK;

err_format:
    ucs_error("invalid address '%s' (expected host:port)", addr);
    return UCS_ERR_INVALID_PARAM;
}

static ucs_status_t tc_sock_resolve(const char *addr, int passive,
                                    int allow_port0, struct addrinfo **res_p)
{
    char host[256], port[16];
    struct addrinfo hints;
    ucs_status_t status;
    int ret;

    status = tc_sock_parse_addr(addr, host, sizeof(host), port, sizeof(port),
                                allow_port0);
    if (status != UCS_OK) {
        return status;
    }

    memset(&hints, 0, sizeof(hints));
    hints.ai_family   = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags    = passive ? AI_PASSIVE : 0;
    ret = getaddrinfo(((host[0] == '\0') || !strcmp(host, "*")) ? NULL : host,
                      port, &hints, res_p);
    if (ret != 0) {
        ucs_error("cannot resolve '%s': %s", addr, gai_strerror(ret));
        return UCS_ERR_INVALID_ADDR;
    }
    return UCS_OK;
}

ucs_status_t tc_sock_listen(const char *addr, int allow_port0, int *fd_p)
{
    struct addrinfo *res, *ai;
    ucs_status_t status;
    int fd, one = 1, err = 0;

    status = tc_sock_resolve(addr, 1, allow_port0, &res);
    if (status != UCS_OK) {
        return status;
    }

    for (ai = res; ai != NULL; ai = ai->ai_next) {
        fd = socket(ai->ai_family,
                    ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    ai->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if ((bind(fd, ai->ai_addr, ai->ai_addrlen) == 0) &&
            (listen(fd, SOMAXCONN) == 0)) {
            freeaddrinfo(res);
            ucs_debug("listening on %s, fd %d", addr, fd);
            *fd_p = fd;
            return UCS_OK;
        }
        err = errno;
        close(fd);
    }

    freeaddrinfo(res);
    ucs_error("cannot listen on %s: %s", addr, strerror(err));
    return (err == EADDRINUSE) ? UCS_ERR_BUSY : UCS_ERR_IO_ERROR;
}

int tc_sock_local_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t sslen = sizeof(ss);

    if (getsockname(fd, (struct sockaddr*)&ss, &sslen) < 0) {
        return 0;
    }
    return (ss.ss_family == AF_INET6) ?
           ntohs(((struct sockaddr_in6*)&ss)->sin6_port) :
           ntohs(((struct sockaddr_in*)&ss)->sin_port);
}

/* One connection attempt to one address, within @a deadline. Returns the
 * connected socket, or -1 with *err_p set. */
static int tc_sock_connect_one(const struct addrinfo *ai, double deadline,
                               int *err_p)
{
    socklen_t errlen = sizeof(*err_p);
    ucs_status_t status;
    int fd;

    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                ai->ai_protocol);
    if (fd < 0) {
        *err_p = errno;
        return -1;
    }

    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
        return fd;
    }
    if (errno != EINPROGRESS) {
        *err_p = errno;
        goto err_close;
    }

    status = tc_sock_wait(fd, POLLOUT, deadline, err_p);
    if (status != UCS_OK) {
        goto err_close;
    }
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, err_p, &errlen) < 0) {
        *err_p = errno;
        goto err_close;
    }
    if (*err_p != 0) {
        goto err_close;
    }
    return fd;

err_close:
    close(fd);
    return -1;
}

ucs_status_t tc_sock_connect(const char *addr, double deadline,
                             const char *who, int *fd_p)
{
    double backoff = TC_SOCK_BACKOFF_MIN_S, start = tc_sock_now();
    struct addrinfo *res, *ai;
    ucs_status_t status;
    int fd, err = 0, attempts = 0;

    status = tc_sock_resolve(addr, 0, 0, &res);
    if (status != UCS_OK) {
        return status;
    }

    for (;;) {
        for (ai = res; ai != NULL; ai = ai->ai_next) {
            fd = tc_sock_connect_one(ai, deadline, &err);
            if (fd >= 0) {
                freeaddrinfo(res);
                ucs_debug("%s connected to %s after %d attempt(s)", who, addr,
                          attempts + 1);
                tc_sock_set_nodelay(fd);
                *fd_p = fd;
                return UCS_OK;
            }
        }

        if (attempts++ == 0) {
            ucs_debug("%s: connecting to %s: %s; retrying for up to %.1f s",
                      who, addr, strerror(err), deadline - start);
        }
        if (tc_sock_now() + backoff >= deadline) {
            break;
        }
        tc_sock_sleep(backoff);
        backoff = (backoff * 2 < TC_SOCK_BACKOFF_MAX_S) ? backoff * 2 :
                  TC_SOCK_BACKOFF_MAX_S;
    }

    freeaddrinfo(res);
    ucs_error("%s: cannot connect to %s within %.1f s (%d attempts): %s", who,
              addr, deadline - start, attempts, strerror(err));
    switch (err) {
    case ECONNREFUSED:
    case EHOSTUNREACH:
    case ENETUNREACH:
        return UCS_ERR_UNREACHABLE;
    default:
        return UCS_ERR_TIMED_OUT;
    }
}

/* --- endpoints and limits ----------------------------------------------- */

/* 16 address bytes (IPv4 v4-mapped) and 2 port bytes of @a ss */
static int tc_sock_put_endpoint(const struct sockaddr_storage *ss, uint8_t out[18])
{
    static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    uint16_t port;

    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in*)ss;
        memcpy(out, v4_mapped, sizeof(v4_mapped));
        memcpy(out + 12, &in->sin_addr, 4);
        port = in->sin_port;
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6*)ss;
        memcpy(out, &in6->sin6_addr, 16);
        port = in6->sin6_port;
    } else {
        return 0;
    }
    memcpy(out + 16, &port, sizeof(port));        /* network order already */
    return 1;
}

ucs_status_t tc_sock_endpoints(int fd, int is_server, uint8_t out[TC_SOCK_ENDPOINTS_LEN])
{
    struct sockaddr_storage local, peer;
    socklen_t llen = sizeof(local), plen = sizeof(peer);

    memset(out, 0, TC_SOCK_ENDPOINTS_LEN);
    if ((getsockname(fd, (struct sockaddr*)&local, &llen) != 0) ||
        (getpeername(fd, (struct sockaddr*)&peer, &plen) != 0)) {
        return UCS_ERR_IO_ERROR;
    }
    if (!tc_sock_put_endpoint(is_server ? &local : &peer, out) ||
        !tc_sock_put_endpoint(is_server ? &peer : &local, out + 18)) {
        /* a Unix socket: no addresses to bind, the zeros are the same at
         * both ends */
        memset(out, 0, TC_SOCK_ENDPOINTS_LEN);
    }
    return UCS_OK;
}

void tc_sock_raise_fd_limit(void)
{
    static int raised;
    struct rlimit rl;

    if (__atomic_exchange_n(&raised, 1, __ATOMIC_RELAXED) ||
        (getrlimit(RLIMIT_NOFILE, &rl) != 0) || (rl.rlim_cur >= rl.rlim_max)) {
        return;
    }
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) == 0) {
        ucs_debug("raised the open file limit to %llu", (unsigned long long)rl.rlim_max);
    }
}
