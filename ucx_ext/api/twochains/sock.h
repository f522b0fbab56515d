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

END_C_DECLS

#endif
