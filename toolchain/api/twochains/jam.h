/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The jam contract: what a jam author writes in jam_<name>.amc.
 *
 * A jam is a C function that a sender ships inside a message and a receiver
 * runs at whatever address the message landed. twochains-pkg compiles every
 * jam_<name>.amc twice: unmodified into the Local Function library, and
 * GOT-patched into an injectable span (see twochains/jam_format.h).
 *
 *   #include <twochains/jam.h>
 *
 *   TC_JAM_MAIN(counter)                      // void counter_main(...)
 *   {
 *       ++*(uint64_t *)target_args;
 *   }
 *
 * Entry (required), run by the receiver once per message:
 *     void <name>_main(void *payload, size_t payload_size, void *target_args);
 * Optional, run by the sender from the Local Function library (main and
 * payload_get_max_size as in the public Two-Chains ifunc API; this
 * payload_init takes its arguments in another order, see the end of this
 * file for the public one):
 *     size_t <name>_payload_get_max_size(void *source_args,
 *                                        size_t source_args_size);
 *     int    <name>_payload_init(void *source_args, size_t source_args_size,
 *                                void *payload, size_t *payload_size);
 *            (returns 0 on success; may shrink *payload_size)
 *
 * Rules for the shipped code (twochains-pkg rejects what breaks them, naming
 * the file, line or symbol):
 *  - External functions and data (libc, rieds) are reached through the
 *    receiver's GOT table: declare them extern, as usual.
 *  - Helper functions, string literals, constants and the jam's own globals
 *    ship inside the span. Writable globals are a per-message copy: every
 *    message starts from their initial values. State that must survive a
 *    message lives in a ried (ried_<name>.rdc), reached through the GOT.
 *  - No thread-local variables, no constructors, no data initialized with
 *    addresses (pointer tables): they would need load-time relocation.
 *
 * twochains-pkg compiles each jam with -DTC_JAM_NAME=<name> and
 * -include twochains/jam.h, so the prototypes below check the author's
 * definitions against the contract. TC_JAM_INJECTABLE is 1 in the
 * GOT-patched build and 0 in the Local Function build.
 */
#ifndef TWOCHAINS_JAM_H_
#define TWOCHAINS_JAM_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void   (*tc_jam_main_fn_t)(void *payload, size_t payload_size,
                                   void *target_args);
typedef size_t (*tc_jam_max_size_fn_t)(void *source_args,
                                       size_t source_args_size);
typedef int    (*tc_jam_init_fn_t)(void *source_args, size_t source_args_size,
                                   void *payload, size_t *payload_size);

/*
 * One row of a package's element table, exported by its Local Function
 * library as "<pkg>_tc_elements" (TC_PKG_ELEMENTS_SYMBOL), with
 * "<pkg>_tc_element_count" rows, indexed by element id.
 */
typedef struct tc_jam_element {
    uint32_t             id;                    /* stable element id */
    const char           *name;                 /* "<name>" of jam_<name>.amc */
    tc_jam_main_fn_t     main;                  /* <name>_main */
    tc_jam_max_size_fn_t payload_get_max_size;  /* NULL when not defined */
    tc_jam_init_fn_t     payload_init;          /* NULL when not defined */
} tc_jam_element_t;

#define TC_PKG_ELEMENTS_SUFFIX      "_tc_elements"
#define TC_PKG_ELEMENT_COUNT_SUFFIX "_tc_element_count"
#define TC_PKG_BUILD_ID_SUFFIX      "_tc_build_id"

#define TC_JAM_CONCAT_(_a, _b) _a##_b
#define TC_JAM_CONCAT(_a, _b)  TC_JAM_CONCAT_(_a, _b)

#ifndef TC_JAM_INJECTABLE
#define TC_JAM_INJECTABLE 0
#endif

/* Prototypes of one jam's functions (also used by generated headers) */
#define TC_JAM_PROTO_MAIN(_name) \
    void TC_JAM_CONCAT(_name, _main)(void *payload, size_t payload_size, \
                                     void *target_args)
#define TC_JAM_PROTO_PAYLOAD_GET_MAX_SIZE(_name) \
    size_t TC_JAM_CONCAT(_name, _payload_get_max_size)(void *source_args, \
                                                       size_t source_args_size)
#define TC_JAM_PROTO_PAYLOAD_INIT(_name) \
    int TC_JAM_CONCAT(_name, _payload_init)(void *source_args, \
                                            size_t source_args_size, \
                                            void *payload, size_t *payload_size)
#define TC_JAM_DECLARE(_name) \
    TC_JAM_PROTO_MAIN(_name); \
    TC_JAM_PROTO_PAYLOAD_GET_MAX_SIZE(_name); \
    TC_JAM_PROTO_PAYLOAD_INIT(_name)

