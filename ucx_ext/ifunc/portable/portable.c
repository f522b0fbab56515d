/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Portable frames at the receiver: the process's table of compiled
 * modules and the compile thread that fills it (the run of a Portable
 * frame: ifunc/rx/portable_run.c).
 *
 * Threads: polling threads (any number of mailboxes) look entries up and
 * queue compiles under tc_portable.lock; one compile thread, started with
 * the first compile, loads the JIT module (jit.h), compiles, and publishes
 * each result with a release store of the entry's state. A poll never waits
 * for a compile: the ring whose head frame needs it returns "pending" (and
 * does not count towards its trailer timeout) until the state is final, so
 * every other ring, the progress engine and whatever it drives (heartbeats)
 * go on meanwhile.
 *
 * Invariants:
 *  - copy, then verify, then compile: in `verify` the frame's bitcode is
 *    never read; the receiver compiles its own package's module whose
 *    manifest hash the frame names, re-hashing the bytes it read from the
 *    file. In `trust` the module is copied out of the slot once, the copy is
 *    hashed and must match the frame's code_hash, and only the copy is
 *    compiled. So what runs was compiled from bytes only we could write;
 *  - `confine` runs our own module of the frame's hash as verify does, and
 *    any other module from the frame's bytes (copied and hashed as in
 *    trust) only compiled confined (jit_confine.c) and run through
 *    tc_confine_run (confine.c), Cached frames of it included;
 *  - three tables: modules compiled from our own packages' files, the only
 *    ones `verify` runs; modules compiled from peers' bytes (trust); and
 *    peers' modules compiled confined. FNV-1a names code, it does not
 *    authenticate it, so a peer's module that hashes like one of ours never
 *    stands in for it, and a module compiled unconfined never runs where
 *    confine asked;
 *  - one entry per bitcode hash and table, compiled once; an entry's state goes
 *    COMPILING -> READY or FAILED, once. A FAILED entry rejects every later
 *    frame naming that hash with the same reason, so a bad module costs one
 *    compile, not one per frame;
 *  - externals resolve only to UCX_TC_IFUNC_PORTABLE_ALLOW (from the
 *    process) and to the symbols of registered packages' rieds;
 *  - the tables together hold at most UCX_TC_IFUNC_PORTABLE_CODE entries;
 *    when they are full, a new module evicts the least recently used entry
 *    that nothing holds, as the code cache does: not one still compiling,
 *    not one a ring names for Cached frames (pins: its sender names it by
 *    hash alone), not one a group prepared (pinned for the process's life:
 *    its delivery must not wait for a compile), not one a poll is running
 *    (users, taken under the lock by the lookup and dropped after the
 *    call). Only the compile thread releases compiled code (it owns the
 *    JIT): an evicted entry is handed to it. When nothing can be evicted, a
 *    new module is a reject ('resource').
 */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE   /* dladdr: where this library is, to find the JIT beside it */
#endif
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/portable/portable.h"
#include "ifunc/code/package.h"
#include "ifunc/config/ifunc_config.h"
#include "ifunc/confine/confine.h"
#include "ifunc/jit/jit.h"
#include "ifunc/receiver/receiver.h"

#include <base/debug.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

KHASH_MAP_INIT_INT64(tc_portable, tc_portable_code_t*)


static tc_portable_table_t tc_portable_setup_table(const tc_portable_code_t *setup)
{
    return setup->confined ? TC_PORTABLE_TABLE_CONFINED :
           setup->own      ? TC_PORTABLE_TABLE_OWN : TC_PORTABLE_TABLE_PEER;
}

static struct {
    pthread_mutex_t     lock;
    pthread_cond_t      cond;          /* a job was queued, or one finished */
    khash_t(tc_portable) tables[TC_PORTABLE_TABLES]; /* hash -> entry, by
                                          tc_portable_table_t */
    int                 table_init;
    tc_portable_code_t  *jobs;         /* FIFO of COMPILING entries */
    tc_portable_code_t  *evicted;      /* entries whose code the compile thread
                                          releases (linked by next_job) */
    uint64_t            tick;          /* for least-recently-used eviction */
    tc_portable_code_t  **jobs_tail;
    int                 thread_started;
    const tc_jit_ops_t  *ops;          /* compile thread only, after loading */
    tc_jit_t            *jit;
    double              jit_setup_s;   /* loading the module, creating the JIT */
    char                jit_error[192]; /* why there is no JIT, once known */
} tc_portable = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .cond = PTHREAD_COND_INITIALIZER
};

