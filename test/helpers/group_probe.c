/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Multi-process group check, written in C against <twochains/group.h> alone.
 * Started by twochains-run. Every sender multicasts COUNT messages of random
 * size (1 .. MAX bytes, derived with the bytes from (sender, k)) and every
 * member hashes what it delivers into an order-sensitive chain, checks every
 * byte against the next k it expects from that sender (per-sender FIFO), and
 * prints "group G chain HEX count N". Exit 0 only if all checks
 * pass. With -2, two groups share the node: {0..n-2} and {1..n-1}.
 *
 * Usage: group_probe [-c COUNT] [-s MAX] [-w WINDOW] [-o (one sender)] [-2]
 *                    [-L LARGE: every 5th message is MAX+1..LARGE bytes, over RDMC]
 *                    [-S: span delivery (deliver_span), one call per run of messages;
 *                     prints "spans N longest L" too]
 *                    [-G N: N groups (shards) over every rank, on the one node: group 0
 *                     streams COUNT per sender while the others idle, then each of
 *                     them sends COUNT/50 (at least 1)]
 */
#include <twochains/group.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_GROUPS 32

typedef struct {
    int      id;
    uint64_t chain;
    uint64_t count;
    uint64_t bad;
    int64_t  next[64];   /* next expected number per sender rank */
    size_t   max;
    uint64_t spans;
    size_t   longest;
} probe_state_t;

static uint64_t splitmix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static size_t large_max; /* -L: > 0 mixes in messages over RDMC */

static size_t msg_size(int group, int rank, int64_t k, size_t max)
{
    uint64_t h = splitmix(((uint64_t)group << 48) ^ ((uint64_t)rank << 32) ^ (uint64_t)k);
    if (large_max > max && k % 5 == 2) {
        return max + 1 + h % (large_max - max);
    }
    return 1 + h % max;
}

static unsigned char msg_byte(int rank, int64_t k, size_t i)
{
    return (unsigned char)(rank * 31 + k * 7 + i * 13);
}

static void fnv(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t i;
    for (i = 0; i < n; ++i) {
        *h = (*h ^ b[i]) * 1099511628211ull;
    }
}

/* the chain over a message's bytes: FNV-1a over 8-byte words (then the
 * tail), 8 times fewer dependent multiplies than over bytes. A delivery
 * callback runs inside the engine, and hashing 64 MiB bytewise beside a
 * CPU hog held the member's heartbeats past the suspicion timeout. */
static void fnv_words(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t w;
    size_t i;
    for (i = 0; i + 8 <= n; i += 8) {
        memcpy(&w, b + i, 8);
        *h = (*h ^ w) * 1099511628211ull;
    }
    fnv(h, b + i, n - i);
}

static void deliver(const tc_group_message_t *m, void *arg);

static void deliver_span(const tc_group_message_t *msgs, size_t count, void *arg)
{
    probe_state_t *st = arg;
    size_t i;

    ++st->spans;
    if (count > st->longest) {
        st->longest = count;
    }
    for (i = 0; i < count; ++i) {
        deliver(&msgs[i], arg);
    }
}

static void deliver(const tc_group_message_t *m, void *arg)
{
    probe_state_t *st = arg;
    int64_t k;
    size_t i;

    fnv(&st->chain, &m->sender, sizeof(m->sender));
    fnv_words(&st->chain, m->data, m->size);
    ++st->count;
    if (m->sender < 0 || m->sender >= 64) {
        ++st->bad;
        return;
    }
    k = st->next[m->sender]++;
    if (m->size != msg_size(st->id, m->sender, k, st->max)) {
        ++st->bad;
        return;
    }
    for (i = 0; i < m->size; ++i) {
        if (((const unsigned char*)m->data)[i] != msg_byte(m->sender, k, i)) {
            ++st->bad;
            return;
        }
    }
}

