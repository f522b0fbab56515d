/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Execution of injectable jams the way a receiver runs them: every message
 * copies the span to a fresh mapping at a new address, stores a GOT table
 * resolved in this process in the slot, and calls the entry; once with an
 * RWX mapping, once with RW then mprotect'ed RX. x86_64 natively, aarch64
 * under qemu-aarch64 with the same scenario code (jam_exec.c) cross-built.
 */
#include "jam_exec.h"
#include "toolchain_test.hpp"

#include <map>

namespace fs = std::filesystem;
using namespace tc_tctest;

namespace {

/* scenario -> package that holds its jam */
const std::map<std::string, std::string> &scenario_packages()
{
    static const std::map<std::string, std::string> m = {
        {"indirect_put", "tcbench"}, {"server_side_sum", "tcbench"},
        {"ping", "tcbench"},         {"calls_libc", "tcbench"},
        {"wglobal", "wglobal"},      {"gotforms", "gotforms"},
        {"switchy", "gotforms"}};
    return m;
}

fs::path package_src(const std::string &pkg)
{
    return (pkg == "tcbench") ? src_path("test/packages/tcbench")
                              : src_path("test/toolchain/pkgs/" + pkg);
}

/* All test packages built once per target flags into one prefix */
fs::path packages_prefix(const std::string &flags)
{
    static std::map<std::string, fs::path> built;
    auto it = built.find(flags);
    if (it != built.end()) {
        return it->second;
    }
    fs::path p = fresh_dir("exec");
    for (const char *pkg : {"tcbench", "wglobal", "gotforms"}) {
        cmd_result r = build(pkg, package_src(pkg), p, flags);
        EXPECT_EQ(r.status, 0) << r.output;
    }
    built[flags] = p;
    return p;
}

tc_test_scenario_fn_t scenario_fn(const std::string &name)
{
    for (const tc_test_scenario_t *s = tc_test_scenarios; s->name; ++s) {
        if (name == s->name) {
            return s->fn;
        }
    }
    return nullptr;
}

std::string mode_name(tc_test_map_mode_t m)
{
    return (m == TC_TEST_MAP_RWX) ? "rwx" : "rx";
}

class toolchain_exec_x86_64
    : public ::testing::TestWithParam<std::tuple<std::string, tc_test_map_mode_t>> {
};

} // namespace

TEST_P(toolchain_exec_x86_64, runs_at_a_new_address_every_message)
{
#if !defined(__x86_64__)
    GTEST_SKIP() << "native execution test is for x86_64 hosts";
#else
    const auto &[scenario, mode] = GetParam();
    fs::path prefix = packages_prefix("");
    static tc_test_pkg_t pkg;
    char err[512];
    ASSERT_EQ(tc_test_pkg_load(manifest_of(prefix, scenario_packages().at(scenario)).c_str(),
                               &pkg, err, sizeof(err)), 0) << err;
    std::string report(16384, '\0');
    int failures = scenario_fn(scenario)(&pkg, mode, report.data(), report.size());
    tc_test_pkg_unload(&pkg);
    EXPECT_EQ(failures, 0) << report.c_str();
#endif
}

INSTANTIATE_TEST_SUITE_P(
    jams, toolchain_exec_x86_64,
    ::testing::Combine(::testing::Values("indirect_put", "server_side_sum", "ping", "calls_libc",
                                         "wglobal", "gotforms", "switchy"),
                       ::testing::Values(TC_TEST_MAP_RWX, TC_TEST_MAP_RX)),
    [](const auto &tp) {
        return std::get<0>(tp.param) + "_" + mode_name(std::get<1>(tp.param));
    });

/* ------------------------------------------------------------------------ */

namespace {

class toolchain_exec_aarch64 : public ::testing::TestWithParam<std::string> {
protected:
    /* jam_runner cross-compiled once */
    static std::string runner(std::string &why)
    {
        static std::string path, error;
        if (path.empty() && error.empty()) {
            const cross_tools &x = aarch64_tools();
            fs::path out = scratch() / "jam_runner.aarch64";
            std::string inc = " -I" + shell_quote(src_path("toolchain/api").string()) +
                              " -I" + shell_quote(src_path("ucx_ext/api").string()) +
                              " -I" + shell_quote(src_path("test/packages/tcbench").string()) +
                              " -I" + shell_quote(src_path("test/toolchain").string());
            cmd_result r = run(shell_quote(x.cc) + " -std=gnu11 -O2 -Wall -Werror" + inc + " " +
                               shell_quote(src_path("test/toolchain/jam_exec.c").string()) + " " +
                               shell_quote(src_path("test/toolchain/jam_runner.c").string()) +
                               " -o " + shell_quote(out.string()) + " -ldl");
            if (r.status == 0) {
                path = out.string();
            } else {
                error = r.output;
            }
        }
        why = error;
        return path;
    }
};

} // namespace

TEST_P(toolchain_exec_aarch64, runs_under_qemu)
{
    const cross_tools &x = aarch64_tools();
    if (!x.why_not.empty()) {
        GTEST_SKIP() << x.why_not;
    }
    const std::string cmodel = GetParam();
    std::string why;
    std::string exe = runner(why);
    ASSERT_FALSE(exe.empty()) << "cross-compiling jam_runner failed:\n" << why;

    fs::path prefix = packages_prefix("--target aarch64 --cc " + shell_quote(x.cc) +
                                      " --cmodel " + cmodel);
    cmd_result v = run(shell_quote(tool()) + " verify " +
                       shell_quote((prefix / "share/twochains/tcbench").string()));
    EXPECT_EQ(v.status, 0) << v.output;
    EXPECT_NE(v.output.find("(aarch64) OK"), std::string::npos) << v.output;
    if (cmodel == "small") {
        /* adrp to the span's own data: must be placed page aligned */
        EXPECT_NE(slurp(manifest_of(prefix, "tcbench")).find(" 8 4 jam_calls_libc.bin"),
                  std::string::npos) << slurp(manifest_of(prefix, "tcbench"));
    }

    for (const char *mode : {"rwx", "rx"}) {
        for (const char *pkg : {"tcbench", "wglobal", "gotforms"}) {
            std::string scenarios;
            for (const auto &[s, p] : scenario_packages()) {
                if (p == pkg) {
                    scenarios += " " + s;
                }
            }
            cmd_result r = run("QEMU_LD_PREFIX=" + x.sysroot + " " + shell_quote(x.qemu) + " " +
                               shell_quote(exe) + " " +
                               shell_quote(manifest_of(prefix, pkg).string()) + " " + mode +
                               scenarios);
            EXPECT_EQ(r.status, 0) << r.output;
            for (const auto &[s, p] : scenario_packages()) {
                if (p == pkg) {
                    EXPECT_NE(r.output.find("ok " + s + " (" + mode + ")"), std::string::npos)
                        << r.output;
                }
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(cmodel, toolchain_exec_aarch64, ::testing::Values("tiny", "small"));
