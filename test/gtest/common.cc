/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "common.h"

#include <atomic>
#include <cstdarg>
#include <cstdlib>
#include <mutex>
#include <cstdio>
#include <sys/wait.h>

namespace tc_test {

namespace {
std::atomic<int> expect_depth{0};
/* members of in-process tests log from their own threads */
std::mutex       capture_mutex;

ucs_log_func_rc_t capture_handler(const char *file, unsigned line,
                                  const char *function, ucs_log_level_t level,
                                  const ucs_log_component_config_t *comp_conf,
                                  const char *message, va_list ap)
{
    if (level > UCS_LOG_LEVEL_WARN) {
        return UCS_LOG_FUNC_RC_CONTINUE;
    }

    char buf[1024];
    va_list aq;
    va_copy(aq, ap);
    /* UCX hands us its own format string: not a literal by design */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    vsnprintf(buf, sizeof(buf), message, aq);
#pragma GCC diagnostic pop
    va_end(aq);

    {
        std::lock_guard<std::mutex> lock(capture_mutex);
        log_capture::warnings().emplace_back(buf);
    }
    if (expect_depth == 0) {
        ADD_FAILURE() << "unexpected UCX " << (level == UCS_LOG_LEVEL_WARN ? "warning" : "error")
                      << " at " << file << ":" << line << ": " << buf;
        return UCS_LOG_FUNC_RC_CONTINUE;
    }
    return UCS_LOG_FUNC_RC_STOP; /* expected: keep the test output quiet */
}

struct handler_installer {
    handler_installer() { ucs_log_push_handler(capture_handler); }
} installer;
} // namespace

std::vector<std::string> &log_capture::warnings()
{
    static std::vector<std::string> w;
    return w;
}

scoped_log_expect::scoped_log_expect()
{
    ++expect_depth;
    std::lock_guard<std::mutex> lock(capture_mutex);
    log_capture::clear();
}

scoped_log_expect::~scoped_log_expect()
{
    --expect_depth;
}

size_t scoped_log_expect::count(const std::string &needle) const
{
    std::lock_guard<std::mutex> lock(capture_mutex);
    size_t n = 0;
    for (const auto &m : log_capture::warnings()) {
        n += (m.find(needle) != std::string::npos);
    }
    return n;
}

const std::vector<std::string> &scoped_log_expect::messages() const
{
    return log_capture::warnings();
}

scoped_env::scoped_env(const char *name, const char *value) : name_(name)
{
    if (const char *old = std::getenv(name)) {
        old_ = old;
        had_ = true;
    }
    if (value == nullptr) {
        ::unsetenv(name);
    } else {
        ::setenv(name, value, 1);
    }
}

scoped_env::~scoped_env()
{
    if (had_) {
        ::setenv(name_.c_str(), old_.c_str(), 1);
    } else {
        ::unsetenv(name_.c_str());
    }
}

std::string build_path(const std::string &rel)
{
    return std::string(TC_BUILDDIR) + "/" + rel;
}

run_result run_command(const std::string &cmdline)
{
    run_result r{-1, {}};
    std::string full = cmdline + " 2>&1";
    FILE *p = popen(full.c_str(), "r");
    if (p == nullptr) {
        return r;
    }
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) {
        r.output.append(buf, n);
    }
    int status = pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

} // namespace tc_test