tc_ifunc_arch_t tc_portable_host_arch(void)
{
#if defined(__x86_64__)
    return TC_IFUNC_ARCH_X86_64;
#elif defined(__aarch64__)
    return TC_IFUNC_ARCH_AARCH64;
#else
    return TC_IFUNC_ARCH_UNKNOWN;
#endif
}

const char *tc_portable_arch_triple(tc_ifunc_arch_t arch)
{
    switch (arch) {
    case TC_IFUNC_ARCH_X86_64:
        return "x86_64-linux-gnu";
    case TC_IFUNC_ARCH_AARCH64:
        return "aarch64-linux-gnu";
    default:
        return "unknown";
    }
}

const char *tc_portable_host_triple(void)
{
    return tc_portable_arch_triple(tc_portable_host_arch());
}

/* ---- the compile thread ---- */

/* libtwochains_jit.so beside this library (installed: both in libdir; in
 * the build tree: both in ucx_ext/.libs), unless it is linked in already */
static const tc_jit_ops_t *tc_portable_load_jit(char *err, size_t err_len)
{
    char path[PATH_MAX], dir[PATH_MAX];
    const tc_jit_ops_t *ops;
    Dl_info info;
    void *module;

    ops = dlsym(RTLD_DEFAULT, TC_JIT_OPS_SYMBOL);
    if (ops == NULL) {
        if ((dladdr((void*)tc_portable_load_jit, &info) == 0) ||
            (info.dli_fname == NULL)) {
            snprintf(err, err_len, "cannot locate libtwochains itself");
            return NULL;
        }
        snprintf(dir, sizeof(dir), "%s", info.dli_fname);
        snprintf(path, sizeof(path), "%s/%s", dirname(dir), TC_JIT_MODULE_NAME);
        module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (module == NULL) {
            snprintf(err, err_len, "cannot load the JIT: %s", dlerror());
            return NULL;
        }
        ops = dlsym(module, TC_JIT_OPS_SYMBOL);
        if (ops == NULL) {
            snprintf(err, err_len, "%s has no %s", path, TC_JIT_OPS_SYMBOL);
            return NULL;
        }
    }
    if (ops->version != TC_JIT_OPS_VERSION) {
        snprintf(err, err_len, "JIT interface version %u, expected %u", ops->version,
                 TC_JIT_OPS_VERSION);
        return NULL;
    }
    return ops;
}

static int tc_portable_allowed(const char *name)
{
    const ucs_config_names_array_t *allow = &tc_ifunc_config_get()->portable_allow;
    unsigned i;

    for (i = 0; i < allow->count; ++i) {
        if (strcmp(allow->names[i], name) == 0) {
            return 1;
        }
    }
    return 0;
}

/* A trusted or verified module's externals: rieds' symbols, then the
 * process's names on UCX_TC_IFUNC_PORTABLE_ALLOW (a confined module's:
 * tc_confine_resolve) */
static void *tc_portable_resolve(void *arg, const char *name, tc_jit_symbol_t *sym,
                                 char *why, size_t why_len)
{
    void *addr;

    (void)arg;
    addr = tc_ifunc_ried_symbol(name);
    if (addr != NULL) {
        if (sym != NULL) {
            tc_confine_symbol_info(addr, sym);
        }
        return addr;
    }
    if (!tc_portable_allowed(name)) {
        snprintf(why, why_len, "is neither a ried symbol of a registered package nor "
                 "in UCX_TC_IFUNC_PORTABLE_ALLOW");
        return NULL;
    }
    addr = dlsym(RTLD_DEFAULT, name);
    if (addr == NULL) {
        snprintf(why, why_len, "is allowed but not in the process");
    }
    return addr;
}

