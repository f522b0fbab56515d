/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * tckv_store.h: a key-value store whose commands are replicated jams. The state is
 * the region each member registers with its group (tc_jam_replica_t::state):
 * a direct-mapped table of TCKV_KEYS keys. Shared by the jams, the
 * quickstart's demo and the tests (which replay the delivered commands
 * through tckv_apply() as the reference).
 */
#ifndef TCKV_STORE_H_
#define TCKV_STORE_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TCKV_KEYS 256u

/* status a jam sets (tc_jam_replica_t::status) */
#define TCKV_OK           0
#define TCKV_CAS_MISMATCH 1   /* compare-and-swap found another value: no change */
#define TCKV_BAD_PAYLOAD  2   /* wrong size, key out of range: no change */
#define TCKV_BAD_STATE    3   /* the group's state is not a tckv_state_t */

typedef struct tckv_entry {
    int64_t  value;
    uint64_t version;   /* writes to this key */
} tckv_entry_t;

typedef struct tckv_state {
    uint64_t     commands;   /* commands that changed the state */
    uint64_t     failures;   /* commands that set a failure status */
    tckv_entry_t keys[TCKV_KEYS];
} tckv_state_t;

/* payloads */
typedef struct tckv_put {
    uint64_t key;
    int64_t  value;
} tckv_put_t;

typedef struct tckv_inc {
    uint64_t key;
    int64_t  delta;
} tckv_inc_t;

typedef struct tckv_cas {
    uint64_t key;
    int64_t  expect;
    int64_t  desired;
} tckv_cas_t;

enum tckv_command { TCKV_PUT, TCKV_INC, TCKV_CAS };

/*
 * The commands' effect, in one place for the jams and the reference: apply
 * command @a cmd with @a payload to @a s; returns the status. Pure: the
 * state and the payload only.
 */
static inline int tckv_apply(tckv_state_t *s, enum tckv_command cmd, const void *payload,
                             size_t size)
{
    static const size_t sizes[] = {sizeof(tckv_put_t), sizeof(tckv_inc_t),
                                   sizeof(tckv_cas_t)};
    uint64_t key;
    int status = TCKV_OK;

    if ((size != sizes[cmd]) || (payload == NULL)) {
        status = TCKV_BAD_PAYLOAD;
        goto out;
    }
    key = *(const uint64_t*)payload;
    if (key >= TCKV_KEYS) {
        status = TCKV_BAD_PAYLOAD;
        goto out;
    }
    switch (cmd) {
    case TCKV_PUT:
        s->keys[key].value = ((const tckv_put_t*)payload)->value;
        break;
    case TCKV_INC:
#ifdef TCKV_ALTERED_BUILD
        /* another build of the same package, for the tests of a mismatch */
        s->keys[key].value += 2 * ((const tckv_inc_t*)payload)->delta;
#else
        s->keys[key].value += ((const tckv_inc_t*)payload)->delta;
#endif
        break;
    case TCKV_CAS:
        if (s->keys[key].value != ((const tckv_cas_t*)payload)->expect) {
            status = TCKV_CAS_MISMATCH;
            goto out;
        }
        s->keys[key].value = ((const tckv_cas_t*)payload)->desired;
        break;
    }
    ++s->keys[key].version;
    ++s->commands;
    return status;
out:
    ++s->failures;
    return status;
}

/* FNV-1a 64 of the state: what every member prints */
static inline uint64_t tckv_digest(const tckv_state_t *s)
{
    const uint8_t *p = (const uint8_t*)s;
    uint64_t h       = 0xcbf29ce484222325ull;
    size_t i;

    for (i = 0; i < sizeof(*s); ++i) {
        h = (h ^ p[i]) * 0x100000001b3ull;
    }
    return h;
}

#endif /* TCKV_STORE_H_ */
