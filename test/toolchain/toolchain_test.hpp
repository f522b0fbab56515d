/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Helpers of the toolchain tests: running twochains-pkg, scratch
 * directories, package paths and the aarch64 cross tools.
 */
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace tc_tctest {

struct cmd_result {
    int         status;   /* exit code, -1 if killed by a signal */
    std::string output;   /* stdout and stderr */
};

/* Run a shell command line, capturing its output. */
cmd_result run(const std::string &cmdline);

std::string shell_quote(const std::string &s);

/* twochains-pkg in the build tree */
std::string tool();
/* A source tree path, e.g. "test/packages/tcbench" */
std::filesystem::path src_path(const std::string &rel);

/* A scratch directory for the whole test program, removed at exit. */
std::filesystem::path scratch();
/* A fresh directory under scratch() */
std::filesystem::path fresh_dir(const std::string &stem);

/* `twochains-pkg build`; extra is appended to the command line as is. */
cmd_result build(const std::string &name, const std::filesystem::path &src,
                 const std::filesystem::path &prefix, const std::string &extra = "");

std::filesystem::path manifest_of(const std::filesystem::path &prefix,
                                  const std::string &pkg);
std::string slurp(const std::filesystem::path &p);
void write_text(const std::filesystem::path &p, const std::string &text);

/* The aarch64 cross compiler and qemu; empty with a reason if unusable. */
struct cross_tools {
    std::string cc;
    std::string qemu;
    std::string sysroot;      /* QEMU_LD_PREFIX */
    std::string why_not;      /* non-empty: skip reason */
};
const cross_tools &aarch64_tools();

} // namespace tc_tctest
