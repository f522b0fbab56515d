/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The RX code cache: copies of injected spans, each in its own mapping that
 * is written while read+write and then made read+execute (W^X: no page is
 * ever writable and executable at once). A span with writable globals keeps
 * them on read+write pages of their own right after its code: the copy is
 * placed so that the data starts on a page boundary, at the distance from
 * the code that its PC-relative references expect, and every run starts
 * them from their shipped values. The receiver's GOT table address is
 * written into the copy's slot before it turns executable, so an entry is
 * bound to one GOT table.
 *
 * Threads: owned by one receiver (a mailbox, or the ucp_poll_ifunc caller).
 * Invariants: entries are never modified after install; lookups compare
 * every code byte (slot excluded), so a hash collision can never run
 * different code. A full cache evicts its least recently run entry that no
 * ring pins: a pinned entry is one a sender will name by hash alone (Cached
 * frames), so dropping it would lose those frames; the others are copies
 * made only to run Injected frames outside the mailbox (W^X), made again
 * when needed. Nothing runs while an entry is evicted (one receiver thread,
 * polls do not nest).
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/code/code_cache.h"
#include "ifunc/wire/frame.h"

#include <base/debug.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void tc_code_cache_init(tc_code_cache_t *cache, unsigned capacity)
{
    kh_init_inplace(tc_code, &cache->entries);
    cache->count     = 0;
    cache->capacity  = capacity;
    cache->tick      = 0;
    cache->evictions = 0;
    cache->snapshot     = NULL;
    cache->snapshot_len = 0;
}

uint8_t *tc_code_cache_snapshot(tc_code_cache_t *cache, const uint8_t *src, size_t len)
{
    uint8_t *grown;

    if (len > cache->snapshot_len) {
        grown = realloc(cache->snapshot, len);
        if (grown == NULL) {
            return NULL;
        }
        cache->snapshot     = grown;
        cache->snapshot_len = len;
    }
    memcpy(cache->snapshot, src, len);
    return cache->snapshot;
}

void tc_code_cache_cleanup(tc_code_cache_t *cache)
{
    tc_code_entry_t *entry, *next;

    kh_foreach_value(&cache->entries, entry, {
        for (; entry != NULL; entry = next) {
            next = entry->next;
            munmap(entry->map, entry->map_len);
            free(entry->data_init);
            free(entry);
        }
    })
    kh_destroy_inplace(tc_code, &cache->entries);
    cache->count = 0;
    free(cache->snapshot);
    cache->snapshot     = NULL;
    cache->snapshot_len = 0;
}

/* Equal code: every byte but the GOT slot, writable globals as shipped */
static int tc_code_equal(const tc_code_entry_t *entry, const uint8_t *code,
                         uint32_t size, uint32_t got_rel, uint32_t entry_rel,
                         uint32_t data_rel)
{
    uint32_t after = got_rel + TC_FRAME_GOT_SIZE;

    return (entry->size == size) && (entry->got_rel == got_rel) &&
           (entry->entry_rel == entry_rel) && (entry->data_rel == data_rel) &&
           (memcmp(entry->code, code, got_rel) == 0) &&
           (memcmp(entry->code + after, code + after, data_rel - after) == 0) &&
           ((entry->data_init == NULL) ||
            (memcmp(entry->data_init, code + data_rel, size - data_rel) == 0));
}

tc_code_entry_t *tc_code_cache_find(tc_code_cache_t *cache, uint64_t hash,
                                    const uint8_t *code, uint32_t size,
                                    uint32_t got_rel, uint32_t entry_rel,
                                    uint32_t data_rel, void **got)
{
    tc_code_entry_t *entry;
    khiter_t it;

    it = kh_get(tc_code, &cache->entries, hash);
    if (it == kh_end(&cache->entries)) {
        return NULL;
    }
    for (entry = kh_val(&cache->entries, it); entry != NULL; entry = entry->next) {
        if ((entry->got == got) &&
            tc_code_equal(entry, code, size, got_rel, entry_rel, data_rel)) {
            entry->last_use = ++cache->tick;
            return entry;
        }
    }
    return NULL;
}

