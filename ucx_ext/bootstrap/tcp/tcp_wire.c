/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The TCP bootstrap's handshake messages (tcp_wire.h): made and
 * checked by pure functions of their bytes, which the root, the member and
 * the fuzzer (test/fuzz/fuzz_hello.c) call alike.
 *
 * Invariants: a hello's fields are read only after its length and its
 * proof held, a verdict's only after its proof held (its reason_len,
 * bounded, excepted: it says how many bytes the proof covers); a proof
 * covers the prover's role, both nonces, the connection's endpoints and
 * the exact bytes it answers and sends.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "tcp_wire.h"

#include <twochains/sock.h>

#include <arpa/inet.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* the member's proof: the hello up to its proof */
static void tc_boot_tcp_rank_transcript(const uint8_t *root_nonce, const uint8_t *endpoints,
                                        const tc_boot_tcp_hello_t *hello,
                                        tc_job_key_transcript_t *t)
{
    memset(t, 0, sizeof(*t));
    t->role          = TC_JOB_KEY_ROLE_RANK;
    t->service       = TC_JOB_KEY_SERVICE_BOOTSTRAP;
    t->server_nonce  = root_nonce;
    t->client_nonce  = hello->nonce;
    t->endpoints     = endpoints;
    t->endpoints_len = TC_SOCK_ENDPOINTS_LEN;
    t->nparts        = 1;
    t->parts[0]      = hello;
    t->part_lens[0]  = offsetof(tc_boot_tcp_hello_t, proof);
}

/* the root's proof: the whole hello, the verdict up to its proof, reason */
static void tc_boot_tcp_root_transcript(const uint8_t *root_nonce, const uint8_t *endpoints,
                                        const tc_boot_tcp_hello_t *hello,
                                        const tc_boot_tcp_verdict_t *v, const char *reason,
                                        size_t reason_len, tc_job_key_transcript_t *t)
{
    memset(t, 0, sizeof(*t));
    t->role          = TC_JOB_KEY_ROLE_ROOT;
    t->service       = TC_JOB_KEY_SERVICE_BOOTSTRAP;
    t->server_nonce  = root_nonce;
    t->client_nonce  = hello->nonce;
    t->endpoints     = endpoints;
    t->endpoints_len = TC_SOCK_ENDPOINTS_LEN;
    t->nparts        = 3;
    t->parts[0]      = hello;
    t->part_lens[0]  = sizeof(*hello);
    t->parts[1]      = v;
    t->part_lens[1]  = offsetof(tc_boot_tcp_verdict_t, proof);
    t->parts[2]      = reason;
    t->part_lens[2]  = reason_len;
}

ucs_status_t tc_boot_tcp_hello_check(const tc_job_key_t *key, const uint8_t *root_nonce,
                                     const uint8_t *endpoints, const void *bytes, size_t len,
                                     tc_boot_tcp_hello_info_t *out, const char **why_p)
{
    tc_job_key_transcript_t t;
    tc_boot_tcp_hello_t hello;

    if (len != sizeof(hello)) {
        *why_p = "not a bootstrap hello (wrong length)";
        return UCS_ERR_NO_ELEM;
    }
    memcpy(&hello, bytes, sizeof(hello));    /* read once, into our copy */
    if ((ntohl(hello.magic) != TC_BOOT_TCP_MAGIC) ||
        (ntohs(hello.version) != TC_BOOT_TCP_VERSION)) {
        *why_p = "not a bootstrap hello of this protocol version";
        return UCS_ERR_NO_ELEM;
    }
    tc_boot_tcp_rank_transcript(root_nonce, endpoints, &hello, &t);
    if (!tc_job_key_verify(key, &t, hello.proof)) {
        *why_p = "it did not prove the job key (UCX_TC_JOB_KEY), or a relay or NAT is "
                 "between us";
        return UCS_ERR_NO_ELEM;
    }
    out->version = ntohs(hello.version);
    out->rank    = (int32_t)ntohl((uint32_t)hello.rank);
    out->size    = (int32_t)ntohl((uint32_t)hello.size);
    return UCS_OK;
}

