/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * twochains-run's command line.
 */
#pragma once

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tc::run {

constexpr int  kExitUsage = 2;
constexpr int  kMaxRanks  = 1024;
constexpr auto kKillGrace = std::chrono::seconds(2);   // SIGTERM -> SIGKILL

struct options {
    int                      nranks = 0;
    std::optional<double>    timeout_s;
    std::string              netns_prefix;   // empty: stay in our namespace
    std::vector<std::string> command;
};

/* The options, or the exit code to leave with (after a message). */
std::pair<std::optional<options>, int> parse_options(int argc, char **argv);

void usage(FILE *out);

} // namespace tc::run
