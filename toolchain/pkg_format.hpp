/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Reading and writing the package manifest and jam files described in
 * twochains/jam_format.h.
 */
#pragma once

#include "util.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "twochains/jam_format.h"

namespace tc::pkg {

/* The element as LLVM bitcode for one target triple (`--portable`) */
struct manifest_portable {
    std::string              triple;
    std::uint32_t            bc_size = 0;
    std::uint64_t            bc_hash = 0;   /* FNV-1a 64 of the whole file */
    std::string              file;          /* relative to the manifest dir */
    std::vector<std::string> externals;     /* undefined in the bitcode, sorted */
};

struct manifest_element {
    std::uint32_t            id = 0;
    std::string              name;
    std::uint32_t            span_size = 0;
    std::uint64_t            span_hash = 0;
    std::uint32_t            got_slot_offset = 0;
    std::uint32_t            entry_offset = 0;
    std::uint32_t            data_offset = 0;
    std::uint32_t            flags = 0;
    std::string              file;          /* relative to the manifest dir */
    std::vector<std::string> externals;     /* GOT order */
    std::vector<manifest_portable> portable;  /* one per triple, in --portable order */
};

struct manifest_ried {
    std::string name;
    std::string file;
};

struct manifest {
    std::string                   package;
    target_arch                   arch = target_arch::x86_64;
    std::uint64_t                 build_id = 0;
    std::string                   local_file;
    std::string                   local_symbol;
    std::vector<manifest_ried>    rieds;
    std::vector<manifest_element> elements;  /* by id */
};

std::string manifest_format(const manifest &m);
/* Throws pkg_error "<path>:<line>: ..." on malformed input. */
manifest manifest_parse(const std::string &text, const std::string &path);

/* Relative locations inside an install prefix */
std::filesystem::path pkg_share_dir(const std::filesystem::path &prefix,
                                    const std::string &pkg);
std::filesystem::path pkg_header_path(const std::filesystem::path &prefix,
                                      const std::string &pkg);
std::filesystem::path pkg_local_lib_path(const std::filesystem::path &prefix,
                                         const std::string &pkg);
std::filesystem::path pkg_ried_lib_path(const std::filesystem::path &prefix,
                                        const std::string &pkg,
                                        const std::string &ried);
/* jam_<name>.<triple>.bc, the one name a reader accepts for that bitcode */
std::string portable_file_name(const std::string &jam, const std::string &triple);
/* A triple that can be a manifest field and part of a file name */
bool portable_triple_ok(std::string_view triple);

/* The prefix of a manifest at PREFIX/share/twochains/PKG/manifest */
std::filesystem::path pkg_prefix_of_manifest(const std::filesystem::path &manifest);

struct jam_file {
    tc_jam_file_header_t      header{};
    std::vector<std::string>  externals;
    std::vector<std::uint8_t> span;
};

std::vector<std::uint8_t> jam_file_encode(const jam_file &jf);
/* Validates the header and bounds; throws pkg_error naming @a path. */
jam_file jam_file_decode(const std::vector<std::uint8_t> &bytes, const std::string &path);

} // namespace tc::pkg
