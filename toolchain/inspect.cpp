/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * inspect: human-readable view of a package or one jam file.
 * verify: re-checks an installed package: manifest syntax, every jam file
 * (header, hash, preamble, externals) against the manifest, the linked span
 * ELF again with libelf, every portable bitcode file's size and hash, and
 * the libraries' architecture and exports.
 */
#include "inspect.hpp"

#include "elf_verify.hpp"
#include "pkg_format.hpp"
#include "util.hpp"

#include <cstring>
#include <iomanip>
#include <iostream>

namespace fs = std::filesystem;

namespace tc::pkg {

namespace {

std::string flags_text(std::uint32_t f)
{
    std::string s;
    auto add = [&s](const char *t) { s += (s.empty() ? "" : ",") + std::string(t); };
    if (f & TC_JAM_F_HAS_PAYLOAD_INIT) {
        add("payload_init");
    }
    if (f & TC_JAM_F_HAS_MAX_SIZE) {
        add("payload_get_max_size");
    }
    if (f & TC_JAM_F_WRITABLE_DATA) {
        add("writable_data");
    }
    if (f & TC_JAM_F_PAGE_ALIGN) {
        add("page_align");
    }
    return s.empty() ? "-" : s;
}

const char *machine_name(unsigned m)
{
    if (m == arch_elf_machine(target_arch::x86_64)) {
        return "x86_64";
    }
    if (m == arch_elf_machine(target_arch::aarch64)) {
        return "aarch64";
    }
    return "unknown";
}

/* A manifest path from a manifest, a share/twochains/PKG dir or a prefix */
fs::path find_manifest(const std::string &path)
{
    fs::path p(path);
    if (fs::is_regular_file(p)) {
        return p;
    }
    if (fs::is_regular_file(p / TC_PKG_MANIFEST_NAME)) {
        return p / TC_PKG_MANIFEST_NAME;
    }
    fs::path share = p / "share" / "twochains";
    if (fs::is_directory(share)) {
        std::vector<fs::path> found;
        for (const auto &de : fs::directory_iterator(share)) {
            if (fs::is_regular_file(de.path() / TC_PKG_MANIFEST_NAME)) {
                found.push_back(de.path() / TC_PKG_MANIFEST_NAME);
            }
        }
        if (found.size() == 1) {
            return found[0];
        }
        if (found.size() > 1) {
            throw pkg_error(path + ": holds several packages; name share/twochains/<pkg>");
        }
    }
    throw pkg_error(path + ": no twochains package manifest found");
}

void print_jam(const jam_file &jf, const std::string &path)
{
    const tc_jam_file_header_t &h = jf.header;
    std::uint32_t writable = h.span_size - h.data_offset;
    std::uint64_t actual   = fnv1a64_of(jf.span.data(), jf.span.size());
    std::cout << "jam " << h.name << " (element id " << h.element_id << "): " << path << "\n"
              << "  machine         " << machine_name(h.machine) << "\n"
              << "  code size       " << h.span_size << " bytes (injectable span: preamble "
              << TC_JAM_PREAMBLE_SIZE << ", code+rodata "
              << (h.data_offset - TC_JAM_PREAMBLE_SIZE) << ", writable data " << writable
              << ")\n"
              << "  hash            fnv1a64:" << hex64(h.span_hash)
              << ((actual == h.span_hash) ? "" : "  MISMATCH: span hashes to " + hex64(actual))
              << "\n"
              << "  GOT slot offset " << h.got_slot_offset << "\n"
              << "  entry offset    " << h.entry_offset << "\n"
              << "  data offset     " << h.data_offset << "\n"
              << "  flags           " << flags_text(h.flags) << "\n"
              << "  build id        " << hex64(h.build_id) << "\n"
              << "  externals       " << jf.externals.size() << "\n";
    for (std::size_t i = 0; i < jf.externals.size(); ++i) {
        std::cout << "    [" << i << "] " << jf.externals[i] << "\n";
    }
}

void print_manifest(const manifest &m, const fs::path &mpath)
{
    std::cout << "package " << m.package << " (" << arch_name(m.arch) << "), build id "
              << hex64(m.build_id) << ": " << mpath.string() << "\n"
              << "  local function library " << m.local_file << " (" << m.local_symbol
              << ")\n";
    for (const auto &r : m.rieds) {
        std::cout << "  ried " << r.name << " " << r.file << "\n";
    }
    std::cout << "  " << std::left << std::setw(4) << "id" << std::setw(20) << "element"
              << std::right << std::setw(8) << "size" << "  " << std::left << std::setw(18)
              << "hash (fnv1a64)" << std::setw(5) << "got" << std::setw(7) << "entry"
              << "flags\n";
    for (const auto &e : m.elements) {
        std::cout << "  " << std::left << std::setw(4) << e.id << std::setw(20) << e.name
                  << std::right << std::setw(8) << e.span_size << "  " << std::left
                  << std::setw(18) << hex64(e.span_hash) << std::setw(5) << e.got_slot_offset
                  << std::setw(7) << e.entry_offset << flags_text(e.flags) << "\n";
    }
    for (const auto &e : m.elements) {
        std::cout << "  " << e.name << " externals (" << e.externals.size() << "):";
        for (std::size_t i = 0; i < e.externals.size(); ++i) {
            std::cout << " [" << i << "]" << e.externals[i];
        }
        std::cout << "\n";
    }
    for (const auto &e : m.elements) {
        for (const auto &p : e.portable) {
            std::cout << "  " << e.name << " portable " << p.triple << ": " << p.file << ", "
                      << p.bc_size << " bytes, hash fnv1a64:" << hex64(p.bc_hash)
                      << ", externals (" << p.externals.size() << "):";
            for (std::size_t i = 0; i < p.externals.size(); ++i) {
                std::cout << " [" << i << "]" << p.externals[i];
            }
            std::cout << "\n";
        }
    }
}

/* LLVM bitcode starts with 'BC' 0xC0DE, or with the wrapper's 0x0B17C0DE */
bool is_bitcode(const std::vector<std::uint8_t> &b)
{
    static const std::uint8_t raw[4]     = {'B', 'C', 0xc0, 0xde};
    static const std::uint8_t wrapper[4] = {0xde, 0xc0, 0x17, 0x0b};
    return (b.size() >= 4) &&
           ((std::memcmp(b.data(), raw, 4) == 0) || (std::memcmp(b.data(), wrapper, 4) == 0));
}

} // namespace

int package_inspect(const std::string &path)
{
    fs::path p(path);
    if (fs::is_regular_file(p)) {
        std::string head = read_file(p).substr(0, 8);
        if (head == TC_JAM_FILE_MAGIC) {
            jam_file jf = jam_file_decode(read_binary(p), path);
            print_jam(jf, path);
            return 0;
        }
    }
    fs::path mpath = find_manifest(path);
    manifest m     = manifest_parse(read_file(mpath), mpath.string());
    print_manifest(m, mpath);
    return 0;
}

int package_verify(const std::string &path)
{
    fs::path mpath = find_manifest(path);
    manifest m     = manifest_parse(read_file(mpath), mpath.string());
    const fs::path dir    = mpath.parent_path();
    const fs::path prefix = pkg_prefix_of_manifest(mpath);
    const unsigned mach   = arch_elf_machine(m.arch);
    std::vector<std::string> errors;
    auto check = [&errors](bool ok, const std::string &msg) {
        if (!ok) {
            errors.push_back(msg);
        }
    };

    for (const auto &e : m.elements) {
        const fs::path bin = dir / e.file;
        const std::string who = bin.string();
        try {
            jam_file jf = jam_file_decode(read_binary(bin), who);
            const auto &h = jf.header;
            std::uint64_t hash = fnv1a64_of(jf.span.data(), jf.span.size());
            check(h.machine == mach, who + ": machine " + machine_name(h.machine) +
                                         " but the package is " + arch_name(m.arch));
            check(std::string(h.name) == e.name, who + ": names element '" + h.name +
                                                     "', manifest says '" + e.name + "'");
            check(h.element_id == e.id, who + ": element id differs from the manifest");
            check(h.build_id == m.build_id, who + ": build id differs from the manifest");
            check(hash == h.span_hash, who + ": span hash " + hex64(hash) +
                                           " does not match its header " + hex64(h.span_hash));
            check(hash == e.span_hash, who + ": span hash " + hex64(hash) +
                                           " does not match the manifest " + hex64(e.span_hash));
            check((h.span_size == e.span_size) && (h.entry_offset == e.entry_offset) &&
                      (h.data_offset == e.data_offset) &&
                      (h.got_slot_offset == e.got_slot_offset) && (h.flags == e.flags),
                  who + ": sizes, offsets or flags differ from the manifest");
            check(jf.externals == e.externals,
                  who + ": external symbol list differs from the manifest");
            tc_jam_preamble_t pre;
            std::memcpy(&pre, jf.span.data(), sizeof(pre));
            check((pre.got_slot == 0) && (pre.magic == TC_JAM_PREAMBLE_MAGIC) &&
                      (pre.span_size == h.span_size),
                  who + ": bad span preamble");

            fs::path elf = bin;
            elf.replace_extension(".elf");
            if (fs::exists(elf)) {
                span_image img = elf_check_span(m.arch, elf, e.name + "_main", e.file);
                check(img.bytes == jf.span, who + ": span differs from the linked " +
                                                elf.filename().string());
            } else {
                errors.push_back(elf.string() + ": missing (needed to re-check relocations)");
            }
        } catch (const pkg_error &ex) {
            errors.push_back(ex.what());
        }

        /* the bitcode: what the manifest promises, byte for byte */
        for (const auto &p : e.portable) {
            const fs::path bc = dir / p.file;
            try {
                const auto bytes = read_binary(bc);
                const std::uint64_t hash = fnv1a64_of(bytes.data(), bytes.size());
                check(bytes.size() == p.bc_size,
                      bc.string() + ": " + std::to_string(bytes.size()) +
                          " bytes, the manifest says " + std::to_string(p.bc_size));
                check(hash == p.bc_hash, bc.string() + ": bitcode hash " + hex64(hash) +
                                             " does not match the manifest " +
                                             hex64(p.bc_hash));
                check(is_bitcode(bytes), bc.string() + ": not LLVM bitcode");
            } catch (const pkg_error &ex) {
                errors.push_back(ex.what());
            }
        }
    }

    auto check_lib = [&](const fs::path &lib, const std::vector<std::string> &exports) {
        try {
            check(elf_machine(lib) == mach, lib.string() + ": wrong machine");
            auto syms = elf_read_symbols(lib);
            for (const auto &x : exports) {
                bool found = false;
                for (const auto &s : syms) {
                    found |= (s.name == x) && s.defined && s.global;
                }
                check(found, lib.string() + ": does not export '" + x + "'");
            }
        } catch (const pkg_error &ex) {
            errors.push_back(ex.what());
        }
    };
    std::vector<std::string> local_exports = {m.local_symbol, m.package + "_tc_element_count",
                                              m.package + "_tc_build_id"};
    for (const auto &e : m.elements) {
        local_exports.push_back(e.name + "_main");
    }
    check_lib(dir / m.local_file, local_exports);
    for (const auto &r : m.rieds) {
        check_lib(dir / r.file, {});
    }

    fs::path hdr = pkg_header_path(prefix, m.package);
    try {
        std::string h = read_file(hdr);
        check(h.find(hex64(m.build_id)) != std::string::npos,
              hdr.string() + ": build id differs from the manifest");
    } catch (const pkg_error &ex) {
        errors.push_back(ex.what());
    }

    if (!errors.empty()) {
        for (const auto &e : errors) {
            std::cerr << "twochains-pkg verify: error: " << e << "\n";
        }
        std::cerr << "twochains-pkg verify: package '" << m.package << "' FAILED ("
                  << errors.size() << " problems)\n";
        return 1;
    }
    std::size_t bitcode_files = 0;
    for (const auto &e : m.elements) {
        bitcode_files += e.portable.size();
    }
    std::cout << "twochains-pkg verify: package '" << m.package << "' (" << arch_name(m.arch)
              << ") OK: " << m.elements.size() << " elements, " << m.rieds.size() << " rieds, "
              << (bitcode_files ? std::to_string(bitcode_files) + " bitcode files, " : "")
              << "build id " << hex64(m.build_id) << "\n";
    return 0;
}

} // namespace tc::pkg
