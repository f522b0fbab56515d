/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The job key (<twochains/job_key.h>): loading it, challenges and the
 * HMAC-SHA256 proofs of a transcript (OpenSSL's libcrypto), and where an
 * unkeyed service may listen.
 *
 * Invariants:
 * - the key is never written anywhere but the caller's tc_job_key_t, and is
 *   wiped with OPENSSL_cleanse by tc_job_key_clear;
 * - proofs are compared in constant time (CRYPTO_memcmp);
 * - without a key no service listens beyond loopback.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include <twochains/config.h>
#include <twochains/job_key.h>

#include <ucs/debug/log_def.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t tc_job_key_refused;
static int tc_job_key_loopback_said_bootstrap;
static int tc_job_key_loopback_said_join;

static ucs_status_t tc_job_key_read_file(const char *path, tc_job_key_t *key)
{
    /* the longest key, its newline, and one byte more: a longer file is
     * refused, not cut to a key nobody chose */
    uint8_t text[TC_JOB_KEY_MAX_LEN + 2];
    struct stat st;
    ssize_t n;
    int fd;

    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        ucs_error("UCX_TC_JOB_KEY_FILE=%s: %s", path, strerror(errno));
        return UCS_ERR_NO_ELEM;
    }
    if ((fstat(fd, &st) != 0) || !S_ISREG(st.st_mode)) {
        ucs_error("UCX_TC_JOB_KEY_FILE=%s is not a regular file", path);
        close(fd);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((st.st_uid != geteuid()) || (st.st_mode & (S_IRWXG | S_IRWXO))) {
        ucs_error("UCX_TC_JOB_KEY_FILE=%s must belong to this user and be readable by "
                  "no one else (chmod 600)", path);
        close(fd);
        return UCS_ERR_INVALID_PARAM;
    }
    n = read(fd, text, sizeof(text));
    close(fd);
    if (n < 0) {
        ucs_error("UCX_TC_JOB_KEY_FILE=%s: %s", path, strerror(errno));
        return UCS_ERR_IO_ERROR;
    }
    if ((n > 0) && (text[n - 1] == '\n')) {
        --n;
    }
    if ((size_t)n > sizeof(key->bytes)) {
        OPENSSL_cleanse(text, sizeof(text));
        ucs_error("UCX_TC_JOB_KEY_FILE=%s holds more than %d bytes (a key and an optional "
                  "newline)", path, TC_JOB_KEY_MAX_LEN);
        return UCS_ERR_INVALID_PARAM;
    }
    memcpy(key->bytes, text, (size_t)n);
    OPENSSL_cleanse(text, sizeof(text));
    key->length = (size_t)n;
    return UCS_OK;
}

ucs_status_t tc_job_key_load(tc_job_key_t *key)
{
    tc_config_t config;
    ucs_status_t status;
    size_t len;

    memset(key, 0, sizeof(*key));
    status = tc_config_read(&config);
    if (status != UCS_OK) {
        return status;
    }
    len = strlen(config.job_key);
    if ((len > 0) && (config.job_key_file[0] != '\0')) {
        ucs_error("set UCX_TC_JOB_KEY or UCX_TC_JOB_KEY_FILE, not both");
        status = UCS_ERR_INVALID_PARAM;
    } else if (len > 0) {
        if (len > sizeof(key->bytes)) {
            ucs_error("UCX_TC_JOB_KEY is longer than %d bytes", TC_JOB_KEY_MAX_LEN);
            status = UCS_ERR_INVALID_PARAM;
        } else {
            memcpy(key->bytes, config.job_key, len);
            key->length = len;
        }
    } else if (config.job_key_file[0] != '\0') {
        status = tc_job_key_read_file(config.job_key_file, key);
    }
    OPENSSL_cleanse(config.job_key, len);
    tc_config_release(&config);

    if ((status == UCS_OK) && (key->length > 0)) {
        if (key->length < TC_JOB_KEY_MIN_LEN) {
            ucs_error("the job key has %zu bytes; at least %d are needed", key->length,
                      TC_JOB_KEY_MIN_LEN);
            status = UCS_ERR_INVALID_PARAM;
        } else {
            key->present = 1;
        }
    }
    if (status != UCS_OK) {
        tc_job_key_clear(key);
    }
    return status;
}

ucs_status_t tc_job_key_generate(char *out, size_t max)
{
    uint8_t bytes[32];
    size_t i;

    if (max < 2 * sizeof(bytes) + 1) {
        return UCS_ERR_BUFFER_TOO_SMALL;
    }
    if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
        ucs_error("no random bytes for a job key (RAND_bytes failed)");
        return UCS_ERR_IO_ERROR;
    }
    for (i = 0; i < sizeof(bytes); ++i) {
        snprintf(out + 2 * i, 3, "%02x", bytes[i]);
    }
    OPENSSL_cleanse(bytes, sizeof(bytes));
    return UCS_OK;
}

