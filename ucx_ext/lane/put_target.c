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
 *    [address, address+length) lies wholly in a mapping that did not exist
 *    before the rkey was unpacked (read from /proc/self/maps before and
 *    after). Any other mapping (our own memory, another peer's segment) is
 *    refused. A concurrent mmap on another thread can only make a check
 *    pass that names that new mapping; no honest target is refused.
 *  - Slow path only: once per rkey a peer sends.
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
        vmas[count].end   = (*line == '-') ? (uintptr_t)strtoull(line + 1, NULL, 16) : 0;
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

static const tc_vma_t *tc_vma_find(const tc_vma_t *vmas, size_t count, uintptr_t addr)
{
    size_t i;

    for (i = 0; i < count; ++i) {
        if ((vmas[i].start <= addr) && (addr < vmas[i].end)) {
            return &vmas[i];
        }
    }
    return NULL;
}

ucs_status_t tc_put_target_unpack(ucp_ep_h ep, const void *packed, uint64_t address,
                                  size_t length, ucp_rkey_h *rkey_p)
{
    tc_vma_t *before = NULL, *after = NULL;
    size_t num_before = 0, num_after = 0;
    const tc_vma_t *vma, *old;
    ucp_rkey_h rkey;
    ucs_status_t status;
    void *local;

    if ((length == 0) || (address == 0) || (address + length < address)) {
        return UCS_ERR_OUT_OF_RANGE;
    }
    status = tc_vmas_read(&before, &num_before);
    if (status != UCS_OK) {
        return status;
    }
    status = ucp_ep_rkey_unpack(ep, packed, &rkey);
    if (status != UCS_OK) {
        free(before);
        return status;
    }
    if (ucp_rkey_ptr(rkey, address, &local) != UCS_OK) {
        free(before);
        *rkey_p = rkey;    /* not mapped into us: the peer's side checks */
        return UCS_OK;
    }
    status = tc_vmas_read(&after, &num_after);
    if (status == UCS_OK) {
        vma = tc_vma_find(after, num_after, (uintptr_t)local);
        old = (vma != NULL) ? tc_vma_find(before, num_before, vma->start) : NULL;
        if ((vma == NULL) || ((old != NULL) && (old->start == vma->start)) ||
            ((uintptr_t)local + length < (uintptr_t)local) ||
            ((uintptr_t)local + length > vma->end)) {
            status = UCS_ERR_OUT_OF_RANGE;
        }
    }
    free(before);
    free(after);
    if (status != UCS_OK) {
        ucp_rkey_destroy(rkey);
        return status;
    }
    *rkey_p = rkey;
    return UCS_OK;
}
