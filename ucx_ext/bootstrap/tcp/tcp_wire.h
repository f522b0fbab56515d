/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The TCP rendezvous wire format and its handshake's checks, below both
 * halves of the TCP backend (tcp_connect.c, tcp.c) and apart from them so
 * that tests and the fuzzer can craft frames, valid and invalid, byte for
 * byte.
 */
#ifndef TC_BOOTSTRAP_TCP_WIRE_H_
#define TC_BOOTSTRAP_TCP_WIRE_H_

#include <bootstrap/core/bootstrap_int.h>
#include <twochains/job_key.h>

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stddef.h>
#include <stdint.h>

BEGIN_C_DECLS

/*
 * TCP rendezvous wire format. Every integer is big-endian (network order).
 *
 * create:   root -> member   tc_boot_tcp_challenge_t (the root's nonce)
 *           member -> root   tc_boot_tcp_hello_t (the member's nonce and its
 *                            proof, role "rank")
 *           root -> member   tc_boot_tcp_verdict_t (its proof, role "root"),
 *                            then reason_len bytes of text: UCS_OK, or why
 *                            this member fails the job
 *           root -> member   tc_boot_tcp_status_t (seq 0) once all are
 *                            there, then reason bytes when status != UCS_OK
 * each collective, seq = 1, 2, ...:
 *           member -> root   tc_boot_tcp_data_t, then len bytes
 *           root -> member   tc_boot_tcp_status_t; when status == UCS_OK
 *                            size x uint64 lengths and their concatenation,
 *                            else reason_len bytes of text
 *
 * The proofs (<twochains/job_key.h>, service TC_JOB_KEY_SERVICE_BOOTSTRAP)
 * cover both nonces and the connection's endpoints (tc_sock_endpoints), and:
 *   the member's  the hello's bytes before its proof;
 *   the root's    the whole hello, the verdict's bytes before its proof,
 *                 and the reason.
 * The root reads nothing of a hello but its length before the proof
 * holds; the member nothing of a verdict but reason_len (bounded by
 * TC_BOOT_TCP_MAX_REASON) before the root's proof holds.
 */
#define TC_BOOT_TCP_MAGIC          0x54434254u  /* "TCBT" */
#define TC_BOOT_TCP_CHALLENGE      0x54434243u  /* "TCBC" */
#define TC_BOOT_TCP_VERDICT        0x54434256u  /* "TCBV" */
#define TC_BOOT_TCP_VERSION        3
#define TC_BOOT_TCP_MAX_LEN        TC_BOOTSTRAP_MAX_LEN
#define TC_BOOT_TCP_MAX_TOTAL      TC_BOOTSTRAP_MAX_TOTAL
#define TC_BOOT_TCP_MAX_SIZE       TC_BOOTSTRAP_MAX_SIZE
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
    uint8_t  nonce[TC_JOB_KEY_NONCE_LEN]; /* the member's, for the root's proof */
    uint8_t  proof[TC_JOB_KEY_PROOF_LEN]; /* the member's proof */
} tc_boot_tcp_hello_t;

typedef struct tc_boot_tcp_verdict {
    uint32_t magic;       /* TC_BOOT_TCP_VERDICT */
    uint16_t version;
    uint16_t reserved;
    int32_t  status;      /* ucs_status_t: UCS_OK admits */
    uint32_t reason_len;  /* bytes of text after the verdict */
    uint8_t  proof[TC_JOB_KEY_PROOF_LEN]; /* the root's proof */
} tc_boot_tcp_verdict_t;

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
TC_BOOT_STATIC_ASSERT(sizeof(tc_boot_tcp_hello_t) == 80, "hello is 80 bytes");
TC_BOOT_STATIC_ASSERT(sizeof(tc_boot_tcp_verdict_t) == 48, "verdict is 48 bytes");
TC_BOOT_STATIC_ASSERT(sizeof(tc_boot_tcp_data_t) == 16, "data header is 16 bytes");
TC_BOOT_STATIC_ASSERT(sizeof(tc_boot_tcp_status_t) == 16, "status is 16 bytes");

/* What a hello says, once its proof held. */
typedef struct tc_boot_tcp_hello_info {
    uint16_t version;
    int32_t  rank;
    int32_t  size;
} tc_boot_tcp_hello_info_t;

/*
 * The handshake's checks, pure functions of the bytes (tcp_wire.c), so
 * that a fuzzer calls them as the root and the member do. @a endpoints:
 * tc_sock_endpoints of the connection (TC_SOCK_ENDPOINTS_LEN bytes).
 */

/* A hello of @a len bytes to the challenge @a root_nonce. UCS_OK: it is a
 * hello of this version with a valid proof, *out filled. UCS_ERR_NO_ELEM:
 * not a bootstrap hello, or no proof of the key; *why_p says which, and
 * nothing else of it was looked at. */
ucs_status_t tc_boot_tcp_hello_check(const tc_job_key_t *key, const uint8_t *root_nonce,
                                     const uint8_t *endpoints, const void *bytes, size_t len,
                                     tc_boot_tcp_hello_info_t *out, const char **why_p);

/* Whether a proven hello @a h fits a job of @a size at this root: UCS_OK,
 * or the error and why in @a reason (which fails the whole job: a member
 * with the key and another size, rank or version). */
ucs_status_t tc_boot_tcp_hello_judge(const tc_boot_tcp_hello_info_t *h, int size,
                                     char *reason, size_t max);

/* The member's hello as @a rank of @a size, with its @a member_nonce,
 * proven for the challenge @a root_nonce. */
void tc_boot_tcp_hello_make(const tc_job_key_t *key, const uint8_t *root_nonce,
                            const uint8_t *member_nonce, const uint8_t *endpoints, int rank,
                            int size, tc_boot_tcp_hello_t *hello);

/* The root's verdict on @a hello: header (proven) and @a reason. */
void tc_boot_tcp_verdict_make(const tc_job_key_t *key, const uint8_t *root_nonce,
                              const uint8_t *endpoints, const tc_boot_tcp_hello_t *hello,
                              ucs_status_t status, const char *reason,
                              tc_boot_tcp_verdict_t *verdict);

/* The length of the reason after a verdict header @a v (the only field
 * read before its proof): UCS_OK, or UCS_ERR_NO_ELEM when @a v is not a
 * verdict of this version or its length is out of range. */
ucs_status_t tc_boot_tcp_verdict_reason_len(const tc_boot_tcp_verdict_t *v, size_t *len_p);

/* A whole verdict (header and @a reason_len bytes of @a reason) to our
 * @a hello: UCS_OK and the root's *status_p when the root proved the key,
 * else UCS_ERR_NO_ELEM. */
ucs_status_t tc_boot_tcp_verdict_check(const tc_job_key_t *key, const uint8_t *root_nonce,
                                       const uint8_t *endpoints,
                                       const tc_boot_tcp_hello_t *hello,
                                       const tc_boot_tcp_verdict_t *v, const char *reason,
                                       size_t reason_len, ucs_status_t *status_p);

END_C_DECLS

#endif
