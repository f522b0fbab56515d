/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Put targets a peer names: an address and a packed rkey it sent us. Over
 * an RMA lane that checks rkeys (InfiniBand) a put outside the peer's
 * registration fails at the peer; over cma or tcp it lands in the peer's
 * own memory; over the AM lane the peer's lane checks it. Over shared
 * memory (posix, sysv) UCX maps the peer's segment into our process and
 * turns the address into a pointer by an offset, unchecked: a peer that
 * names an address outside what it registered would steer our puts into
 * our own memory. So before such an rkey is used, the range is checked
 * against the mapping that unpacking it created, the peer's registration
 * as we see it.
 *
 * Invariants:
 *  - A target whose rkey maps into our process is accepted only if
 *    [address, address+length) lies wholly in one shared mapping that did
 *    not exist before the rkey was unpacked (read from /proc/self/maps
 *    before and after). Any other mapping (our own memory, private memory
 *    the unpack allocated, another peer's older segment) is refused. A
 *    concurrent shared mmap on another thread can only make a check pass
 *    that names that new mapping; no honest target is refused.
 *  - Many targets (a region's parts from every member) are unpacked
 *    between one pair of reads. A target that names another's segment
 *    unpacked in the same batch shares that target's mapping: every target
 *    of a shared mapping is then unpacked again alone, between a pair of
 *    reads of its own, where only its own segment is new.
 *  - Slow path only: once per rkey a peer sends; two reads per batch, so a
 *    group of N members reads the maps O(1) times per region, not O(N).
 *
 * Threads: any.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include <twochains/lane.h>

#include <ucs/debug/log_def.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct tc_vma {
    uintptr_t start;
    uintptr_t end;
    int       shared; /* a shared mapping ("s" in its permissions) */
} tc_vma_t;

/* The mappings of this process, in address order (as the kernel lists them). */
static ucs_status_t tc_vmas_read(tc_vma_t **vmas_p, size_t *count_p)
{
    size_t len = 0, max = 64 * 1024, count = 0, cap = 256;
    tc_vma_t *vmas = NULL, *grown_vmas;
    char *text     = malloc(max), *grown, *line, *next;
    ssize_t got;
    int fd;

    fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if ((fd < 0) || (text == NULL)) {
        goto err;
    }
    while ((got = read(fd, text + len, max - len - 1)) != 0) {
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            goto err;
        }
        len += (size_t)got;
        if (len + 1 == max) {
            grown = realloc(text, 2 * max);
            if (grown == NULL) {
                goto err;
            }
            text = grown;
            max *= 2;
        }
    }
    close(fd);
    fd        = -1;
    text[len] = '\0';
    vmas      = malloc(cap * sizeof(*vmas));
    for (line = text; (vmas != NULL) && (*line != '\0'); line = next) {
        next = strchr(line, '\n');
        next = (next != NULL) ? next + 1 : line + strlen(line);
        if (count == cap) {
            grown_vmas = realloc(vmas, 2 * cap * sizeof(*vmas));
            if (grown_vmas == NULL) {
                goto err;
            }
            vmas = grown_vmas;
            cap *= 2;
        }
        vmas[count].start = (uintptr_t)strtoull(line, &line, 16);
        vmas[count].end    = 0;
        vmas[count].shared = 0;
        if (*line == '-') {
            /* "start-end rwxs offset ...": the fourth permission is s or p */
            vmas[count].end    = (uintptr_t)strtoull(line + 1, &line, 16);
            vmas[count].shared = (strncmp(line, " ", 1) == 0) && (strlen(line) > 4) &&
                                 (line[4] == 's');
        }
        ++count;
    }
    if (vmas == NULL) {
        goto err;
    }
    free(text);
    *vmas_p  = vmas;
    *count_p = count;
    return UCS_OK;

err:
    if (fd >= 0) {
        close(fd);
    }
    free(text);
    free(vmas);
    ucs_error("put target: cannot read /proc/self/maps");
    return UCS_ERR_IO_ERROR;
}

/* The mapping that holds @a addr, by bisection: the kernel lists mappings in
 * address order, without overlaps. */
static const tc_vma_t *tc_vma_find(const tc_vma_t *vmas, size_t count, uintptr_t addr)
{
    size_t lo = 0, hi = count, mid;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        if (addr < vmas[mid].start) {
            hi = mid;
        } else if (addr >= vmas[mid].end) {
            lo = mid + 1;
        } else {
            return &vmas[mid];
        }
    }
    return NULL;
}

static int tc_vma_is_new(const tc_vma_t *before, size_t num_before, const tc_vma_t *vma)
{
    const tc_vma_t *old = tc_vma_find(before, num_before, vma->start);

    return (old == NULL) || (old->start != vma->start);
}

/* The mapping (index into @a after) that holds @a target's whole range and
 * did not exist in @a before, or -1. */
static ssize_t tc_put_target_mapping(const tc_put_target_t *target, const void *local,
                                     const tc_vma_t *before, size_t num_before,
                                     const tc_vma_t *after, size_t num_after)
{
    const tc_vma_t *vma = tc_vma_find(after, num_after, (uintptr_t)local);

    if ((vma == NULL) || !vma->shared || !tc_vma_is_new(before, num_before, vma) ||
        ((uintptr_t)local + target->length < (uintptr_t)local) ||
        ((uintptr_t)local + target->length > vma->end)) {
        return -1;
    }
    return vma - after;
}

/* A target that names a new mapping. */
typedef struct tc_claim {
    ssize_t mapping;
    size_t  target;
} tc_claim_t;

