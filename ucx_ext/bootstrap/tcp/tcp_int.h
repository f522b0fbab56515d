/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The TCP bootstrap's handle and what its files share, bottom first:
 * tcp_wire.c (the handshake's messages and checks, tcp_wire.h),
 * tcp_status.c (status frames, the root's abort), tcp_connect.c (the
 * root's accepting, challenging and checking of hellos, and a member's
 * connect), tcp.c (collectives, create and destroy). Each calls only those
 * before it.
 */
#ifndef TC_BOOT_TCP_INT_H_
#define TC_BOOT_TCP_INT_H_

#include "tcp_wire.h"
#include <bootstrap/core/bootstrap_int.h>

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

/* Longest a connection may take to say hello: a silent or slow client
 * frees its slot after this (sooner when a flood pushes it out). */
#define TC_BOOT_TCP_HELLO_TIMEOUT_S 5.0

/* Longest time spent telling the others about a failure, and waiting for
 * them to hang up so that nothing we sent is lost to a reset. */
#define TC_BOOT_TCP_LINGER_S       0.5

#define TC_BOOT_TCP_NAME_MAX       80

/* Connections, besides the members, that hear why the root gave up: the
 * member with the key that caused it. Strangers hear nothing. */
#define TC_BOOT_TCP_MAX_EXTRA      1

#define TC_BOOT_TCP_NPFDS(_size)   ((_size) + TC_BOOT_TCP_MAX_EXTRA)

typedef struct tc_boot_tcp {
    int          rank;
    int          size;
    double       timeout_s;
    uint32_t     seq;         /* of the last collective */
    ucs_status_t status;      /* UCS_OK until a step fails */
    int          root_fd;     /* member: connection to the root */
    int          *fds;        /* root: fds[r] is rank r's connection */
    struct pollfd *pfds;      /* root: scratch, TC_BOOT_TCP_NPFDS entries */
    int          *peer;       /* root: scratch, rank of pfds[i] */
    int          *done;       /* root: scratch, per rank */
    char         root_name[TC_BOOT_TCP_NAME_MAX];
    tc_job_key_t key;
} tc_boot_tcp_t;

/* Status frames (tcp_status.c): one (and its reason, on error). */
ucs_status_t tc_boot_tcp_send_status(int fd, uint32_t seq, ucs_status_t status,
                                     const char *reason, double deadline, int *err_p);

/* Receive a status frame; an error frame's reason is logged and returned. */
ucs_status_t tc_boot_tcp_recv_status(tc_boot_tcp_t *tcp, uint32_t seq, const char *step,
                                     double deadline);

/* The root gives up: tells every member and the @a nextra connections in
 * @a extra_fds why, lingers briefly, and closes them all. */
void tc_boot_tcp_root_abort(tc_boot_tcp_t *tcp, const int *extra_fds, int nextra,
                            ucs_status_t status, const char *reason);

/* "1,3": the ranks whose flag in @a done is 0, for error messages */
void tc_boot_tcp_missing_ranks(tc_boot_tcp_t *tcp, const int *done, char *buf, size_t max);

/* Connection setup (tcp_connect.c): the root listens on @a root (or
 * serves @a listen_fd) and admits size - 1 members; a member connects. */
ucs_status_t tc_boot_tcp_root_create(tc_boot_tcp_t *tcp, const char *root, int listen_fd,
                                     double deadline);
ucs_status_t tc_boot_tcp_member_create(tc_boot_tcp_t *tcp, const char *root,
                                       double deadline);

#endif
