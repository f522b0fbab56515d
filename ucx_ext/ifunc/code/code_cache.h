/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The code cache (code_cache.c): private, page-aligned copies of shipped code,
 * linked with the receiver's GOT, found by hash, evicted least recently used.
 */
#ifndef TC_IFUNC_CODE_CACHE_H_
#define TC_IFUNC_CODE_CACHE_H_

#include <twochains/jam.h>

#include <ucs/datastruct/khash.h>
#include <ucs/sys/compiler_def.h>
#include <stdint.h>
#include <string.h>

BEGIN_C_DECLS

/* ---- code cache (code_cache.c) ---- */

typedef struct tc_code_entry {
    uint64_t             hash;
    uint32_t             size;
    uint32_t             got_rel;        /* GOT slot, from the span start */
    uint32_t             entry_rel;
    void                 **got;          /* the table written into the slot */
    uint64_t             pkg_id;
    uint32_t             element_id;
    uint8_t              *code;          /* the span: read+execute up to data_rel */
    uint32_t             data_rel;       /* writable globals from here (size: none) */
    uint8_t              *data_init;     /* their initial bytes, or NULL */
    void                 *map;           /* the mapping holding the span */
    size_t               map_len;
    uint64_t             last_use;       /* cache tick of the last run */
    unsigned             pins;           /* rings whose Cached frames name it */
    int                  confined;       /* a confined module's: runs only through
                                            tc_confine_run */
    struct tc_code_entry *next;          /* same hash */
} tc_code_entry_t;

KHASH_MAP_INIT_INT64(tc_code, tc_code_entry_t*)

typedef struct tc_code_cache {
    khash_t(tc_code) entries;            /* hash -> chain */
    unsigned         count;
    unsigned         capacity;
    uint64_t         tick;               /* for least-recently-used eviction */
    uint64_t         evictions;
    uint8_t          *snapshot;          /* the frame being verified, privately */
    size_t           snapshot_len;
} tc_code_cache_t;

void tc_code_cache_init(tc_code_cache_t *cache, unsigned capacity);
void tc_code_cache_cleanup(tc_code_cache_t *cache);

/* A private copy of @a len bytes at @a src, memory a peer may still write:
 * what is checked, hashed, linked and installed is this copy, and the
 * source is not read again. Valid until the next call; NULL: no memory. */
uint8_t *tc_code_cache_snapshot(tc_code_cache_t *cache, const uint8_t *src, size_t len);

/* An entry holding exactly @a code (slot excluded; writable globals as
 * they were shipped) linked with @a got */
tc_code_entry_t *tc_code_cache_find(tc_code_cache_t *cache, uint64_t hash,
                                    const uint8_t *code, uint32_t size,
                                    uint32_t got_rel, uint32_t entry_rel,
                                    uint32_t data_rel, void **got);

/* Copy @a code into a fresh mapping, write @a got into its slot, make
 * [0, data_rel) read+execute and the writable globals [data_rel, size)
 * read+write (placed page aligned, at the same distance from the code),
 * keep the I-cache coherent. data_rel == size: no writable globals. NULL
 * when full or mmap fails. */
tc_code_entry_t *tc_code_cache_install(tc_code_cache_t *cache, uint64_t hash,
                                       const uint8_t *code, uint32_t size,
                                       uint32_t got_rel, uint32_t entry_rel,
                                       uint32_t data_rel, void **got,
                                       uint64_t pkg_id, uint32_t element_id);

/* Run an entry: its writable globals start from their shipped values, as
 * in a frame run in place (the jam contract: a per-message copy) */
static inline void tc_code_entry_run(tc_code_entry_t *entry, void *payload,
                                     size_t payload_size, void *target_args)
{
    if (entry->data_init != NULL) {
        memcpy(entry->code + entry->data_rel, entry->data_init,
               entry->size - entry->data_rel);
    }
    ((tc_jam_main_fn_t)(void*)(entry->code + entry->entry_rel))(payload, payload_size,
                                                                 target_args);
}

END_C_DECLS

#endif
