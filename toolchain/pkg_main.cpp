/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * twochains-pkg: build, inspect and verify Two-Chains packages.
 */
#include "inspect.hpp"
#include "package.hpp"
#include "util.hpp"

#include <libelf.h>

#include <cstring>
#include <iostream>
#include <vector>

#ifndef TC_PKG_VERSION
#define TC_PKG_VERSION "0"
#endif

namespace {

const char *const usage_text =
    "usage:\n"
    "  twochains-pkg build --name PKG --src DIR --prefix DIR [--target x86_64|aarch64]\n"
    "                      [--cc CC] [--cflags FLAGS]... [--cmodel tiny|small]\n"
    "                      [--portable TRIPLES [--bc-cc CLANG] [--bc-nm NM]]\n"
    "                      [--keep-temps DIR] [--force] [-j N] [-v]\n"
    "  twochains-pkg ifunc SRC.c... --prefix DIR [--target x86_64|aarch64] [--cc CC]\n"
    "                      [--cflags FLAGS]... [--cmodel tiny|small]\n"
    "                      [--portable TRIPLES [--bc-cc CLANG] [--bc-nm NM]] [--force] [-v]\n"
    "  twochains-pkg inspect FILE|DIR   a manifest, a package or a jam_<name>.bin\n"
    "  twochains-pkg verify PKG_DIR     re-check an installed package\n"
    "  twochains-pkg --version\n"
    "\n"
    "build compiles every jam_<name>.amc and ried_<name>.rdc under --src, and\n"
    "installs under --prefix: include/PKG.h, lib/libPKG_local.so,\n"
    "lib/libPKG_ried_<ried>.so and share/twochains/PKG/{manifest,jam_<name>.bin}.\n"
    "ifunc builds each public-API ifunc source <name>.c (<name>_main,\n"
    "<name>_payload_get_max_size, <name>_payload_init, as in the public Two-Chains\n"
    "API) into package <name>, whose one jam is <name>; point UCX_IFUNC_LIB_DIR\n"
    "at the prefix and ucp_register_ifunc / ucp_poll_ifunc find it by name.\n"
    "--cc defaults to cc (x86_64) or aarch64-linux-gnu-gcc (aarch64); --cmodel\n"
    "is aarch64's code model for jams (tiny: any 16-byte placement; small: spans\n"
    "that must be placed page aligned). --portable x86_64-linux-gnu,aarch64-linux-gnu\n"
    "also installs every jam as LLVM bitcode per target triple,\n"
    "share/twochains/PKG/jam_<name>.<triple>.bc, for receivers that compile it;\n"
    "--bc-cc (default clang-14) must be clang 14 or older, what the receiver's\n"
    "LLVM 14 reads; --bc-nm (default llvm-nm-14) lists its externals.\n"
    "Formats: twochains/jam_format.h.\n";

int usage(int rc)
{
    (rc ? std::cerr : std::cout) << usage_text;
    return rc;
}

int cmd_build(int argc, char **argv, bool ifunc_sources)
{
    tc::pkg::build_options o;
    std::vector<std::string> sources;
    bool have_name = false, have_src = false, have_prefix = false;
    for (int i = 0; i < argc; ++i) {
        std::string a = argv[i];
        if (ifunc_sources && (a.empty() || (a[0] != '-'))) {
            sources.push_back(a);
            continue;
        }
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                throw tc::pkg::pkg_error("option " + a + " needs a value");
            }
            return argv[++i];
        };
        if (a == "--name") {
            o.name    = value();
            have_name = true;
        } else if (a == "--src") {
            o.src_dir = value();
            have_src  = true;
        } else if (a == "--prefix") {
            o.prefix    = value();
            have_prefix = true;
        } else if (a == "--target") {
            std::string t = value();
            if (!tc::pkg::arch_parse(t, o.arch)) {
                throw tc::pkg::pkg_error("unknown --target '" + t + "' (x86_64 or aarch64)");
            }
        } else if (a == "--cc") {
            o.cc = value();
        } else if (a == "--cflags") {
            auto f = tc::pkg::split_flags(value());
            o.cflags.insert(o.cflags.end(), f.begin(), f.end());
        } else if (a == "--cmodel") {
            o.cmodel = value();
        } else if (a == "--portable") {
            std::string list = value();
            std::size_t at = 0;
            for (;;) {
                std::size_t comma = list.find(',', at);
                o.portable.push_back(list.substr(at, comma - at));
                if (comma == std::string::npos) {
                    break;
                }
                at = comma + 1;
            }
        } else if (a == "--bc-cc") {
            o.bc_cc = value();
        } else if (a == "--bc-nm") {
            o.bc_nm = value();
        } else if (a == "--keep-temps") {
            o.keep_dir = value();
        } else if (a == "--force") {
            o.force = true;
        } else if (a == "-j") {
            o.jobs = static_cast<unsigned>(std::stoul(value()));
        } else if ((a == "-v") || (a == "--verbose")) {
            tc::pkg::g_verbose = true;
        } else {
            std::cerr << "twochains-pkg build: unknown option '" << a << "'\n";
            return usage(2);
        }
    }
    if (ifunc_sources) {
        if (sources.empty() || have_name || have_src || !have_prefix) {
            std::cerr << "twochains-pkg ifunc: sources and --prefix are required "
                         "(no --name or --src: each <name>.c is package <name>)\n";
            return usage(2);
        }
        for (const auto &src : sources) {
            o.ifunc_source = src;
            tc::pkg::package_build(o);
        }
        return 0;
    }
    if (!have_name || !have_src || !have_prefix) {
        std::cerr << "twochains-pkg build: --name, --src and --prefix are required\n";
        return usage(2);
    }
    tc::pkg::package_build(o);
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 2) {
        return usage(2);
    }
    std::string cmd = argv[1];
    if ((cmd == "-h") || (cmd == "--help") || (cmd == "help")) {
        return usage(0);
    }
    if (cmd == "--version") {
        std::cout << "twochains-pkg " TC_PKG_VERSION "\n";
        return 0;
    }
    elf_version(EV_CURRENT);   /* once, before any worker thread */
    try {
        if ((cmd == "build") || (cmd == "ifunc")) {
            return cmd_build(argc - 2, argv + 2, cmd == "ifunc");
        }
        if ((cmd == "inspect") || (cmd == "verify")) {
            if (argc != 3) {
                return usage(2);
            }
            return (cmd == "inspect") ? tc::pkg::package_inspect(argv[2])
                                      : tc::pkg::package_verify(argv[2]);
        }
    } catch (const tc::pkg::pkg_error &e) {
        std::cerr << "twochains-pkg " << cmd << ": " << e.what() << "\n";
        return 1;
    } catch (const std::exception &e) {
        std::cerr << "twochains-pkg " << cmd << ": error: " << e.what() << "\n";
        return 1;
    }
    std::cerr << "twochains-pkg: unknown command '" << cmd << "'\n";
    return usage(2);
}
