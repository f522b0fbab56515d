/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Where `twochains-pkg build` finds its inputs: a package's jams, rieds and
 * headers in its source tree (names checked: C identifiers, unique ignoring
 * case), a single ifunc source, and the Two-Chains API headers.
 *
 * Threads: the builder's main thread, before any job starts; keeps nothing.
 */
#include "util.hpp"
#include "package.hpp"

#include "twochains/jam_format.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace fs = std::filesystem;

namespace tc::pkg {

namespace {

void sort_and_check(std::vector<pkg_source> &v, const char *kind, const char *prefix,
                    const char *ext, std::vector<std::string> &errors)
{
    std::sort(v.begin(), v.end(), [](const pkg_source &a, const pkg_source &b) {
        return (a.name != b.name) ? (a.name < b.name) : (a.rel < b.rel);
    });
    for (std::size_t i = 1; i < v.size(); ++i) {
        if (upper(v[i].name) == upper(v[i - 1].name)) {
            errors.push_back(v[i].rel + ": error: " + kind + " name clash: '" +
                             v[i].name + "' is also defined by " + v[i - 1].rel +
                             " (names must be unique, ignoring case, across the "
                             "package tree: rename one " + prefix + "<name>" + ext + ")");
        }
    }
}

} // namespace

fs::path api_include_dir()
{
    auto has_api = [](const fs::path &d) { return fs::exists(d / "twochains" / "jam.h"); };
    if (const char *env = std::getenv("TWOCHAINS_API_INCLUDE"); env && *env) {
        if (!has_api(env)) {
            throw pkg_error(std::string("TWOCHAINS_API_INCLUDE=") + env +
                            " has no twochains/jam.h");
        }
        return env;
    }
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
#ifdef TC_PKG_BINDIR
    /* an installed twochains-pkg uses the installed headers */
    if (!ec && (self.parent_path() == fs::path(TC_PKG_BINDIR)) &&
        has_api(TC_PKG_INCLUDEDIR)) {
        return TC_PKG_INCLUDEDIR;
    }
#endif
#ifdef TC_PKG_SRC_APIDIR
    if (has_api(TC_PKG_SRC_APIDIR)) {
        return TC_PKG_SRC_APIDIR;
    }
#endif
#ifdef TC_PKG_INCLUDEDIR
    if (has_api(TC_PKG_INCLUDEDIR)) {
        return TC_PKG_INCLUDEDIR;
    }
#endif
    throw pkg_error("cannot find twochains/jam.h; set TWOCHAINS_API_INCLUDE");
}

fs::path api_format_header(const fs::path &api)
{
    /* installed, both headers share one folder; in the source tree the
     * formats belong to the runtime (ucx_ext/api), the contract to us */
    fs::path here = api / "twochains" / "jam_format.h";
#ifdef TC_PKG_SRC_FORMATDIR
    if (!fs::exists(here)) {
        return fs::path(TC_PKG_SRC_FORMATDIR) / "twochains" / "jam_format.h";
    }
#endif
    return here;
}

package_sources package_discover(const std::string &name, const fs::path &src_dir)
{
    if (!is_c_identifier(name)) {
        throw pkg_error("package name '" + name + "' must be a C identifier");
    }
    if (!fs::is_directory(src_dir)) {
        throw pkg_error(src_dir.string() + ": not a directory");
    }
    package_sources ps;
    ps.name    = name;
    ps.src_dir = fs::absolute(src_dir).lexically_normal();
    std::vector<std::string> errors;

    for (const auto &de : fs::recursive_directory_iterator(ps.src_dir)) {
        if (!de.is_regular_file()) {
            continue;
        }
        const std::string fname = de.path().filename().string();
        pkg_source s;
        s.path = de.path();
        s.rel  = fs::relative(de.path(), ps.src_dir.parent_path()).string();
        if (fname.starts_with("jam_") && fname.ends_with(".amc")) {
            s.name = fname.substr(4, fname.size() - 8);
            ps.jams.push_back(s);
        } else if (fname.starts_with("ried_") && fname.ends_with(".rdc")) {
            s.name = fname.substr(5, fname.size() - 9);
            ps.rieds.push_back(s);
        } else if (fname.ends_with(".h") || fname.ends_with(".inc")) {
            ps.others.push_back(s);
        } else {
            continue;
        }
        if (!s.name.empty() && !is_c_identifier(s.name)) {
            errors.push_back(s.rel + ": error: '" + s.name + "' is not a C identifier; "
                             "jam and ried names become C symbols (<name>_main)");
        }
    }
    sort_and_check(ps.jams, "jam", "jam_", ".amc", errors);
    sort_and_check(ps.rieds, "ried", "ried_", ".rdc", errors);
    std::sort(ps.others.begin(), ps.others.end(),
              [](const pkg_source &a, const pkg_source &b) { return a.rel < b.rel; });
    if (ps.jams.empty() && errors.empty()) {
        errors.push_back(ps.src_dir.string() + ": error: package '" + name +
                         "' is empty: no jam_<name>.amc found in this directory tree");
    }
    if (!errors.empty()) {
        std::string msg;
        for (const auto &e : errors) {
            msg += (msg.empty() ? "" : "\n") + e;
        }
        throw pkg_error(msg);
    }
    return ps;
}

package_sources ifunc_source_discover(const fs::path &source)
{
    const std::string name = source.stem().string();
    if ((source.extension() != ".c") || !fs::is_regular_file(source)) {
        throw pkg_error(source.string() + ": not an ifunc source <name>.c");
    }
    if (!is_c_identifier(name) || (name.size() >= TC_JAM_NAME_MAX)) {
        throw pkg_error(source.string() + ": error: '" + name + "' must be a C identifier "
                        "shorter than " + std::to_string(TC_JAM_NAME_MAX) +
                        " characters; it names the package and <name>_main");
    }
    package_sources ps;
    ps.name    = name;
    ps.src_dir = fs::absolute(source).parent_path().lexically_normal();
    pkg_source s;
    s.name       = name;
    s.path       = fs::absolute(source).lexically_normal();
    s.rel        = source.filename().string();
    s.public_api = true;
    ps.jams.push_back(s);
    for (const auto &de : fs::directory_iterator(ps.src_dir)) {
        if (de.is_regular_file() && (de.path().extension() == ".h")) {
            ps.others.push_back({"", de.path(), de.path().filename().string()});
        }
    }
    std::sort(ps.others.begin(), ps.others.end(),
              [](const pkg_source &a, const pkg_source &b) { return a.rel < b.rel; });
    return ps;
}

} // namespace tc::pkg
