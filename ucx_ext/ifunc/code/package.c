/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The process-wide package registry: load (the manifest itself is read by
 * manifest.c), lookups, references, unload.
 *
 * Threads: load/unload/ref serialize on tc_ifunc_pkg_lock; receivers look
 * packages up without a lock (tc_ifunc_pkg_find reads each registry slot with
 * one atomic load). A package must not be unloaded while a mailbox may still
 * dispatch frames of it.
 *
 * What reaches dlopen: only paths from a manifest the local user named,
 * resolved with realpath and accepted only if they are regular files in the
 * package prefix's lib/ directory with the names twochains-pkg gives them
 * (lib<pkg>_local.so, lib<pkg>_ried_<ried>.so). Nothing from the wire is
 * ever used as a path; frame symbol names only reach dlsym (ifunc/rx/run.c).
 *
 * Portable records (LLVM bitcode of an element per target triple) name
 * files that are only read, never loaded: each must be the regular file
 * jam_<name>.<triple>.bc in the manifest's own directory, of the size and
 * FNV-1a 64 hash the manifest gives, checked at load. A package without
 * them loads as it always did.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/code/package.h"
#include "ifunc/code/manifest.h"

#include <base/debug.h>

#include <dlfcn.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static pthread_mutex_t tc_ifunc_pkg_lock = PTHREAD_MUTEX_INITIALIZER;
static tc_ifunc_pkg_h  tc_ifunc_pkgs[TC_IFUNC_MAX_PKGS]; /* atomic slots */

#if defined(__x86_64__)
#  define TC_IFUNC_ARCH "x86_64"
#elif defined(__aarch64__)
#  define TC_IFUNC_ARCH "aarch64"
#else
#  define TC_IFUNC_ARCH "unknown"
#endif

tc_ifunc_pkg_h tc_ifunc_pkg_find(uint64_t pkg_id)
{
    tc_ifunc_pkg_h pkg;
    unsigned i;

    for (i = 0; i < TC_IFUNC_MAX_PKGS; ++i) {
        pkg = __atomic_load_n(&tc_ifunc_pkgs[i], __ATOMIC_ACQUIRE);
        if ((pkg != NULL) && (pkg->id == pkg_id)) {
            return pkg;
        }
    }
    return NULL;
}

tc_ifunc_pkg_h tc_ifunc_pkg_find_element(const char *name, uint32_t *id_p)
{
    tc_ifunc_pkg_h pkg;
    unsigned i;

    for (i = 0; i < TC_IFUNC_MAX_PKGS; ++i) {
        pkg = __atomic_load_n(&tc_ifunc_pkgs[i], __ATOMIC_ACQUIRE);
        if ((pkg != NULL) && (tc_ifunc_pkg_element(pkg, name, id_p) == UCS_OK)) {
            return pkg;
        }
    }
    return NULL;
}

void *tc_ifunc_symbol_resolve(const char *name)
{
    void *p = tc_ifunc_ried_symbol(name);

    return (p != NULL) ? p : dlsym(RTLD_DEFAULT, name);
}

void *tc_ifunc_ried_symbol(const char *name)
{
    tc_ifunc_pkg_h pkg;
    unsigned i, r;
    void *p;

    for (i = 0; i < TC_IFUNC_MAX_PKGS; ++i) {
        pkg = __atomic_load_n(&tc_ifunc_pkgs[i], __ATOMIC_ACQUIRE);
        for (r = 0; (pkg != NULL) && (r < pkg->num_rieds); ++r) {
            p = dlsym(pkg->rieds[r], name);
            if (p != NULL) {
                return p;
            }
        }
    }
    return NULL;
}

void *tc_ifunc_pkg_symbol(tc_ifunc_pkg_h pkg, const char *symbol)
{
    unsigned r;
    void *p;

    for (r = 0; r < pkg->num_rieds; ++r) {
        p = dlsym(pkg->rieds[r], symbol);
        if (p != NULL) {
            return p;
        }
    }
    return dlsym(RTLD_DEFAULT, symbol);
}

const char *tc_ifunc_pkg_name(tc_ifunc_pkg_h pkg)
{
    return pkg->name;
}

uint64_t tc_ifunc_pkg_id(tc_ifunc_pkg_h pkg)
{
    return pkg->id;
}

uint64_t tc_ifunc_pkg_code_digest(tc_ifunc_pkg_h pkg)
{
    uint64_t h = tc_fnv1a64(pkg->name, strlen(pkg->name));
    unsigned i;

    for (i = 0; i < pkg->num_elements; ++i) {
        h = tc_fnv1a64_update(h, pkg->elements[i].name, strlen(pkg->elements[i].name) + 1);
        h = tc_fnv1a64_update(h, &pkg->elements[i].span_hash,
                              sizeof(pkg->elements[i].span_hash));
    }
    return h;
}

uint64_t tc_ifunc_pkg_portable_digest(tc_ifunc_pkg_h pkg)
{
    uint64_t h = tc_fnv1a64(pkg->name, strlen(pkg->name));
    const tc_ifunc_portable_bc_t *bc;
    unsigned i, k;

    for (i = 0; i < pkg->num_elements; ++i) {
        h = tc_fnv1a64_update(h, pkg->elements[i].name, strlen(pkg->elements[i].name) + 1);
        for (k = 0; k < pkg->elements[i].num_portable; ++k) {
            bc = &pkg->elements[i].portable[k];
            h  = tc_fnv1a64_update(h, bc->triple, strlen(bc->triple) + 1);
            h  = tc_fnv1a64_update(h, &bc->bc_hash, sizeof(bc->bc_hash));
        }
    }
    return h;
}

