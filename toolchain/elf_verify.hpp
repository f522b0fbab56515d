/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * libelf checks of a jam: the GOT-patched object before linking, and the
 * linked span after (linked with --emit-relocs so every relocation the
 * linker applied inside the span can be re-checked here).
 *
 * A span is accepted only if every relocation applied inside it is
 * PC-relative and resolves to a symbol inside it, it has no TLS, and no
 * allocated section lies outside it. Violations throw pkg_error naming the
 * file, the function and the symbol.
 */
#pragma once

#include "util.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tc::pkg {

struct elf_symbol {
    std::string   name;
    bool          defined = false;
    bool          global  = false;   /* STB_GLOBAL or STB_WEAK */
    bool          func    = false;
    std::uint64_t value   = 0;
};

/* Symbols of an object or shared library (.symtab, else .dynsym). */
std::vector<elf_symbol> elf_read_symbols(const std::filesystem::path &file);

/* e_machine of an ELF file; throws if it is not ELF. */
unsigned elf_machine(const std::filesystem::path &file);

/*
 * Check the GOT-patched relocatable object of a jam: no undefined symbol
 * (every external must have gone through the GOT), only PC-relative
 * relocations, no TLS, no section that cannot ship.
 */
void elf_check_jam_object(target_arch arch, const std::filesystem::path &obj,
                          const std::string &display_src);

struct span_image {
    std::vector<std::uint8_t> bytes;          /* preamble size field filled in */
    std::uint32_t             got_slot_offset = 0;
    std::uint32_t             entry_offset    = 0;
    std::uint32_t             data_offset     = 0;
    unsigned                  relocations     = 0;   /* checked */
    bool                      page_relative   = false;
};

/*
 * Check the linked span ELF (section .tc_span) of jam @a display_src whose
 * entry is @a entry_symbol, and return its bytes as shipped.
 */
span_image elf_check_span(target_arch arch, const std::filesystem::path &linked,
                          const std::string &entry_symbol,
                          const std::string &display_src);

} // namespace tc::pkg
