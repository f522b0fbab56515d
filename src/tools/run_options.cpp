/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * twochains-run's command line: what it accepts, and the usage text.
 */
#include "tools/run_options.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace tc::run {

namespace {

bool parse_int(const char *s, int &out)
{
    char *end;
    errno  = 0;
    long v = std::strtol(s, &end, 10);
    if ((*s == '\0') || (*end != '\0') || (errno != 0) || (v < INT32_MIN) || (v > INT32_MAX)) {
        return false;
    }
    out = static_cast<int>(v);
    return true;
}

bool parse_seconds(const char *s, double &out)
{
    char *end;
    errno    = 0;
    double v = std::strtod(s, &end);
    if ((*s == '\0') || (*end != '\0') || (errno != 0) || !(v > 0) || !(v < 1e9)) {
        return false;
    }
    out = v;
    return true;
}

} // namespace

std::pair<std::optional<options>, int> parse_options(int argc, char **argv)
{
    options opts;
    int i = 1;

    auto fail = [](const char *what, const char *arg) {
        std::fprintf(stderr, "twochains-run: %s%s%s\n", what, arg ? ": " : "", arg ? arg : "");
        usage(stderr);
        return std::pair<std::optional<options>, int>{std::nullopt, kExitUsage};
    };

    for (; i < argc; ++i) {
        std::string_view a = argv[i];
        const char *value  = nullptr;

        if (a == "--") {
            ++i;
            break;
        }
        if ((a == "-h") || (a == "--help")) {
            usage(stdout);
            return {std::nullopt, 0};
        }
        if (a.empty() || (a[0] != '-') || (a == "-")) {
            break;          // the command starts here
        }

        bool is_np      = (a == "-n") || (a == "--np");
        bool is_timeout = (a == "-t") || (a == "--timeout");
        bool is_netns   = (a == "--netns");
        if (a.starts_with("--netns=")) {
            is_netns = true;
            value    = argv[i] + 8;
        } else if (a.starts_with("--np=")) {
            is_np = true;
            value = argv[i] + 5;
        } else if (a.starts_with("--timeout=")) {
            is_timeout = true;
            value      = argv[i] + 10;
        } else if (a.starts_with("-n") && (a.size() > 2)) {
            is_np = true;
            value = argv[i] + 2;
        } else if (!is_np && !is_timeout && !is_netns) {
            return fail("unknown option", argv[i]);
        }
        if (value == nullptr) {
            if (i + 1 >= argc) {
                return fail("missing value for", argv[i]);
            }
            value = argv[++i];
        }

        if (is_netns) {
            std::string_view v = value;
            if (v.empty() || v.find('/') != std::string_view::npos || v.size() > 200) {
                return fail("--netns needs a namespace name prefix without '/', got", value);
            }
            opts.netns_prefix = value;
        } else if (is_np) {
            if (!parse_int(value, opts.nranks) || (opts.nranks < 1) || (opts.nranks > kMaxRanks)) {
                return fail("-n needs a number of ranks from 1 to 1024, got", value);
            }
        } else {
            double t;
            if (!parse_seconds(value, t)) {
                return fail("--timeout needs a positive number of seconds, got", value);
            }
            opts.timeout_s = t;
        }
    }

    for (; i < argc; ++i) {
        opts.command.emplace_back(argv[i]);
    }
    if (opts.nranks == 0) {
        return fail("-n is required", nullptr);
    }
    if (opts.command.empty()) {
        return fail("no command given", nullptr);
    }
    return {std::move(opts), 0};
}


void usage(FILE *out)
{
    std::fprintf(out,
                 "Usage: twochains-run -n N [--timeout S] [--] CMD [ARGS...]\n"
                 "Start N copies of CMD on this machine for the Two-Chains TCP bootstrap.\n"
                 "\n"
                 "  -n, --np N         number of ranks (1..%d)\n"
                 "  -t, --timeout S    kill every rank after S seconds and exit 124\n"
                 "      --netns PREFIX run rank r in network namespace PREFIXr; rank 0\n"
                 "                     listens on its first non-loopback IPv4 address\n"
                 "  -h, --help         this help\n"
                 "\n"
                 "Each rank gets UCX_TC_RANK, UCX_TC_SIZE and UCX_TC_ROOT=127.0.0.1:<port>;\n"
                 "rank 0 also gets UCX_TC_LISTEN_FD, a socket the launcher already listens on.\n"
                 "Unless UCX_TC_JOB_KEY or UCX_TC_JOB_KEY_FILE is set, every rank gets a\n"
                 "fresh random UCX_TC_JOB_KEY, so that only the job's ranks join it.\n"
                 "Output lines of rank r are prefixed with \"[r] \". If a rank fails, the\n"
                 "others get SIGTERM, then SIGKILL after %lld s.\n"
                 "\n"
                 "Exit status: 0 when every rank exits 0; else the first failing rank's\n"
                 "status (1 if it was killed by a signal); 124 on timeout; 2 on a usage\n"
                 "error; 128+N when the launcher itself got signal N.\n",
                 kMaxRanks, static_cast<long long>(kKillGrace.count()));
}


} // namespace tc::run
