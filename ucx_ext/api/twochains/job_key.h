/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The job key: what lets the TCP bootstrap and a group's join service admit
 * only the job's own processes, as munge does for Slurm and the job key for
 * PMIx. Every legitimate process shares a secret (UCX_TC_JOB_KEY, or a file
 * only its owner may read, UCX_TC_JOB_KEY_FILE). Both ends of a connection
 * prove the key: the service sends a fresh random challenge, the client
 * answers with its own challenge and its proof, and the service answers with
 * its proof. Each proof is HMAC-SHA256(key, transcript) over the prover's
 * role, the service name, both challenges, both TCP endpoints as the prover
 * sees them, and the exact bytes of the messages it answers and sends
 * (tc_job_key_transcript_t). So an answer is worthless for any other
 * challenge, service, role (a reflected answer fails), connection (a relay,
 * which sees other endpoints, fails) or message (a field changed on the way
 * fails). The key never crosses the wire.
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

/** Roles that prove the key, named in the transcript so that an answer of
 * one side is no answer of the other. */
#define TC_JOB_KEY_ROLE_RANK    "rank"      /**< a bootstrap member's hello */
#define TC_JOB_KEY_ROLE_ROOT    "root"      /**< the bootstrap root's verdict */
#define TC_JOB_KEY_ROLE_JOINER  "joiner"    /**< a joiner's request */
#define TC_JOB_KEY_ROLE_SPONSOR "sponsor"   /**< a sponsor's reply */

#define TC_JOB_KEY_MAX_PARTS 4

/**
 * What one proof covers: who proves it, for which service, both
 * challenges, the connection's endpoints (tc_sock_endpoints(): the same
 * bytes at both ends of a direct connection) and the exact bytes of up to
 * TC_JOB_KEY_MAX_PARTS messages. Every item is length-prefixed in the MAC,
 * so no two transcripts share their input.
 */
typedef struct tc_job_key_transcript {
    const char    *role;           /**< TC_JOB_KEY_ROLE_* */
    const char    *service;        /**< TC_JOB_KEY_SERVICE_* */
    const uint8_t *server_nonce;   /**< TC_JOB_KEY_NONCE_LEN bytes */
    const uint8_t *client_nonce;   /**< TC_JOB_KEY_NONCE_LEN bytes */
    const uint8_t *endpoints;      /**< @a endpoints_len bytes */
    size_t        endpoints_len;
    unsigned      nparts;
    const void    *parts[TC_JOB_KEY_MAX_PARTS];
    size_t        part_lens[TC_JOB_KEY_MAX_PARTS];
} tc_job_key_transcript_t;

/** The proof of @a t: with no key, zeros. */
void tc_job_key_prove(const tc_job_key_t *key, const tc_job_key_transcript_t *t,
                      uint8_t proof[TC_JOB_KEY_PROOF_LEN]);

/**
 * Whether @a proof proves @a t (constant time). With no key, every proof
 * passes: the service is on loopback only. A failure is counted
 * (tc_job_key_refusals); the caller logs it (rate-limited).
 */
int tc_job_key_verify(const tc_job_key_t *key, const tc_job_key_transcript_t *t,
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
