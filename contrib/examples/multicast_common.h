/*
 * Shared by the MPI and OpenSHMEM examples: every rank multicasts COUNT
 * messages in one group of all ranks and hashes what it delivers into an
 * order-sensitive chain; the runtime then compares the chains.
 */
#ifndef MULTICAST_COMMON_H_
#define MULTICAST_COMMON_H_

#include <twochains/group.h>

#include <stdio.h>
#include <string.h>

#define EXAMPLE_COUNT   1000
#define EXAMPLE_MAX     200

typedef struct {
    unsigned long long chain;
    unsigned long long delivered;
} example_state_t;

static void example_deliver(const tc_group_message_t *m, void *arg)
{
    example_state_t *st = (example_state_t*)arg;
    const unsigned char *p = (const unsigned char*)m->data;
    size_t i;

    st->chain = (st->chain ^ (unsigned)m->sender) * 1099511628211ull;
    for (i = 0; i < m->size; ++i) {
        st->chain = (st->chain ^ p[i]) * 1099511628211ull;
    }
    ++st->delivered;
}

/* Form one group of all ranks, multicast, close. Returns 0 on success. */
static int example_multicast(tc_bootstrap_h boot, example_state_t *st)
{
    int size = tc_bootstrap_size(boot), rank = tc_bootstrap_rank(boot), members[256], r;
    unsigned char msg[EXAMPLE_MAX];
    tc_group_params_t params;
    tc_node_h node;
    tc_group_h group;
    int k;

    if (size > 256 || tc_node_create(boot, &node) != UCS_OK) {
        return 1;
    }
    for (r = 0; r < size; ++r) {
        members[r] = r;
    }
    memset(&params, 0, sizeof(params));
    params.members      = members;
    params.member_count = size;
    params.max_payload  = EXAMPLE_MAX;
    params.window       = 32;
    params.deliver      = example_deliver;
    params.deliver_arg  = st;
    st->chain           = 1469598103934665603ull;
    st->delivered       = 0;
    if (tc_group_create(node, &params, &group) != UCS_OK) {
        return 1;
    }
    for (k = 0; k < EXAMPLE_COUNT; ++k) {
        size_t n = 1 + (size_t)(k * 37 + rank * 11) % EXAMPLE_MAX;
        memset(msg, (rank * 17 + k) & 0xff, n);
        if (tc_group_send(group, msg, n) != UCS_OK) {
            return 1;
        }
    }
    if (tc_group_close(group) != UCS_OK) {
        return 1;
    }
    tc_group_destroy(group);
    tc_node_destroy(node);
    return (st->delivered == (unsigned long long)EXAMPLE_COUNT * (unsigned)size) ? 0 : 1;
}

#endif