/*
 * Definitions, for jam_<name>.amc. The sender-side functions run only from
 * the Local Function library: in the injectable build they become unused
 * static functions that the compiler drops, so neither their code nor the
 * externals they call (memcpy, ...) ship in the span or its GOT table.
 */
#define TC_JAM_MAIN(_name) TC_JAM_PROTO_MAIN(_name)
#if TC_JAM_INJECTABLE
#define TC_JAM_PAYLOAD_GET_MAX_SIZE(_name) \
    static __attribute__((unused)) size_t \
    TC_JAM_CONCAT(_name, _payload_get_max_size_unshipped)(void *source_args, \
                                                         size_t source_args_size)
#define TC_JAM_PAYLOAD_INIT(_name) \
    static __attribute__((unused)) int \
    TC_JAM_CONCAT(_name, _payload_init_unshipped)(void *source_args, \
                                                  size_t source_args_size, \
                                                  void *payload, size_t *payload_size)
#else
#define TC_JAM_PAYLOAD_GET_MAX_SIZE(_name) TC_JAM_PROTO_PAYLOAD_GET_MAX_SIZE(_name)
#define TC_JAM_PAYLOAD_INIT(_name)         TC_JAM_PROTO_PAYLOAD_INIT(_name)
#endif

#ifdef TC_JAM_NAME
TC_JAM_DECLARE(TC_JAM_NAME);
#endif

/*
 * Replicated jams: a jam sent through a replication group's total order
 * (tc_group_send_jam, <twochains/group.h>) runs at every member at
 * delivery, in sequence order, with target_args pointing to this context.
 * It must be deterministic: read and write only its payload and the state,
 * call only pure functions; no clocks, no I/O, no addresses of this member
 * (pointers into the state are fine as offsets, not as values stored).
 * Setting status non-zero reports a failure: the group counts it and
 * passes it to the application's jam callback; whatever the jam wrote to
 * the state before stays, the same at every member.
 */
/* The status of a confined jam (security `confine`) that its receiver ended
 * early: the same at every member, since every member counts fuel and checks
 * accesses alike (docs/replicated-jams.md). What the jam set before is
 * replaced; what it wrote to the state before stays. */
#define TC_JAM_STATUS_TRAP_MEMORY      (-1001)  /* an access outside its regions */
#define TC_JAM_STATUS_TRAP_FUEL        (-1002)  /* out of fuel */
#define TC_JAM_STATUS_TRAP_STACK       (-1003)  /* too deep */
#define TC_JAM_STATUS_TRAP_UNREACHABLE (-1004)  /* reached undefined behaviour */

typedef struct tc_jam_replica {
    void    *state;        /* the region this member registered with the group */
    size_t  state_size;
    int     sender;        /* who sent it (the group's member rank) */
    int64_t index;         /* the sender's message number */
    int64_t seq;           /* its place in the view's total order */
    int64_t view;          /* the view's epoch */
    int     status;        /* 0 on entry; non-zero: the jam failed */
} tc_jam_replica_t;

/*
 * The public Two-Chains ifunc contract (openucx/ucx-two-chains, branch
 * ifunc_put): an ifunc source <name>.c defines, as plain C functions,
 *     void   <name>_main(void *payload, size_t payload_size, void *target_args);
 *     size_t <name>_payload_get_max_size(void *source_args, size_t source_args_size);
 *     int    <name>_payload_init(void *payload, size_t payload_size,
 *                                void *source_args, size_t source_args_size);
 * main and payload_get_max_size are ours too; payload_init takes the payload
 * first and its size by value (it cannot shrink it). `twochains-pkg ifunc
 * <name>.c` compiles such a source with -DTC_IFUNC_PUBLIC_NAME=<name> and
 * -include twochains/jam.h, so the prototypes below check it against the
 * public contract, and the generated element table adapts its payload_init
 * to tc_jam_init_fn_t. Its sender-side functions are ordinary functions: in
 * the injectable build the linker drops them unless main calls them.
 */
typedef int (*tc_ifunc_public_init_fn_t)(void *payload, size_t payload_size,
                                         void *source_args, size_t source_args_size);
#define TC_IFUNC_PUBLIC_PROTO_PAYLOAD_INIT(_name) \
    int TC_JAM_CONCAT(_name, _payload_init)(void *payload, size_t payload_size, \
                                            void *source_args, size_t source_args_size)

#ifdef TC_IFUNC_PUBLIC_NAME
TC_JAM_PROTO_MAIN(TC_IFUNC_PUBLIC_NAME);
TC_JAM_PROTO_PAYLOAD_GET_MAX_SIZE(TC_IFUNC_PUBLIC_NAME);
TC_IFUNC_PUBLIC_PROTO_PAYLOAD_INIT(TC_IFUNC_PUBLIC_NAME);
#endif

#ifdef __cplusplus
}
#endif

#endif /* TWOCHAINS_JAM_H_ */
