/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Manifest and jam file encoding. The manifest is one record per line so a
 * C11 runtime reads it with fgets/sscanf; see twochains/jam_format.h.
 */
#include "pkg_format.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <sstream>

namespace tc::pkg {

namespace {

std::string hex32(std::uint32_t v)
{
    char buf[16];
    std::snprintf(buf, sizeof(buf), "%x", v);
    return buf;
}

std::vector<std::string> fields_of(const std::string &line)
{
    std::vector<std::string> f;
    std::istringstream in(line);
    std::string w;
    while (in >> w) {
        f.push_back(w);
    }
    return f;
}

std::uint64_t parse_u64(const std::string &s, int base, const std::string &where)
{
    try {
        std::size_t pos = 0;
        unsigned long long v = std::stoull(s, &pos, base);
        if (pos != s.size()) {
            throw std::invalid_argument(s);
        }
        return v;
    } catch (const std::logic_error &) {
        throw pkg_error(where + ": bad number '" + s + "'");
    }
}

std::uint32_t parse_u32(const std::string &s, int base, const std::string &where)
{
    std::uint64_t v = parse_u64(s, base, where);
    if (v > 0xffffffffULL) {
        throw pkg_error(where + ": number out of range '" + s + "'");
    }
    return static_cast<std::uint32_t>(v);
}

} // namespace

std::string manifest_format(const manifest &m)
{
    std::ostringstream o;
    o << "# twochains package manifest, written by twochains-pkg; format in "
         "twochains/jam_format.h\n";
    o << TC_PKG_MANIFEST_MAGIC << " " << TC_PKG_MANIFEST_VERSION << "\n";
    o << "package " << m.package << "\n";
    o << "arch " << arch_name(m.arch) << "\n";
    o << "build-id " << hex64(m.build_id) << "\n";
    o << "local " << m.local_file << " " << m.local_symbol << "\n";
    for (const auto &r : m.rieds) {
        o << "ried " << r.name << " " << r.file << "\n";
    }
    o << "# element <id> <name> <span_size> <span_hash> <got_slot_offset> "
         "<entry_offset> <data_offset> <flags> <num_externals> <file>\n";
    if (std::any_of(m.elements.begin(), m.elements.end(),
                    [](const manifest_element &e) { return !e.portable.empty(); })) {
        o << "# portable <element id> <triple> <bc_size> <bc_hash> <num_externals> "
             "<file>\n";
    }
    for (const auto &e : m.elements) {
        o << "element " << e.id << " " << e.name << " " << e.span_size << " "
          << hex64(e.span_hash) << " " << e.got_slot_offset << " " << e.entry_offset
          << " " << e.data_offset << " " << hex32(e.flags) << " " << e.externals.size()
          << " " << e.file << "\n";
        for (std::size_t i = 0; i < e.externals.size(); ++i) {
            o << "extern " << e.id << " " << i << " " << e.externals[i] << "\n";
        }
        for (const auto &p : e.portable) {
            o << "portable " << e.id << " " << p.triple << " " << p.bc_size << " "
              << hex64(p.bc_hash) << " " << p.externals.size() << " " << p.file << "\n";
            for (std::size_t i = 0; i < p.externals.size(); ++i) {
                o << "pextern " << e.id << " " << p.triple << " " << i << " "
                  << p.externals[i] << "\n";
            }
        }
    }
    o << "end\n";
    return o.str();
}

manifest manifest_parse(const std::string &text, const std::string &path)
{
    manifest m;
    std::istringstream in(text);
    std::string line;
    unsigned lineno = 0;
    bool have_magic = false, have_end = false, have_arch = false, have_local = false;
    std::vector<std::size_t> expected_ext;
    /* externals announced by each element's portable records, in order */
    std::vector<std::vector<std::size_t>> expected_pext;

    while (std::getline(in, line)) {
        ++lineno;
        const std::string where = path + ":" + std::to_string(lineno);
        if (line.empty() || (line[0] == '#')) {
            continue;
        }
        if (have_end) {
            throw pkg_error(where + ": text after 'end'");
        }
        auto f = fields_of(line);
        if (!have_magic) {
            if ((f.size() != 2) || (f[0] != TC_PKG_MANIFEST_MAGIC) ||
                (f[1] != std::to_string(TC_PKG_MANIFEST_VERSION))) {
                throw pkg_error(where + ": not a twochains manifest (expected '" +
                                TC_PKG_MANIFEST_MAGIC + " " +
                                std::to_string(TC_PKG_MANIFEST_VERSION) + "')");
            }
            have_magic = true;
            continue;
        }
        const std::string &k = f[0];
        auto need = [&](std::size_t n) {
            if (f.size() != n) {
                throw pkg_error(where + ": '" + k + "' takes " + std::to_string(n - 1) +
                                " fields, found " + std::to_string(f.size() - 1));
            }
        };
        if (k == "package") {
            need(2);
            m.package = f[1];
        } else if (k == "arch") {
            need(2);
            if (!arch_parse(f[1], m.arch)) {
                throw pkg_error(where + ": unknown arch '" + f[1] + "'");
            }
            have_arch = true;
        } else if (k == "build-id") {
            need(2);
            m.build_id = parse_u64(f[1], 16, where);
        } else if (k == "local") {
            need(3);
            m.local_file   = f[1];
            m.local_symbol = f[2];
            have_local     = true;
        } else if (k == "ried") {
            need(3);
            m.rieds.push_back({f[1], f[2]});
        } else if (k == "element") {
            need(11);
            manifest_element e;
            e.id              = parse_u32(f[1], 10, where);
            e.name            = f[2];
            e.span_size       = parse_u32(f[3], 10, where);
            e.span_hash       = parse_u64(f[4], 16, where);
            e.got_slot_offset = parse_u32(f[5], 10, where);
            e.entry_offset    = parse_u32(f[6], 10, where);
            e.data_offset     = parse_u32(f[7], 10, where);
            e.flags           = parse_u32(f[8], 16, where);
            expected_ext.push_back(parse_u32(f[9], 10, where));
            e.file            = f[10];
            if (e.id != m.elements.size()) {
                throw pkg_error(where + ": element id " + f[1] + " out of order");
            }
            m.elements.push_back(e);
            expected_pext.emplace_back();
        } else if (k == "extern") {
            need(4);
            std::uint32_t id  = parse_u32(f[1], 10, where);
            std::uint32_t idx = parse_u32(f[2], 10, where);
            if (m.elements.empty() || (id != m.elements.back().id) ||
                (idx != m.elements.back().externals.size()) ||
                !m.elements.back().portable.empty()) {
                throw pkg_error(where + ": extern record out of order");
            }
            m.elements.back().externals.push_back(f[3]);
        } else if (k == "portable") {
            need(7);
            std::uint32_t id = parse_u32(f[1], 10, where);
            if (m.elements.empty() || (id != m.elements.back().id)) {
                throw pkg_error(where + ": portable record out of order");
            }
            manifest_element &e = m.elements.back();
            if (e.externals.size() != expected_ext.back()) {
                throw pkg_error(where + ": portable record before all the extern records "
                                        "of element '" + e.name + "'");
            }
            if (!e.portable.empty() &&
                (e.portable.back().externals.size() != expected_pext.back().back())) {
                throw pkg_error(where + ": portable record before all the pextern records "
                                        "of the one before it");
            }
            manifest_portable p;
            p.triple  = f[2];
            p.bc_size = parse_u32(f[3], 10, where);
            p.bc_hash = parse_u64(f[4], 16, where);
            p.file    = f[6];
            if (!portable_triple_ok(p.triple)) {
                throw pkg_error(where + ": bad target triple '" + p.triple + "'");
            }
            for (const auto &other : e.portable) {
                if (other.triple == p.triple) {
                    throw pkg_error(where + ": element '" + e.name + "' has two portable "
                                    "records for " + p.triple);
                }
            }
            if (e.portable.size() >= TC_JAM_PORTABLE_MAX) {
                throw pkg_error(where + ": more than " +
                                std::to_string(TC_JAM_PORTABLE_MAX) +
                                " portable records for element '" + e.name + "'");
            }
            if (p.file != portable_file_name(e.name, p.triple)) {
                throw pkg_error(where + ": portable file '" + p.file + "' is not '" +
                                portable_file_name(e.name, p.triple) + "'");
            }
            expected_pext.back().push_back(parse_u32(f[5], 10, where));
            e.portable.push_back(p);
        } else if (k == "pextern") {
            need(5);
            std::uint32_t id  = parse_u32(f[1], 10, where);
            std::uint32_t idx = parse_u32(f[3], 10, where);
            if (m.elements.empty() || (id != m.elements.back().id) ||
                m.elements.back().portable.empty() ||
                (f[2] != m.elements.back().portable.back().triple) ||
                (idx != m.elements.back().portable.back().externals.size())) {
                throw pkg_error(where + ": pextern record out of order");
            }
            m.elements.back().portable.back().externals.push_back(f[4]);
        } else if (k == "end") {
            need(1);
            have_end = true;
        } else {
            throw pkg_error(where + ": unknown record '" + k + "'");
        }
    }
    if (!have_magic || !have_end || !have_arch || !have_local || m.package.empty()) {
        throw pkg_error(path + ": incomplete manifest (missing header records or 'end')");
    }
    for (std::size_t i = 0; i < m.elements.size(); ++i) {
        if (m.elements[i].externals.size() != expected_ext[i]) {
            throw pkg_error(path + ": element '" + m.elements[i].name + "' lists " +
                            std::to_string(expected_ext[i]) + " externals but has " +
                            std::to_string(m.elements[i].externals.size()));
        }
        for (std::size_t k = 0; k < m.elements[i].portable.size(); ++k) {
            const manifest_portable &p = m.elements[i].portable[k];
            if (p.externals.size() != expected_pext[i][k]) {
                throw pkg_error(path + ": element '" + m.elements[i].name + "' (" + p.triple +
                                ") lists " + std::to_string(expected_pext[i][k]) +
                                " portable externals but has " +
                                std::to_string(p.externals.size()));
            }
        }
    }
    return m;
}

std::string portable_file_name(const std::string &jam, const std::string &triple)
{
    return "jam_" + jam + "." + triple + ".bc";
}

bool portable_triple_ok(std::string_view triple)
{
    if (triple.empty() || (triple.size() >= TC_JAM_TRIPLE_MAX) || (triple[0] == '-') ||
        (triple[0] == '.')) {
        return false;
    }
    return std::all_of(triple.begin(), triple.end(), [](unsigned char c) {
        return std::isalnum(c) || (c == '_') || (c == '-') || (c == '.');
    });
}

std::filesystem::path pkg_share_dir(const std::filesystem::path &prefix,
                                    const std::string &pkg)
{
    return prefix / "share" / "twochains" / pkg;
}

std::filesystem::path pkg_header_path(const std::filesystem::path &prefix,
                                      const std::string &pkg)
{
    return prefix / "include" / (pkg + ".h");
}

std::filesystem::path pkg_local_lib_path(const std::filesystem::path &prefix,
                                         const std::string &pkg)
{
    return prefix / "lib" / ("lib" + pkg + "_local.so");
}

std::filesystem::path pkg_ried_lib_path(const std::filesystem::path &prefix,
                                        const std::string &pkg, const std::string &ried)
{
    return prefix / "lib" / ("lib" + pkg + "_ried_" + ried + ".so");
}

std::filesystem::path pkg_prefix_of_manifest(const std::filesystem::path &manifest)
{
    return std::filesystem::absolute(manifest).parent_path().parent_path()
        .parent_path().parent_path();
}

std::vector<std::uint8_t> jam_file_encode(const jam_file &jf)
{
    tc_jam_file_header_t h = jf.header;
    std::string names;
    for (const auto &s : jf.externals) {
        names += s;
        names += '\0';
    }
    std::memcpy(h.magic, TC_JAM_FILE_MAGIC, sizeof(h.magic));
    h.version       = TC_JAM_FILE_VERSION;
    h.header_size   = sizeof(h);
    h.num_externals = static_cast<std::uint32_t>(jf.externals.size());
    h.symtab_offset = sizeof(h);
    h.symtab_size   = static_cast<std::uint32_t>(names.size());
    h.span_offset   = (h.symtab_offset + h.symtab_size + TC_JAM_SPAN_ALIGN - 1) &
                      ~(TC_JAM_SPAN_ALIGN - 1);
    h.span_size     = static_cast<std::uint32_t>(jf.span.size());

    std::vector<std::uint8_t> out(h.span_offset + jf.span.size(), 0);
    std::memcpy(out.data(), &h, sizeof(h));
    std::memcpy(out.data() + h.symtab_offset, names.data(), names.size());
    std::memcpy(out.data() + h.span_offset, jf.span.data(), jf.span.size());
    return out;
}

jam_file jam_file_decode(const std::vector<std::uint8_t> &bytes, const std::string &path)
{
    jam_file jf;
    auto bad = [&path](const std::string &why) {
        return pkg_error(path + ": invalid jam file: " + why);
    };
    if (bytes.size() < sizeof(tc_jam_file_header_t)) {
        throw bad("shorter than its header");
    }
    std::memcpy(&jf.header, bytes.data(), sizeof(jf.header));
    const tc_jam_file_header_t &h = jf.header;
    if (std::memcmp(h.magic, TC_JAM_FILE_MAGIC, sizeof(h.magic)) != 0) {
        throw bad("bad magic");
    }
    if ((h.version != TC_JAM_FILE_VERSION) || (h.header_size != sizeof(h))) {
        throw bad("unsupported version " + std::to_string(h.version));
    }
    if ((std::uint64_t(h.symtab_offset) + h.symtab_size > bytes.size()) ||
        (std::uint64_t(h.span_offset) + h.span_size != bytes.size()) ||
        (h.span_offset % TC_JAM_SPAN_ALIGN) || (h.span_size < TC_JAM_PREAMBLE_SIZE) ||
        (h.span_size > TC_JAM_SPAN_MAX)) {
        throw bad("sections out of bounds");
    }
    if ((h.got_slot_offset + 8 > h.span_size) || (h.entry_offset >= h.span_size) ||
        (h.data_offset > h.span_size) || (h.entry_offset < TC_JAM_PREAMBLE_SIZE)) {
        throw bad("offsets out of the span");
    }
    if (std::memchr(h.name, '\0', sizeof(h.name)) == nullptr) {
        throw bad("unterminated name");
    }
    const char *p   = reinterpret_cast<const char *>(bytes.data()) + h.symtab_offset;
    const char *end = p + h.symtab_size;
    while (p < end) {
        const char *nul = static_cast<const char *>(std::memchr(p, '\0', end - p));
        if (nul == nullptr) {
            throw bad("unterminated symbol name");
        }
        jf.externals.emplace_back(p, nul);
        p = nul + 1;
    }
    if (jf.externals.size() != h.num_externals) {
        throw bad("symbol count mismatch");
    }
    jf.span.assign(bytes.begin() + h.span_offset, bytes.end());
    return jf;
}

} // namespace tc::pkg