uint8_t *tc_portable_read_module(const char *path, uint64_t hash, size_t *size_p,
                                 char *detail, size_t detail_len)
{
    struct stat st;
    uint8_t *buf;
    ssize_t got;
    size_t done = 0;
    int fd;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(detail, detail_len, "cannot open %s", path);
        return NULL;
    }
    if ((fstat(fd, &st) != 0) || !S_ISREG(st.st_mode) ||
        (st.st_size > TC_FRAME_CODE_MAX) || (st.st_size == 0)) {
        snprintf(detail, detail_len, "%s is not a module file", path);
        close(fd);
        return NULL;
    }
    buf = malloc(st.st_size);
    while ((buf != NULL) && (done < (size_t)st.st_size)) {
        got = read(fd, buf + done, st.st_size - done);
        if (got <= 0) {
            free(buf);
            buf = NULL;
            break;
        }
        done += got;
    }
    close(fd);
    if (buf == NULL) {
        snprintf(detail, detail_len, "cannot read %s", path);
        return NULL;
    }
    if (tc_fnv1a64(buf, done) != hash) {
        snprintf(detail, detail_len, "%s no longer hashes to %016" PRIx64
                 " (changed since the package was loaded)", path, hash);
        free(buf);
        return NULL;
    }
    *size_p = done;
    return buf;
}

static void tc_portable_compile(tc_portable_code_t *entry)
{
    tc_ifunc_reject_t reason = TC_IFUNC_REJECT_RESOURCE;
    uint8_t *bitcode         = entry->bitcode;
    size_t size              = entry->bitcode_size;
    tc_jit_code_t *code      = NULL;
    double start             = tc_ifunc_now();

    if ((tc_portable.ops == NULL) && (tc_portable.jit_error[0] == '\0')) {
        tc_portable.ops = tc_portable_load_jit(tc_portable.jit_error,
                                               sizeof(tc_portable.jit_error));
        if ((tc_portable.ops != NULL) &&
            (tc_portable.ops->create(&tc_portable.jit, tc_portable.jit_error,
                                     sizeof(tc_portable.jit_error)) != UCS_OK)) {
            tc_portable.ops = NULL;
        }
        if (tc_portable.ops == NULL) {
            ucs_error("ifunc: Portable frames cannot run here: %s", tc_portable.jit_error);
        }
        tc_portable.jit_setup_s = tc_ifunc_now() - start;
        start                   = tc_ifunc_now();   /* a compile is the module's own */
    }
    if (tc_portable.ops == NULL) {
        snprintf(entry->detail, sizeof(entry->detail), "no JIT: %.180s",
                 tc_portable.jit_error);
    } else {
        if (bitcode == NULL) {
            bitcode = tc_portable_read_module(entry->path, entry->hash, &size,
                                              entry->detail, sizeof(entry->detail));
            reason  = TC_IFUNC_REJECT_HASH;
        }
        if (bitcode != NULL) {
            reason = tc_portable.ops->compile(tc_portable.jit, bitcode, size,
                                              entry->entry_name,
                                              entry->confined ? tc_confine_resolve :
                                                                tc_portable_resolve,
                                              NULL,
                                              entry->confined ? tc_confine_jit_options() :
                                                                NULL,
                                              entry->own ? 0 : TC_JIT_COMPILE_F_UNTRUSTED,
                                              &code, entry->detail, sizeof(entry->detail));
        }
    }
    if (bitcode != entry->bitcode) {
        free(bitcode);
    }
    free(entry->bitcode);
    free(entry->path);
    entry->bitcode   = NULL;
    entry->path      = NULL;
    entry->compile_s = tc_ifunc_now() - start;
    if (reason == TC_IFUNC_REJECT_NONE) {
        entry->jit_code   = code;
        entry->entry.code     = tc_portable.ops->entry(code);
        entry->entry.confined = entry->confined;
        ucs_info("ifunc: compiled module %016" PRIx64 " (%s) for %s%s in %.3f ms",
                 entry->hash, entry->entry_name, tc_portable_host_triple(),
                 entry->confined ? ", confined" : "", entry->compile_s * 1e3);
    }
    entry->reason = reason;
    __atomic_store_n(&entry->state,
                     (reason == TC_IFUNC_REJECT_NONE) ? TC_PORTABLE_READY :
                                                        TC_PORTABLE_FAILED,
                     __ATOMIC_RELEASE);
}

