/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * `twochains-pkg build`: discovers a package, compiles its rieds and the
 * Local Function library, GOT-patches every jam into an injectable span
 * (compile -S, got_patch, assemble with GOT relaxation off, link the span
 * with a generated linker script and --emit-relocs, verify with libelf),
 * generates the package header, and installs everything with the manifest
 * written last. With --portable, every jam is also compiled to LLVM bitcode
 * for each target triple asked. Jams are processed by a small pool of
 * threads; each job only touches its own files and results.
 */
#include "package.hpp"

#include "elf_verify.hpp"
#include "got_patch.hpp"
#include "header_gen.hpp"
#include "pkg_format.hpp"

#include <unistd.h>

#include "twochains/jam.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#ifndef TC_PKG_VERSION
#define TC_PKG_VERSION "0"
#endif

namespace fs = std::filesystem;

namespace tc::pkg {

namespace {

/* Run fn(i) for i in [0, n) on up to @a jobs threads; report all failures. */
template <typename F> void parallel_each(std::size_t n, unsigned jobs, F fn)
{
    std::vector<std::string> errors(n);
    std::atomic<std::size_t> next{0};
    auto worker = [&]() {
        for (;;) {
            std::size_t i = next.fetch_add(1);
            if (i >= n) {
                return;
            }
            try {
                fn(i);
            } catch (const std::exception &e) {
                errors[i] = e.what();
            }
        }
    };
    std::vector<std::thread> threads;
    for (unsigned t = 1; t < std::min<std::size_t>(jobs, n); ++t) {
        threads.emplace_back(worker);
    }
    worker();
    for (auto &t : threads) {
        t.join();
    }
    std::string msg;
    for (const auto &e : errors) {
        if (!e.empty()) {
            msg += (msg.empty() ? "" : "\n") + e;
        }
    }
    if (!msg.empty()) {
        throw pkg_error(msg);
    }
}

std::string linker_script(const std::string &entry)
{
    return "/* twochains-pkg: the jam as one contiguous span, GOT slot first */\n"
           "ENTRY(" + entry + ")\n"
           "SECTIONS\n"
           "{\n"
           "  . = 0;\n"
           "  .tc_span : ALIGN(16)\n"
           "  {\n"
           "    KEEP(*(.tc_preamble))\n"
           "    *(.text." + entry + ")\n"
           "    *(.text .text.*)\n"
           "    *(.rodata .rodata.*)\n"
           "    . = ALIGN(16);\n"
           "    __tc_data_start = .;\n"
           "    *(.data .data.*)\n"
           "    *(.bss .bss.* COMMON)\n"
           "    . = ALIGN(16);\n"
           "    __tc_span_end = .;\n"
           "  }\n"
           "  /DISCARD/ : { *(.eh_frame) *(.note.*) *(.comment) }\n"
           "}\n";
}

struct jam_job {
    const pkg_source *src = nullptr;
    std::uint32_t     id  = 0;
    fs::path          local_obj;
    bool              has_init = false;
    bool              has_max  = false;
    std::vector<elf_symbol> local_syms;
    std::vector<std::string> externals;
    span_image        img;
    std::uint64_t     hash  = 0;
    std::uint32_t     flags = 0;
    std::vector<manifest_portable> portable;  /* one per --portable triple */
};

struct ried_job {
    const pkg_source *src = nullptr;
    fs::path          obj;
    fs::path          lib;
    std::vector<elf_symbol> syms;
};

std::string relative_to_share(const fs::path &prefix, const std::string &pkg,
                              const fs::path &file)
{
    return fs::relative(file, pkg_share_dir(prefix, pkg)).string();
}

bool up_to_date(const fs::path &prefix, const std::string &pkg, target_arch arch,
                std::uint64_t build_id)
{
    fs::path mpath = pkg_share_dir(prefix, pkg) / TC_PKG_MANIFEST_NAME;
    if (!fs::exists(mpath) || !fs::exists(pkg_header_path(prefix, pkg))) {
        return false;
    }
    try {
        manifest m = manifest_parse(read_file(mpath), mpath.string());
        if ((m.build_id != build_id) || (m.arch != arch)) {
            return false;
        }
        fs::path dir = mpath.parent_path();
        if (!fs::exists(dir / m.local_file)) {
            return false;
        }
        for (const auto &r : m.rieds) {
            if (!fs::exists(dir / r.file)) {
                return false;
            }
        }
        for (const auto &e : m.elements) {
            if (!fs::exists(dir / e.file)) {
                return false;
            }
            for (const auto &p : e.portable) {
                if (!fs::exists(dir / p.file)) {
                    return false;
                }
            }
        }
        return true;
    } catch (const pkg_error &) {
        return false;
    }
}

/* The receiver compiles portable jams with LLVM 14 (libLLVM-14's ORC JIT),
 * and a bitcode reader reads only its own release's bitcode and older. */
constexpr int portable_llvm_major_max = 14;

/* The first line of `bc_cc --version`, after checking it is a clang whose
 * bitcode the receiver can read */
std::string bitcode_compiler_version(const std::string &bc_cc)
{
    std::string out = run_checked({bc_cc, "--version"},
                                  "probing the bitcode compiler " + bc_cc +
                                      " (Debian's clang-14; pass --bc-cc)");
    std::string first = trim(out.substr(0, out.find('\n')));
    const std::string tag = "clang version ";
    std::size_t at = first.find(tag);
    if (at == std::string::npos) {
        throw pkg_error("bitcode compiler '" + bc_cc + "' is not clang: " + first);
    }
    int major = std::atoi(first.c_str() + at + tag.size());
    if ((major <= 0) || (major > portable_llvm_major_max)) {
        throw pkg_error("bitcode compiler '" + bc_cc + "' is " + first +
                        ": the receiver's LLVM " + std::to_string(portable_llvm_major_max) +
                        " cannot read bitcode of a later release; pass --bc-cc clang-" +
                        std::to_string(portable_llvm_major_max));
    }
    return first;
}

/* `llvm-nm -j` output as symbol names; anything else is the tool's error */
std::vector<std::string> nm_symbols(const std::string &out, const std::string &what)
{
    std::vector<std::string> syms;
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        line = trim(line);
        if (line.empty()) {
            continue;
        }
        if (line.find_first_of(" \t:") != std::string::npos) {
            throw pkg_error(what + ": unexpected output of llvm-nm: " + line);
        }
        syms.push_back(line);
    }
    std::sort(syms.begin(), syms.end());
    syms.erase(std::unique(syms.begin(), syms.end()), syms.end());
    return syms;
}

void copy_into(const fs::path &from, const fs::path &to)
{
    fs::create_directories(to.parent_path());
    fs::path tmp = to;
    tmp += ".tmp";
    fs::copy_file(from, tmp, fs::copy_options::overwrite_existing);
    fs::rename(tmp, to);
}

} // namespace

