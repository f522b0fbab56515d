/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * TCP rendezvous bootstrap. Rank 0 (the root) listens on "host:port" or on a
 * socket it inherited; every other rank connects to it, hears a fresh
 * challenge, and says hello {magic, version, rank, size, nonce, proof}; the
 * root answers with a verdict and its own proof. Both proofs use the job
 * key (<twochains/job_key.h>) and cover both nonces, the prover's role, the
 * connection's endpoints and the messages' bytes, so that only the job's
 * processes take a rank, and a member believes only the job's root.
 * Without a key the root listens on loopback only. The root runs all the
 * handshakes at once (a gate, <twochains/sock.h>), and once all ranks are
 * there answers each with a status frame. A collective is a gather
 * to the root and a reply from it: {status, lens[size], concatenation}. The
 * wire format is in tcp_wire.h; status frames are in tcp_status.c, the
 * connection setup in tcp_connect.c.
 *
 * Threads: a handle is used by one thread at a time; nothing is shared
 * between handles. Invariants:
 *  - every read and write is non-blocking and waits in poll() against the
 *    deadline of the current step (create or one collective), so every call
 *    returns within the bootstrap timeout, plus at most TC_BOOT_TCP_LINGER_S
 *    spent telling the others about a failure;
 *  - a connection that does not prove the job key, or says no complete
 *    hello within TC_BOOT_TCP_HELLO_TIMEOUT_S, is dropped, counted and
 *    logged (one line per reason per interval); it cannot fail the
 *    bootstrap, and learns nothing; any number of them keeps no member
 *    waiting beyond its own round trips (the gate's bounds);
 *  - no length from the wire is trusted beyond TC_BOOT_TCP_MAX_LEN per rank
 *    and TC_BOOT_TCP_MAX_TOTAL in all before anything is allocated;
 *  - once a step fails the handle is failed for good (status != UCS_OK): the
 *    root sent an error frame to every member it had and closed; a member
 *    closed its connection, so the root sees EOF and tells the others.
 */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE          /* accept4 */
#endif
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "tcp_int.h"
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

/* --- collectives --------------------------------------------------------- */

static ucs_status_t tc_boot_tcp_member_allgatherv(tc_boot_tcp_t *tcp,
                                                  const void *buf, size_t len,
                                                  double deadline,
                                                  void **all_p, size_t *lens)
{
    size_t nlens = (size_t)tcp->size;
    size_t total = 0;
    tc_boot_tcp_data_t hdr;
    ucs_status_t status;
    uint64_t *wire_lens;
    char step[48];
    void *all;
    int err = 0;
    size_t r;

    snprintf(step, sizeof(step), "collective %u", tcp->seq);
    hdr.magic = htonl(TC_BOOT_TCP_MAGIC);
    hdr.seq   = htonl(tcp->seq);
    hdr.len   = htobe64(len);
    status    = tc_sock_send(tcp->root_fd, &hdr, sizeof(hdr), deadline,
                                 &err);
    if (status == UCS_OK) {
        status = tc_sock_send(tcp->root_fd, buf, len, deadline, &err);
    }
    if (status != UCS_OK) {
        ucs_error("bootstrap rank %d: cannot send %zu bytes to root %s in %s: "
                  "%s", tcp->rank, len, tcp->root_name, step,
                  tc_sock_io_str(status, err));
        goto err;
    }

    status = tc_boot_tcp_recv_status(tcp, tcp->seq, step, deadline);
    if (status != UCS_OK) {
        goto err;
    }

    wire_lens = malloc(nlens * sizeof(*wire_lens));
    if (wire_lens == NULL) {
        ucs_error("failed to allocate %zu lengths", nlens);
        status = UCS_ERR_NO_MEMORY;
        goto err;
    }
    status = tc_sock_recv(tcp->root_fd, wire_lens,
                              nlens * sizeof(*wire_lens), deadline, &err);
    if (status != UCS_OK) {
        ucs_error("bootstrap rank %d: lengths from root %s in %s: %s",
                  tcp->rank, tcp->root_name, step,
                  tc_sock_io_str(status, err));
        goto err_free_lens;
    }
    for (r = 0; r < nlens; ++r) {
        lens[r] = be64toh(wire_lens[r]);
        if ((lens[r] > TC_BOOT_TCP_MAX_LEN) ||
            (total + lens[r] > TC_BOOT_TCP_MAX_TOTAL)) {
            ucs_error("bootstrap rank %d: root %s sent length %zu for rank "
                      "%zu in %s, above the limit", tcp->rank,
                      tcp->root_name, lens[r], r, step);
            status = UCS_ERR_EXCEEDS_LIMIT;
            goto err_free_lens;
        }
        total += lens[r];
    }
    if (lens[tcp->rank] != len) {
        ucs_error("bootstrap rank %d: root %s says we sent %zu bytes, not %zu",
                  tcp->rank, tcp->root_name, lens[tcp->rank], len);
        status = UCS_ERR_IO_ERROR;
        goto err_free_lens;
    }

    all = malloc(total ? total : 1);
    if (all == NULL) {
        ucs_error("failed to allocate %zu bytes of allgatherv results", total);
        status = UCS_ERR_NO_MEMORY;
        goto err_free_lens;
    }
    status = tc_sock_recv(tcp->root_fd, all, total, deadline, &err);
    if (status != UCS_OK) {
        ucs_error("bootstrap rank %d: %zu bytes from root %s in %s: %s",
                  tcp->rank, total, tcp->root_name, step,
                  tc_sock_io_str(status, err));
        goto err_free_all;
    }

    free(wire_lens);
    *all_p = all;
    return UCS_OK;

err_free_all:
    free(all);
err_free_lens:
    free(wire_lens);
err:
    /* hang up, so that the root notices and tells the others */
    tcp->status = status;
    tc_sock_close(&tcp->root_fd);
    return status;
}

static ucs_status_t tc_boot_tcp_root_gather(tc_boot_tcp_t *tcp,
                                            tc_sock_rx_t *rx,
                                            tc_boot_tcp_data_t *hdrs,
                                            double deadline, char *reason,
                                            size_t max)
{
    struct pollfd *pfds = tcp->pfds;
    int *peer           = tcp->peer;
    int *done           = tcp->done;
    int nfds, r, ret, err;
    ucs_status_t status;
    size_t total = 0;
    uint64_t len;
    char missing[128];

    for (r = 1; r < tcp->size; ++r) {
        rx[r].buf = &hdrs[r];
        rx[r].len = sizeof(hdrs[r]);
        rx[r].got = 0;
        done[r]   = 0;
    }

    for (;;) {
        if (tc_sock_now() >= deadline) {
            tc_boot_tcp_missing_ranks(tcp, done, missing, sizeof(missing));
            snprintf(reason, max, "timed out after %.1f s in collective %u "
                     "waiting for rank(s) %s", tcp->timeout_s, tcp->seq,
                     missing);
            return UCS_ERR_TIMED_OUT;
        }

        nfds = 0;
        for (r = 1; r < tcp->size; ++r) {
            if (!done[r]) {
                pfds[nfds].fd     = tcp->fds[r];
                pfds[nfds].events = POLLIN;
                peer[nfds++]      = r;
            }
        }
        if (nfds == 0) {
            return UCS_OK;
        }

        ret = poll(pfds, nfds, tc_sock_poll_ms(deadline));
        if ((ret < 0) && (errno != EINTR)) {
            snprintf(reason, max, "poll failed in collective %u: %s",
                     tcp->seq, strerror(errno));
            return UCS_ERR_IO_ERROR;
        }

        for (ret = 0; ret < nfds; ++ret) {
            if (pfds[ret].revents == 0) {
                continue;
            }
            r      = peer[ret];
            err    = 0;
            status = tc_sock_rx_progress(tcp->fds[r], &rx[r], &err);
            if (status == UCS_INPROGRESS) {
                continue;
            } else if (status != UCS_OK) {
                snprintf(reason, max, "rank %d %s during collective %u",
                         r, (status == UCS_ERR_CONNECTION_RESET) ?
                         "closed its connection" : "failed",
                         tcp->seq);
                if (err != 0) {
                    snprintf(reason + strlen(reason), max - strlen(reason),
                             " (%s)", strerror(err));
                }
                return status;
            }

            if (rx[r].buf != &hdrs[r]) {
                done[r] = 1;           /* payload complete */
                continue;
            }

            /* header complete: check it before trusting its length */
            len = be64toh(hdrs[r].len);
            if (ntohl(hdrs[r].magic) != TC_BOOT_TCP_MAGIC) {
                snprintf(reason, max, "rank %d sent a bad frame in collective "
                         "%u (magic 0x%08x)", r, tcp->seq,
                         ntohl(hdrs[r].magic));
                return UCS_ERR_IO_ERROR;
            }
            if (ntohl(hdrs[r].seq) != tcp->seq) {
                snprintf(reason, max, "rank %d is at collective %u, the root "
                         "at %u", r, ntohl(hdrs[r].seq), tcp->seq);
                return UCS_ERR_IO_ERROR;
            }
            if ((len > TC_BOOT_TCP_MAX_LEN) ||
                (total + len > TC_BOOT_TCP_MAX_TOTAL)) {
                snprintf(reason, max, "rank %d sent %llu bytes in collective "
                         "%u, above the limit of %lu", r,
                         (unsigned long long)len, tcp->seq,
                         TC_BOOT_TCP_MAX_LEN);
                return UCS_ERR_EXCEEDS_LIMIT;
            }
            total     += len;
            rx[r].buf  = malloc(len ? len : 1);
            if (rx[r].buf == NULL) {
                snprintf(reason, max, "cannot allocate %llu bytes for rank %d",
                         (unsigned long long)len, r);
                return UCS_ERR_NO_MEMORY;
            }
            rx[r].len = len;
            rx[r].got = 0;
            if (len == 0) {
                done[r] = 1;
            } else {
                /* maybe already there; otherwise poll says when */
                pfds[ret].revents = POLLIN;
                --ret;
            }
        }
    }
}

static ucs_status_t tc_boot_tcp_root_allgatherv(tc_boot_tcp_t *tcp,
                                                const void *buf, size_t len,
                                                double deadline, void **all_p,
                                                size_t *lens)
{
    size_t nlens = (size_t)tcp->size;
    char reason[TC_BOOT_TCP_MAX_REASON];
    tc_boot_tcp_status_t *reply;
    tc_boot_tcp_data_t *hdrs;
    size_t total, off, reply_len;
    tc_sock_rx_t *rx;
    ucs_status_t status;
    uint64_t *wire_lens;
    char *all;
    int r, err = 0;

    if (len > TC_BOOT_TCP_MAX_LEN) {
        ucs_error("bootstrap root: %zu bytes in collective %u is above the "
                  "limit of %lu", len, tcp->seq, TC_BOOT_TCP_MAX_LEN);
        snprintf(reason, sizeof(reason), "the root's contribution is above "
                 "the limit");
        status = UCS_ERR_EXCEEDS_LIMIT;
        goto err_abort;
    }

    rx   = calloc(nlens, sizeof(*rx));
    hdrs = calloc(nlens, sizeof(*hdrs));
    reply_len = sizeof(*reply) + nlens * sizeof(uint64_t);
    reply     = malloc(reply_len);
    if ((rx == NULL) || (hdrs == NULL) || (reply == NULL)) {
        ucs_error("failed to allocate bootstrap state for %d ranks",
                  tcp->size);
        snprintf(reason, sizeof(reason), "the root is out of memory");
        status = UCS_ERR_NO_MEMORY;
        goto err_free;
    }

    status = tc_boot_tcp_root_gather(tcp, rx, hdrs, deadline, reason,
                                     sizeof(reason));
    if (status != UCS_OK) {
        ucs_error("bootstrap root: %s", reason);
        goto err_free;
    }

    /* lengths in rank order, then the concatenation */
    rx[0].buf = (void*)buf;
    rx[0].len = len;
    total     = 0;
    wire_lens = (uint64_t*)(reply + 1);
    for (r = 0; r < tcp->size; ++r) {
        lens[r]      = rx[r].len;
        wire_lens[r] = htobe64(rx[r].len);
        total       += rx[r].len;
    }
    all = malloc(total ? total : 1);
    if (all == NULL) {
        ucs_error("failed to allocate %zu bytes of allgatherv results", total);
        snprintf(reason, sizeof(reason), "the root is out of memory");
        status = UCS_ERR_NO_MEMORY;
        goto err_free;
    }
    for (r = 0, off = 0; r < tcp->size; ++r) {
        if (rx[r].len > 0) {
            memcpy(all + off, rx[r].buf, rx[r].len);
        }
        off += rx[r].len;
    }

    reply->magic      = htonl(TC_BOOT_TCP_MAGIC);
    reply->seq        = htonl(tcp->seq);
    reply->status     = (int32_t)htonl((uint32_t)UCS_OK);
    reply->reason_len = 0;
    for (r = 1; r < tcp->size; ++r) {
        status = tc_sock_send(tcp->fds[r], reply, reply_len, deadline,
                                  &err);
        if (status == UCS_OK) {
            status = tc_sock_send(tcp->fds[r], all, total, deadline, &err);
        }
        if (status != UCS_OK) {
            snprintf(reason, sizeof(reason), "cannot send the result of "
                     "collective %u to rank %d: %s", tcp->seq, r,
                     tc_sock_io_str(status, err));
            ucs_error("bootstrap root: %s", reason);
            free(all);
            goto err_free;
        }
    }

    for (r = 1; r < tcp->size; ++r) {
        free(rx[r].buf == &hdrs[r] ? NULL : rx[r].buf);
    }
    free(reply);
    free(hdrs);
    free(rx);
    *all_p = all;
    return UCS_OK;

err_free:
    for (r = 1; (rx != NULL) && (hdrs != NULL) && (r < tcp->size); ++r) {
        free(rx[r].buf == &hdrs[r] ? NULL : rx[r].buf);
    }
    free(reply);
    free(hdrs);
    free(rx);
err_abort:
    tc_boot_tcp_root_abort(tcp, NULL, 0, status, reason);
    return status;
}

static ucs_status_t tc_boot_tcp_allgatherv(void *ctx, const void *buf,
                                           size_t len, void **all_p,
                                           size_t *lens)
{
    tc_boot_tcp_t *tcp = ctx;
    double deadline;

    if (tcp->status != UCS_OK) {
        ucs_debug("bootstrap rank %d: failed earlier: %s", tcp->rank,
                  ucs_status_string(tcp->status));
        return tcp->status;
    }

    ++tcp->seq;
    deadline = tc_sock_now() + tcp->timeout_s;
    ucs_trace("bootstrap rank %d: collective %u, %zu bytes", tcp->rank,
              tcp->seq, len);
    if (tcp->rank == 0) {
        return tc_boot_tcp_root_allgatherv(tcp, buf, len, deadline, all_p,
                                           lens);
    }
    return tc_boot_tcp_member_allgatherv(tcp, buf, len, deadline, all_p, lens);
}

static void tc_boot_tcp_destroy(void *ctx)
{
    tc_boot_tcp_t *tcp = ctx;
    int r;

    tc_sock_close(&tcp->root_fd);
    if (tcp->fds != NULL) {
        for (r = 0; r < tcp->size; ++r) {
            tc_sock_close(&tcp->fds[r]);
        }
        free(tcp->fds);
    }
    free(tcp->pfds);
    free(tcp->peer);
    free(tcp->done);
    tc_job_key_clear(&tcp->key);
    free(tcp);
}

static const tc_bootstrap_ops_t tc_boot_tcp_ops = {
    .name       = "tcp",
    .allgatherv = tc_boot_tcp_allgatherv,
    .destroy    = tc_boot_tcp_destroy
};

ucs_status_t tc_bootstrap_tcp_create(const char *root, int listen_fd,
                                     int rank, int size, double timeout_s,
                                     tc_bootstrap_h *boot_p)
{
    tc_boot_tcp_t *tcp;
    ucs_status_t status;
    double deadline;

    if ((size < 1) || (size > TC_BOOT_TCP_MAX_SIZE)) {
        ucs_error("tcp bootstrap size %d is out of range [1, %d]", size,
                  TC_BOOT_TCP_MAX_SIZE);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((rank < 0) || (rank >= size)) {
        ucs_error("tcp bootstrap rank %d is out of range [0, %d)", rank, size);
        return UCS_ERR_INVALID_PARAM;
    }
    if (!(timeout_s > 0)) {
        ucs_error("tcp bootstrap timeout %g s must be positive", timeout_s);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((listen_fd < 0) && ((root == NULL) || (root[0] == '\0'))) {
        ucs_error("tcp bootstrap rank %d needs the root's host:port", rank);
        return UCS_ERR_INVALID_PARAM;
    }

    tcp = calloc(1, sizeof(*tcp));
    if (tcp == NULL) {
        ucs_error("failed to allocate tcp bootstrap");
        return UCS_ERR_NO_MEMORY;
    }
    tcp->rank      = rank;
    tcp->size      = size;
    tcp->timeout_s = timeout_s;
    tcp->status    = UCS_OK;
    tcp->root_fd   = -1;

    status = tc_job_key_load(&tcp->key);
    if (status != UCS_OK) {
        goto err_destroy;
    }
    deadline = tc_sock_now() + timeout_s;
    if (rank == 0) {
        status = tc_boot_tcp_root_create(tcp, root, listen_fd, deadline);
    } else {
        status = tc_boot_tcp_member_create(tcp, root, deadline);
    }
    if (status != UCS_OK) {
        goto err_destroy;
    }

    status = tc_bootstrap_create(&tc_boot_tcp_ops, tcp, rank, size, boot_p);
    if (status != UCS_OK) {
        goto err_destroy;
    }
    ucs_debug("tcp bootstrap rank %d of %d ready (root %s)", rank, size,
              tcp->root_name);
    return UCS_OK;

err_destroy:
    tc_boot_tcp_destroy(tcp);
    return status;
}