/* An entry out of the tables, and its code (compile thread: the JIT's) */
static void tc_portable_free(tc_portable_code_t *entry)
{
    if (entry->jit_code != NULL) {
        tc_portable.ops->release(tc_portable.jit, entry->jit_code);
    }
    free(entry);
}

static void *tc_portable_thread(void *arg)
{
    tc_portable_code_t *entry;

    (void)arg;
    pthread_mutex_lock(&tc_portable.lock);
    for (;;) {
        while ((tc_portable.jobs == NULL) && (tc_portable.evicted == NULL)) {
            pthread_cond_wait(&tc_portable.cond, &tc_portable.lock);
        }
        while (tc_portable.evicted != NULL) {
            entry               = tc_portable.evicted;
            tc_portable.evicted = entry->next_job;
            pthread_mutex_unlock(&tc_portable.lock);
            tc_portable_free(entry);
            pthread_mutex_lock(&tc_portable.lock);
        }
        if (tc_portable.jobs == NULL) {
            continue;
        }
        entry            = tc_portable.jobs;
        tc_portable.jobs = entry->next_job;
        if (tc_portable.jobs == NULL) {
            tc_portable.jobs_tail = &tc_portable.jobs;
        }
        pthread_mutex_unlock(&tc_portable.lock);
        tc_portable_compile(entry);
        pthread_mutex_lock(&tc_portable.lock);
        pthread_cond_broadcast(&tc_portable.cond);   /* tc_ifunc_portable_prepare */
    }
    return NULL;
}

/* ---- the table ---- */

/* Under the lock: drop the least recently used entry that nothing holds
 * (the invariants above); 0 if every entry is held */
static int tc_portable_evict(void)
{
    tc_portable_code_t *victim = NULL, *entry;
    khash_t(tc_portable) *victim_table = NULL;
    unsigned t;
    khiter_t it;

    for (t = 0; t < TC_PORTABLE_TABLES; ++t) {
        kh_foreach_value(&tc_portable.tables[t], entry, {
            if ((__atomic_load_n(&entry->state, __ATOMIC_ACQUIRE) != TC_PORTABLE_COMPILING) &&
                (__atomic_load_n(&entry->entry.pins, __ATOMIC_RELAXED) == 0) &&
                (__atomic_load_n(&entry->users, __ATOMIC_ACQUIRE) == 0) &&
                ((victim == NULL) || (entry->entry.last_use < victim->entry.last_use))) {
                victim       = entry;
                victim_table = &tc_portable.tables[t];
            }
        })
    }
    if (victim == NULL) {
        return 0;
    }
    it = kh_get(tc_portable, victim_table, victim->hash);
    kh_del(tc_portable, victim_table, it);
    ucs_debug("ifunc: evicted module %016" PRIx64 " (%s)", victim->hash,
              victim->entry_name);
    if (victim->jit_code == NULL) {
        free(victim);     /* it failed: no code to release */
    } else {
        victim->next_job    = tc_portable.evicted;
        tc_portable.evicted = victim;
        pthread_cond_broadcast(&tc_portable.cond);
    }
    return 1;
}

/* Let go of an entry tc_portable_get held (@a hold) */
void tc_portable_put(tc_portable_code_t *entry)
{
    __atomic_fetch_sub(&entry->users, 1, __ATOMIC_RELEASE);
}

/* The entry of @a hash in the table of our own modules (@a own) or of
 * peers' ones, or (@a taken_p not NULL) a new COMPILING one queued with
 * @a setup's inputs, which it takes (*taken_p = 1: from then on they are
 * the compile thread's, which may free them at once), evicting another
 * when the tables are full (counted in @a evictions, may be NULL); held
 * (@a hold: until tc_portable_put) so that no eviction frees it while it
 * runs. NULL: none, the tables full of held entries, or no memory
 * (@a detail). Two tables, because FNV-1a names
 * code without authenticating it: a peer's module that hashes like one of
 * ours must never be what a verifying receiver runs. */
