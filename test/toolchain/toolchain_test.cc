/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "toolchain_test.hpp"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#ifndef TC_AARCH64_CC
#define TC_AARCH64_CC ""
#endif
#ifndef TC_QEMU_AARCH64
#define TC_QEMU_AARCH64 ""
#endif

namespace fs = std::filesystem;

namespace tc_tctest {

cmd_result run(const std::string &cmdline)
{
    cmd_result res{-1, {}};
    FILE *p = popen((cmdline + " 2>&1").c_str(), "r");
    if (p == nullptr) {
        res.output = "popen failed";
        return res;
    }
    char buf[4096];
    std::size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) {
        res.output.append(buf, n);
    }
    int st    = pclose(p);
    res.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return res;
}

std::string shell_quote(const std::string &s)
{
    std::string q = "'";
    for (char c : s) {
        if (c == '\'') {
            q += "'\\''";
        } else {
            q += c;
        }
    }
    return q + "'";
}

std::string tool()
{
    return std::string(TC_BUILDDIR) + "/toolchain/twochains-pkg";
}

fs::path src_path(const std::string &rel)
{
    return fs::path(TC_SRCDIR) / rel;
}

namespace {
struct scratch_dir {
    fs::path path;
    scratch_dir()
    {
        const char *tmp = getenv("TMPDIR");
        std::string t = std::string((tmp && *tmp) ? tmp : "/tmp") + "/tc-toolchain.XXXXXX";
        if (mkdtemp(t.data()) == nullptr) {
            abort();
        }
        path = t;
    }
    ~scratch_dir()
    {
        if (getenv("TC_TEST_KEEP") == nullptr) {
            std::error_code ec;
            fs::remove_all(path, ec);
        }
    }
};
} // namespace

fs::path scratch()
{
    static scratch_dir d;
    return d.path;
}

fs::path fresh_dir(const std::string &stem)
{
    static int counter = 0;
    fs::path p = scratch() / (stem + "." + std::to_string(++counter));
    fs::create_directories(p);
    return p;
}

cmd_result build(const std::string &name, const fs::path &src, const fs::path &prefix,
                 const std::string &extra)
{
    return run(shell_quote(tool()) + " build --name " + name + " --src " +
               shell_quote(src.string()) + " --prefix " + shell_quote(prefix.string()) +
               " " + extra);
}

fs::path manifest_of(const fs::path &prefix, const std::string &pkg)
{
    return prefix / "share" / "twochains" / pkg / "manifest";
}

std::string slurp(const fs::path &p)
{
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void write_text(const fs::path &p, const std::string &text)
{
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out << text;
}

namespace {
std::string which(const std::string &prog)
{
    cmd_result r = run("command -v " + prog);
    if (r.status != 0) {
        return "";
    }
    std::string s = r.output;
    while (!s.empty() && ((s.back() == '\n') || (s.back() == '\r'))) {
        s.pop_back();
    }
    return s;
}
} // namespace

const cross_tools &aarch64_tools()
{
    static cross_tools t = []() {
        cross_tools c;
        c.cc = TC_AARCH64_CC;
        if (c.cc.empty()) {
            c.cc = which("aarch64-linux-gnu-gcc");
        }
        c.qemu = TC_QEMU_AARCH64;
        if (c.qemu.empty()) {
            c.qemu = which("qemu-aarch64");
        }
        if (c.qemu.empty()) {
            c.qemu = which("qemu-aarch64-static");
        }
        c.sysroot = "/usr/aarch64-linux-gnu";
        if (c.cc.empty()) {
            c.why_not = "aarch64-linux-gnu-gcc not found (apt-get install gcc-aarch64-linux-gnu)";
            return c;
        }
        if (c.qemu.empty()) {
            c.why_not = "qemu-aarch64 not found (apt-get install qemu-user)";
            return c;
        }
        fs::path probe = scratch() / "cross-probe.c";
        write_text(probe, "#include <stdio.h>\nint main(void) { puts(\"probe\"); return 0; }\n");
        cmd_result r = run(shell_quote(c.cc) + " -o " + shell_quote((scratch() / "cross-probe").string()) +
                           " " + shell_quote(probe.string()));
        if (r.status != 0) {
            c.why_not = "the aarch64 cross compiler cannot build a C program (apt-get install "
                        "libc6-dev-arm64-cross): " + r.output.substr(0, 200);
            return c;
        }
        r = run("QEMU_LD_PREFIX=" + c.sysroot + " " + shell_quote(c.qemu) + " " +
                shell_quote((scratch() / "cross-probe").string()));
        if ((r.status != 0) || (r.output.find("probe") == std::string::npos)) {
            c.why_not = "qemu-aarch64 cannot run an aarch64 program: " + r.output.substr(0, 200);
        }
        return c;
    }();
    return t;
}

} // namespace tc_tctest
