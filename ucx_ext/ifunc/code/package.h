/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Packages (package.c): what a loaded package holds, its elements and their
 * Portable records, and the lookups of the registry.
 */
#ifndef TC_IFUNC_PACKAGE_H_
#define TC_IFUNC_PACKAGE_H_

#include "ifunc/wire/frame.h"

#include <twochains/ifunc.h>
#include <twochains/jam.h>
#include <twochains/jam_format.h>

#include <ucs/sys/compiler_def.h>
#include <stdint.h>
#include <stdio.h>

BEGIN_C_DECLS

#define TC_IFUNC_MAX_PKGS    32
#define TC_IFUNC_MAX_RIEDS   16
#define TC_IFUNC_PKG_NAME_MAX 64

/* ---- packages (package.c) ---- */

#define TC_IFUNC_MAX_PORTABLE 4   /* portable records (triples) per element */

/* The element as LLVM bitcode for one target triple: a manifest's portable
 * record, its file checked at load */
typedef struct tc_ifunc_portable_bc {
    char     triple[TC_JAM_TRIPLE_MAX];
    uint64_t bc_hash;      /* FNV-1a 64 of the whole file */
    uint32_t bc_size;
    char     *path;        /* realpath, malloc'ed, a regular file inside the
                              package's share dir */
} tc_ifunc_portable_bc_t;

typedef struct tc_ifunc_element {
    uint32_t               id;
    char                   name[TC_JAM_NAME_MAX];
    uint32_t               span_size;
    uint64_t               span_hash;
    uint32_t               got_slot_offset;
    uint32_t               entry_offset;
    uint32_t               data_offset;
    uint32_t               flags;          /* TC_JAM_F_* */
    uint32_t               num_externals;
    uint8_t                *span;          /* slot zeroed, hash checked */
    char                   *symtab;        /* names, NUL-separated, GOT order */
    uint32_t               symtab_size;
    void                   **got;          /* resolved here; NULL if any failed */
    const tc_jam_element_t *local;         /* row of the element table */
    tc_ifunc_portable_bc_t portable[TC_IFUNC_MAX_PORTABLE];
    unsigned               num_portable;
} tc_ifunc_element_t;

struct tc_ifunc_pkg {
    char               name[TC_IFUNC_PKG_NAME_MAX];
    char               arch[16];
    uint64_t           id;                 /* tc_frame_pkg_id(name) */
    uint64_t           build_id;
    char               *manifest;          /* realpath, identifies the package */
    unsigned           refcount;           /* under the registry lock */
    void               *local_dl;
    void               *rieds[TC_IFUNC_MAX_RIEDS];
    unsigned           num_rieds;
    tc_ifunc_element_t *elements;
    unsigned           num_elements;
};

/* Registered package with this id, or NULL. Lock-free read. */
tc_ifunc_pkg_h tc_ifunc_pkg_find(uint64_t pkg_id);

/* Package that has a jam called @a name (for ucp_register_ifunc) */
tc_ifunc_pkg_h tc_ifunc_pkg_find_element(const char *name, uint32_t *id_p);

/* Take one more reference on a registered package */
void tc_ifunc_pkg_ref(tc_ifunc_pkg_h pkg);

static inline const tc_ifunc_element_t *
tc_ifunc_pkg_elem(tc_ifunc_pkg_h pkg, uint32_t id)
{
    return (id < pkg->num_elements) ? &pkg->elements[id] : NULL;
}

/* The element's bitcode for @a triple (as the manifest spells it), or NULL */
const tc_ifunc_portable_bc_t *
tc_ifunc_elem_portable(const tc_ifunc_element_t *e, const char *triple);

/* dlsym over the rieds of every registered package, then the process */
void *tc_ifunc_symbol_resolve(const char *name);

/* Element @a id of @a pkg, or why not: UNKNOWN_PKG when @a pkg is NULL (the
 * caller, who knows how the frame named it, says it in @a detail), or
 * UNKNOWN_ELEMENT with the detail. *@a e_p is the element, or NULL. */
static inline tc_ifunc_reject_t
tc_ifunc_pkg_elem_find(tc_ifunc_pkg_h pkg, uint32_t id, const tc_ifunc_element_t **e_p,
                       char *detail, size_t detail_len)
{
    if (pkg == NULL) {
        *e_p = NULL;
        return TC_IFUNC_REJECT_UNKNOWN_PKG;
    }
    *e_p = tc_ifunc_pkg_elem(pkg, id);
    if (*e_p == NULL) {
        snprintf(detail, detail_len, "package %s has %u elements", pkg->name,
                 pkg->num_elements);
        return TC_IFUNC_REJECT_UNKNOWN_ELEMENT;
    }
    return TC_IFUNC_REJECT_NONE;
}

/* A symbol of a registered package's rieds (never the rest of the process) */
void *tc_ifunc_ried_symbol(const char *name);

END_C_DECLS

#endif