static int tc_claim_compare(const void *a, const void *b)
{
    const tc_claim_t *x = a, *y = b;

    return (x->mapping > y->mapping) - (x->mapping < y->mapping);
}

/*
 * Unpack the targets marked by @a todo (every other one untouched), between
 * two reads of /proc/self/maps. Each target whose rkey maps into us must
 * lie in a shared mapping that appeared in between; a mapping that two
 * targets name makes both "contested" (*contested_p set, status
 * UCS_INPROGRESS, rkey destroyed) for the caller to unpack one at a time.
 */
static ucs_status_t tc_put_targets_unpack_between(tc_put_target_t *targets, size_t count,
                                                  const uint8_t *todo, int *contested_p)
{
    tc_vma_t *before = NULL, *after = NULL;
    size_t num_before = 0, num_after = 0, num_mapping = 0, i, j;
    ssize_t *mapping  = NULL;
    tc_claim_t *claims;
    ucs_status_t status;
    void *local;

    *contested_p = 0;
    mapping      = malloc(count * sizeof(*mapping));
    if (mapping == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    status = tc_vmas_read(&before, &num_before);
    if (status != UCS_OK) {
        free(mapping);
        return status;
    }
    for (i = 0; i < count; ++i) {
        mapping[i] = -2;   /* not ours to do, or not mapped into us */
        if (!todo[i]) {
            continue;
        }
        targets[i].status = ucp_ep_rkey_unpack(targets[i].ep, targets[i].packed,
                                               &targets[i].rkey);
        if (targets[i].status != UCS_OK) {
            targets[i].rkey = NULL;
        }
    }
    status = tc_vmas_read(&after, &num_after);
    if (status != UCS_OK) {
        goto out;
    }
    for (i = 0; i < count; ++i) {
        if (!todo[i] || (targets[i].status != UCS_OK) ||
            (ucp_rkey_ptr(targets[i].rkey, targets[i].address, &local) != UCS_OK)) {
            continue;   /* not mapped into us: the peer's side checks */
        }
        ++num_mapping;
        mapping[i] = tc_put_target_mapping(&targets[i], local, before, num_before, after,
                                           num_after);
        if (mapping[i] < 0) {
            targets[i].status = UCS_ERR_OUT_OF_RANGE;
        }
    }
    /* A target that names another's segment, unpacked in the same batch,
     * shares its mapping: then both are unpacked again, each alone. */
    claims = malloc((num_mapping + 1) * sizeof(*claims));
    if (claims == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto out;
    }
    for (i = 0, j = 0; i < count; ++i) {
        if (mapping[i] >= 0) {
            claims[j].mapping  = mapping[i];
            claims[j++].target = i;
        }
    }
    qsort(claims, j, sizeof(*claims), tc_claim_compare);
    for (i = 1; i < j; ++i) {
        if (claims[i].mapping == claims[i - 1].mapping) {
            mapping[claims[i].target] = mapping[claims[i - 1].target] = -3;
            *contested_p = 1;
        }
    }
    free(claims);
    for (i = 0; i < count; ++i) {
        if (mapping[i] == -3) {
            targets[i].status = UCS_INPROGRESS;
        }
    }

out:
    for (i = 0; i < count; ++i) {
        if (todo[i] && (targets[i].rkey != NULL) &&
            ((status != UCS_OK) || (targets[i].status != UCS_OK))) {
            ucp_rkey_destroy(targets[i].rkey);
            targets[i].rkey = NULL;
        }
    }
    free(before);
    free(after);
    free(mapping);
    return status;
}

ucs_status_t tc_put_targets_unpack(tc_put_target_t *targets, size_t count)
{
    ucs_status_t status = UCS_OK;
    uint8_t *todo;
    int contested;
    size_t i;

    todo = calloc(count + 1, 1);
    if (todo == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    for (i = 0; i < count; ++i) {
        targets[i].rkey = NULL;
        todo[i]         = (targets[i].length != 0) && (targets[i].address != 0) &&
                          (targets[i].address + targets[i].length >= targets[i].address);
        targets[i].status = todo[i] ? UCS_INPROGRESS : UCS_ERR_OUT_OF_RANGE;
    }
    status = tc_put_targets_unpack_between(targets, count, todo, &contested);
    for (i = 0; (status == UCS_OK) && contested && (i < count); ++i) {
        if (targets[i].status != UCS_INPROGRESS) {
            continue;
        }
        /* alone: what appears in between is this target's mapping */
        memset(todo, 0, count);
        todo[i] = 1;
        status  = tc_put_targets_unpack_between(targets, count, todo, &contested);
        contested = 1;   /* alone, it cannot share a mapping */
    }
    free(todo);
    if (status != UCS_OK) {
        for (i = 0; i < count; ++i) {
            if (targets[i].rkey != NULL) {
                ucp_rkey_destroy(targets[i].rkey);
                targets[i].rkey = NULL;
            }
        }
    }
    return status;
}

ucs_status_t tc_put_target_unpack(ucp_ep_h ep, const void *packed, uint64_t address,
                                  size_t length, ucp_rkey_h *rkey_p)
{
    tc_put_target_t target = {ep, packed, address, length, NULL, UCS_OK};
    ucs_status_t status    = tc_put_targets_unpack(&target, 1);

    if (status != UCS_OK) {
        return status;
    }
    if (target.status == UCS_OK) {
        *rkey_p = target.rkey;
    }
    return target.status;
}