uint64_t tc_ifunc_pkg_build_id(tc_ifunc_pkg_h pkg)
{
    return pkg->build_id;
}

unsigned tc_ifunc_pkg_element_count(tc_ifunc_pkg_h pkg)
{
    return pkg->num_elements;
}

ucs_status_t tc_ifunc_pkg_element(tc_ifunc_pkg_h pkg, const char *name,
                                  uint32_t *id_p)
{
    unsigned i;

    for (i = 0; i < pkg->num_elements; ++i) {
        if (strcmp(pkg->elements[i].name, name) == 0) {
            *id_p = i;
            return UCS_OK;
        }
    }
    return UCS_ERR_NO_ELEM;
}

const tc_ifunc_portable_bc_t *
tc_ifunc_elem_portable(const tc_ifunc_element_t *e, const char *triple)
{
    unsigned i;

    for (i = 0; i < e->num_portable; ++i) {
        if (strcmp(e->portable[i].triple, triple) == 0) {
            return &e->portable[i];
        }
    }
    return NULL;
}

/* A name the toolchain could have produced: [A-Za-z0-9_]+ */
ucs_status_t tc_ifunc_pkg_load(const char *path, const char *name,
                               tc_ifunc_pkg_h *pkg_p)
{
    char manifest[PATH_MAX], dir[PATH_MAX], libdir[PATH_MAX];
    char prefix_rel[PATH_MAX + 16];
    tc_ifunc_pkg_h pkg, other;
    ucs_status_t status;
    unsigned i, slot = TC_IFUNC_MAX_PKGS;

    status = tc_ifunc_pkg_locate(path, name, manifest);
    if (status != UCS_OK) {
        return status;
    }

    pthread_mutex_lock(&tc_ifunc_pkg_lock);
    for (i = 0; i < TC_IFUNC_MAX_PKGS; ++i) {
        other = tc_ifunc_pkgs[i];
        if ((other != NULL) && (strcmp(other->manifest, manifest) == 0)) {
            ++other->refcount;
            pthread_mutex_unlock(&tc_ifunc_pkg_lock);
            *pkg_p = other;
            return UCS_OK;
        }
        if ((other == NULL) && (slot == TC_IFUNC_MAX_PKGS)) {
            slot = i;
        }
    }
    if (slot == TC_IFUNC_MAX_PKGS) {
        ucs_error("cannot load %s: %d packages are loaded", manifest,
                  TC_IFUNC_MAX_PKGS);
        status = UCS_ERR_EXCEEDS_LIMIT;
        goto err_unlock;
    }

    pkg = calloc(1, sizeof(*pkg));
    if (pkg == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto err_unlock;
    }
    pkg->refcount = 1;
    pkg->manifest = strdup(manifest);

    /* <prefix>/share/twochains/<pkg>/manifest: libraries live in <prefix>/lib */
    snprintf(dir, sizeof(dir), "%s", manifest);
    *strrchr(dir, '/') = '\0';
    snprintf(prefix_rel, sizeof(prefix_rel), "%s/../../../lib", dir);
    if ((pkg->manifest == NULL) || (realpath(prefix_rel, libdir) == NULL)) {
        ucs_error("package %s: no lib/ directory in its prefix", manifest);
        status = UCS_ERR_NO_ELEM;
        goto err_free;
    }

    status = tc_ifunc_pkg_parse(pkg, manifest, dir, libdir);
    if (status != UCS_OK) {
        goto err_free;
    }
    if (strcmp(pkg->arch, TC_IFUNC_ARCH) != 0) {
        ucs_error("package %s is built for %s, this is %s", pkg->name, pkg->arch,
                  TC_IFUNC_ARCH);
        status = UCS_ERR_UNSUPPORTED;
        goto err_free;
    }
    if (tc_ifunc_pkg_find(pkg->id) != NULL) {
        ucs_error("another package named %s is loaded", pkg->name);
        status = UCS_ERR_ALREADY_EXISTS;
        goto err_free;
    }
    status = tc_ifunc_pkg_bind(pkg);
    if (status != UCS_OK) {
        goto err_free;
    }

    __atomic_store_n(&tc_ifunc_pkgs[slot], pkg, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&tc_ifunc_pkg_lock);
    ucs_debug("loaded package %s (id %016" PRIx64 ", build %016" PRIx64
              ", %u elements) from %s", pkg->name, pkg->id, pkg->build_id,
              pkg->num_elements, manifest);
    *pkg_p = pkg;
    return UCS_OK;

err_free:
    tc_ifunc_pkg_free(pkg);
err_unlock:
    pthread_mutex_unlock(&tc_ifunc_pkg_lock);
    return status;
}

void tc_ifunc_pkg_ref(tc_ifunc_pkg_h pkg)
{
    pthread_mutex_lock(&tc_ifunc_pkg_lock);
    ++pkg->refcount;
    pthread_mutex_unlock(&tc_ifunc_pkg_lock);
}

void tc_ifunc_pkg_unload(tc_ifunc_pkg_h pkg)
{
    unsigned i;

    pthread_mutex_lock(&tc_ifunc_pkg_lock);
    tc_assert(pkg->refcount > 0);
    if (--pkg->refcount > 0) {
        pthread_mutex_unlock(&tc_ifunc_pkg_lock);
        return;
    }
    for (i = 0; i < TC_IFUNC_MAX_PKGS; ++i) {
        if (tc_ifunc_pkgs[i] == pkg) {
            __atomic_store_n(&tc_ifunc_pkgs[i], NULL, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&tc_ifunc_pkg_lock);
    ucs_debug("unloaded package %s", pkg->name);
    tc_ifunc_pkg_free(pkg);
}
