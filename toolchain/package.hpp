/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * A package: discovery of jam_<name>.amc / ried_<name>.rdc under a source
 * tree, element ids, build id, and `twochains-pkg build`.
 */
#pragma once

#include "util.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tc::pkg {

struct pkg_source {
    std::string           name;   /* <name> of jam_<name>.amc or ried_<name>.rdc */
    std::filesystem::path path;   /* absolute */
    std::string           rel;    /* relative to the source dir, for messages */
    bool                  public_api = false;  /* a public-API ifunc source <name>.c */
};

struct package_sources {
    std::string             name;
    std::filesystem::path   src_dir;
    std::vector<pkg_source> jams;    /* sorted by name; element id = index */
    std::vector<pkg_source> rieds;   /* sorted by name */
    std::vector<pkg_source> others;  /* other files: headers, hashed into build id */
};

/* Throws pkg_error on an empty package, bad names or duplicates. */
package_sources package_discover(const std::string &name,
                                 const std::filesystem::path &src_dir);

/* A public-API ifunc source <name>.c as package <name> with the one jam
 * <name>; headers beside it are hashed into the build id. */
package_sources ifunc_source_discover(const std::filesystem::path &source);

struct build_options {
    std::string              name;
    std::filesystem::path    src_dir;
    std::filesystem::path    ifunc_source;  /* set: `twochains-pkg ifunc`, no name/src_dir */
    std::filesystem::path    prefix;
    target_arch              arch = target_arch::x86_64;
    std::string              cc;          /* empty: by target */
    std::vector<std::string> cflags;
    std::string              cmodel;      /* aarch64: tiny (default) or small */
    std::vector<std::string> portable;    /* --portable: bitcode target triples */
    std::string              bc_cc;       /* empty: clang-14 */
    std::string              bc_nm;       /* empty: llvm-nm-14 */
    std::string              keep_dir;    /* keep intermediate files there */
    bool                     force = false;
    unsigned                 jobs  = 0;   /* 0: one per CPU */
};

/* Build and install; prints a summary. Throws pkg_error. */
void package_build(const build_options &opts);

/* Directory holding twochains/jam.h for jam compiles */
std::filesystem::path api_include_dir();
/* where twochains/jam_format.h is for the headers found by api_include_dir() */
std::filesystem::path api_format_header(const std::filesystem::path &api);

} // namespace tc::pkg