tc_portable_code_t *
tc_portable_get(uint64_t hash, tc_portable_table_t which, const tc_portable_code_t *setup,
                int *taken_p, int hold, uint64_t *evictions, char *detail, size_t detail_len)
{
    khash_t(tc_portable) *table = &tc_portable.tables[which];
    unsigned count, t;
    const tc_ifunc_config_t *config = tc_ifunc_config_get();
    tc_portable_code_t *entry = NULL;
    pthread_attr_t attr;
    pthread_t thread;
    khiter_t it;
    int ret;

    pthread_mutex_lock(&tc_portable.lock);
    if (!tc_portable.table_init) {
        for (t = 0; t < TC_PORTABLE_TABLES; ++t) {
            kh_init_inplace(tc_portable, &tc_portable.tables[t]);
        }
        tc_portable.jobs_tail  = &tc_portable.jobs;
        tc_portable.table_init = 1;
    }
    it = kh_get(tc_portable, table, hash);
    if (it != kh_end(table)) {
        entry = kh_val(table, it);
        goto found;
    }
    if (taken_p == NULL) {
        goto out;
    }
    for (count = 0, t = 0; t < TC_PORTABLE_TABLES; ++t) {
        count += kh_size(&tc_portable.tables[t]);
    }
    if ((count >= config->portable_code) && tc_portable_evict()) {
        --count;
        if (evictions != NULL) {
            ++*evictions;
        }
    }
    if (count >= config->portable_code) {
        snprintf(detail, detail_len, "%u modules held (compiling, named by Cached "
                 "frames, prepared or running): UCX_TC_IFUNC_PORTABLE_CODE", count);
        goto out;
    }
    if (!tc_portable.thread_started) {
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        ret = pthread_create(&thread, &attr, tc_portable_thread, NULL);
        pthread_attr_destroy(&attr);
        if (ret != 0) {
            snprintf(detail, detail_len, "cannot start the compile thread");
            goto out;
        }
        tc_portable.thread_started = 1;
    }
    entry = malloc(sizeof(*entry));
    if (entry == NULL) {
        snprintf(detail, detail_len, "no memory");
        goto out;
    }
    *entry       = *setup;
    entry->hash  = hash;
    entry->state = TC_PORTABLE_COMPILING;
    it = kh_put(tc_portable, table, hash, &ret);
    if (ret < 0) {
        free(entry);
        entry = NULL;
        snprintf(detail, detail_len, "no memory");
        goto out;
    }
    kh_val(table, it) = entry;
    *taken_p              = 1;
    entry->next_job       = NULL;
    entry->users          = 0;
    entry->prepared       = 0;
    entry->entry.pins     = 0;
    *tc_portable.jobs_tail = entry;
    tc_portable.jobs_tail  = &entry->next_job;
    pthread_cond_broadcast(&tc_portable.cond);
found:
    entry->entry.last_use = ++tc_portable.tick;
    if (hold) {
        __atomic_fetch_add(&entry->users, 1, __ATOMIC_ACQUIRE);
    }
out:
    pthread_mutex_unlock(&tc_portable.lock);
    return entry;
}

/* tc_portable_get that creates (and holds the entry); the inputs of
 * @a setup that the table did not take (full, or another ring queued the
 * hash first) are freed */
tc_portable_code_t *tc_portable_get_or_free(uint64_t hash,
                                            tc_portable_code_t *setup,
                                            uint64_t *evictions,
                                            char *detail, size_t detail_len)
{
    int taken                 = 0;
    tc_portable_code_t *entry = tc_portable_get(hash, tc_portable_setup_table(setup), setup,
                                                &taken, 1, evictions, detail, detail_len);

    if (!taken) {
        free(setup->bitcode);
        free(setup->path);
    }
    return entry;
}

