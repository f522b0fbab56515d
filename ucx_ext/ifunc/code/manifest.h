/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Reading a package's manifest (manifest.c), for the registry (package.c):
 * private to ifunc/code.
 */
#ifndef TC_IFUNC_MANIFEST_H_
#define TC_IFUNC_MANIFEST_H_

#include "ifunc/code/package.h"

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

BEGIN_C_DECLS

/* Find the manifest: a file, a directory holding one, or PREFIX + name;
 * its realpath in @a manifest (PATH_MAX bytes) */
ucs_status_t tc_ifunc_pkg_locate(const char *path, const char *name, char *manifest);

/* Read @a manifest (in @a dir, its libraries in @a libdir) into @a pkg */
ucs_status_t tc_ifunc_pkg_parse(tc_ifunc_pkg_h pkg, const char *manifest,
                                const char *dir, const char *libdir);

/* Bind every element to the Local Function table and resolve its GOT */
ucs_status_t tc_ifunc_pkg_bind(tc_ifunc_pkg_h pkg);

/* Close what a package opened and free it (not registered, or no longer) */
void tc_ifunc_pkg_free(tc_ifunc_pkg_h pkg);

END_C_DECLS

#endif
