/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * A package's manifest read into a package (package.c registers it): its
 * elements' spans, symbol tables and Portable records checked against the
 * manifest, its libraries opened and its GOTs resolved.
 *
 * Threads: the loading thread, under the registry lock (package.c).
 *
 * What reaches dlopen: only paths from a manifest the local user named,
 * resolved with realpath and accepted only if they are regular files in the
 * package prefix's lib/ directory with the names twochains-pkg gives them
 * (lib<pkg>_local.so, lib<pkg>_ried_<ried>.so). Nothing from the wire is
 * ever used as a path.
 *
 * Portable records name files that are only read, never loaded: each must
 * be the regular file jam_<name>.<triple>.bc in the manifest's own
 * directory, of the size and FNV-1a 64 hash the manifest gives.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/code/manifest.h"
#include "ifunc/code/package.h"

#include <base/debug.h>

#include <dlfcn.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* every package twochains-pkg writes fits; "pextern %63s" reads a triple */
_Static_assert(TC_IFUNC_MAX_PORTABLE >= TC_JAM_PORTABLE_MAX, "portable records");
_Static_assert(TC_JAM_TRIPLE_MAX == 64, "pextern triple field width");

/* A name the toolchain could have produced: [A-Za-z0-9_]+ */
static int tc_ifunc_pkg_name_ok(const char *s)
{
    if (*s == '\0') {
        return 0;
    }
    for (; *s != '\0'; ++s) {
        if (!(((*s >= 'a') && (*s <= 'z')) || ((*s >= 'A') && (*s <= 'Z')) ||
              ((*s >= '0') && (*s <= '9')) || (*s == '_'))) {
            return 0;
        }
    }
    return 1;
}

/* A target triple the toolchain could have written: [A-Za-z0-9_.-]+, not
 * starting with '-' or '.' (it is part of a file name) */
static int tc_ifunc_pkg_triple_ok(const char *s)
{
    if ((*s == '\0') || (*s == '-') || (*s == '.')) {
        return 0;
    }
    for (; *s != '\0'; ++s) {
        if (!(((*s >= 'a') && (*s <= 'z')) || ((*s >= 'A') && (*s <= 'Z')) ||
              ((*s >= '0') && (*s <= '9')) || (*s == '_') || (*s == '-') ||
              (*s == '.'))) {
            return 0;
        }
    }
    return 1;
}

/*
 * Resolve @a rel (relative to @a dir) and accept it only if it is the regular
 * file @a libdir/@a expect_name. @a out receives the real path.
 */
static ucs_status_t tc_ifunc_pkg_lib_path(const char *manifest, const char *dir,
                                          const char *libdir, const char *rel,
                                          const char *expect_name, char *out)
{
    char joined[2 * PATH_MAX];
    const char *base;
    struct stat st;

    if ((rel[0] == '/') ||
        (snprintf(joined, sizeof(joined), "%s/%s", dir, rel) >= (int)sizeof(joined)) ||
        (realpath(joined, out) == NULL)) {
        ucs_error("package %s: library '%s' not found", manifest, rel);
        return UCS_ERR_NO_ELEM;
    }
    base = strrchr(out, '/');
    if ((base == NULL) || (strncmp(out, libdir, strlen(libdir)) != 0) ||
        (base != out + strlen(libdir)) || (strcmp(base + 1, expect_name) != 0) ||
        (stat(out, &st) != 0) || !S_ISREG(st.st_mode)) {
        ucs_error("package %s: '%s' is not %s/%s; refusing to load it", manifest,
                  rel, libdir, expect_name);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

static ucs_status_t tc_ifunc_pkg_read_span(tc_ifunc_pkg_h pkg, const char *dir,
                                           const char *file, tc_ifunc_element_t *e)
{
    char path[PATH_MAX + 512], expect[TC_JAM_NAME_MAX + 16];
    tc_jam_file_header_t h;
    ucs_status_t status = UCS_ERR_INVALID_PARAM;
    FILE *f;

    snprintf(expect, sizeof(expect), "jam_%s.bin", e->name);
    if (strcmp(file, expect) != 0) {
        ucs_error("package %s: element %s: file '%s' is not '%s'", pkg->name,
                  e->name, file, expect);
        return UCS_ERR_INVALID_PARAM;
    }
    if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path)) {
        return UCS_ERR_INVALID_PARAM;
    }
    f = fopen(path, "rb");
    if (f == NULL) {
        ucs_error("package %s: cannot open %s", pkg->name, path);
        return UCS_ERR_NO_ELEM;
    }
    if ((fread(&h, sizeof(h), 1, f) != 1) ||
        (memcmp(h.magic, TC_JAM_FILE_MAGIC, sizeof(h.magic)) != 0) ||
        (h.version != TC_JAM_FILE_VERSION) || (h.span_size != e->span_size) ||
        (h.entry_offset != e->entry_offset) || (h.span_hash != e->span_hash) ||
        (h.got_slot_offset != e->got_slot_offset) ||
        (h.num_externals != e->num_externals) || (h.element_id != e->id)) {
        ucs_error("package %s: %s does not match the manifest", pkg->name, path);
        goto out;
    }
    e->span = calloc(1, e->span_size);
    if ((e->span == NULL) || (fseek(f, (long)h.span_offset, SEEK_SET) != 0) ||
        (fread(e->span, 1, e->span_size, f) != e->span_size)) {
        ucs_error("package %s: cannot read the span of %s", pkg->name, path);
        goto out;
    }
    if (tc_frame_span_hash(e->span, e->span_size, e->got_slot_offset) !=
        e->span_hash) {
        ucs_error("package %s: %s: span hash mismatch", pkg->name, path);
        goto out;
    }
    status = UCS_OK;
out:
    fclose(f);
    return status;
}

