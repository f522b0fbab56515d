/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Shared test helpers: UCX log capture (an unexpected warn or error fails the
 * test), running the launcher, and paths into the build tree.
 */
#pragma once

#include <gtest/gtest.h>
#include <ucs/debug/log_def.h>

#include <chrono>
#include <string>
#include <vector>

namespace tc_test {

/* Every UCX warn/error logged while a test runs is recorded here. */
struct log_capture {
    static std::vector<std::string> &warnings();
    static void clear() { warnings().clear(); }
};

/*
 * While alive, warnings and errors are expected: they are recorded but do not
 * fail the test. Tests then assert on what was logged.
 */
class scoped_log_expect {
public:
    scoped_log_expect();
    ~scoped_log_expect();
    scoped_log_expect(const scoped_log_expect &) = delete;
    scoped_log_expect &operator=(const scoped_log_expect &) = delete;

    /* how many recorded messages contain @a needle */
    size_t count(const std::string &needle) const;
    const std::vector<std::string> &messages() const;
};

/* Sets (or, with nullptr, unsets) an environment variable for a scope. */
class scoped_env {
public:
    scoped_env(const char *name, const char *value);
    ~scoped_env();
    scoped_env(const scoped_env &)            = delete;
    scoped_env &operator=(const scoped_env &) = delete;

private:
    std::string name_, old_;
    bool        had_ = false;
};

inline double seconds_since(std::chrono::steady_clock::time_point t)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

/* Absolute path of a program in the build tree, e.g. "src/tools/twochains-run" */
std::string build_path(const std::string &rel);

struct run_result {
    int         exit_code;   /* -1: killed by signal */
    std::string output;      /* stdout and stderr, interleaved */
};

/* Run a shell command line, capturing its output. */
run_result run_command(const std::string &cmdline);

} // namespace tc_test