/* Element @a e's own module for this host, if its hash is @a hash: the
 * only code `verify` runs */
tc_ifunc_reject_t tc_portable_own_check(const tc_ifunc_pkg_h pkg,
                                        const tc_ifunc_element_t *e,
                                        uint64_t hash,
                                        const tc_ifunc_portable_bc_t **bc_p,
                                        char *detail, size_t detail_len)
{
    const tc_ifunc_portable_bc_t *bc = tc_ifunc_elem_portable(e, tc_portable_host_triple());

    if (bc == NULL) {
        snprintf(detail, detail_len, "%s.%s has no module for %s", pkg->name, e->name,
                 tc_portable_host_triple());
        return TC_IFUNC_REJECT_HASH;
    }
    if (bc->bc_hash != hash) {
        snprintf(detail, detail_len, "module %016" PRIx64 " is not the installed %s.%s "
                 "for %s (%016" PRIx64 ")", hash, pkg->name, e->name,
                 tc_portable_host_triple(), bc->bc_hash);
        return TC_IFUNC_REJECT_HASH;
    }
    *bc_p = bc;
    return TC_IFUNC_REJECT_NONE;
}

/* What a new entry for element @a e's own module needs (verify mode) */
tc_ifunc_reject_t tc_portable_own_setup(const tc_ifunc_pkg_h pkg,
                                        const tc_ifunc_element_t *e,
                                        uint64_t hash, tc_portable_code_t *setup,
                                        char *detail, size_t detail_len)
{
    const tc_ifunc_portable_bc_t *bc;
    tc_ifunc_reject_t reason;

    reason = tc_portable_own_check(pkg, e, hash, &bc, detail, detail_len);
    if (reason != TC_IFUNC_REJECT_NONE) {
        return reason;
    }
    memset(setup, 0, sizeof(*setup));
    setup->own  = 1;
    setup->path = strdup(bc->path);   /* the package may go before the compile */
    if (setup->path == NULL) {
        snprintf(detail, detail_len, "no memory");
        return TC_IFUNC_REJECT_RESOURCE;
    }
    snprintf(setup->entry_name, sizeof(setup->entry_name), "%s_main", e->name);
    setup->entry.pkg_id     = pkg->id;
    setup->entry.element_id = e->id;
    return TC_IFUNC_REJECT_NONE;
}

/* Wait on the table's condition for up to 50 ms, under its lock */
static void tc_portable_wait_a_little(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 50 * 1000 * 1000;
    if (ts.tv_nsec >= 1000 * 1000 * 1000) {
        ts.tv_nsec -= 1000 * 1000 * 1000;
        ++ts.tv_sec;
    }
    pthread_cond_timedwait(&tc_portable.cond, &tc_portable.lock, &ts);
}

/* The state of @a entry once final, or COMPILING after @a timeout_s */
int tc_portable_wait(tc_portable_code_t *entry, double timeout_s)
{
    double deadline = tc_ifunc_now() + timeout_s;
    int state       = __atomic_load_n(&entry->state, __ATOMIC_ACQUIRE);

    if (state != TC_PORTABLE_COMPILING) {
        return state;
    }
    pthread_mutex_lock(&tc_portable.lock);
    while (((state = __atomic_load_n(&entry->state, __ATOMIC_ACQUIRE)) ==
            TC_PORTABLE_COMPILING) && (tc_ifunc_now() < deadline)) {
        tc_portable_wait_a_little();
    }
    pthread_mutex_unlock(&tc_portable.lock);
    return state;
}

