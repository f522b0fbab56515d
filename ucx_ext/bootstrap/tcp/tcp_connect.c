/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * TCP bootstrap connection setup. The root runs every member's handshake at
 * once through a gate (<twochains/sock.h>: bounded per address and in all,
 * the oldest dropped first): it sends each connection a fresh challenge,
 * believes a hello only with the job key's proof (<twochains/job_key.h>),
 * then checks size and rank, and answers with its own proof. A member
 * connects, answers the challenge with its own nonce and proof, and
 * believes the root's verdict only with the root's proof. The messages and
 * their checks are in tcp_wire.c, the status frames in tcp_status.c.
 *
 * Invariants (with those of tcp.c): a stranger, a garbled, late or
 * relayed hello is dropped, counted and logged (one line per reason per
 * interval), never fatal for the bootstrap, and hears nothing; a fatal
 * mismatch among real members is told to everyone it concerns; a member
 * dropped before the root's verdict (a flood pushed it out) connects again
 * until its deadline.
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
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Connect again after this, doubling up to the max, when the root dropped
 * our connection before its verdict. */
#define TC_BOOT_TCP_RETRY_MIN_S 0.01
#define TC_BOOT_TCP_RETRY_MAX_S 0.25

/* The root's accepting: what its gate callbacks share. */
typedef struct tc_boot_tcp_accept {
    tc_boot_tcp_t *tcp;
    int           connected;
    int           offender;         /* a member that fails the job, or -1 */
    ucs_status_t  status;
    char          reason[TC_BOOT_TCP_MAX_REASON];
} tc_boot_tcp_accept_t;

/* Send a new connection its challenge. The socket is fresh, so its buffer
 * takes the frame at once; one that cannot is not worth waiting for. */
static ucs_status_t tc_boot_tcp_root_challenge(tc_sock_gate_conn_t *conn, void *arg)
{
    tc_boot_tcp_challenge_t challenge;
    ucs_status_t status;
    int err = 0;

    (void)arg;
    memset(&challenge, 0, sizeof(challenge));
    challenge.magic   = htonl(TC_BOOT_TCP_CHALLENGE);
    challenge.version = htons(TC_BOOT_TCP_VERSION);
    status = tc_job_key_challenge(conn->nonce);
    if (status != UCS_OK) {
        return status;
    }
    memcpy(challenge.nonce, conn->nonce, sizeof(challenge.nonce));
    return tc_sock_send(conn->fd, &challenge, sizeof(challenge), tc_sock_now(), &err);
}

/* The root's verdict on a proven hello, with its proof. */
static ucs_status_t tc_boot_tcp_root_answer(tc_boot_tcp_t *tcp, tc_sock_gate_conn_t *conn,
                                            const uint8_t *endpoints, ucs_status_t verdict,
                                            const char *reason)
{
    char frame[sizeof(tc_boot_tcp_verdict_t) + TC_BOOT_TCP_MAX_REASON];
    tc_boot_tcp_verdict_t v;
    size_t reason_len;
    int err = 0;

    tc_boot_tcp_verdict_make(&tcp->key, conn->nonce, endpoints,
                             (const tc_boot_tcp_hello_t*)conn->msg, verdict, reason, &v);
    reason_len = ntohl(v.reason_len);
    memcpy(frame, &v, sizeof(v));
    memcpy(frame + sizeof(v), reason, reason_len);
    return tc_sock_send(conn->fd, frame, sizeof(v) + reason_len, tc_sock_now() + 0.1, &err);
}

/*
 * A complete hello. Taken: it becomes its rank. Refused: not a bootstrap
 * peer (no proof of the key), dropped while we carry on. Stop: a member
 * with the key fails the whole job (its size or rank), a->reason says why.
 */
