/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Bootstrap internals: the generic handle and the TCP rendezvous wire format.
 * The wire format lives here (not in boot_tcp.c) so that tests can craft
 * frames, valid and invalid, byte for byte.
 */
#ifndef TC_BOOTSTRAP_INT_H_
#define TC_BOOTSTRAP_INT_H_

#include <twochains/bootstrap.h>
#include <twochains/job_key.h>

#include <ucs/sys/compiler_def.h>
#include <stdint.h>

BEGIN_C_DECLS

/* A bootstrap member: a backend plus its rank and size. */
struct tc_bootstrap {
    const tc_bootstrap_ops_t *ops;
    void                     *ctx;
    int                      rank;
    int                      size;
};

/*
 * TCP rendezvous wire format. Every integer is big-endian (network order).
 *
 * create:   root -> member   tc_boot_tcp_challenge_t (a fresh nonce)
 *           member -> root   tc_boot_tcp_hello_t (with its job key proof)
 *           root -> member   tc_boot_tcp_status_t (seq 0), then reason bytes
 *                            when status != UCS_OK
 * each collective, seq = 1, 2, ...:
 *           member -> root   tc_boot_tcp_data_t, then len bytes
 *           root -> member   tc_boot_tcp_status_t; when status == UCS_OK
 *                            size x uint64 lengths and their concatenation,
 *                            else reason_len bytes of text
 */
#define TC_BOOT_TCP_MAGIC          0x54434254u  /* "TCBT" */
#define TC_BOOT_TCP_CHALLENGE      0x54434243u  /* "TCBC" */
#define TC_BOOT_TCP_VERSION        2
#define TC_BOOT_TCP_MAX_LEN        (64ul << 20) /* one member's contribution */
#define TC_BOOT_TCP_MAX_TOTAL      (1ul << 30)  /* all contributions together */
#define TC_BOOT_TCP_MAX_SIZE       65536        /* members */
#define TC_BOOT_TCP_MAX_REASON     256          /* bytes of error text */

typedef struct tc_boot_tcp_challenge {
    uint32_t magic;       /* TC_BOOT_TCP_CHALLENGE */
    uint16_t version;
    uint16_t reserved;
    uint8_t  nonce[TC_JOB_KEY_NONCE_LEN];
} tc_boot_tcp_challenge_t;

typedef struct tc_boot_tcp_hello {
    uint32_t magic;
    uint16_t version;
    uint16_t reserved;
    int32_t  rank;
    int32_t  size;
    uint8_t  proof[TC_JOB_KEY_PROOF_LEN]; /* tc_job_key_prove of the challenge */
} tc_boot_tcp_hello_t;

typedef struct tc_boot_tcp_data {
    uint32_t magic;
    uint32_t seq;
    uint64_t len;
} tc_boot_tcp_data_t;

typedef struct tc_boot_tcp_status {
    uint32_t magic;
    uint32_t seq;
    int32_t  status;      /* ucs_status_t */
    uint32_t reason_len;  /* bytes of text after the header, error only */
} tc_boot_tcp_status_t;

#ifdef __cplusplus
#  define TC_BOOT_STATIC_ASSERT static_assert
#else
#  define TC_BOOT_STATIC_ASSERT _Static_assert
#endif
TC_BOOT_STATIC_ASSERT(sizeof(tc_boot_tcp_challenge_t) == 40, "challenge is 40 bytes");
TC_BOOT_STATIC_ASSERT(sizeof(tc_boot_tcp_hello_t) == 48, "hello is 48 bytes");
TC_BOOT_STATIC_ASSERT(sizeof(tc_boot_tcp_data_t) == 16, "data header is 16 bytes");
TC_BOOT_STATIC_ASSERT(sizeof(tc_boot_tcp_status_t) == 16, "status is 16 bytes");

/* Single-member bootstrap: allgatherv copies. */
ucs_status_t tc_bootstrap_single_create(tc_bootstrap_h *boot_p);

END_C_DECLS

#endif