ucs_status_t tc_ifunc_portable_prepare(tc_ifunc_pkg_h pkg, double timeout_s)
{
    double deadline = tc_ifunc_now() + timeout_s;
    ucs_status_t status = UCS_OK;
    const tc_ifunc_portable_bc_t *bc;
    tc_portable_code_t setup, *entry;
    char detail[192];
    unsigned i;
    int state;

    for (i = 0; i < pkg->num_elements; ++i) {
        bc = tc_ifunc_elem_portable(&pkg->elements[i], tc_portable_host_triple());
        if (bc == NULL) {
            continue;
        }
        detail[0] = '\0';
        entry     = NULL;
        if ((tc_portable_own_setup(pkg, &pkg->elements[i], bc->bc_hash, &setup, detail,
                                   sizeof(detail)) != TC_IFUNC_REJECT_NONE) ||
            ((entry = tc_portable_get_or_free(bc->bc_hash, &setup, NULL, detail,
                                              sizeof(detail))) == NULL)) {
            ucs_error("ifunc: cannot prepare %s.%s: %s", pkg->name,
                      pkg->elements[i].name, detail);
            return UCS_ERR_NO_RESOURCE;
        }
        /* pinned for the process's life, once: a group's delivery must
         * find it compiled */
        if (!__atomic_exchange_n(&entry->prepared, 1, __ATOMIC_RELAXED)) {
            __atomic_fetch_add(&entry->entry.pins, 1, __ATOMIC_RELAXED);
        }
        tc_portable_put(entry);
    }
    /* wait for every one of them */
    for (i = 0; i < pkg->num_elements; ++i) {
        bc = tc_ifunc_elem_portable(&pkg->elements[i], tc_portable_host_triple());
        if (bc == NULL) {
            continue;
        }
        entry = tc_portable_get(bc->bc_hash, TC_PORTABLE_TABLE_OWN, NULL, NULL, 0, NULL,
                                detail, sizeof(detail));
        state = tc_portable_wait(entry, deadline - tc_ifunc_now());
        if (state == TC_PORTABLE_COMPILING) {
            return UCS_ERR_TIMED_OUT;
        }
        if (state == TC_PORTABLE_FAILED) {
            ucs_error("ifunc: %s.%s does not compile here: %s: %s", pkg->name,
                      pkg->elements[i].name, tc_ifunc_reject_name(entry->reason),
                      entry->detail);
            status = UCS_ERR_INVALID_PARAM;
        }
    }
    return status;
}

const tc_portable_code_t *tc_portable_find(uint64_t hash, double *jit_setup_s)
{
    char detail[8];
    tc_portable_code_t *entry = tc_portable_get(hash, TC_PORTABLE_TABLE_OWN, NULL, NULL, 0,
                                                NULL, detail, sizeof(detail));

    if (jit_setup_s != NULL) {
        *jit_setup_s = tc_portable.jit_setup_s;
    }
    return ((entry != NULL) &&
            (__atomic_load_n(&entry->state, __ATOMIC_ACQUIRE) == TC_PORTABLE_READY)) ?
           entry : NULL;
}

const tc_portable_code_t *tc_portable_compile_confined(const void *bitcode, size_t size,
                                                       const char *entry_name,
                                                       double timeout_s, char *detail,
                                                       size_t detail_len)
{
    uint64_t hash = tc_fnv1a64(bitcode, size);
    tc_portable_code_t setup, *entry;
    int state;

    memset(&setup, 0, sizeof(setup));
    setup.confined     = 1;
    setup.bitcode      = malloc(size);
    setup.bitcode_size = size;
    if (setup.bitcode == NULL) {
        snprintf(detail, detail_len, "no memory");
        return NULL;
    }
    memcpy(setup.bitcode, bitcode, size);
    snprintf(setup.entry_name, sizeof(setup.entry_name), "%s", entry_name);
    entry = tc_portable_get_or_free(hash, &setup, NULL, detail, detail_len);
    if (entry == NULL) {
        return NULL;
    }
    if (!__atomic_exchange_n(&entry->prepared, 1, __ATOMIC_RELAXED)) {
        __atomic_fetch_add(&entry->entry.pins, 1, __ATOMIC_RELAXED);
    }
    tc_portable_put(entry);
    state = tc_portable_wait(entry, timeout_s);
    if (state != TC_PORTABLE_READY) {
        snprintf(detail, detail_len, "%s: %s", (state == TC_PORTABLE_COMPILING) ?
                 "still compiling" : tc_ifunc_reject_name(entry->reason), entry->detail);
        return NULL;
    }
    return entry;
}