int main(int argc, char **argv)
{
    int64_t count = 1000, late = 0, k, kk;
    size_t max = 256;
    unsigned window = 32;
    int one_sender = 0, two_groups = 0, spans = 0, opt, rank, size, g, ngroups, rc = 0;
    int members[MAX_GROUPS][64], nmembers[MAX_GROUPS], senders[1], shards = 0;
    tc_bootstrap_h boot;
    tc_node_h node;
    tc_group_h groups[MAX_GROUPS];
    probe_state_t state[MAX_GROUPS];
    unsigned char *buf;

    while ((opt = getopt(argc, argv, "c:s:w:o2L:SG:")) != -1) {
        switch (opt) {
        case 'c': count = atoll(optarg); break;
        case 's': max = (size_t)atoll(optarg); break;
        case 'w': window = (unsigned)atoi(optarg); break;
        case 'o': one_sender = 1; break;
        case '2': two_groups = 1; break;
        case 'L': large_max = (size_t)atoll(optarg); break;
        case 'S': spans = 1; break;
        case 'G': shards = atoi(optarg); break;
        default: return 2;
        }
    }
    if (max < 1 || max > 65536) {
        fprintf(stderr, "-s must be 1..65536\n");
        return 2;
    }
    buf = malloc(large_max > max ? large_max : max);
    if (buf == NULL) {
        return 2;
    }
    if (tc_bootstrap_create_from_env(&boot) != UCS_OK) {
        return 2;
    }
    rank = tc_bootstrap_rank(boot);
    size = tc_bootstrap_size(boot);
    if (size > 64 || (two_groups && size < 3)) {
        fprintf(stderr, "need 3..64 ranks\n");
        return 2;
    }
    if (tc_node_create(boot, &node) != UCS_OK) {
        return 2;
    }

    late = (count / 50 > 0) ? count / 50 : 1;
    if (shards < 0 || shards > MAX_GROUPS || (shards && two_groups)) {
        fprintf(stderr, "-G must be 1..%d, not with -2\n", MAX_GROUPS);
        return 2;
    }
    ngroups = shards ? shards : two_groups ? 2 : 1;
    for (g = 0; g < ngroups; ++g) {
        int first = (two_groups && g == 1) ? 1 : 0;
        int last  = (two_groups && g == 0) ? size - 2 : size - 1;
        tc_group_params_t p;
        nmembers[g] = 0;
        for (k = first; k <= last; ++k) {
            members[g][nmembers[g]++] = (int)k;
        }
        memset(&state[g], 0, sizeof(state[g]));
        state[g].id    = g;
        state[g].chain = 1469598103934665603ull;
        state[g].max   = max;
        senders[0]     = members[g][0];
        memset(&p, 0, sizeof(p));
        p.members      = members[g];
        p.member_count = nmembers[g];
        p.senders      = one_sender ? senders : NULL;
        p.sender_count = one_sender ? 1 : 0;
        p.max_payload  = max;
        p.window       = window;
        p.deliver      = spans ? NULL : deliver;
        p.deliver_span = spans ? deliver_span : NULL;
        p.deliver_arg  = &state[g];
        p.rdmc_max_message = large_max;
        if (tc_group_create(node, &p, &groups[g]) != UCS_OK) {
            return 2;
        }
    }

    /* interleave the groups so that all are busy on the one worker; shards:
     * group 0 streams first while the others idle (quiet), then they send */
    for (k = 0; k < count + (shards ? late : 0); ++k) {
        for (g = 0; g < ngroups; ++g) {
            size_t n, i;
            if (groups[g] == NULL || (one_sender && rank != members[g][0])) {
                continue;
            }
            if (shards && ((g == 0) != (k < count))) {
                continue;
            }
            /* the k-th message of this group: late shards count from 0 */
            kk = (shards && g > 0) ? k - count : k;
            n  = msg_size(g, rank, kk, max);
            for (i = 0; i < n; ++i) {
                buf[i] = msg_byte(rank, kk, i);
                if ((i & ((1u << 20) - 1)) == (1u << 20) - 1) {
                    /* a member that computes drives progress meanwhile:
                     * filling 64 MiB beside a CPU hog outlasts the
                     * suspicion timeout (docs/groups.md) */
                    tc_progress(tc_node_engine(node));
                }
            }
            if (tc_group_send(groups[g], buf, n) != UCS_OK) {
                fprintf(stderr, "send %lld failed\n", (long long)k);
                return 1;
            }
        }
    }

    for (g = 0; g < ngroups; ++g) {
        uint64_t expected;
        if (groups[g] == NULL) {
            continue;
        }
        if (tc_group_close(groups[g]) != UCS_OK) {
            rc = 1;
        }
        expected = (uint64_t)((shards && g > 0) ? late : count) * (one_sender ? 1 : nmembers[g]);
        printf("group %d chain %016llx count %llu bad %llu\n", g,
               (unsigned long long)state[g].chain, (unsigned long long)state[g].count,
               (unsigned long long)state[g].bad);
        if (spans) {
            printf("group %d spans %llu longest %zu\n", g, (unsigned long long)state[g].spans,
                   state[g].longest);
        }
        if (state[g].count != expected || state[g].bad != 0 ||
            tc_group_delivered(groups[g]) != expected) {
            fprintf(stderr, "group %d: delivered %llu (expected %llu), %llu bad\n", g,
                    (unsigned long long)state[g].count, (unsigned long long)expected,
                    (unsigned long long)state[g].bad);
            rc = 1;
        }
        tc_group_destroy(groups[g]);
    }
    free(buf);
    tc_node_destroy(node);
    tc_bootstrap_destroy(boot);
    return rc;
}