void tc_job_key_clear(tc_job_key_t *key)
{
    OPENSSL_cleanse(key, sizeof(*key));
}

ucs_status_t tc_job_key_challenge(uint8_t nonce[TC_JOB_KEY_NONCE_LEN])
{
    if (RAND_bytes(nonce, TC_JOB_KEY_NONCE_LEN) != 1) {
        ucs_error("no random bytes for a challenge (RAND_bytes failed)");
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

/* One item of a transcript into the MAC: its length (64 bits, big-endian),
 * then its bytes, so that no two transcripts feed the MAC the same input. */
static int tc_job_key_mac_item(EVP_MAC_CTX *ctx, const void *bytes, size_t len)
{
    uint8_t prefix[8];
    int i;

    for (i = 0; i < 8; ++i) {
        prefix[i] = (uint8_t)((uint64_t)len >> (56 - 8 * i));
    }
    return EVP_MAC_update(ctx, prefix, sizeof(prefix)) &&
           ((len == 0) || EVP_MAC_update(ctx, bytes, len));
}

void tc_job_key_prove(const tc_job_key_t *key, const tc_job_key_transcript_t *t,
                      uint8_t proof[TC_JOB_KEY_PROOF_LEN])
{
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_end()
    };
    EVP_MAC_CTX *ctx = NULL;
    EVP_MAC *mac;
    size_t out_len   = 0;
    unsigned i;
    int ok;

    memset(proof, 0, TC_JOB_KEY_PROOF_LEN);
    if (!key->present || (t->nparts > TC_JOB_KEY_MAX_PARTS)) {
        return;
    }
    mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    if (mac != NULL) {
        ctx = EVP_MAC_CTX_new(mac);
    }
    ok = (ctx != NULL) && EVP_MAC_init(ctx, key->bytes, key->length, params) &&
         tc_job_key_mac_item(ctx, t->role, strlen(t->role)) &&
         tc_job_key_mac_item(ctx, t->service, strlen(t->service)) &&
         tc_job_key_mac_item(ctx, t->server_nonce, TC_JOB_KEY_NONCE_LEN) &&
         tc_job_key_mac_item(ctx, t->client_nonce, TC_JOB_KEY_NONCE_LEN) &&
         tc_job_key_mac_item(ctx, t->endpoints, t->endpoints_len);
    for (i = 0; ok && (i < t->nparts); ++i) {
        ok = tc_job_key_mac_item(ctx, t->parts[i], t->part_lens[i]);
    }
    ok = ok && EVP_MAC_final(ctx, proof, &out_len, TC_JOB_KEY_PROOF_LEN) &&
         (out_len == TC_JOB_KEY_PROOF_LEN);
    if (!ok) {
        /* zeros never verify against a key: a failure refuses, never admits */
        memset(proof, 0, TC_JOB_KEY_PROOF_LEN);
        ucs_error("job key: HMAC-SHA256 failed (OpenSSL)");
    }
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(mac);
}

int tc_job_key_verify(const tc_job_key_t *key, const tc_job_key_transcript_t *t,
                      const uint8_t proof[TC_JOB_KEY_PROOF_LEN])
{
    static const uint8_t zeros[TC_JOB_KEY_PROOF_LEN];
    uint8_t expected[TC_JOB_KEY_PROOF_LEN];
    int ok;

    if (!key->present) {
        return 1;
    }
    tc_job_key_prove(key, t, expected);
    ok = (CRYPTO_memcmp(expected, proof, TC_JOB_KEY_PROOF_LEN) == 0) &&
         (CRYPTO_memcmp(expected, zeros, TC_JOB_KEY_PROOF_LEN) != 0);
    OPENSSL_cleanse(expected, sizeof(expected));
    if (!ok) {
        __atomic_add_fetch(&tc_job_key_refused, 1, __ATOMIC_RELAXED);
    }
    return ok;
}

static int tc_job_key_host_is_loopback(const char *host, size_t len)
{
    return ((len == 9) && !strncmp(host, "localhost", 9)) ||
           ((len >= 4) && !strncmp(host, "127.", 4)) ||
           ((len == 3) && !strncmp(host, "::1", 3));
}

ucs_status_t tc_job_key_listen_address(const tc_job_key_t *key, const char *service,
                                       const char *addr, char *out, size_t max)
{
    const char *colon = strrchr(addr, ':');
    size_t host_len   = (colon != NULL) ? (size_t)(colon - addr) : strlen(addr);
    int *said;

    if (key->present || tc_job_key_host_is_loopback(addr, host_len)) {
        snprintf(out, max, "%s", addr);
        return UCS_OK;
    }
    if ((host_len == 0) || ((host_len == 7) && !strncmp(addr, "0.0.0.0", 7))) {
        said = strcmp(service, TC_JOB_KEY_SERVICE_JOIN) ? &tc_job_key_loopback_said_bootstrap :
                                                         &tc_job_key_loopback_said_join;
        if (!__atomic_exchange_n(said, 1, __ATOMIC_RELAXED)) {
            ucs_diag("%s: no job key (UCX_TC_JOB_KEY): listening on loopback only", service);
        }
        snprintf(out, max, "127.0.0.1%s", (colon != NULL) ? colon : "");
        return UCS_OK;
    }
    ucs_error("%s: will not listen on %s without a job key: anyone who reaches it could "
              "join the job. Set UCX_TC_JOB_KEY (or UCX_TC_JOB_KEY_FILE) to the same "
              "secret in every process, or use a loopback address", service, addr);
    return UCS_ERR_INVALID_PARAM;
}

ucs_status_t tc_job_key_check_listener(const tc_job_key_t *key, const char *service,
                                       int listen_fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    char host[INET6_ADDRSTRLEN] = "?";
    int loopback;

    if (key->present) {
        return UCS_OK;
    }
    if (getsockname(listen_fd, (struct sockaddr*)&ss, &len) != 0) {
        ucs_error("%s: listening socket %d: %s", service, listen_fd, strerror(errno));
        return UCS_ERR_INVALID_PARAM;
    }
    if (ss.ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in*)&ss;
        loopback = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    } else if (ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6*)&ss;
        loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    } else {
        loopback = (ss.ss_family == AF_UNIX);
    }
    if (loopback) {
        return UCS_OK;
    }
    ucs_error("%s: will not serve a socket listening on %s without a job key: set "
              "UCX_TC_JOB_KEY (or UCX_TC_JOB_KEY_FILE) in every process", service, host);
    return UCS_ERR_INVALID_PARAM;
}

uint64_t tc_job_key_refusals(void)
{
    return __atomic_load_n(&tc_job_key_refused, __ATOMIC_RELAXED);
}
