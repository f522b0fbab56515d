/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The gate (<twochains/sock.h>): a listener's handshakes, many at once, for
 * the TCP bootstrap's root and a group's join sponsor alike. A connection
 * is accepted, greeted with the caller's challenge, and its first message
 * read without blocking; the caller judges it once complete.
 *
 * Invariants:
 *  - at most max_pending connections in handshake, at most max_per_source
 *    of one address: beyond either bound the oldest (of all, or of that
 *    address) is dropped, so the newest always get their chance, and a
 *    real peer, which answers within a round trip, is not held off by any
 *    number of silent ones;
 *  - the listener is drained on every pass (up to TC_SOCK_GATE_ACCEPT_BATCH
 *    connections), the table full or not: the kernel's backlog holds no
 *    real peer behind a flood. Out of file descriptors, the oldest pending
 *    connection makes room;
 *  - no connection stays past timeout_s without its complete message;
 *  - nothing a peer sends is read beyond msg_len bytes, and nothing it
 *    sends is judged before all of them arrived;
 *  - every refusal is counted by reason; a reason is logged at once the
 *    first time, then at most once per TC_SOCK_GATE_LOG_INTERVAL_S, with
 *    the count and the last peer. A flood fills no log.
 */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE          /* accept4 */
#endif
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include <twochains/sock.h>
#include <twochains/config.h>

#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define TC_SOCK_GATE_ACCEPT_BATCH 256    /* connections accepted per pass */
#define TC_SOCK_GATE_EVENTS       256    /* events handled per pass */
#define TC_SOCK_GATE_SWEEP_S      0.05   /* how often late ones are looked for */
#define TC_SOCK_GATE_LISTENER     UINT64_MAX

static uint64_t tc_sock_gate_tag(const tc_sock_gate_t *gate, const tc_sock_gate_conn_t *c)
{
    return ((uint64_t)c->gen << 32) | (uint64_t)(c - gate->conns);
}

static void tc_sock_gate_log_reason(tc_sock_gate_t *gate, tc_sock_gate_reason_t *r, double now)
{
    if (r->unlogged == 1) {
        ucs_warn("%s: refused %s: %s", gate->who, r->last_name, r->text);
    } else {
        ucs_warn("%s: refused %llu connections in %.0f s: %s (the last from %s)", gate->who,
                 (unsigned long long)r->unlogged, TC_SOCK_GATE_LOG_INTERVAL_S, r->text,
                 r->last_name);
    }
    r->unlogged = 0;
    r->logged_s = now;
}

void tc_sock_gate_refuse(tc_sock_gate_t *gate, const char *name, const char *reason)
{
    tc_sock_gate_reason_t *r = NULL;
    double now               = tc_sock_now();
    unsigned i;

    for (i = 0; i < TC_SOCK_GATE_MAX_REASONS; ++i) {
        r = &gate->reasons[i];
        if ((r->text[0] == '\0') ||
            !strncmp(r->text, reason, sizeof(r->text) - 1)) {
            break;
        }
    }
    /* the table full: the last entry counts the rest */
    if (r->text[0] == '\0') {
        snprintf(r->text, sizeof(r->text), "%s",
                 (i < TC_SOCK_GATE_MAX_REASONS) ? reason : "other reasons");
        r->logged_s = now - 2 * TC_SOCK_GATE_LOG_INTERVAL_S;
    }
    ++gate->refused;
    ++r->total;
    ++r->unlogged;
    snprintf(r->last_name, sizeof(r->last_name), "%s", name);
    if (now - r->logged_s >= TC_SOCK_GATE_LOG_INTERVAL_S) {
        tc_sock_gate_log_reason(gate, r, now);
    }
}

uint64_t tc_sock_gate_refusals(const tc_sock_gate_t *gate, const char *reason)
{
    uint64_t n = 0;
    unsigned i;

    for (i = 0; i < TC_SOCK_GATE_MAX_REASONS; ++i) {
        if ((reason == NULL) || !strcmp(gate->reasons[i].text, reason)) {
            n += gate->reasons[i].total;
        }
    }
    return n;
}

