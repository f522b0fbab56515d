/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The job key: what lets the TCP bootstrap and a group's join service admit
 * only the job's own processes, as munge does for Slurm and the job key for
 * PMIx. Every legitimate process shares a secret (UCX_TC_JOB_KEY, or a file
 * only its owner may read, UCX_TC_JOB_KEY_FILE). A service sends each new
 * connection a fresh random challenge; the peer answers with
 * HMAC-SHA256(key, service name || challenge). The key never crosses the
 * wire, and a recorded answer is worthless for any other challenge.
 *
 * Without a key these services listen on loopback only: a port on every
 * address, or on a named one, is refused with an error that says what to set.
 *
 * Threads: any; tc_job_key_refusals() is a process-wide atomic count.
 */
#ifndef TWOCHAINS_JOB_KEY_H_
#define TWOCHAINS_JOB_KEY_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

#include <stddef.h>
#include <stdint.h>

BEGIN_C_DECLS

#define TC_JOB_KEY_NONCE_LEN 32   /**< bytes of a challenge */
#define TC_JOB_KEY_PROOF_LEN 32   /**< bytes of an answer (HMAC-SHA256) */
#define TC_JOB_KEY_MIN_LEN   16   /**< a shorter key is refused */
#define TC_JOB_KEY_MAX_LEN   256

/** Services that authenticate, named in the proof so that an answer for
 * one is no answer for the other. */
#define TC_JOB_KEY_SERVICE_BOOTSTRAP "twochains-bootstrap"
#define TC_JOB_KEY_SERVICE_JOIN      "twochains-join"

typedef struct tc_job_key {
    int     present;                    /**< a key is configured */
    size_t  length;
    uint8_t bytes[TC_JOB_KEY_MAX_LEN];
} tc_job_key_t;

/**
 * The configured key: UCX_TC_JOB_KEY, else the contents of
 * UCX_TC_JOB_KEY_FILE (a regular file of this user that no one else may
 * read or write; one trailing newline is not part of the key), else none
 * (present == 0, UCS_OK). A key shorter than TC_JOB_KEY_MIN_LEN, both
 * variables set, or a file that is missing or open to others: an error
 * that names the variable.
 */
ucs_status_t tc_job_key_load(tc_job_key_t *key);

/**
 * A fresh random key for one job, as hex text in @a out (at least 65
 * bytes): what a launcher hands its processes as UCX_TC_JOB_KEY when the
 * user gave none.
 */
ucs_status_t tc_job_key_generate(char *out, size_t max);

/** Wipe a loaded key. */
void tc_job_key_clear(tc_job_key_t *key);

/** A fresh random challenge (OpenSSL's RAND_bytes). */
ucs_status_t tc_job_key_challenge(uint8_t nonce[TC_JOB_KEY_NONCE_LEN]);

/** The answer to @a nonce for @a service: with no key, zeros. */
void tc_job_key_prove(const tc_job_key_t *key, const char *service,
                      const uint8_t nonce[TC_JOB_KEY_NONCE_LEN],
                      uint8_t proof[TC_JOB_KEY_PROOF_LEN]);

/**
 * Whether @a proof answers @a nonce for @a service (constant time). With
 * no key, every proof passes: the service is on loopback only. A failure
 * is counted (tc_job_key_refusals); the caller logs it once per peer.
 */
int tc_job_key_verify(const tc_job_key_t *key, const char *service,
                      const uint8_t nonce[TC_JOB_KEY_NONCE_LEN],
                      const uint8_t proof[TC_JOB_KEY_PROOF_LEN]);

/**
 * Where @a service may listen, given "host:port" @a addr: @a addr itself
 * with a key or on a loopback host; "0.0.0.0:port" (or ":port") becomes
 * "127.0.0.1:port" without a key, said once per service; any other host
 * without a key is UCS_ERR_INVALID_PARAM with an error that says to set
 * UCX_TC_JOB_KEY.
 */
ucs_status_t tc_job_key_listen_address(const tc_job_key_t *key, const char *service,
                                       const char *addr, char *out, size_t max);

/** The same rule for a socket already listening (inherited): bound to a
 * loopback address, or a key is configured; else UCS_ERR_INVALID_PARAM. */
ucs_status_t tc_job_key_check_listener(const tc_job_key_t *key, const char *service,
                                       int listen_fd);

/** Peers refused for a wrong or missing proof, by any service, so far. */
uint64_t tc_job_key_refusals(void);

END_C_DECLS

#endif
