/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * On-disk formats written by twochains-pkg and read by the runtime (C11):
 * the injectable span, the jam file that carries it, and the package
 * manifest. All integers are little endian (x86_64 and aarch64 both are).
 *
 * Installed layout under the prefix of `twochains-pkg build`:
 *   include/<pkg>.h                         generated package header
 *   lib/lib<pkg>_local.so                   Local Function library
 *   lib/lib<pkg>_ried_<ried>.so             one per ried_<ried>.rdc
 *   share/twochains/<pkg>/manifest          TC_PKG_MANIFEST_MAGIC text
 *   share/twochains/<pkg>/jam_<name>.bin    tc_jam_file_header_t + span
 *   share/twochains/<pkg>/jam_<name>.elf    linked span with its relocations
 *                                           (re-checked by `verify`)
 *   share/twochains/<pkg>/jam_<name>.<triple>.bc
 *                                           the jam as LLVM bitcode for one
 *                                           target triple (`--portable`)
 *
 * ---------------------------------------------------------------------------
 * The injectable span: the bytes a sender ships, position independent.
 *
 *   0                 tc_jam_preamble_t: GOT slot, magic, span size
 *   entry_offset      <name>_main, then the other code, then read-only data
 *   data_offset       the jam's writable globals (.data, then zeroed .bss)
 *   span_size         end of span
 *
 * Every reference to something outside the span goes through the GOT slot:
 * the receiver stores the address of its GOT table there, an array of
 * num_externals pointers resolved (e.g. by dlsym) in the order of the jam's
 * external symbol list, then calls span + entry_offset. The shipped span has
 * the slot zeroed; span_hash covers exactly those bytes.
 *
 * The receiver must:
 *  - place the span at an address aligned to 16 (4096 if TC_JAM_F_PAGE_ALIGN);
 *  - give every message a fresh copy of [data_offset, span_size) if
 *    TC_JAM_F_WRITABLE_DATA is set, and map that range writable (the code
 *    may then not be mapped read+execute only);
 *  - make the instruction cache coherent before the call (aarch64).
 *
 * Hash: 64-bit FNV-1a (offset basis 0xcbf29ce484222325, prime 0x100000001b3)
 * over the span. It identifies a span and catches corruption; it is not a
 * cryptographic authenticator.
 * ---------------------------------------------------------------------------
 */
#ifndef TWOCHAINS_JAM_FORMAT_H_
#define TWOCHAINS_JAM_FORMAT_H_

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TC_JAM_PREAMBLE_MAGIC   0x314a4354u  /* "TCJ1" */
#define TC_JAM_PREAMBLE_SIZE    16u
#define TC_JAM_GOT_SLOT_OFFSET  0u
#define TC_JAM_SPAN_ALIGN       16u
#define TC_JAM_SPAN_MAX         (1u << 20)   /* aarch64 literal-load range */

/* The first bytes of every span */
typedef struct tc_jam_preamble {
    uint64_t got_slot;   /* written by the receiver: its GOT table address */
    uint32_t magic;      /* TC_JAM_PREAMBLE_MAGIC */
    uint32_t span_size;  /* bytes, preamble included */
} tc_jam_preamble_t;

/* tc_jam_file_header_t.flags and the manifest's element flags */
#define TC_JAM_F_HAS_PAYLOAD_INIT  0x1u  /* <name>_payload_init defined */
#define TC_JAM_F_HAS_MAX_SIZE      0x2u  /* <name>_payload_get_max_size defined */
#define TC_JAM_F_WRITABLE_DATA     0x4u  /* span has writable globals */
#define TC_JAM_F_PAGE_ALIGN        0x8u  /* uses adrp: place at 4096 alignment */

#define TC_JAM_FILE_MAGIC    "TCJAMBIN"  /* 8 bytes, no NUL */
#define TC_JAM_FILE_VERSION  1u
#define TC_JAM_NAME_MAX      64u         /* name[] size, NUL included */

/*
 * jam_<name>.bin: this header, then the external symbol names (each
 * NUL-terminated, in GOT order), then padding, then the span at span_offset.
 */
typedef struct tc_jam_file_header {
    char     magic[8];          /* TC_JAM_FILE_MAGIC */
    uint16_t version;           /* TC_JAM_FILE_VERSION */
    uint16_t machine;           /* ELF e_machine: 62 x86_64, 183 aarch64 */
    uint32_t header_size;       /* sizeof(tc_jam_file_header_t) */
    uint32_t element_id;
    uint32_t flags;             /* TC_JAM_F_* */
    uint32_t span_offset;       /* file offset of the span, 16-aligned */
    uint32_t span_size;
    uint32_t got_slot_offset;   /* within the span */
    uint32_t entry_offset;      /* within the span: <name>_main */
    uint32_t data_offset;       /* within the span; == span_size if none */
    uint32_t num_externals;     /* GOT table entries */
    uint32_t symtab_offset;     /* file offset of the symbol names */
    uint32_t symtab_size;       /* bytes of symbol names, NULs included */
    uint64_t span_hash;         /* FNV-1a 64 of the span */
    uint64_t build_id;          /* the package's build id */
    char     name[TC_JAM_NAME_MAX];
} tc_jam_file_header_t;

