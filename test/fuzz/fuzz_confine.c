/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * libFuzzer target for the `confine` checker and rewriter
 * (ucx_ext/ifunc/jit/jit_confine.c, compiled here with the JIT, jit_orc.c, under
 * ASan and UBSan) and the runner (confine.c, from libtwochains).
 *
 * Input: one byte that picks the entry's name (the corpus's and tcbench's
 * jams), then a module's bitcode; run_fuzz.sh seeds it with the modules of
 * the hostile corpus and of tcbench. Whatever the checker admits is run
 * confined, with the corpus's own regions: a payload, a target and a state,
 * each inside a larger heap buffer whose bytes around it are a canary, and
 * little fuel. The target's promise: no crash, and no byte outside the
 * granted regions changes (the canaries), whatever the run did or trapped.
 */
#include "ifunc/confine/confine.h"
#include "ifunc/receiver/receiver.h"
#include "ifunc/jit/jit.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const tc_jit_ops_t tc_jit_orc_ops;

static const char *const entries[] = {
    "tch_ok_main", "tch_payload_pointer_main", "tch_read_past_main",
    "tch_forged_global_main", "tch_system_main", "tch_syscall_main", "tch_indirect_main",
    "tch_spin_main", "tch_recurse_main", "tch_index_overflow_main",
    "tch_state_by_one_main", "tch_state_overrun_main", "server_side_sum_main",
    "indirect_put_main", "ping_main", "calls_libc_main", "kv_put_main", "kv_inc_main",
    "kv_cas_main"};
#define NUM_ENTRIES (sizeof(entries) / sizeof(entries[0]))

#define GUARD   256u
#define CANARY  0xa5

static tc_jit_t *jit;

static void require(int cond)
{
    if (!cond) {
        fprintf(stderr, "fuzz_confine: a promise broke: a byte outside the regions changed\n");
        abort();
    }
}

/* A region of @a size bytes in the middle of a canary-filled buffer */
static uint8_t *region(size_t size, uint8_t **buf_p)
{
    uint8_t *buf = malloc(size + 2 * GUARD);

    memset(buf, CANARY, size + 2 * GUARD);
    memset(buf + GUARD, 0, size);
    *buf_p = buf;
    return buf + GUARD;
}

static void check_canary(const uint8_t *buf, size_t size)
{
    size_t i;

    for (i = 0; i < GUARD; ++i) {
        require(buf[i] == CANARY);
        require(buf[GUARD + size + i] == CANARY);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char err[256];

    (void)argc;
    (void)argv;
    setenv("UCX_TC_IFUNC_CONFINE_FUEL", "200000", 1);   /* a spin ends fast */
    if (tc_jit_orc_ops.create(&jit, err, sizeof(err)) != UCS_OK) {
        fprintf(stderr, "fuzz_confine: no JIT: %s\n", err);
        abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const size_t payload_size = 256, target_size = sizeof(tc_jam_replica_t),
                 state_size = 512;
    uint8_t *payload_buf, *target_buf, *state_buf, *payload, *target, *state;
    tc_ifunc_stats_t stats;
    tc_jam_replica_t *replica;
    tc_jit_code_t *code = NULL;
    tc_ifunc_rx_t rx;
    char detail[192];
    uint8_t *bitcode;

    if (size < 2) {
        return 0;
    }
    bitcode = malloc(size - 1);   /* LLVM reads it in place: exactly its bytes */
    memcpy(bitcode, data + 1, size - 1);
    if (tc_jit_orc_ops.compile(jit, bitcode, size - 1, entries[data[0] % NUM_ENTRIES],
                               tc_confine_resolve, NULL, tc_confine_jit_options(),
                               TC_JIT_COMPILE_F_UNTRUSTED, &code, detail,
                               sizeof(detail)) != TC_IFUNC_REJECT_NONE) {
        free(bitcode);
        return 0;
    }
    payload = region(payload_size, &payload_buf);
    target  = region(target_size, &target_buf);
    state   = region(state_size, &state_buf);
    memset(payload, 0x11, payload_size);
    replica             = (tc_jam_replica_t*)target;
    replica->state      = state;
    replica->state_size = state_size;
    memset(&rx, 0, sizeof(rx));
    memset(&stats, 0, sizeof(stats));
    rx.stats       = &stats;
    rx.target_args = target;
    rx.target_size = target_size;
    rx.state       = state;
    rx.state_size  = state_size;
    (void)tc_confine_run(&rx, tc_jit_orc_ops.entry(code), payload, payload_size);
    check_canary(payload_buf, payload_size);
    check_canary(target_buf, target_size);
    check_canary(state_buf, state_size);
    for (size_t i = 0; i < payload_size; ++i) {
        require(payload[i] == 0x11);   /* the payload is read only */
    }
    tc_jit_orc_ops.release(jit, code);
    free(payload_buf);
    free(target_buf);
    free(state_buf);
    free(bitcode);
    return 0;
}
