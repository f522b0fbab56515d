/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * TCP bootstrap connection setup. The root accepts connections, sends each
 * a fresh challenge, and believes a hello only with the job key's answer
 * (<twochains/job_key.h>); then it checks magic, version, size and rank.
 * A member connects, answers the challenge and says hello.
 *
 * Invariants (with those of boot_tcp.c): a stranger, a garbled or late
 * hello is dropped and logged, never fatal for the bootstrap; a fatal
 * mismatch among real members is told to everyone it concerns.
 */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE          /* accept4 */
#endif
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "boot_tcp_int.h"
#include <twochains/sock.h>

#include <base/debug.h>

#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A connection that has not said hello yet. */
typedef struct tc_boot_tcp_pending {
    int                 fd;
    double              since;
    uint8_t             nonce[TC_JOB_KEY_NONCE_LEN];
    tc_boot_tcp_hello_t hello;
    tc_sock_rx_t        rx;
    char                name[TC_BOOT_TCP_NAME_MAX];
} tc_boot_tcp_pending_t;

/* Send a new connection its challenge. The socket is fresh, so its buffer
 * takes the frame at once; one that cannot is not worth waiting for. */
static ucs_status_t tc_boot_tcp_root_challenge(tc_boot_tcp_pending_t *p)
{
    tc_boot_tcp_challenge_t challenge;
    ucs_status_t status;
    int err = 0;

    memset(&challenge, 0, sizeof(challenge));
    challenge.magic   = htonl(TC_BOOT_TCP_CHALLENGE);
    challenge.version = htons(TC_BOOT_TCP_VERSION);
    status = tc_job_key_challenge(p->nonce);
    if (status != UCS_OK) {
        return status;
    }
    memcpy(challenge.nonce, p->nonce, sizeof(challenge.nonce));
    status = tc_sock_send(p->fd, &challenge, sizeof(challenge), tc_sock_now() + 0.1, &err);
    if (status != UCS_OK) {
        ucs_debug("bootstrap root: cannot challenge %s: %s", p->name,
                  tc_sock_io_str(status, err));
    }
    return status;
}

/*
 * Check a complete hello. UCS_OK: @a p becomes rank *rank_p. UCS_ERR_NO_ELEM:
 * not a bootstrap peer, drop the connection and carry on. Anything else is
 * fatal for the whole bootstrap; @a reason says why.
 */
