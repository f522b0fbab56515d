/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Joins through the C API alone (<twochains/group.h>): a member of the
 * bootstrap creates the group with a join port (PORT + rank) and state
 * callbacks; with -j HOST:PORT a process outside the bootstrap joins it and
 * starts from the sponsor's state. Everyone sends COUNT messages at RATE per
 * second and hashes (sender, bytes) of every delivery into a chain.
 * Prints "ready", "state received N bytes" (joiner) and "result chain HEX
 * count N" after close. Exit 0 on success, 1 otherwise.
 *
 * Usage: group_join_c [-c COUNT] [-r RATE] [-J PORT] [-j HOST:PORT]
 */
#include <twochains/group.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    uint64_t chain;
    uint64_t count;
} chain_t;

static void fnv(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t i;
    for (i = 0; i < n; ++i) {
        *h = (*h ^ b[i]) * 1099511628211ull;
    }
}

static void deliver(const tc_group_message_t *m, void *arg)
{
    chain_t *c = arg;
    fnv(&c->chain, &m->sender, sizeof(m->sender));
    fnv(&c->chain, m->data, m->size);
    ++c->count;
}

static ucs_status_t get_state(void **data_p, size_t *size_p, void *arg)
{
    *data_p = malloc(sizeof(chain_t));
    if (*data_p == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    memcpy(*data_p, arg, sizeof(chain_t));
    *size_p = sizeof(chain_t);
    return UCS_OK;
}

static void set_state(const void *data, size_t size, void *arg)
{
    if (size == sizeof(chain_t)) {
        memcpy(arg, data, size);
    }
    printf("state received %zu bytes\n", size);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int past(void *arg)
{
    return now_s() >= *(const double*)arg;
}

int main(int argc, char **argv)
{
    long count = 2000, rate = 4000, k;
    const char *contact = NULL;
    int port = 0, opt, members[64], r, rank;
    chain_t state = {1469598103934665603ull, 0};
    tc_group_params_t p;
    tc_bootstrap_h boot;
    tc_node_h node;
    tc_group_h group = NULL;
    ucs_status_t status;
    unsigned char msg[48];
    double next;

    while ((opt = getopt(argc, argv, "c:r:J:j:")) != -1) {
        switch (opt) {
        case 'c': count = atol(optarg); break;
        case 'r': rate = atol(optarg); break;
        case 'J': port = atoi(optarg); break;
        case 'j': contact = optarg; break;
        default: return 1;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if ((tc_bootstrap_create_from_env(&boot) != UCS_OK) ||
        (tc_node_create(boot, &node) != UCS_OK)) {
        return 1;
    }
    rank = tc_bootstrap_rank(boot);
    for (r = 0; r < tc_bootstrap_size(boot) && r < 64; ++r) {
        members[r] = r;
    }
    memset(&p, 0, sizeof(p));
    p.members      = members;
    p.member_count = r;
    p.max_payload  = sizeof(msg);
    p.window       = 32;
    p.deliver      = deliver;
    p.deliver_arg  = &state;
    p.join_port    = (uint16_t)((port > 0) ? port + rank : 0);
    p.get_state    = get_state;
    p.set_state    = set_state;
    p.state_arg    = &state;
    status = (contact != NULL) ? tc_group_join(node, &p, contact, &group) :
                                 tc_group_create(node, &p, &group);
    if (status != UCS_OK) {
        printf("%s failed: %s\n", contact ? "join" : "create", ucs_status_string(status));
        return 1;
    }
    printf("ready\n");

    next = now_s();
    for (k = 0; (k < count) && (status == UCS_OK); ++k) {
        memset(msg, (int)(k & 0xff), sizeof(msg));
        memcpy(msg, &rank, sizeof(rank));
        status = tc_group_send(group, msg, 1 + (size_t)(k % (long)sizeof(msg)));
        next += 1.0 / (double)rate;
        tc_progress_until(tc_node_engine(node), past, &next, 10.0);
    }
    if (status == UCS_OK) {
        status = tc_group_close(group);
    }
    printf("result chain %016llx count %llu status %s\n", (unsigned long long)state.chain,
           (unsigned long long)state.count, ucs_status_string(status));
    fflush(stdout);
    /* the view is not the bootstrap's any more: no collective teardown */
    _exit(status == UCS_OK ? 0 : 1);
}