static tc_sock_gate_verdict_t tc_boot_tcp_root_hello(tc_sock_gate_conn_t *conn, void *arg,
                                                    const char **reason_p)
{
    tc_boot_tcp_accept_t *a = arg;
    tc_boot_tcp_t *tcp      = a->tcp;
    uint8_t endpoints[TC_SOCK_ENDPOINTS_LEN];
    tc_boot_tcp_hello_info_t h;
    char other[TC_BOOT_TCP_NAME_MAX];

    if (tc_sock_endpoints(conn->fd, 1, endpoints) != UCS_OK) {
        *reason_p = "its connection has no address";
        return TC_SOCK_GATE_REFUSED;
    }
    /* before anything it says is believed: a stranger cannot fail us */
    if (tc_boot_tcp_hello_check(&tcp->key, conn->nonce, endpoints, conn->msg,
                                sizeof(tc_boot_tcp_hello_t), &h, reason_p) != UCS_OK) {
        return TC_SOCK_GATE_REFUSED;
    }
    a->status = tc_boot_tcp_hello_judge(&h, tcp->size, a->reason, sizeof(a->reason));
    if ((a->status == UCS_OK) && (tcp->fds[h.rank] >= 0)) {
        tc_sock_peer_name(tcp->fds[h.rank], other, sizeof(other));
        snprintf(a->reason, sizeof(a->reason), "duplicate rank %d: announced by %s and by %s",
                 h.rank, other, conn->name);
        a->status = UCS_ERR_ALREADY_EXISTS;
    }
    if (a->status != UCS_OK) {
        /* a member with the key: it hears why, and so will everyone */
        (void)tc_boot_tcp_root_answer(tcp, conn, endpoints, a->status, a->reason);
        a->offender = conn->fd;
        return TC_SOCK_GATE_STOP;
    }
    if (tc_boot_tcp_root_answer(tcp, conn, endpoints, UCS_OK, "") != UCS_OK) {
        *reason_p = "it did not take the root's verdict";
        return TC_SOCK_GATE_REFUSED;
    }
    ucs_debug("bootstrap root: rank %d is %s", h.rank, conn->name);
    tcp->fds[h.rank]  = conn->fd;
    tcp->done[h.rank] = 1;
    ++a->connected;
    return TC_SOCK_GATE_TAKEN;
}