static ucs_status_t tc_boot_tcp_root_check_hello(tc_boot_tcp_t *tcp,
                                                 tc_boot_tcp_pending_t *p,
                                                 char *reason, size_t max,
                                                 int *rank_p)
{
    uint32_t magic   = ntohl(p->hello.magic);
    uint16_t version = ntohs(p->hello.version);
    int32_t rank     = (int32_t)ntohl((uint32_t)p->hello.rank);
    int32_t size     = (int32_t)ntohl((uint32_t)p->hello.size);
    char other[TC_BOOT_TCP_NAME_MAX];

    if (magic != TC_BOOT_TCP_MAGIC) {
        ucs_error("bootstrap root: rejected connection from %s: not a "
                  "bootstrap hello (magic 0x%08x, expected 0x%08x)", p->name,
                  magic, TC_BOOT_TCP_MAGIC);
        return UCS_ERR_NO_ELEM;
    }
    /* before anything it says is believed: a stranger cannot fail us */
    if (!tc_job_key_verify(&tcp->key, TC_JOB_KEY_SERVICE_BOOTSTRAP, p->nonce,
                           p->hello.proof)) {
        ucs_error("bootstrap root: refused connection from %s: it did not prove "
                  "the job key (UCX_TC_JOB_KEY)", p->name);
        return UCS_ERR_NO_ELEM;
    }
    if (version != TC_BOOT_TCP_VERSION) {
        snprintf(reason, max, "rank %d at %s speaks bootstrap protocol %u, "
                 "the root speaks %u", rank, p->name, version,
                 TC_BOOT_TCP_VERSION);
        return UCS_ERR_UNSUPPORTED;
    }
    if (size != tcp->size) {
        snprintf(reason, max, "size mismatch: rank %d at %s announced size "
                 "%d, the root has size %d", rank, p->name, size, tcp->size);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((rank <= 0) || (rank >= tcp->size)) {
        snprintf(reason, max, "%s announced rank %d, which is out of range "
                 "[1, %d)", p->name, rank, tcp->size);
        return UCS_ERR_INVALID_PARAM;
    }
    if (tcp->fds[rank] >= 0) {
        tc_sock_peer_name(tcp->fds[rank], other, sizeof(other));
        snprintf(reason, max, "duplicate rank %d: announced by %s and by %s",
                 rank, other, p->name);
        return UCS_ERR_ALREADY_EXISTS;
    }

    *rank_p = rank;
    return UCS_OK;
}

void tc_boot_tcp_missing_ranks(tc_boot_tcp_t *tcp, const int *done,
                                      char *buf, size_t max)
{
    size_t off = 0;
    int r, n;

    buf[0] = '\0';
    for (r = 1; (r < tcp->size) && (off < max); ++r) {
        if (!done[r]) {
            n = snprintf(buf + off, max - off, "%s%d", off ? "," : "", r);
            off += (n > 0) ? (size_t)n : 0;
        }
    }
}

static ucs_status_t tc_boot_tcp_root_accept_all(tc_boot_tcp_t *tcp,
                                                int listen_fd, double deadline)
{
    tc_boot_tcp_pending_t pending[TC_BOOT_TCP_MAX_PENDING];
    struct pollfd *pfds  = tcp->pfds;
    int *connected_flags = tcp->done;
    char reason[TC_BOOT_TCP_MAX_REASON], missing[128];
    int npending = 0, connected = 0, offender = -1, nextra, i, fd, rank, err;
    int extra[TC_BOOT_TCP_MAX_EXTRA], nfds, ret;
    ucs_status_t status;

    memset(connected_flags, 0, tcp->size * sizeof(*connected_flags));

    while (connected < tcp->size - 1) {
        if (tc_sock_now() >= deadline) {
            tc_boot_tcp_missing_ranks(tcp, connected_flags, missing,
                                      sizeof(missing));
            snprintf(reason, sizeof(reason), "timed out after %.1f s waiting "
                     "for rank(s) %s of %d to connect", tcp->timeout_s,
                     missing, tcp->size);
            status = UCS_ERR_TIMED_OUT;
            goto err_fatal;
        }

        /* poll: the listening socket while there is room, and every
         * connection that has not completed its hello */
        nfds = 0;
        if (npending < TC_BOOT_TCP_MAX_PENDING) {
            pfds[nfds].fd     = listen_fd;
            pfds[nfds].events = POLLIN;
            ++nfds;
        }
        for (i = 0; i < npending; ++i) {
            pfds[nfds].fd     = pending[i].fd;
            pfds[nfds].events = POLLIN;
            ++nfds;
        }

        /* wake up to drop connections that said no hello in time */
        ret = poll(pfds, nfds, npending ? ucs_min(100, tc_sock_poll_ms(deadline)) :
                                          tc_sock_poll_ms(deadline));
        if ((ret < 0) && (errno != EINTR)) {
            snprintf(reason, sizeof(reason), "poll failed: %s",
                     strerror(errno));
            status = UCS_ERR_IO_ERROR;
            goto err_fatal;
        }

        /* new connections */
        while (npending < TC_BOOT_TCP_MAX_PENDING) {
            fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0) {
                if ((errno != EAGAIN) && (errno != EWOULDBLOCK) &&
                    (errno != EINTR) && (errno != ECONNABORTED)) {
                    ucs_debug("bootstrap root: accept failed: %s",
                              strerror(errno));
                }
                break;
            }
            tc_sock_set_nodelay(fd);
            memset(&pending[npending], 0, sizeof(pending[npending]));
            pending[npending].fd     = fd;
            pending[npending].since  = tc_sock_now();
            pending[npending].rx.len = sizeof(pending[npending].hello);
            tc_sock_peer_name(fd, pending[npending].name,
                                  sizeof(pending[npending].name));
            ucs_debug("bootstrap root: connection from %s",
                      pending[npending].name);
            if (tc_boot_tcp_root_challenge(&pending[npending]) != UCS_OK) {
                close(fd);
                continue;
            }
            ++npending;
        }

        /* hellos; iterate backwards so that removing entry i is cheap */
        for (i = npending - 1; i >= 0; --i) {
            /* entries move when others leave: point at our own hello */
            pending[i].rx.buf = &pending[i].hello;
            err               = 0;
            status = tc_sock_rx_progress(pending[i].fd, &pending[i].rx,
                                             &err);
            if ((status == UCS_INPROGRESS) &&
                (tc_sock_now() - pending[i].since > TC_BOOT_TCP_HELLO_TIMEOUT_S)) {
                ucs_error("bootstrap root: dropped connection from %s: no hello "
                          "within %.0f s", pending[i].name,
                          TC_BOOT_TCP_HELLO_TIMEOUT_S);
                close(pending[i].fd);
                pending[i] = pending[--npending];
                continue;
            }
            if (status == UCS_INPROGRESS) {
                continue;
            }

            if (status != UCS_OK) {
                if (pending[i].rx.got == 0) {
                    /* a port probe, or a member that gave up */
                    ucs_debug("bootstrap root: %s hung up before hello: %s",
                              pending[i].name,
                              tc_sock_io_str(status, err));
                } else {
                    ucs_error("bootstrap root: rejected connection from %s: "
                              "%zu-byte hello instead of %zu (%s)",
                              pending[i].name, pending[i].rx.got,
                              pending[i].rx.len,
                              tc_sock_io_str(status, err));
                }
                close(pending[i].fd);
            } else {
                status = tc_boot_tcp_root_check_hello(tcp, &pending[i], reason,
                                                      sizeof(reason), &rank);
                if (status == UCS_ERR_NO_ELEM) {
                    close(pending[i].fd);
                } else if (status != UCS_OK) {
                    offender   = pending[i].fd;
                    pending[i] = pending[--npending];
                    goto err_fatal;
                } else {
                    ucs_debug("bootstrap root: rank %d is %s", rank,
                              pending[i].name);
                    tcp->fds[rank]        = pending[i].fd;
                    connected_flags[rank] = 1;
                    ++connected;
                }
            }
            pending[i] = pending[--npending];
        }
    }

    /* everyone is here */
    for (rank = 1; rank < tcp->size; ++rank) {
        status = tc_boot_tcp_send_status(tcp->fds[rank], 0, UCS_OK, "",
                                         deadline, &err);
        if (status != UCS_OK) {
            snprintf(reason, sizeof(reason), "cannot answer rank %d: %s",
                     rank, tc_sock_io_str(status, err));
            goto err_fatal;
        }
    }

    for (i = 0; i < npending; ++i) {
        ucs_debug("bootstrap root: closing %s, all ranks are connected",
                  pending[i].name);
        close(pending[i].fd);
    }
    return UCS_OK;

err_fatal:
    ucs_error("bootstrap root: %s", reason);
    nextra = 0;
    if (offender >= 0) {
        extra[nextra++] = offender;
    }
    for (i = 0; i < npending; ++i) {
        extra[nextra++] = pending[i].fd;
    }
    /* those still in the backlog deserve to hear why, too */
    while (nextra < TC_BOOT_TCP_MAX_EXTRA) {
        fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            break;
        }
        extra[nextra++] = fd;
    }
    tc_boot_tcp_root_abort(tcp, extra, nextra, status, reason);
    return status;
}