ucs_status_t tc_boot_tcp_hello_judge(const tc_boot_tcp_hello_info_t *h, int size,
                                     char *reason, size_t max)
{
    if (h->size != size) {
        snprintf(reason, max, "size mismatch: rank %d announced size %d, the root has "
                 "size %d", h->rank, h->size, size);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((h->rank <= 0) || (h->rank >= size)) {
        snprintf(reason, max, "a member announced rank %d, which is out of range [1, %d)",
                 h->rank, size);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

void tc_boot_tcp_hello_make(const tc_job_key_t *key, const uint8_t *root_nonce,
                            const uint8_t *member_nonce, const uint8_t *endpoints, int rank,
                            int size, tc_boot_tcp_hello_t *hello)
{
    tc_job_key_transcript_t t;

    memset(hello, 0, sizeof(*hello));
    hello->magic   = htonl(TC_BOOT_TCP_MAGIC);
    hello->version = htons(TC_BOOT_TCP_VERSION);
    hello->rank    = (int32_t)htonl((uint32_t)rank);
    hello->size    = (int32_t)htonl((uint32_t)size);
    memcpy(hello->nonce, member_nonce, sizeof(hello->nonce));
    tc_boot_tcp_rank_transcript(root_nonce, endpoints, hello, &t);
    tc_job_key_prove(key, &t, hello->proof);
}

void tc_boot_tcp_verdict_make(const tc_job_key_t *key, const uint8_t *root_nonce,
                              const uint8_t *endpoints, const tc_boot_tcp_hello_t *hello,
                              ucs_status_t status, const char *reason,
                              tc_boot_tcp_verdict_t *verdict)
{
    size_t reason_len = (status == UCS_OK) ? 0 : strnlen(reason, TC_BOOT_TCP_MAX_REASON);
    tc_job_key_transcript_t t;

    memset(verdict, 0, sizeof(*verdict));
    verdict->magic      = htonl(TC_BOOT_TCP_VERDICT);
    verdict->version    = htons(TC_BOOT_TCP_VERSION);
    verdict->status     = (int32_t)htonl((uint32_t)status);
    verdict->reason_len = htonl((uint32_t)reason_len);
    tc_boot_tcp_root_transcript(root_nonce, endpoints, hello, verdict, reason, reason_len,
                                &t);
    tc_job_key_prove(key, &t, verdict->proof);
}

ucs_status_t tc_boot_tcp_verdict_reason_len(const tc_boot_tcp_verdict_t *v, size_t *len_p)
{
    uint32_t len = ntohl(v->reason_len);

    if ((ntohl(v->magic) != TC_BOOT_TCP_VERDICT) ||
        (ntohs(v->version) != TC_BOOT_TCP_VERSION) || (len > TC_BOOT_TCP_MAX_REASON)) {
        return UCS_ERR_NO_ELEM;
    }
    *len_p = len;
    return UCS_OK;
}

ucs_status_t tc_boot_tcp_verdict_check(const tc_job_key_t *key, const uint8_t *root_nonce,
                                       const uint8_t *endpoints,
                                       const tc_boot_tcp_hello_t *hello,
                                       const tc_boot_tcp_verdict_t *v, const char *reason,
                                       size_t reason_len, ucs_status_t *status_p)
{
    tc_job_key_transcript_t t;
    tc_boot_tcp_verdict_t copy;
    size_t len;
    int32_t status;

    memcpy(&copy, v, sizeof(copy));
    if ((tc_boot_tcp_verdict_reason_len(&copy, &len) != UCS_OK) || (len != reason_len)) {
        return UCS_ERR_NO_ELEM;
    }
    tc_boot_tcp_root_transcript(root_nonce, endpoints, hello, &copy, reason, reason_len, &t);
    if (!tc_job_key_verify(key, &t, copy.proof)) {
        return UCS_ERR_NO_ELEM;
    }
    /* the root's word: only an error code of UCX's range, or UCS_OK */
    status = (int32_t)ntohl((uint32_t)copy.status);
    *status_p = ((status == UCS_OK) || ((status < 0) && (status > UCS_ERR_LAST))) ?
                (ucs_status_t)status : UCS_ERR_IO_ERROR;
    return UCS_OK;
}