#if defined(__cplusplus)
static_assert(sizeof(tc_jam_file_header_t) == 136, "jam file header layout");
static_assert(sizeof(tc_jam_preamble_t) == TC_JAM_PREAMBLE_SIZE, "preamble");
#else
_Static_assert(sizeof(tc_jam_file_header_t) == 136, "jam file header layout");
_Static_assert(sizeof(tc_jam_preamble_t) == TC_JAM_PREAMBLE_SIZE, "preamble");
#endif

/*
 * The manifest: text, one record per line, fields separated by one space,
 * no field contains a space. Lines starting with '#' are comments. Paths are
 * relative to the manifest's directory. Records, in this order:
 *
 *   tc-manifest 1
 *   package <pkg>
 *   arch <x86_64|aarch64>
 *   build-id <16 hex digits>
 *   local <path of lib<pkg>_local.so> <element table symbol>
 *   ried <ried name> <path of lib<pkg>_ried_<ried>.so>            (0..n)
 *   element <id> <name> <span_size> <span_hash 16 hex> <got_slot_offset>
 *           <entry_offset> <data_offset> <flags hex> <num_externals> <file>
 *                                              (one line; ids 0..n-1, sorted)
 *   extern <element id> <GOT index> <symbol>  (num_externals per element,
 *                                              after its element line)
 *   portable <element id> <triple> <bc_size> <bc_hash 16 hex>
 *            <num_externals> <file>        (one line; 0..TC_JAM_PORTABLE_MAX
 *                                              per element, after its extern
 *                                              lines, one per triple)
 *   pextern <element id> <triple> <index> <symbol>
 *                                             (num_externals per portable
 *                                              record, right after it)
 *   end
 *
 * A portable record names the element compiled to LLVM bitcode for one
 * target triple (as given to `twochains-pkg --portable`, e.g.
 * aarch64-linux-gnu): <file> is jam_<name>.<triple>.bc, bc_size its size in
 * bytes and bc_hash the FNV-1a 64 of all its bytes. Its pextern lines are
 * the symbols the bitcode leaves undefined, sorted by name: what a receiver
 * that compiles it must provide. The bitcode comes from clang 14: a bitcode
 * reader reads its own LLVM release's bitcode and older ones' only. A
 * package built without --portable has no portable records.
 *
 * A C11 reader: fgets, then tc_jam_manifest_element_parse() and
 * tc_jam_manifest_portable_parse() for element and portable records (the
 * one parser of each in C) and sscanf for the others.
 */
#define TC_PKG_MANIFEST_MAGIC   "tc-manifest"
#define TC_PKG_MANIFEST_VERSION 1
#define TC_PKG_MANIFEST_NAME    "manifest"
#define TC_PKG_MANIFEST_PATH_MAX 1024u   /* file[] size, NUL included */
#define TC_JAM_TRIPLE_MAX       64       /* triple[] size, NUL included */
#define TC_JAM_PORTABLE_MAX     4u       /* portable records per element */

/* One element record of a manifest, as twochains-pkg writes it. */
typedef struct tc_jam_manifest_element {
    unsigned id;
    char     name[TC_JAM_NAME_MAX];
    unsigned span_size;
    uint64_t span_hash;
    unsigned got_slot_offset;
    unsigned entry_offset;
    unsigned data_offset;
    unsigned flags;
    unsigned num_externals;
    char     file[TC_PKG_MANIFEST_PATH_MAX];  /* relative to the manifest */
} tc_jam_manifest_element_t;

/* 1 if @a line is an element record, its fields in @a e; 0 if it is not.
 * The fields' ranges are the reader's to check against its own limits. */
static inline int tc_jam_manifest_element_parse(const char *line,
                                                tc_jam_manifest_element_t *e)
{
    return sscanf(line, "element %u %63s %u %" SCNx64 " %u %u %u %x %u %1023s", &e->id,
                  e->name, &e->span_size, &e->span_hash, &e->got_slot_offset,
                  &e->entry_offset, &e->data_offset, &e->flags, &e->num_externals,
                  e->file) == 10;
}

/* One portable record of a manifest, as twochains-pkg writes it. */
typedef struct tc_jam_manifest_portable {
    unsigned element_id;
    char     triple[TC_JAM_TRIPLE_MAX];
    unsigned bc_size;
    uint64_t bc_hash;
    unsigned num_externals;
    char     file[TC_PKG_MANIFEST_PATH_MAX];  /* relative to the manifest */
} tc_jam_manifest_portable_t;

/* 1 if @a line is a portable record, its fields in @a p; 0 if it is not.
 * The fields' ranges are the reader's to check against its own limits. */
static inline int tc_jam_manifest_portable_parse(const char *line,
                                                 tc_jam_manifest_portable_t *p)
{
    return sscanf(line, "portable %u %63s %u %" SCNx64 " %u %1023s", &p->element_id,
                  p->triple, &p->bc_size, &p->bc_hash, &p->num_externals, p->file) == 6;
}

#ifdef __cplusplus
}
#endif

#endif /* TWOCHAINS_JAM_FORMAT_H_ */