/* The flags that make a jam source see its contract */
static std::vector<std::string> jam_contract_flags(const pkg_source &src, bool injectable)
{
    return {(src.public_api ? "-DTC_IFUNC_PUBLIC_NAME=" : "-DTC_JAM_NAME=") + src.name,
            std::string("-DTC_JAM_INJECTABLE=") + (injectable ? "1" : "0"), "-include",
            "twochains/jam.h"};
}

void package_build(const build_options &o)
{
    package_sources ps = o.ifunc_source.empty() ? package_discover(o.name, o.src_dir)
                                                : ifunc_source_discover(o.ifunc_source);
    const std::string &P = ps.name;
    const target_arch arch = o.arch;
    const bool x86 = (arch == target_arch::x86_64);

    std::string cc = o.cc.empty() ? (x86 ? "cc" : "aarch64-linux-gnu-gcc") : o.cc;
    std::string machine = trim(run_checked({cc, "-dumpmachine"},
                                           "probing the compiler " + cc));
    if (!machine.starts_with(arch_name(arch))) {
        throw pkg_error("compiler '" + cc + "' targets " + machine + ", not " +
                        arch_name(arch) + "; pass --cc");
    }
    std::string cmodel = o.cmodel;
    if (x86 && !cmodel.empty()) {
        throw pkg_error("--cmodel applies to --target aarch64 only");
    }
    if (!x86) {
        cmodel = cmodel.empty() ? "tiny" : cmodel;
        if ((cmodel != "tiny") && (cmodel != "small")) {
            throw pkg_error("--cmodel must be tiny or small");
        }
    }
    const fs::path api = api_include_dir();

    const std::vector<std::string> &triples = o.portable;
    const std::string bc_cc = o.bc_cc.empty() ? "clang-14" : o.bc_cc;
    const std::string bc_nm = o.bc_nm.empty() ? "llvm-nm-14" : o.bc_nm;
    std::string bc_version;
    if (triples.empty() && (!o.bc_cc.empty() || !o.bc_nm.empty())) {
        throw pkg_error("--bc-cc and --bc-nm apply with --portable only");
    }
    if (!triples.empty()) {
        if (triples.size() > TC_JAM_PORTABLE_MAX) {
            throw pkg_error("--portable takes at most " + std::to_string(TC_JAM_PORTABLE_MAX) +
                            " triples, a reader's limit per element");
        }
        for (std::size_t i = 0; i < triples.size(); ++i) {
            if (!portable_triple_ok(triples[i])) {
                throw pkg_error("--portable: '" + triples[i] + "' is not a target triple "
                                "(letters, digits, '_', '-', '.'; shorter than " +
                                std::to_string(TC_JAM_TRIPLE_MAX) + ")");
            }
            if (std::find(triples.begin(), triples.begin() + i, triples[i]) !=
                triples.begin() + i) {
                throw pkg_error("--portable: triple '" + triples[i] + "' given twice");
            }
        }
        bc_version = bitcode_compiler_version(bc_cc);
    }

    /* build id: the tool itself, options, API headers and every source. The
     * tool is hashed whole, not named by its version: a rebuilt tool may
     * compile the same sources to other bytes, and a package it did not
     * build must not pass as up to date. */
    fnv1a64 bid;
    bid.update_field("twochains-pkg " TC_PKG_VERSION);
    bid.update_field(read_file("/proc/self/exe"));
    bid.update_field(P);
    bid.update_field(o.ifunc_source.empty() ? "jam contract" : "public ifunc contract");
    bid.update_field(arch_name(arch));
    bid.update_field(cc);
    bid.update_field(cmodel);
    for (const auto &f : o.cflags) {
        bid.update_field(f);
    }
    if (!triples.empty()) {
        /* only then: a package without bitcode keeps the build id it had */
        bid.update_field("portable");
        for (const auto &t : triples) {
            bid.update_field(t);
        }
        bid.update_field(bc_cc);
        bid.update_field(bc_version);
    }
    bid.update_field(read_file(api / "twochains" / "jam.h"));
    bid.update_field(read_file(api_format_header(api)));
    std::vector<const pkg_source *> all;
    for (const auto *v : {&ps.jams, &ps.rieds, &ps.others}) {
        for (const auto &s : *v) {
            all.push_back(&s);
        }
    }
    std::sort(all.begin(), all.end(),
              [](const pkg_source *a, const pkg_source *b) { return a->rel < b->rel; });
    for (const auto *s : all) {
        bid.update_field(fs::relative(s->path, ps.src_dir).string());
        bid.update_field(read_file(s->path));
    }
    const std::uint64_t build_id = bid.value();
    const fs::path prefix        = fs::absolute(o.prefix).lexically_normal();

    if (!o.force && up_to_date(prefix, P, arch, build_id)) {
        std::cout << "twochains-pkg: package '" << P << "' (" << arch_name(arch)
                  << ") is up to date, build id " << hex64(build_id) << "\n";
        return;
    }

    work_dir wd(o.keep_dir);
    const fs::path w = wd.path();
    const unsigned jobs = o.jobs ? o.jobs : std::max(1u, std::thread::hardware_concurrency());

    std::vector<std::string> base = {"-I", api.string(), "-I", ps.src_dir.string()};
    base.insert(base.end(), o.cflags.begin(), o.cflags.end());

    /* rieds: shared libraries */
    std::vector<ried_job> rieds(ps.rieds.size());
    parallel_each(rieds.size(), jobs, [&](std::size_t i) {
        ried_job &r = rieds[i];
        r.src = &ps.rieds[i];
        r.obj = w / ("ried_" + r.src->name + ".o");
        r.lib = w / pkg_ried_lib_path("", P, r.src->name).filename();
        std::vector<std::string> c = {cc, "-x", "c", "-fPIC", "-O2"};
        c.insert(c.end(), base.begin(), base.end());
        c.insert(c.end(), {"-c", r.src->path.string(), "-o", r.obj.string()});
        run_checked(c, "compiling ried " + r.src->rel);
        std::vector<std::string> l = {cc, "-shared", "-o", r.lib.string(), r.obj.string(),
                                      "-Wl,-soname," + r.lib.filename().string()};
        l.insert(l.end(), o.cflags.begin(), o.cflags.end());
        run_checked(l, "linking ried " + r.src->rel);
        r.syms = elf_read_symbols(r.obj);
    });

    /* jams, unmodified: the Local Function objects; entry and options */
    std::vector<jam_job> jams(ps.jams.size());
    parallel_each(jams.size(), jobs, [&](std::size_t i) {
        jam_job &j = jams[i];
        j.src = &ps.jams[i];
        j.id  = static_cast<std::uint32_t>(i);
        j.local_obj = w / ("local_" + j.src->name + ".o");
        std::vector<std::string> c = {cc, "-x", "c", "-fPIC", "-O2"};
        c.insert(c.end(), base.begin(), base.end());
        const auto contract = jam_contract_flags(*j.src, false);
        c.insert(c.end(), contract.begin(), contract.end());
        c.insert(c.end(), {"-c", j.src->path.string(), "-o", j.local_obj.string()});
        run_checked(c, "compiling jam " + j.src->rel);
        j.local_syms = elf_read_symbols(j.local_obj);
        bool has_main = false;
        for (const auto &s : j.local_syms) {
            if (!s.defined || !s.global || !s.func) {
                continue;
            }
            has_main   |= (s.name == j.src->name + "_main");
            j.has_init |= (s.name == j.src->name + "_payload_init");
            j.has_max  |= (s.name == j.src->name + "_payload_get_max_size");
        }
        if (!has_main) {
            throw pkg_error(j.src->rel + ": error: missing entry function '" +
                            j.src->name + "_main'; define it with TC_JAM_MAIN(" +
                            j.src->name + ") from <twochains/jam.h>");
        }
    });

    /* name clashes between the objects that share the Local Function library
     * and the receiver's namespace */
    {
        std::map<std::string, std::string> owner;
        std::vector<std::string> errors;
        auto claim = [&](const std::vector<elf_symbol> &syms, const std::string &rel) {
            for (const auto &s : syms) {
                if (!s.defined || !s.global) {
                    continue;
                }
                auto [it, fresh] = owner.emplace(s.name, rel);
                if (!fresh) {
                    errors.push_back(rel + ": error: name clash: symbol '" + s.name +
                                     "' is also defined by " + it->second +
                                     "; make one static or rename it");
                }
            }
        };
        for (const auto &r : rieds) {
            claim(r.syms, r.src->rel);
        }
        for (const auto &j : jams) {
            claim(j.local_syms, j.src->rel);
        }
        if (!errors.empty()) {
            std::string msg;
            for (const auto &e : errors) {
                msg += (msg.empty() ? "" : "\n") + e;
            }
            throw pkg_error(msg);
        }
    }

    /* jams, injectable: the paper's GOT transformation */
    parallel_each(jams.size(), jobs, [&](std::size_t i) {
        jam_job &j = jams[i];
        const std::string n     = j.src->name;
        const std::string entry = n + "_main";
        const fs::path s_file   = w / ("jam_" + n + ".s");
        const fs::path p_file   = w / ("jam_" + n + ".tc.s");
        const fs::path o_file   = w / ("jam_" + n + ".o");
        const fs::path ld_file  = w / ("jam_" + n + ".ld");
        const fs::path elf_file = w / ("jam_" + n + ".elf");

        std::vector<std::string> c = {cc, "-x", "c", "-S", "-O2", "-g1"};
        c.insert(c.end(), base.begin(), base.end());
        c.insert(c.end(), {"-fPIC", "-fno-plt", "-fvisibility=hidden",
                           "-ffunction-sections", "-fdata-sections", "-fno-common",
                           "-fno-asynchronous-unwind-tables", "-fno-unwind-tables",
                           "-fno-exceptions", "-fno-lto"});
        if (x86) {
            c.insert(c.end(), {"-mno-red-zone", "-masm=att"});
        } else {
            c.insert(c.end(), {"-mcmodel=" + cmodel, "-mno-outline-atomics"});
        }
        const auto contract = jam_contract_flags(*j.src, true);
        c.insert(c.end(), contract.begin(), contract.end());
        c.insert(c.end(), {j.src->path.string(), "-o", s_file.string()});
        run_checked(c, "compiling jam " + j.src->rel);

        got_patch_result pr = got_patch(arch, read_file(s_file), j.src->rel,
                                        read_file(j.src->path));
        write_file(p_file, pr.asm_text);
        j.externals = pr.externals;

        std::vector<std::string> a = {cc, "-c", "-x", "assembler", p_file.string(), "-o",
                                      o_file.string()};
        if (x86) {
            a.push_back("-Wa,-mrelax-relocations=no");
        }
        run_checked(a, "assembling the GOT-patched jam " + j.src->rel);
        elf_check_jam_object(arch, o_file, j.src->rel);

        write_file(ld_file, linker_script(entry));
        run_checked({cc, "-nostdlib", "-nostartfiles", "-static", "-Wl,-T," + ld_file.string(),
                     "-Wl,--emit-relocs", "-Wl,--gc-sections", "-Wl,--build-id=none",
                     "-Wl,--no-warn-rwx-segments", "-Wl,-z,noexecstack", "-o",
                     elf_file.string(), o_file.string()},
                    "linking the span of jam " + j.src->rel);
        j.img  = elf_check_span(arch, elf_file, entry, j.src->rel);
        j.hash = fnv1a64_of(j.img.bytes.data(), j.img.bytes.size());
        j.flags = (j.has_init ? TC_JAM_F_HAS_PAYLOAD_INIT : 0u) |
                  (j.has_max ? TC_JAM_F_HAS_MAX_SIZE : 0u) |
                  ((j.img.data_offset < j.img.bytes.size()) ? TC_JAM_F_WRITABLE_DATA : 0u) |
                  ((j.img.page_relative || pr.page_relative) ? TC_JAM_F_PAGE_ALIGN : 0u);
    });

    /* jams, portable: LLVM bitcode per target triple, for a receiver that
     * compiles it. The same contract and flags as the injectable build, but
     * default visibility: the receiver looks <name>_main up by name. */
    for (auto &j : jams) {
        j.portable.resize(triples.size());
    }
    parallel_each(jams.size() * triples.size(), jobs, [&](std::size_t k) {
        jam_job &j                = jams[k / triples.size()];
        manifest_portable &p      = j.portable[k % triples.size()];
        const std::string &triple = triples[k % triples.size()];
        const std::string n       = j.src->name;
        p.triple = triple;
        p.file   = portable_file_name(n, triple);
        const fs::path bc_file = w / p.file;
        const std::string what = "jam " + j.src->rel + " as bitcode for " + triple;

        /* the source on standard input: a module records the path of its
         * source file, and the same sources must give the same module (and
         * hash) wherever they are, for receivers to know it as their own.
         * Its quoted includes come from the source directory, an -I of base;
         * diagnostics name <stdin>, but the injectable build above compiled
         * the same source first, with its own name */
        std::vector<std::string> c = {bc_cc, "-target", triple, "-x", "c", "-O2", "-g0",
                                      "-fPIC", "-emit-llvm", "-c"};
        c.insert(c.end(), base.begin(), base.end());
        const auto contract = jam_contract_flags(*j.src, true);
        c.insert(c.end(), contract.begin(), contract.end());
        c.insert(c.end(), {"-", "-o", bc_file.string()});
        try {
            run_checked(c, "compiling " + what, j.src->path);
        } catch (const pkg_error &e) {
            std::string msg = e.what();
            if (msg.find("file not found") != std::string::npos) {
                /* clang finds a cross triple's C headers through the cross
                 * GCC installation (/usr/lib/gcc-cross/<triple>) */
                msg += "(clang needs the C library headers of " + triple +
                       ": on Debian, its cross GCC and libc6-dev-<arch>-cross, e.g. "
                       "gcc-aarch64-linux-gnu and libc6-dev-arm64-cross)";
            }
            throw pkg_error(msg);
        }

        auto defined = nm_symbols(run_checked({bc_nm, "--defined-only", "-j", bc_file.string()},
                                              "listing the symbols of " + what),
                                  what);
        if (!std::binary_search(defined.begin(), defined.end(), n + "_main")) {
            throw pkg_error(j.src->rel + ": error: the bitcode for " + triple +
                            " does not define '" + n + "_main'");
        }
        p.externals = nm_symbols(run_checked({bc_nm, "--undefined-only", "-j", bc_file.string()},
                                             "listing the externals of " + what),
                                 what);
        const auto bytes = read_binary(bc_file);
        p.bc_size = static_cast<std::uint32_t>(bytes.size());
        p.bc_hash = fnv1a64_of(bytes.data(), bytes.size());
    });

    /* generated header and the Local Function library */
    header_info hi{P, build_id, arch, {}, {}};
    for (const auto &j : jams) {
        hi.elements.push_back({j.id, j.src->name, j.has_init, j.has_max, j.src->public_api});
    }
    for (const auto &r : rieds) {
        hi.rieds.push_back(r.src->name);
    }
    const fs::path hdr = w / (P + ".h");
    write_file(hdr, generate_package_header(hi));
    const fs::path tab_c = w / (P + "_tc_elements.c");
    const fs::path tab_o = w / (P + "_tc_elements.o");
    write_file(tab_c, generate_element_table(hi));
    {
        std::vector<std::string> c = {cc, "-x", "c", "-fPIC", "-O2", "-I", w.string()};
        c.insert(c.end(), base.begin(), base.end());
        c.insert(c.end(), {"-c", tab_c.string(), "-o", tab_o.string()});
        run_checked(c, "compiling the element table of " + P);
    }
    const fs::path local_lib = w / pkg_local_lib_path("", P).filename();
    {
        std::vector<std::string> l = {cc, "-shared", "-o", local_lib.string(),
                                      "-Wl,-soname," + local_lib.filename().string()};
        for (const auto &j : jams) {
            l.push_back(j.local_obj.string());
        }
        l.push_back(tab_o.string());
        l.insert(l.end(), {"-L", w.string(), "-Wl,--no-as-needed"});
        for (const auto &r : rieds) {
            l.push_back("-l" + P + "_ried_" + r.src->name);
        }
        l.push_back("-Wl,-rpath,$ORIGIN");
        l.insert(l.end(), o.cflags.begin(), o.cflags.end());
        run_checked(l, "linking the Local Function library of " + P);
    }

    /* install; the manifest goes last so a failed install leaves none */
    const fs::path share = pkg_share_dir(prefix, P);
    fs::create_directories(share);
    fs::create_directories(prefix / "lib");
    fs::create_directories(prefix / "include" / "twochains");
    fs::remove(share / TC_PKG_MANIFEST_NAME);

    manifest m;
    m.package      = P;
    m.arch         = arch;
    m.build_id     = build_id;
    m.local_file   = relative_to_share(prefix, P, pkg_local_lib_path(prefix, P));
    m.local_symbol = P + TC_PKG_ELEMENTS_SUFFIX;
    std::set<std::string> keep;
    for (const auto &r : rieds) {
        fs::path dst = pkg_ried_lib_path(prefix, P, r.src->name);
        copy_into(r.lib, dst);
        keep.insert(dst.filename().string());
        m.rieds.push_back({r.src->name, relative_to_share(prefix, P, dst)});
    }
    copy_into(local_lib, pkg_local_lib_path(prefix, P));
    copy_into(hdr, pkg_header_path(prefix, P));
    copy_into(api / "twochains" / "jam.h", prefix / "include" / "twochains" / "jam.h");
    copy_into(api_format_header(api), prefix / "include" / "twochains" / "jam_format.h");

    for (const auto &j : jams) {
        const std::string n = j.src->name;
        jam_file jf;
        jf.header.machine         = static_cast<std::uint16_t>(arch_elf_machine(arch));
        jf.header.element_id      = j.id;
        jf.header.flags           = j.flags;
        jf.header.got_slot_offset = j.img.got_slot_offset;
        jf.header.entry_offset    = j.img.entry_offset;
        jf.header.data_offset     = j.img.data_offset;
        jf.header.span_hash       = j.hash;
        jf.header.build_id        = build_id;
        std::snprintf(jf.header.name, sizeof(jf.header.name), "%s", n.c_str());
        if (n.size() >= sizeof(jf.header.name)) {
            throw pkg_error(j.src->rel + ": error: jam name longer than " +
                            std::to_string(TC_JAM_NAME_MAX - 1) + " characters");
        }
        jf.externals = j.externals;
        jf.span      = j.img.bytes;
        const std::string bin = "jam_" + n + ".bin";
        write_binary(share / (bin + ".tmp"), jam_file_encode(jf));
        fs::rename(share / (bin + ".tmp"), share / bin);
        copy_into(w / ("jam_" + n + ".elf"), share / ("jam_" + n + ".elf"));
        keep.insert(bin);
        keep.insert("jam_" + n + ".elf");
        for (const auto &p : j.portable) {
            copy_into(w / p.file, share / p.file);
            keep.insert(p.file);
        }

        manifest_element e;
        e.id              = j.id;
        e.name            = n;
        e.span_size       = static_cast<std::uint32_t>(j.img.bytes.size());
        e.span_hash       = j.hash;
        e.got_slot_offset = j.img.got_slot_offset;
        e.entry_offset    = j.img.entry_offset;
        e.data_offset     = j.img.data_offset;
        e.flags           = j.flags;
        e.file            = bin;
        e.externals       = j.externals;
        e.portable        = j.portable;
        m.elements.push_back(e);
    }

    /* files of elements and rieds that no longer exist */
    for (const auto &de : fs::directory_iterator(share)) {
        std::string f = de.path().filename().string();
        if (f.starts_with("jam_") && !keep.count(f)) {
            fs::remove(de.path());
        }
    }
    for (const auto &de : fs::directory_iterator(prefix / "lib")) {
        std::string f = de.path().filename().string();
        if (f.starts_with("lib" + P + "_ried_") && f.ends_with(".so") && !keep.count(f)) {
            fs::remove(de.path());
        }
    }

    write_file(share / (std::string(TC_PKG_MANIFEST_NAME) + ".tmp"), manifest_format(m));
    fs::rename(share / (std::string(TC_PKG_MANIFEST_NAME) + ".tmp"),
               share / TC_PKG_MANIFEST_NAME);

    std::cout << "twochains-pkg: built package '" << P << "' for " << arch_name(arch)
              << ", build id " << hex64(build_id) << ", into " << prefix.string() << "\n";
    for (const auto &e : m.elements) {
        std::cout << "  element " << e.id << " " << e.name << ": " << e.span_size
                  << " bytes, " << e.externals.size() << " externals, hash "
                  << hex64(e.span_hash) << "\n";
        for (const auto &p : e.portable) {
            std::cout << "    bitcode " << p.triple << ": " << p.bc_size << " bytes, "
                      << p.externals.size() << " externals, hash " << hex64(p.bc_hash)
                      << "\n";
        }
    }
    for (const auto &r : m.rieds) {
        std::cout << "  ried " << r.name << "\n";
    }
}

} // namespace tc::pkg