ucs_status_t tc_boot_tcp_root_create(tc_boot_tcp_t *tcp,
                                            const char *root, int listen_fd,
                                            double deadline)
{
    char address[TC_BOOT_TCP_NAME_MAX];
    ucs_status_t status;
    int own_fd = -1;
    int r;

    tcp->fds  = malloc(tcp->size * sizeof(*tcp->fds));
    tcp->peer = malloc(tcp->size * sizeof(*tcp->peer));
    tcp->done = malloc(tcp->size * sizeof(*tcp->done));
    tcp->pfds = malloc(TC_BOOT_TCP_NPFDS(tcp->size) * sizeof(*tcp->pfds));
    if ((tcp->fds == NULL) || (tcp->peer == NULL) || (tcp->done == NULL) ||
        (tcp->pfds == NULL)) {
        ucs_error("failed to allocate %d bootstrap connections", tcp->size);
        return UCS_ERR_NO_MEMORY;       /* tc_boot_tcp_destroy frees */
    }
    for (r = 0; r < tcp->size; ++r) {
        tcp->fds[r] = -1;
    }

    if (listen_fd >= 0) {
        status = tc_job_key_check_listener(&tcp->key, TC_JOB_KEY_SERVICE_BOOTSTRAP,
                                           listen_fd);
        if (status != UCS_OK) {
            return status;
        }
        status = tc_sock_set_nonblock(listen_fd);
        if (status != UCS_OK) {
            return status;
        }
        snprintf(tcp->root_name, sizeof(tcp->root_name), "listen fd %d",
                 listen_fd);
    } else {
        status = tc_job_key_listen_address(&tcp->key, TC_JOB_KEY_SERVICE_BOOTSTRAP, root,
                                           address, sizeof(address));
        if (status != UCS_OK) {
            return status;
        }
        status = tc_sock_listen(address, 0, &own_fd);
        if (status != UCS_OK) {
            return status;
        }
        listen_fd = own_fd;
        snprintf(tcp->root_name, sizeof(tcp->root_name), "%s", address);
    }

    status = tc_boot_tcp_root_accept_all(tcp, listen_fd, deadline);
    tc_sock_close(&own_fd);
    return status;
}

