/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * libFuzzer target for the TCP bootstrap's handshake checks
 * (ucx_ext/bootstrap/tcp/tcp_wire.c): the root's check of a hello and
 * judgement of its fields, and the member's check of the root's verdict.
 *
 * The first input byte picks what the rest is: 0, a raw hello; 1, a hello's
 * rank, size and nonce, made into a hello with a valid proof (so the fuzzer
 * reaches the checks after the proof); 2, a raw verdict and its reason;
 * 3, a verdict's status and reason, proven. Peer bytes always sit in a heap
 * copy of exactly their length, so AddressSanitizer catches a read beyond.
 * The promises checked: nothing without a valid proof passes; a made
 * message passes, with its fields; a judged hello's rank is in range.
 */
#include "bootstrap/tcp/tcp_wire.h"

#include <twochains/sock.h>

#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void require(int cond)
{
    if (!cond) {
        abort();
    }
}

static const tc_job_key_t *fuzz_key(void)
{
    static tc_job_key_t key;

    if (!key.present) {
        key.present = 1;
        key.length  = 32;
        memcpy(key.bytes, "a fuzzing job key of 32 bytes...", 32);
    }
    return &key;
}

static uint8_t root_nonce[TC_JOB_KEY_NONCE_LEN] = {1, 2, 3};
static uint8_t endpoints[TC_SOCK_ENDPOINTS_LEN] = {4, 5, 6};

static void fuzz_hello(const uint8_t *bytes, size_t len, int size)
{
    tc_boot_tcp_hello_info_t info;
    char reason[TC_BOOT_TCP_MAX_REASON];
    const char *why = NULL;

    if (tc_boot_tcp_hello_check(fuzz_key(), root_nonce, endpoints, bytes, len, &info,
                                &why) != UCS_OK) {
        require(why != NULL);
        return;
    }
    require(len == sizeof(tc_boot_tcp_hello_t));
    if (tc_boot_tcp_hello_judge(&info, size, reason, sizeof(reason)) == UCS_OK) {
        require((info.size == size) && (info.rank >= 1) && (info.rank < size));
    } else {
        require(memchr(reason, '\0', sizeof(reason)) != NULL);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    tc_boot_tcp_hello_t hello;
    tc_boot_tcp_verdict_t verdict;
    ucs_status_t status;
    uint8_t *copy;
    int32_t rank, size;
    size_t reason_len;
    char reason[TC_BOOT_TCP_MAX_REASON + 1];

    if (n == 0) {
        return 0;
    }
    copy = malloc(n - 1 ? n - 1 : 1);
    memcpy(copy, data + 1, n - 1);
    --n;

    switch (data[0] % 4) {
    case 0:
        fuzz_hello(copy, n, 8);
        break;
    case 1:
        if (n < 8 + TC_JOB_KEY_NONCE_LEN) {
            break;
        }
        memcpy(&rank, copy, 4);
        memcpy(&size, copy + 4, 4);
        tc_boot_tcp_hello_make(fuzz_key(), root_nonce, copy + 8, endpoints, rank, size, &hello);
        free(copy);
        copy = malloc(sizeof(hello));
        memcpy(copy, &hello, sizeof(hello));
        fuzz_hello(copy, sizeof(hello), size);
        /* a made hello checks; one byte changed does not */
        copy[(rank & 0x7fffffff) % sizeof(hello)] ^= 0x40;
        {
            tc_boot_tcp_hello_info_t info;
            const char *why;
            require(tc_boot_tcp_hello_check(fuzz_key(), root_nonce, endpoints, copy,
                                            sizeof(hello), &info, &why) != UCS_OK);
        }
        break;
    case 2:
        if (n < sizeof(verdict)) {
            break;
        }
        memcpy(&verdict, copy, sizeof(verdict));
        if (tc_boot_tcp_verdict_reason_len(&verdict, &reason_len) != UCS_OK) {
            break;
        }
        require(reason_len <= TC_BOOT_TCP_MAX_REASON);
        if (n - sizeof(verdict) < reason_len) {
            break;
        }
        memset(&hello, 0, sizeof(hello));
        /* without the key's proof it never passes */
        require(tc_boot_tcp_verdict_check(fuzz_key(), root_nonce, endpoints, &hello, &verdict,
                                          (const char*)copy + sizeof(verdict), reason_len,
                                          &status) != UCS_OK);
        break;
    case 3:
        if (n < 4) {
            break;
        }
        memcpy(&rank, copy, 4);       /* the status */
        reason_len = (n - 4 < TC_BOOT_TCP_MAX_REASON) ? n - 4 : TC_BOOT_TCP_MAX_REASON;
        memcpy(reason, copy + 4, reason_len);
        reason[reason_len] = '\0';
        memset(&hello, 0, sizeof(hello));
        tc_boot_tcp_verdict_make(fuzz_key(), root_nonce, endpoints, &hello,
                                 (ucs_status_t)rank, reason, &verdict);
        if (tc_boot_tcp_verdict_reason_len(&verdict, &reason_len) == UCS_OK) {
            require(tc_boot_tcp_verdict_check(fuzz_key(), root_nonce, endpoints, &hello,
                                              &verdict, reason, reason_len, &status) == UCS_OK);
            require((status == UCS_OK) || ((status < 0) && (status > UCS_ERR_LAST)));
        }
        break;
    }
    free(copy);
    return 0;
}
