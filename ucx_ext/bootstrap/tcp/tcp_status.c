/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The TCP bootstrap's status frames, below both of its halves: the
 * connection setup (tcp_connect.c) and the collectives (tcp.c) send and
 * receive them, and the root's abort tells every member why it gave up.
 * The frame's format is in tcp_wire.h.
 *
 * Threads: called by the thread that uses the handle (one at a time);
 * keeps nothing: the handle's fds and status are tc_boot_tcp_t's.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "tcp_int.h"
#include <twochains/sock.h>

#include <base/debug.h>

#include <ucs/debug/log_def.h>
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A status frame (and its reason, on error). */
ucs_status_t tc_boot_tcp_send_status(int fd, uint32_t seq,
                                            ucs_status_t status,
                                            const char *reason,
                                            double deadline, int *err_p)
{
    char frame[sizeof(tc_boot_tcp_status_t) + TC_BOOT_TCP_MAX_REASON];
    tc_boot_tcp_status_t hdr;
    size_t reason_len;

    reason_len = (status == UCS_OK) ? 0 :
                 strnlen(reason, TC_BOOT_TCP_MAX_REASON);
    hdr.magic      = htonl(TC_BOOT_TCP_MAGIC);
    hdr.seq        = htonl(seq);
    hdr.status     = (int32_t)htonl((uint32_t)status);
    hdr.reason_len = htonl((uint32_t)reason_len);
    memcpy(frame, &hdr, sizeof(hdr));
    memcpy(frame + sizeof(hdr), reason, reason_len);
    return tc_sock_send(fd, frame, sizeof(hdr) + reason_len, deadline,
                            err_p);
}

/*
 * Receive a status frame. When it carries an error, log the root's reason
 * and return that error (a code outside UCX's range becomes IO_ERROR).
 */
ucs_status_t tc_boot_tcp_recv_status(tc_boot_tcp_t *tcp, uint32_t seq,
                                            const char *step, double deadline)
{
    char reason[TC_BOOT_TCP_MAX_REASON + 1];
    tc_boot_tcp_status_t hdr;
    ucs_status_t status;
    uint32_t reason_len;
    int err = 0;

    status = tc_sock_recv(tcp->root_fd, &hdr, sizeof(hdr), deadline, &err);
    if (status != UCS_OK) {
        ucs_error("bootstrap rank %d: no answer from root %s during %s: %s",
                  tcp->rank, tcp->root_name, step,
                  tc_sock_io_str(status, err));
        return status;
    }

    if (ntohl(hdr.magic) != TC_BOOT_TCP_MAGIC) {
        ucs_error("bootstrap rank %d: root %s sent a bad frame during %s "
                  "(magic 0x%08x)", tcp->rank, tcp->root_name, step,
                  ntohl(hdr.magic));
        return UCS_ERR_IO_ERROR;
    }

    status = (ucs_status_t)(int32_t)ntohl((uint32_t)hdr.status);
    if (status == UCS_OK) {
        if (ntohl(hdr.seq) != seq) {
            ucs_error("bootstrap rank %d: root %s answered step %u during "
                      "%s (expected %u)", tcp->rank, tcp->root_name,
                      ntohl(hdr.seq), step, seq);
            return UCS_ERR_IO_ERROR;
        }
        return UCS_OK;
    }

    /* An error frame: whatever its seq, it is the root's last word. */
    reason_len = ntohl(hdr.reason_len);
    if (reason_len > TC_BOOT_TCP_MAX_REASON) {
        reason_len = 0;
    }
    if ((reason_len == 0) ||
        (tc_sock_recv(tcp->root_fd, reason, reason_len, deadline,
                          &err) != UCS_OK)) {
        reason_len = 0;
    }
    reason[reason_len] = '\0';

    if ((status >= UCS_OK) || (status <= UCS_ERR_LAST)) {
        status = UCS_ERR_IO_ERROR;
    }
    ucs_error("bootstrap rank %d: root %s reported a failure during %s: %s "
              "(%s)", tcp->rank, tcp->root_name, step,
              reason_len ? reason : "no reason given",
              ucs_status_string(status));
    return status;
}

/* --- root ---------------------------------------------------------------- */

/*
 * The root gives up: tell every member it has, and the @a nextra connections
 * in @a extra_fds (not members yet), why; stop sending, wait briefly for
 * them to hang up so that the frame is not lost to a reset, and close all.
 */
void tc_boot_tcp_root_abort(tc_boot_tcp_t *tcp, const int *extra_fds,
                                   int nextra, ucs_status_t status,
                                   const char *reason)
{
    double deadline      = tc_sock_now() + TC_BOOT_TCP_LINGER_S;
    struct pollfd *pfds = tcp->pfds;
    int nfds            = tcp->size + nextra;
    char sink[4096];
    int r, open_fds, err;
    ssize_t n;

    tc_assert(nextra <= TC_BOOT_TCP_MAX_EXTRA);
    tcp->status = status;

    for (r = 0; r < nfds; ++r) {
        pfds[r].fd     = (r < tcp->size) ? tcp->fds[r] :
                         extra_fds[r - tcp->size];
        pfds[r].events = POLLIN;
        if (pfds[r].fd < 0) {
            continue;
        }
        /* best effort: a member that is gone cannot be told */
        if (tc_boot_tcp_send_status(pfds[r].fd, tcp->seq, status, reason,
                                    deadline, &err) == UCS_OK) {
            shutdown(pfds[r].fd, SHUT_WR);
        }
    }

    /* drain until every member hung up, or the linger time is over */
    for (;;) {
        open_fds = 0;
        for (r = 0; r < nfds; ++r) {
            open_fds += (pfds[r].fd >= 0);
        }
        if ((open_fds == 0) ||
            (poll(pfds, nfds, tc_sock_poll_ms(deadline)) <= 0)) {
            break;
        }
        for (r = 0; r < nfds; ++r) {
            if ((pfds[r].fd < 0) || (pfds[r].revents == 0)) {
                continue;
            }
            n = recv(pfds[r].fd, sink, sizeof(sink), MSG_DONTWAIT);
            if ((n == 0) || ((n < 0) && (errno != EINTR) &&
                             (errno != EAGAIN) && (errno != EWOULDBLOCK))) {
                pfds[r].fd = -1;       /* hung up; closed below */
            }
        }
    }

    for (r = 0; r < tcp->size; ++r) {
        tc_sock_close(&tcp->fds[r]);
    }
    for (r = 0; r < nextra; ++r) {
        close(extra_fds[r]);
    }
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