/* Forget @a c: closed, or taken by the caller (and out of our epoll). */
static void tc_sock_gate_release(tc_sock_gate_t *gate, tc_sock_gate_conn_t *c, int close_it)
{
    if (close_it) {
        close(c->fd);
    } else {
        epoll_ctl(gate->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    }
    c->fd = -1;
    ++c->gen;
    --gate->npending;
}

static void tc_sock_gate_drop(tc_sock_gate_t *gate, tc_sock_gate_conn_t *c, const char *reason)
{
    tc_sock_gate_refuse(gate, c->name, reason);
    tc_sock_gate_release(gate, c, 1);
    ++gate->dropped;
}

/* The oldest pending connection, of @a source or of all (NULL). */
static tc_sock_gate_conn_t *tc_sock_gate_oldest(tc_sock_gate_t *gate, const uint8_t *source,
                                                unsigned *count_p)
{
    tc_sock_gate_conn_t *oldest = NULL, *c;
    unsigned count              = 0;

    for (c = gate->conns; c < gate->conns + gate->max_pending; ++c) {
        if ((c->fd < 0) || ((source != NULL) && memcmp(c->source, source, 16))) {
            continue;
        }
        ++count;
        if ((oldest == NULL) || (c->seq < oldest->seq)) {
            oldest = c;
        }
    }
    *count_p = count;
    return oldest;
}

static void tc_sock_gate_source(int fd, uint8_t source[16], char *name, size_t max)
{
    uint8_t endpoints[TC_SOCK_ENDPOINTS_LEN];

    /* the client's half: address (16 bytes), port */
    memset(source, 0, 16);
    if (tc_sock_endpoints(fd, 1, endpoints) == UCS_OK) {
        memcpy(source, endpoints + 18, 16);
    }
    tc_sock_peer_name(fd, name, max);
}

/* One new connection @a fd: make room, greet it. */
static void tc_sock_gate_admit(tc_sock_gate_t *gate, int fd)
{
    struct epoll_event ev;
    tc_sock_gate_conn_t *c;
    uint8_t source[16];
    char name[TC_SOCK_GATE_NAME_MAX];
    unsigned count;

    tc_sock_set_nodelay(fd);
    tc_sock_gate_source(fd, source, name, sizeof(name));
    c = tc_sock_gate_oldest(gate, source, &count);
    if (count >= gate->max_per_source) {
        tc_sock_gate_drop(gate, c, "too many handshakes from one address: dropped its oldest");
    }
    if (gate->npending >= gate->max_pending) {
        c = tc_sock_gate_oldest(gate, NULL, &count);
        tc_sock_gate_drop(gate, c, "too many handshakes at once: dropped the oldest");
    }
    for (c = gate->conns; c->fd >= 0; ++c) {
        /* npending < max_pending: a slot is free */
    }
    c->fd    = fd;
    c->seq   = gate->next_seq++;
    c->since = tc_sock_now();
    c->got   = 0;
    memcpy(c->source, source, sizeof(c->source));
    memcpy(c->name, name, sizeof(c->name));
    ++gate->npending;
    ++gate->accepted;

    ev.events   = EPOLLIN | EPOLLRDHUP;
    ev.data.u64 = tc_sock_gate_tag(gate, c);
    if (epoll_ctl(gate->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        tc_sock_gate_drop(gate, c, "cannot be watched (epoll_ctl failed)");
        return;
    }
    if (gate->greet(c, gate->greet_arg) != UCS_OK) {
        tc_sock_gate_drop(gate, c, "cannot be challenged");
    }
}

static void tc_sock_gate_accept(tc_sock_gate_t *gate)
{
    unsigned count, n;
    int fd;

    for (n = 0; n < TC_SOCK_GATE_ACCEPT_BATCH; ++n) {
        fd = accept4(gate->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            tc_sock_gate_admit(gate, fd);
            continue;
        }
        if (((errno == EMFILE) || (errno == ENFILE)) && (gate->npending > 0)) {
            /* the file limit before our bounds: the oldest makes room */
            tc_sock_gate_drop(gate, tc_sock_gate_oldest(gate, NULL, &count),
                              "out of file descriptors: dropped the oldest handshake");
            continue;
        }
        if ((errno != EAGAIN) && (errno != EWOULDBLOCK) && (errno != EINTR) &&
            (errno != ECONNABORTED)) {
            ucs_debug("%s: accept failed: %s", gate->who, strerror(errno));
        }
        break;
    }
}

ucs_status_t tc_sock_gate_init(tc_sock_gate_t *gate, const char *who, int listen_fd,
                               unsigned max_pending, unsigned max_per_source,
                               size_t msg_len, double timeout_s,
                               tc_sock_gate_greet_cb_t greet, void *greet_arg)
{
    struct epoll_event ev;
    tc_config_t config;
    unsigned i;

    if ((max_pending == 0) || (max_per_source == 0)) {
        /* UCX_TC_HANDSHAKE_MAX[_PER_SOURCE]; the built-in bounds if unreadable */
        if (tc_config_read(&config) == UCS_OK) {
            max_pending    = max_pending ? max_pending : config.handshake_max;
            max_per_source = max_per_source ? max_per_source :
                             config.handshake_max_per_source;
            tc_config_release(&config);
        }
    }
    memset(gate, 0, sizeof(*gate));
    gate->epfd = -1;
    if ((msg_len == 0) || (msg_len > TC_SOCK_GATE_MSG_MAX)) {
        ucs_error("%s: a first message of %zu bytes is out of range", who, msg_len);
        return UCS_ERR_INVALID_PARAM;
    }
    gate->who            = who;
    gate->listen_fd      = listen_fd;
    gate->max_pending    = max_pending ? max_pending : TC_SOCK_GATE_MAX_PENDING;
    gate->max_per_source = max_per_source ? max_per_source : TC_SOCK_GATE_MAX_PER_SOURCE;
    gate->max_per_source = ucs_min(gate->max_per_source, gate->max_pending);
    gate->msg_len        = msg_len;
    gate->timeout_s      = timeout_s;
    gate->greet          = greet;
    gate->greet_arg      = greet_arg;
    snprintf(gate->late_reason, sizeof(gate->late_reason),
             "no complete first message within %.1f s", timeout_s);

    tc_sock_raise_fd_limit();
    gate->conns = calloc(gate->max_pending, sizeof(*gate->conns));
    gate->epfd  = epoll_create1(EPOLL_CLOEXEC);
    if ((gate->conns == NULL) || (gate->epfd < 0)) {
        ucs_error("%s: cannot set up %u handshakes: %s", who, gate->max_pending,
                  strerror(errno));
        goto err;
    }
    for (i = 0; i < gate->max_pending; ++i) {
        gate->conns[i].fd = -1;
    }
    ev.events   = EPOLLIN;
    ev.data.u64 = TC_SOCK_GATE_LISTENER;
    if ((tc_sock_set_nonblock(listen_fd) != UCS_OK) ||
        (epoll_ctl(gate->epfd, EPOLL_CTL_ADD, listen_fd, &ev) != 0)) {
        ucs_error("%s: cannot watch listener fd %d: %s", who, listen_fd, strerror(errno));
        goto err;
    }
    return UCS_OK;

err:
    tc_sock_gate_cleanup(gate);
    return UCS_ERR_IO_ERROR;
}

void tc_sock_gate_for_each(tc_sock_gate_t *gate,
                           void (*fn)(tc_sock_gate_conn_t *conn, void *arg), void *arg)
{
    tc_sock_gate_conn_t *c;

    for (c = gate->conns; (c != NULL) && (c < gate->conns + gate->max_pending); ++c) {
        if (c->fd >= 0) {
            fn(c, arg);
        }
    }
}

void tc_sock_gate_cleanup(tc_sock_gate_t *gate)
{
    double now = tc_sock_now();
    unsigned i;

    for (i = 0; (gate->conns != NULL) && (i < gate->max_pending); ++i) {
        if (gate->conns[i].fd >= 0) {
            tc_sock_gate_release(gate, &gate->conns[i], 1);
        }
    }
    for (i = 0; i < TC_SOCK_GATE_MAX_REASONS; ++i) {
        if (gate->reasons[i].unlogged > 0) {
            tc_sock_gate_log_reason(gate, &gate->reasons[i], now);
        }
    }
    free(gate->conns);
    gate->conns = NULL;
    if (gate->epfd >= 0) {
        close(gate->epfd);
        gate->epfd = -1;
    }
}

/* Late ones out, and refusals of a past interval logged. */
static void tc_sock_gate_sweep(tc_sock_gate_t *gate, double now)
{
    tc_sock_gate_conn_t *c;
    unsigned i;

    gate->swept_s = now;
    for (c = gate->conns; c < gate->conns + gate->max_pending; ++c) {
        if ((c->fd >= 0) && (now - c->since > gate->timeout_s)) {
            tc_sock_gate_drop(gate, c, gate->late_reason);
        }
    }
    for (i = 0; i < TC_SOCK_GATE_MAX_REASONS; ++i) {
        if ((gate->reasons[i].unlogged > 0) &&
            (now - gate->reasons[i].logged_s >= TC_SOCK_GATE_LOG_INTERVAL_S)) {
            tc_sock_gate_log_reason(gate, &gate->reasons[i], now);
        }
    }
}

/* Read what @a c sent; 1 once its message is complete, 0 for more, -1
 * when it was dropped. */
static int tc_sock_gate_read(tc_sock_gate_t *gate, tc_sock_gate_conn_t *c)
{
    ssize_t n;

    while (c->got < gate->msg_len) {
        n = recv(c->fd, c->msg + c->got, gate->msg_len - c->got, 0);
        if (n > 0) {
            c->got += (size_t)n;
        } else if ((n < 0) && (errno == EINTR)) {
            continue;
        } else if ((n < 0) && ((errno == EAGAIN) || (errno == EWOULDBLOCK))) {
            return 0;
        } else {
            tc_sock_gate_drop(gate, c, (c->got == 0) ?
                              "hung up before its first message" :
                              "hung up in the middle of its first message");
            return -1;
        }
    }
    return 1;
}

int tc_sock_gate_progress(tc_sock_gate_t *gate, int timeout_ms, tc_sock_gate_ready_cb_t ready,
                          void *arg)
{
    struct epoll_event events[TC_SOCK_GATE_EVENTS];
    tc_sock_gate_verdict_t verdict;
    tc_sock_gate_conn_t *c;
    const char *reason;
    int nev, i, handed = 0;
    uint64_t idx;
    double now;

    nev = epoll_wait(gate->epfd, events, TC_SOCK_GATE_EVENTS, timeout_ms);
    for (i = 0; i < nev; ++i) {
        if (events[i].data.u64 == TC_SOCK_GATE_LISTENER) {
            tc_sock_gate_accept(gate);
            continue;
        }
        idx = events[i].data.u64 & UINT32_MAX;
        if (idx >= gate->max_pending) {
            continue;
        }
        c = &gate->conns[idx];
        if ((c->fd < 0) || (c->gen != (uint32_t)(events[i].data.u64 >> 32))) {
            continue;          /* dropped earlier in this pass */
        }
        if (tc_sock_gate_read(gate, c) != 1) {
            continue;
        }
        reason  = "refused";
        verdict = ready(c, arg, &reason);
        ++handed;
        if (verdict == TC_SOCK_GATE_REFUSED) {
            tc_sock_gate_drop(gate, c, reason);
        } else {
            tc_sock_gate_release(gate, c, 0);
            if (verdict == TC_SOCK_GATE_STOP) {
                return -1;
            }
        }
    }

    now = tc_sock_now();
    if (now - gate->swept_s >= TC_SOCK_GATE_SWEEP_S) {
        tc_sock_gate_sweep(gate, now);
    }
    return handed;
}