/* Drop the least recently run unpinned entry; 0 if every entry is pinned */
static int tc_code_cache_evict(tc_code_cache_t *cache)
{
    tc_code_entry_t *victim = NULL, *entry, **link;
    khiter_t it, victim_it = 0;

    for (it = kh_begin(&cache->entries); it != kh_end(&cache->entries); ++it) {
        if (!kh_exist(&cache->entries, it)) {
            continue;
        }
        for (entry = kh_val(&cache->entries, it); entry != NULL; entry = entry->next) {
            if ((entry->pins == 0) &&
                ((victim == NULL) || (entry->last_use < victim->last_use))) {
                victim    = entry;
                victim_it = it;
            }
        }
    }
    if (victim == NULL) {
        return 0;
    }
    for (link = &kh_val(&cache->entries, victim_it); *link != victim;
         link = &(*link)->next) {
    }
    *link = victim->next;
    if (kh_val(&cache->entries, victim_it) == NULL) {
        kh_del(tc_code, &cache->entries, victim_it);
    }
    munmap(victim->map, victim->map_len);
    free(victim->data_init);
    free(victim);
    --cache->count;
    ++cache->evictions;
    return 1;
}

tc_code_entry_t *tc_code_cache_install(tc_code_cache_t *cache, uint64_t hash,
                                       const uint8_t *code, uint32_t size,
                                       uint32_t got_rel, uint32_t entry_rel,
                                       uint32_t data_rel, void **got,
                                       uint64_t pkg_id, uint32_t element_id)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t lead, code_len;
    tc_code_entry_t *entry;
    khiter_t it;
    int ret;

    if ((cache->count >= cache->capacity) && !tc_code_cache_evict(cache)) {
        return NULL;   /* every entry is named by Cached frames */
    }
    entry = calloc(1, sizeof(*entry));
    if (entry == NULL) {
        return NULL;
    }
    /* writable globals: start the copy so that they begin a page (the
     * span is 16-aligned, so the code stays aligned as it was linked) */
    lead           = (data_rel < size) ? (page - data_rel % page) % page : 0;
    code_len       = (lead + data_rel + page - 1) & ~(page - 1);
    entry->map_len = (lead + size + page - 1) & ~(page - 1);
    entry->map     = mmap(NULL, entry->map_len, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (entry->map == MAP_FAILED) {
        ucs_diag("code cache: mmap of %zu bytes failed: %m", entry->map_len);
        goto err_free;
    }
    entry->code     = (uint8_t*)entry->map + lead;
    entry->data_rel = data_rel;
    if (data_rel < size) {
        entry->data_init = malloc(size - data_rel);
        if (entry->data_init == NULL) {
            goto err_unmap;
        }
        memcpy(entry->data_init, code + data_rel, size - data_rel);
    }
    memcpy(entry->code, code, size);
    memcpy(entry->code + got_rel, &got, sizeof(got));
    if (mprotect(entry->map, code_len, PROT_READ | PROT_EXEC) != 0) {
        ucs_diag("code cache: mprotect(PROT_READ|PROT_EXEC) failed: %m");
        goto err_unmap;
    }
    __builtin___clear_cache((char*)entry->code, (char*)entry->code + data_rel);

    entry->hash       = hash;
    entry->size       = size;
    entry->got_rel    = got_rel;
    entry->entry_rel  = entry_rel;
    entry->got        = got;
    entry->pkg_id     = pkg_id;
    entry->element_id = element_id;
    entry->last_use   = ++cache->tick;
    entry->pins       = 0;

    it = kh_put(tc_code, &cache->entries, hash, &ret);
    if (ret < 0) {
        goto err_unmap;
    }
    entry->next = (ret == 0) ? kh_val(&cache->entries, it) : NULL;
    kh_val(&cache->entries, it) = entry;
    ++cache->count;
    return entry;

err_unmap:
    munmap(entry->map, entry->map_len);
err_free:
    free(entry->data_init);
    free(entry);
    return NULL;
}