/* --- member -------------------------------------------------------------- */

ucs_status_t tc_boot_tcp_member_create(tc_boot_tcp_t *tcp,
                                              const char *root,
                                              double deadline)
{
    tc_boot_tcp_challenge_t challenge;
    tc_boot_tcp_hello_t hello;
    ucs_status_t status;
    char who[32];
    int err = 0;

    snprintf(tcp->root_name, sizeof(tcp->root_name), "%s", root);
    snprintf(who, sizeof(who), "bootstrap rank %d", tcp->rank);
    status = tc_sock_connect(root, deadline, who, &tcp->root_fd);
    if (status != UCS_OK) {
        return status;
    }

    status = tc_sock_recv(tcp->root_fd, &challenge, sizeof(challenge), deadline, &err);
    if (status != UCS_OK) {
        ucs_error("bootstrap rank %d: no challenge from root %s: %s", tcp->rank, root,
                  tc_sock_io_str(status, err));
        return status;
    }
    if ((ntohl(challenge.magic) != TC_BOOT_TCP_CHALLENGE) ||
        (ntohs(challenge.version) != TC_BOOT_TCP_VERSION)) {
        ucs_error("bootstrap rank %d: %s is not a bootstrap root of protocol %u", tcp->rank,
                  root, TC_BOOT_TCP_VERSION);
        return UCS_ERR_UNSUPPORTED;
    }

    memset(&hello, 0, sizeof(hello));
    tc_job_key_prove(&tcp->key, TC_JOB_KEY_SERVICE_BOOTSTRAP, challenge.nonce, hello.proof);
    hello.magic    = htonl(TC_BOOT_TCP_MAGIC);
    hello.version  = htons(TC_BOOT_TCP_VERSION);
    hello.reserved = 0;
    hello.rank     = (int32_t)htonl((uint32_t)tcp->rank);
    hello.size     = (int32_t)htonl((uint32_t)tcp->size);
    status = tc_sock_send(tcp->root_fd, &hello, sizeof(hello), deadline,
                              &err);
    if (status != UCS_OK) {
        ucs_error("bootstrap rank %d: cannot send hello to root %s: %s",
                  tcp->rank, root, tc_sock_io_str(status, err));
        return status;
    }

    return tc_boot_tcp_recv_status(tcp, 0, "connection setup", deadline);
}

