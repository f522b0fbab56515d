/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Stream sockets with deadlines: the one implementation behind the TCP
 * bootstrap, exported for the layers built on this runtime (the replication
 * layer's join service) so that they do not grow a second one. Every call
 * that waits does so in poll() against an absolute deadline on
 * tc_sock_now()'s clock, so no call blocks past it.
 */
#ifndef TWOCHAINS_SOCK_H_
#define TWOCHAINS_SOCK_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

#include <stddef.h>
#include <stdint.h>

BEGIN_C_DECLS

/* Seconds on the monotonic clock: the clock of every deadline here. */
double tc_sock_now(void);

/* Milliseconds left until @a deadline, rounded up, for poll(). */
int tc_sock_poll_ms(double deadline);

/* Close *@a fd_p if open, and mark it closed (-1). */
void tc_sock_close(int *fd_p);

ucs_status_t tc_sock_set_nonblock(int fd);

void tc_sock_set_nodelay(int fd);

/* "host:port" of the far end of @a fd (or "fd N"), for messages. */
void tc_sock_peer_name(int fd, char *name, size_t max);

/* Text for a failed transfer: errno @a err, or what @a status says. */
const char *tc_sock_io_str(ucs_status_t status, int err);

/* Incoming bytes of one frame from one non-blocking connection. */
typedef struct tc_sock_rx {
    void   *buf;
    size_t len;
    size_t got;
} tc_sock_rx_t;

/* Receive what is available into @a rx. UCS_OK once complete, UCS_INPROGRESS
 * when more is to come, else the error (UCS_ERR_CONNECTION_RESET on EOF, with
 * *err_p = 0). */
ucs_status_t tc_sock_rx_progress(int fd, tc_sock_rx_t *rx, int *err_p);

/* All @a len bytes, or an error; @a fd is non-blocking. */
ucs_status_t tc_sock_recv(int fd, void *buf, size_t len, double deadline,
                          int *err_p);
ucs_status_t tc_sock_send(int fd, const void *buf, size_t len, double deadline,
                          int *err_p);

/* A non-blocking listening socket on "host:port" ("*:port" or ":port": any
 * address). With @a allow_port0, port 0 lets the system choose (see
 * tc_sock_local_port); without, it is an error. */
ucs_status_t tc_sock_listen(const char *addr, int allow_port0, int *fd_p);

/* The local port of a bound socket, 0 if unknown. */
int tc_sock_local_port(int fd);

/* Connect to "host:port", retrying with backoff until @a deadline (a
 * listener that is not up yet is expected); the socket is non-blocking, with
 * TCP_NODELAY. @a who names the caller in the single error log. */
ucs_status_t tc_sock_connect(const char *addr, double deadline,
                             const char *who, int *fd_p);

/* Both TCP endpoints of a connected socket as bytes that are the same at
 * its two ends: the server's address and port, then the client's (IPv4 as
 * v4-mapped IPv6, ports big-endian). A relay, or a NAT, between the ends
 * makes them differ. @a is_server: this end accepted the connection. */
#define TC_SOCK_ENDPOINTS_LEN 36
ucs_status_t tc_sock_endpoints(int fd, int is_server,
                               uint8_t out[TC_SOCK_ENDPOINTS_LEN]);

/* Raise the soft limit of open files to the hard limit (once per process),
 * so that a flood of connections meets the gate's bounds below before it
 * meets the file limit. */
void tc_sock_raise_fd_limit(void);

/*
 * The gate: one listener's handshakes, many at once (sock_gate.c). Each
 * accepted connection is greeted (the caller's challenge), then its first
 * message of a fixed length is read without blocking, while others are
 * read too. A complete one is handed to the caller, who takes the socket
 * or refuses it. Bounds:
 *  - at most max_pending connections are in handshake; when a new one
 *    arrives beyond that, the OLDEST is dropped (a flood of silent
 *    connections pushes out its own members, while a real peer, which
 *    answers within a round trip, is through long before);
 *  - at most max_per_source from one address (its oldest is dropped);
 *  - each has timeout_s to send its message;
 *  - the listener is drained on every pass, even when the table is full,
 *    so that no real peer waits in the kernel's backlog behind a flood.
 * Refusals are counted per reason and logged one line per reason per
 * TC_SOCK_GATE_LOG_INTERVAL_S, with a count (tc_sock_gate_refuse).
 * Threads: one at a time.
 */
#define TC_SOCK_GATE_MSG_MAX         256
#define TC_SOCK_GATE_NONCE_MAX       32
#define TC_SOCK_GATE_NAME_MAX        64
#define TC_SOCK_GATE_MAX_REASONS     16
#define TC_SOCK_GATE_LOG_INTERVAL_S  10.0
#define TC_SOCK_GATE_MAX_PENDING     1024   /* if UCX_TC_HANDSHAKE_MAX is unreadable */
#define TC_SOCK_GATE_MAX_PER_SOURCE  128    /* ... UCX_TC_HANDSHAKE_MAX_PER_SOURCE */

typedef struct tc_sock_gate_conn {
    int      fd;
    uint32_t gen;                  /* changes when the slot is reused */
    uint64_t seq;                  /* accept order: smaller is older */
    double   since;
    uint8_t  source[16];           /* peer address, IPv4 v4-mapped */
    char     name[TC_SOCK_GATE_NAME_MAX];
    uint8_t  nonce[TC_SOCK_GATE_NONCE_MAX];  /* the caller's challenge */
    uint8_t  msg[TC_SOCK_GATE_MSG_MAX];      /* its first message */
    size_t   got;
} tc_sock_gate_conn_t;

#define TC_SOCK_GATE_REASON_MAX      128

typedef struct tc_sock_gate_reason {
    char       text[TC_SOCK_GATE_REASON_MAX];
    uint64_t   total;              /* ever */
    uint64_t   unlogged;           /* since the last line */
    double     logged_s;
    char       last_name[TC_SOCK_GATE_NAME_MAX];
} tc_sock_gate_reason_t;

/* What the caller made of a complete first message. */
typedef enum {
    TC_SOCK_GATE_TAKEN,            /* the caller owns the socket now */
    TC_SOCK_GATE_REFUSED,          /* close it; counted and logged by reason */
    TC_SOCK_GATE_STOP              /* the caller took it, and stops */
} tc_sock_gate_verdict_t;

typedef struct tc_sock_gate tc_sock_gate_t;

/* Send a new connection its challenge (store it in conn->nonce); an error
 * drops the connection. */
typedef ucs_status_t (*tc_sock_gate_greet_cb_t)(tc_sock_gate_conn_t *conn, void *arg);

/* A complete first message in conn->msg. REFUSED: *reason_p says why. */
typedef tc_sock_gate_verdict_t (*tc_sock_gate_ready_cb_t)(tc_sock_gate_conn_t *conn, void *arg,
                                                         const char **reason_p);

struct tc_sock_gate {
    const char              *who;            /* "bootstrap root", "group join" */
    int                     listen_fd;
    int                     epfd;            /* pollable: readable when work waits */
    unsigned                max_pending;
    unsigned                max_per_source;
    size_t                  msg_len;
    double                  timeout_s;
    tc_sock_gate_greet_cb_t greet;
    void                    *greet_arg;
    tc_sock_gate_conn_t     *conns;          /* max_pending slots; fd -1 is free */
    unsigned                npending;
    uint64_t                next_seq;
    double                  swept_s;
    tc_sock_gate_reason_t   reasons[TC_SOCK_GATE_MAX_REASONS];
    char                    late_reason[TC_SOCK_GATE_REASON_MAX];
    uint64_t                accepted, refused, dropped;   /* dropped: evicted or late */
};

/* A gate on @a listen_fd (not owned: the caller closes it after cleanup).
 * @a max_pending, @a max_per_source: 0 takes UCX_TC_HANDSHAKE_MAX and
 * UCX_TC_HANDSHAKE_MAX_PER_SOURCE (1024 and 128 by default). */
ucs_status_t tc_sock_gate_init(tc_sock_gate_t *gate, const char *who, int listen_fd,
                               unsigned max_pending, unsigned max_per_source,
                               size_t msg_len, double timeout_s,
                               tc_sock_gate_greet_cb_t greet, void *greet_arg);

/* Close every connection still in handshake, and log the refusals not
 * logged yet. */
void tc_sock_gate_cleanup(tc_sock_gate_t *gate);

/* Accept, greet, read, expire; wait up to @a timeout_ms (0: not at all)
 * for something to do. Each complete first message goes to @a ready.
 * Returns the number of messages handed over, or -1 once @a ready said
 * STOP. */
int tc_sock_gate_progress(tc_sock_gate_t *gate, int timeout_ms, tc_sock_gate_ready_cb_t ready,
                          void *arg);

/* Count a refusal of @a name for @a reason, and log it: the first of a
 * reason at once, then one line per reason per interval with the count. */
void tc_sock_gate_refuse(tc_sock_gate_t *gate, const char *name, const char *reason);

/* Refusals of @a reason so far (every reason: NULL). */
uint64_t tc_sock_gate_refusals(const tc_sock_gate_t *gate, const char *reason);

/* Take every pending connection out of the gate, for a last word: @a fn is
 * called with each (it must not close it) before the gate closes it. */
void tc_sock_gate_for_each(tc_sock_gate_t *gate, void (*fn)(tc_sock_gate_conn_t *conn,
                                                            void *arg), void *arg);

END_C_DECLS

#endif
