/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * rdmc-check: simulate RDMC schedules and print their step counts.
 *
 *   rdmc-check [-s KIND|all] [-r ROOT] N K     one case
 *   rdmc-check --sweep                          every kind, N = 1..1024 sampled,
 *                                               k = 1, 7, 1000, 9973 (and more)
 * Exit status 0 when every simulated schedule is valid.
 */
#include "rdmc/schedule.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace tc::rdmc;

namespace {

bool run_one(schedule_kind kind, int n, int root, int64_t k, bool exhaustive, bool verbose)
{
    auto s = schedule::create(kind, n, root, k);
    if (!s) {
        std::fprintf(stderr, "rdmc-check: invalid case %s n=%d root=%d k=%ld\n",
                     schedule_name(kind), n, root, static_cast<long>(k));
        return false;
    }
    auto r = schedule_check(*s, exhaustive);
    if (!r.ok) {
        std::printf("FAIL %s\n", r.error.c_str());
        return false;
    }
    if (r.steps != schedule_steps(kind, n, k)) {
        std::printf("FAIL %s n=%d k=%ld: %ld steps, formula says %ld\n", schedule_name(kind), n,
                    static_cast<long>(k), static_cast<long>(r.steps),
                    static_cast<long>(schedule_steps(kind, n, k)));
        return false;
    }
    if (verbose) {
        std::printf("%-10s n=%-5d root=%-4d k=%-6ld steps=%-8ld transfers=%ld\n",
                    schedule_name(kind), n, root, static_cast<long>(k),
                    static_cast<long>(r.steps), static_cast<long>(r.transfers));
    }
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    const std::vector<schedule_kind> all{schedule_kind::binomial, schedule_kind::sequential,
                                         schedule_kind::chain, schedule_kind::tree};
    std::vector<schedule_kind> kinds = all;
    int root = 0;
    bool sweep = false;
    std::vector<long> args;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--sweep")) {
            sweep = true;
        } else if (!std::strcmp(argv[i], "-s") && i + 1 < argc) {
            std::string name = argv[++i];
            if (name != "all") {
                schedule_kind k;
                if (!schedule_parse(name, k)) {
                    std::fprintf(stderr, "rdmc-check: unknown schedule '%s'\n", name.c_str());
                    return 2;
                }
                kinds = {k};
            }
        } else if (!std::strcmp(argv[i], "-r") && i + 1 < argc) {
            root = std::atoi(argv[++i]);
        } else {
            args.push_back(std::strtol(argv[i], nullptr, 0));
        }
    }

    if (!sweep) {
        if (args.size() != 2 || args[0] < 1 || args[0] > 1024 || args[1] < 1 ||
            args[1] > 10000000) {
            std::fprintf(stderr, "Usage: rdmc-check [-s KIND|all] [-r ROOT] N K | --sweep\n");
            return 2;
        }
        bool ok = true;
        for (auto kind : kinds) {
            ok = run_one(kind, static_cast<int>(args[0]), root, args[1], args[0] * args[1] <= 200000,
                         true) && ok;
        }
        return ok ? 0 : 1;
    }

    const auto t0 = std::chrono::steady_clock::now();
    int cases = 0, failed = 0;
    for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 31, 33, 64, 100, 127, 129, 255, 256, 257,
                  511, 513, 1000, 1023, 1024}) {
        for (long k : {1L, 2L, 7L, 64L, 1000L, 9973L, 10000L}) {
            for (auto kind : kinds) {
                ++cases;
                failed += !run_one(kind, n, (n > 2) ? n / 3 : 0, k, n * k <= 20000, true);
            }
        }
    }
    std::printf("%d cases, %d failed, %.1f s\n", cases, failed,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    return failed ? 1 : 0;
}
