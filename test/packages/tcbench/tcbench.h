/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * tcbench: the paper's benchmark jams. This header is shared by the jams
 * (which reach the receiver's state through the GOT) and by the ried that
 * defines that state, ried_tcbench_state.rdc.
 */
#ifndef TCBENCH_H_
#define TCBENCH_H_

#include <stddef.h>
#include <stdint.h>

#define TCBENCH_ARRAY_LEN 1024u
#define TCBENCH_TEXT_LEN  128u
#define TCBENCH_COPY_LEN  4096u

/* indirect_put payload: an array of these */
typedef struct tcbench_put {
    uint64_t index;   /* into tcbench_array */
    int64_t  value;
} tcbench_put_t;

/* ping payload */
typedef struct tcbench_ping {
    uint64_t seq;
} tcbench_ping_t;

/* Receiver state, defined by ried_tcbench_state.rdc */
extern int64_t        tcbench_array[TCBENCH_ARRAY_LEN];
extern const uint64_t tcbench_array_len;
extern uint64_t       tcbench_put_rejected;   /* out-of-range indexes */
extern int64_t        tcbench_accumulator;    /* server_side_sum */
extern uint64_t       tcbench_sum_calls;
extern uint64_t       tcbench_ping_count;
extern char           tcbench_copy[TCBENCH_COPY_LEN];  /* calls_libc */
extern const size_t   tcbench_copy_len;                /* its size */

/* The ping "reply": records the sequence number; returns replies so far */
uint64_t tcbench_ping_reply(uint64_t seq);
uint64_t tcbench_ping_last_seq(void);

#endif /* TCBENCH_H_ */