/*
 * A portable record: its file must be jam_<name>.<triple>.bc right in the
 * manifest's directory @a dir (a realpath), a regular file of bc_size bytes
 * that hashes to bc_hash. Checked here, once, so that whoever compiles it
 * later reads a file the package vouched for.
 */
static ucs_status_t
tc_ifunc_pkg_read_portable(tc_ifunc_pkg_h pkg, const char *dir,
                           const tc_jam_manifest_portable_t *rec,
                           tc_ifunc_element_t *e)
{
    char joined[PATH_MAX + 512], real[PATH_MAX];
    char expect[TC_JAM_NAME_MAX + TC_JAM_TRIPLE_MAX + 16];
    tc_ifunc_portable_bc_t *bc;
    unsigned char buf[4096];
    size_t dir_len = strlen(dir), n;
    uint64_t hash  = TC_FNV1A64_INIT, total = 0;
    struct stat st;
    FILE *f;

    snprintf(expect, sizeof(expect), "jam_%s.%s.bc", e->name, rec->triple);
    if (strcmp(rec->file, expect) != 0) {
        ucs_error("package %s: element %s: bitcode file '%s' is not '%s'",
                  pkg->name, e->name, rec->file, expect);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((snprintf(joined, sizeof(joined), "%s/%s", dir, rec->file) >=
         (int)sizeof(joined)) ||
        (realpath(joined, real) == NULL)) {
        ucs_error("package %s: bitcode %s/%s not found", pkg->name, dir, rec->file);
        return UCS_ERR_NO_ELEM;
    }
    if ((strncmp(real, dir, dir_len) != 0) || (real[dir_len] != '/') ||
        (strchr(real + dir_len + 1, '/') != NULL) || (stat(real, &st) != 0) ||
        !S_ISREG(st.st_mode)) {
        ucs_error("package %s: '%s' is not a regular file in %s; refusing it",
                  pkg->name, rec->file, dir);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((uint64_t)st.st_size != rec->bc_size) {
        ucs_error("package %s: %s has %lld bytes, the manifest says %u", pkg->name,
                  real, (long long)st.st_size, rec->bc_size);
        return UCS_ERR_INVALID_PARAM;
    }

    f = fopen(real, "rb");
    if (f == NULL) {
        ucs_error("package %s: cannot open %s", pkg->name, real);
        return UCS_ERR_NO_ELEM;
    }
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
        hash   = tc_fnv1a64_update(hash, buf, n);
        total += n;
    }
    fclose(f);
    if ((total != rec->bc_size) || (hash != rec->bc_hash)) {
        ucs_error("package %s: %s: bitcode hash mismatch", pkg->name, real);
        return UCS_ERR_INVALID_PARAM;
    }

    bc       = &e->portable[e->num_portable];
    bc->path = strdup(real);
    if (bc->path == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    memcpy(bc->triple, rec->triple, sizeof(bc->triple));
    bc->bc_hash = rec->bc_hash;
    bc->bc_size = rec->bc_size;
    ++e->num_portable;
    return UCS_OK;
}

void tc_ifunc_pkg_free(tc_ifunc_pkg_h pkg)
{
    unsigned i, k;

    for (i = 0; i < pkg->num_elements; ++i) {
        for (k = 0; k < pkg->elements[i].num_portable; ++k) {
            free(pkg->elements[i].portable[k].path);
        }
        free(pkg->elements[i].span);
        free(pkg->elements[i].symtab);
        free(pkg->elements[i].got);
    }
    free(pkg->elements);
    if (pkg->local_dl != NULL) {
        dlclose(pkg->local_dl);
    }
    for (i = pkg->num_rieds; i > 0; --i) {
        dlclose(pkg->rieds[i - 1]);
    }
    free(pkg->manifest);
    free(pkg);
}

/* Append a NUL-terminated name to an element's symbol table */
static ucs_status_t tc_ifunc_elem_add_extern(tc_ifunc_element_t *e,
                                             const char *sym)
{
    size_t len = strlen(sym) + 1;
    char *p;

    if (len > TC_FRAME_SYMBOL_MAX) {
        return UCS_ERR_INVALID_PARAM;
    }
    p = realloc(e->symtab, e->symtab_size + len);
    if (p == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    memcpy(p + e->symtab_size, sym, len);
    e->symtab       = p;
    e->symtab_size += len;
    return UCS_OK;
}

/* n-th name of an element's symbol table */
static const char *tc_ifunc_elem_extern(const tc_ifunc_element_t *e, unsigned n)
{
    const char *p = e->symtab;

    while (n-- > 0) {
        p += strlen(p) + 1;
    }
    return p;
}

ucs_status_t tc_ifunc_pkg_parse(tc_ifunc_pkg_h pkg, const char *manifest,
                                const char *dir, const char *libdir)
{
    char line[2048], word[1024], word2[1024], sym[256], triple[TC_JAM_TRIPLE_MAX];
    char real[PATH_MAX], expect[TC_IFUNC_PKG_NAME_MAX + 1100], table_sym[1024] = "";
    unsigned a, n, lineno = 0, have_magic = 0, have_end = 0;
    unsigned next_extern = 0;
    /* pextern lines of the element's last portable record: expected, seen */
    unsigned num_pextern = 0, next_pextern = 0;
    tc_jam_manifest_element_t rec;
    tc_jam_manifest_portable_t prec;
    tc_ifunc_element_t *e = NULL, *grown;
    ucs_status_t status = UCS_ERR_INVALID_PARAM;
    FILE *f;

    f = fopen(manifest, "r");
    if (f == NULL) {
        ucs_error("cannot open package manifest %s", manifest);
        return UCS_ERR_NO_ELEM;
    }

    while (fgets(line, sizeof(line), f) != NULL) {
        ++lineno;
        if ((line[0] == '#') || (line[0] == '\n')) {
            continue;
        }
        if (strchr(line, '\n') == NULL) {
            ucs_error("%s:%u: line too long", manifest, lineno);
            goto out;
        }
        if (!have_magic) {
            if ((sscanf(line, TC_PKG_MANIFEST_MAGIC " %u", &a) != 1) ||
                (a != TC_PKG_MANIFEST_VERSION)) {
                ucs_error("%s:%u: not a version %d manifest", manifest, lineno,
                          TC_PKG_MANIFEST_VERSION);
                goto out;
            }
            have_magic = 1;
        } else if (have_end) {
            ucs_error("%s:%u: record after 'end'", manifest, lineno);
            goto out;
        } else if (sscanf(line, "package %63s", pkg->name) == 1) {
            if (!tc_ifunc_pkg_name_ok(pkg->name)) {
                ucs_error("%s:%u: bad package name", manifest, lineno);
                goto out;
            }
            pkg->id = tc_frame_pkg_id(pkg->name);
        } else if (sscanf(line, "arch %15s", pkg->arch) == 1) {
        } else if (sscanf(line, "build-id %" SCNx64, &pkg->build_id) == 1) {
        } else if (sscanf(line, "local %1023s %1023s", word, word2) == 2) {
            snprintf(expect, sizeof(expect), "lib%s_local.so", pkg->name);
            status = tc_ifunc_pkg_lib_path(manifest, dir, libdir, word, expect, real);
            if (status != UCS_OK) {
                goto out;
            }
            status = UCS_ERR_INVALID_PARAM;
            /* RTLD_LOCAL: packages export the same jam symbol names */
            pkg->local_dl = dlopen(real, RTLD_NOW | RTLD_LOCAL);
            if (pkg->local_dl == NULL) {
                ucs_error("package %s: dlopen(%s): %s", pkg->name, real, dlerror());
                status = UCS_ERR_IO_ERROR;
                goto out;
            }
            memcpy(table_sym, word2, sizeof(word2));
        } else if (sscanf(line, "ried %1023s %1023s", word, word2) == 2) {
            if (!tc_ifunc_pkg_name_ok(word) || (pkg->num_rieds == TC_IFUNC_MAX_RIEDS)) {
                ucs_error("%s:%u: bad ried record", manifest, lineno);
                goto out;
            }
            if (snprintf(expect, sizeof(expect), "lib%s_ried_%s.so", pkg->name,
                         word) >= (int)sizeof(expect)) {
                ucs_error("%s:%u: ried name too long", manifest, lineno);
                goto out;
            }
            status = tc_ifunc_pkg_lib_path(manifest, dir, libdir, word2, expect, real);
            if (status != UCS_OK) {
                goto out;
            }
            status = UCS_ERR_INVALID_PARAM;
            pkg->rieds[pkg->num_rieds] = dlopen(real, RTLD_NOW | RTLD_LOCAL);
            if (pkg->rieds[pkg->num_rieds] == NULL) {
                ucs_error("package %s: dlopen(%s): %s", pkg->name, real, dlerror());
                status = UCS_ERR_IO_ERROR;
                goto out;
            }
            ++pkg->num_rieds;
        } else if (tc_jam_manifest_element_parse(line, &rec)) {
            if ((e != NULL) && ((next_extern != e->num_externals) ||
                                (next_pextern != num_pextern))) {
                ucs_error("%s:%u: element %s lacks externs", manifest, lineno, e->name);
                goto out;
            }
            if ((rec.id != pkg->num_elements) || (rec.num_externals > TC_FRAME_MAX_SYMBOLS) ||
                (rec.span_size < TC_JAM_PREAMBLE_SIZE) || (rec.span_size > TC_JAM_SPAN_MAX) ||
                (rec.got_slot_offset != TC_JAM_GOT_SLOT_OFFSET) ||
                (rec.entry_offset < TC_JAM_PREAMBLE_SIZE) || (rec.entry_offset >= rec.span_size) ||
                (rec.data_offset > rec.span_size) || !tc_ifunc_pkg_name_ok(rec.name)) {
                ucs_error("%s:%u: bad element record", manifest, lineno);
                goto out;
            }
            grown = realloc(pkg->elements, (pkg->num_elements + 1) * sizeof(*grown));
            if (grown == NULL) {
                status = UCS_ERR_NO_MEMORY;
                goto out;
            }
            pkg->elements = grown;
            e             = &pkg->elements[pkg->num_elements++];
            memset(e, 0, sizeof(*e));
            e->id              = rec.id;
            memcpy(e->name, rec.name, sizeof(rec.name));
            e->span_size       = rec.span_size;
            e->span_hash       = rec.span_hash;
            e->got_slot_offset = rec.got_slot_offset;
            e->entry_offset    = rec.entry_offset;
            e->data_offset     = rec.data_offset;
            e->flags           = rec.flags;
            e->num_externals   = rec.num_externals;
            next_extern        = 0;
            num_pextern        = 0;
            next_pextern       = 0;
            status = tc_ifunc_pkg_read_span(pkg, dir, rec.file, e);
            if (status != UCS_OK) {
                goto out;
            }
            status = UCS_ERR_INVALID_PARAM;
        } else if (sscanf(line, "extern %u %u %255s", &a, &n, sym) == 3) {
            if ((e == NULL) || (a != e->id) || (n != next_extern) ||
                (n >= e->num_externals) ||
                (tc_ifunc_elem_add_extern(e, sym) != UCS_OK)) {
                ucs_error("%s:%u: bad extern record", manifest, lineno);
                goto out;
            }
            ++next_extern;
        } else if (tc_jam_manifest_portable_parse(line, &prec)) {
            /* after all the element's externs and the previous portable
             * record's pexterns; one per triple */
            if ((e == NULL) || (prec.element_id != e->id) ||
                (next_extern != e->num_externals) || (next_pextern != num_pextern) ||
                (e->num_portable == TC_IFUNC_MAX_PORTABLE) ||
                !tc_ifunc_pkg_triple_ok(prec.triple) ||
                (tc_ifunc_elem_portable(e, prec.triple) != NULL) ||
                (prec.num_externals > TC_FRAME_MAX_SYMBOLS) || (prec.bc_size == 0)) {
                ucs_error("%s:%u: bad portable record", manifest, lineno);
                goto out;
            }
            status = tc_ifunc_pkg_read_portable(pkg, dir, &prec, e);
            if (status != UCS_OK) {
                goto out;
            }
            status       = UCS_ERR_INVALID_PARAM;
            num_pextern  = prec.num_externals;
            next_pextern = 0;
        } else if (sscanf(line, "pextern %u %63s %u %255s", &a, triple, &n, sym) == 4) {
            /* counted, not kept: whoever compiles the bitcode reads its
             * externals from the bitcode itself */
            if ((e == NULL) || (e->num_portable == 0) || (a != e->id) ||
                (strcmp(triple, e->portable[e->num_portable - 1].triple) != 0) ||
                (n != next_pextern) || (n >= num_pextern)) {
                ucs_error("%s:%u: bad pextern record", manifest, lineno);
                goto out;
            }
            ++next_pextern;
        } else if (strcmp(line, "end\n") == 0) {
            have_end = 1;
        } else {
            ucs_error("%s:%u: unknown record", manifest, lineno);
            goto out;
        }
    }

    if (!have_end || (pkg->name[0] == '\0') || (pkg->local_dl == NULL) ||
        ((e != NULL) && ((next_extern != e->num_externals) ||
                         (next_pextern != num_pextern)))) {
        ucs_error("%s: incomplete manifest", manifest);
        goto out;
    }
    snprintf(expect, sizeof(expect), "%s" TC_PKG_ELEMENTS_SUFFIX, pkg->name);
    if (strcmp(table_sym, expect) != 0) {
        ucs_error("%s: element table '%s' is not '%s'", manifest, table_sym, expect);
        goto out;
    }
    status = UCS_OK;
out:
    fclose(f);
    return status;
}

/* Bind every element to the Local Function table and resolve its GOT */
ucs_status_t tc_ifunc_pkg_bind(tc_ifunc_pkg_h pkg)
{
    char sym[TC_IFUNC_PKG_NAME_MAX + 32];
    const tc_jam_element_t *table;
    const uint32_t *count;
    unsigned i, k;

    snprintf(sym, sizeof(sym), "%s" TC_PKG_ELEMENTS_SUFFIX, pkg->name);
    table = dlsym(pkg->local_dl, sym);
    snprintf(sym, sizeof(sym), "%s" TC_PKG_ELEMENT_COUNT_SUFFIX, pkg->name);
    count = dlsym(pkg->local_dl, sym);
    if ((table == NULL) || (count == NULL) || (*count != pkg->num_elements)) {
        ucs_error("package %s: element table missing or of the wrong size",
                  pkg->name);
        return UCS_ERR_INVALID_PARAM;
    }

    for (i = 0; i < pkg->num_elements; ++i) {
        tc_ifunc_element_t *e = &pkg->elements[i];

        if ((table[i].id != i) || (table[i].name == NULL) ||
            (strcmp(table[i].name, e->name) != 0) || (table[i].main == NULL)) {
            ucs_error("package %s: element table row %u does not match the "
                      "manifest", pkg->name, i);
            return UCS_ERR_INVALID_PARAM;
        }
        e->local = &table[i];

        e->got = calloc(e->num_externals + 1, sizeof(void*));
        if (e->got == NULL) {
            return UCS_ERR_NO_MEMORY;
        }
        for (k = 0; k < e->num_externals; ++k) {
            e->got[k] = tc_ifunc_pkg_symbol(pkg, tc_ifunc_elem_extern(e, k));
            if (e->got[k] == NULL) {
                ucs_diag("package %s: element %s: cannot resolve '%s'; it can "
                         "run as a Local Function only", pkg->name, e->name,
                         tc_ifunc_elem_extern(e, k));
                free(e->got);
                e->got = NULL;
                break;
            }
        }
    }
    return UCS_OK;
}

/* Find the manifest: a file, a directory holding one, or PREFIX + name */
ucs_status_t tc_ifunc_pkg_locate(const char *path, const char *name,
                                 char *manifest)
{
    char joined[PATH_MAX + 128];
    struct stat st;

    if (name != NULL) {
        if (!tc_ifunc_pkg_name_ok(name)) {
            ucs_error("bad package name '%s'", name);
            return UCS_ERR_INVALID_PARAM;
        }
        snprintf(joined, sizeof(joined), "%s/share/twochains/%s/%s", path, name,
                 TC_PKG_MANIFEST_NAME);
    } else if ((stat(path, &st) == 0) && S_ISDIR(st.st_mode)) {
        snprintf(joined, sizeof(joined), "%s/%s", path, TC_PKG_MANIFEST_NAME);
    } else {
        snprintf(joined, sizeof(joined), "%s", path);
    }
    if ((realpath(joined, manifest) == NULL) || (stat(manifest, &st) != 0) ||
        !S_ISREG(st.st_mode)) {
        ucs_error("no package manifest at %s", joined);
        return UCS_ERR_NO_ELEM;
    }
    return UCS_OK;
}