static ucs_status_t tc_boot_tcp_root_accept_all(tc_boot_tcp_t *tcp,
                                                int listen_fd, double deadline)
{
    tc_boot_tcp_accept_t a = {.tcp = tcp, .offender = -1, .status = UCS_OK};
    char missing[128];
    tc_sock_gate_t gate;
    ucs_status_t status;
    int rank, err;

    memset(tcp->done, 0, tcp->size * sizeof(*tcp->done));
    status = tc_sock_gate_init(&gate, "bootstrap root", listen_fd, 0, 0,
                               sizeof(tc_boot_tcp_hello_t), TC_BOOT_TCP_HELLO_TIMEOUT_S,
                               tc_boot_tcp_root_challenge, NULL);
    if (status != UCS_OK) {
        snprintf(a.reason, sizeof(a.reason), "the root cannot accept connections");
        goto err_fatal;
    }

    while (a.connected < tcp->size - 1) {
        if (tc_sock_now() >= deadline) {
            tc_boot_tcp_missing_ranks(tcp, tcp->done, missing, sizeof(missing));
            snprintf(a.reason, sizeof(a.reason), "timed out after %.1f s waiting "
                     "for rank(s) %s of %d to connect", tcp->timeout_s,
                     missing, tcp->size);
            status = UCS_ERR_TIMED_OUT;
            goto err_gate;
        }
        /* wake up at least every 100 ms to drop connections that are late */
        if (tc_sock_gate_progress(&gate, ucs_min(100, tc_sock_poll_ms(deadline)),
                                  tc_boot_tcp_root_hello, &a) < 0) {
            status = a.status;
            goto err_gate;
        }
    }
    /* strangers still in handshake are closed: they learn nothing */
    tc_sock_gate_cleanup(&gate);

    /* everyone is here */
    for (rank = 1; rank < tcp->size; ++rank) {
        status = tc_boot_tcp_send_status(tcp->fds[rank], 0, UCS_OK, "",
                                         deadline, &err);
        if (status != UCS_OK) {
            snprintf(a.reason, sizeof(a.reason), "cannot answer rank %d: %s",
                     rank, tc_sock_io_str(status, err));
            goto err_fatal;
        }
    }
    return UCS_OK;

err_gate:
    tc_sock_gate_cleanup(&gate);
err_fatal:
    ucs_error("bootstrap root: %s", a.reason);
    tc_boot_tcp_root_abort(tcp, &a.offender, (a.offender >= 0), status, a.reason);
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

/*
 * One handshake on a fresh connection: the challenge, our hello, the root's
 * proven verdict. UCS_ERR_CONNECTION_RESET: the root dropped us before its
 * verdict (a flood pushed us out, or it is busy): connect again.
 */
static ucs_status_t tc_boot_tcp_member_handshake(tc_boot_tcp_t *tcp, const char *root,
                                                 double deadline)
{
    uint8_t endpoints[TC_SOCK_ENDPOINTS_LEN], nonce[TC_JOB_KEY_NONCE_LEN];
    char reason[TC_BOOT_TCP_MAX_REASON + 1];
    tc_boot_tcp_challenge_t challenge;
    tc_boot_tcp_verdict_t verdict;
    tc_boot_tcp_hello_t hello;
    ucs_status_t status, root_status;
    size_t reason_len;
    int err = 0;

    status = tc_sock_recv(tcp->root_fd, &challenge, sizeof(challenge), deadline, &err);
    if (status == UCS_ERR_CONNECTION_RESET) {
        return status;
    } else if (status != UCS_OK) {
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

    status = tc_sock_endpoints(tcp->root_fd, 0, endpoints);
    if (status == UCS_OK) {
        status = tc_job_key_challenge(nonce);
    }
    if (status != UCS_OK) {
        return status;
    }
    tc_boot_tcp_hello_make(&tcp->key, challenge.nonce, nonce, endpoints, tcp->rank,
                           tcp->size, &hello);
    status = tc_sock_send(tcp->root_fd, &hello, sizeof(hello), deadline, &err);
    if (status == UCS_OK) {
        status = tc_sock_recv(tcp->root_fd, &verdict, sizeof(verdict), deadline, &err);
    }
    if (status == UCS_ERR_CONNECTION_RESET) {
        return status;
    } else if (status != UCS_OK) {
        ucs_error("bootstrap rank %d: no verdict from root %s on our hello: %s", tcp->rank,
                  root, tc_sock_io_str(status, err));
        return status;
    }
    status = tc_boot_tcp_verdict_reason_len(&verdict, &reason_len);
    if (status == UCS_OK) {
        status = tc_sock_recv(tcp->root_fd, reason, reason_len, deadline, &err);
    }
    if ((status != UCS_OK) ||
        (tc_boot_tcp_verdict_check(&tcp->key, challenge.nonce, endpoints, &hello, &verdict,
                                   reason, reason_len, &root_status) != UCS_OK)) {
        ucs_error("bootstrap rank %d: %s did not prove the job key (UCX_TC_JOB_KEY) in "
                  "its verdict: a root of another job, or a relay or NAT is between us",
                  tcp->rank, root);
        return UCS_ERR_REJECTED;
    }
    if (root_status != UCS_OK) {
        reason[reason_len] = '\0';
        ucs_error("bootstrap rank %d: root %s refused us: %s (%s)", tcp->rank, root,
                  reason_len ? reason : "no reason given", ucs_status_string(root_status));
        return root_status;
    }
    return UCS_OK;
}

ucs_status_t tc_boot_tcp_member_create(tc_boot_tcp_t *tcp,
                                              const char *root,
                                              double deadline)
{
    double backoff = TC_BOOT_TCP_RETRY_MIN_S;
    ucs_status_t status;
    char who[32];
    int tries;

    snprintf(tcp->root_name, sizeof(tcp->root_name), "%s", root);
    snprintf(who, sizeof(who), "bootstrap rank %d", tcp->rank);
    for (tries = 1;; ++tries) {
        status = tc_sock_connect(root, deadline, who, &tcp->root_fd);
        if (status != UCS_OK) {
            return status;
        }
        status = tc_boot_tcp_member_handshake(tcp, root, deadline);
        if (status == UCS_OK) {
            break;
        }
        tc_sock_close(&tcp->root_fd);
        if (status != UCS_ERR_CONNECTION_RESET) {
            return status;
        }
        if (tc_sock_now() + backoff >= deadline) {
            ucs_error("bootstrap rank %d: root %s dropped our handshake %d times",
                      tcp->rank, root, tries);
            return UCS_ERR_TIMED_OUT;
        }
        ucs_debug("bootstrap rank %d: root %s dropped our handshake; connecting again",
                  tcp->rank, root);
        usleep((useconds_t)(backoff * 1e6));
        backoff = ucs_min(2 * backoff, TC_BOOT_TCP_RETRY_MAX_S);
    }

    return tc_boot_tcp_recv_status(tcp, 0, "connection setup", deadline);
}
