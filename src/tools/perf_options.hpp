/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The command line every twochains-perf shape shares (perf.cpp: smc_bw,
 * smc_lat; perf_rdmc.cpp: rdmc_bw): --json, --inproc, --members N and
 * --help, the getopt_long loop that hands every other option to the shape,
 * and the check of --members.
 */
#pragma once

#include <cstdio>
#include <cstdlib>
#include <getopt.h>

namespace tc::perf {

struct common_options {
    bool json    = false;
    bool inproc  = false;
    int  members = 0;      /* 0: the bootstrap's size (--inproc: the shape's default) */
};

/* The shared entries of a shape's longopts table. A shape lists them among
 * its own, in its own order: getopt_long names an ambiguous abbreviation's
 * possibilities in table order. */
inline constexpr option kOptJson    = {"json", no_argument, nullptr, 'j'};
inline constexpr option kOptInproc  = {"inproc", no_argument, nullptr, 'I'};
inline constexpr option kOptMembers = {"members", required_argument, nullptr, 'N'};
inline constexpr option kOptHelp    = {"help", no_argument, nullptr, 'h'};
inline constexpr option kOptEnd     = {nullptr, 0, nullptr, 0};

/* getopt_long over argv from its first argument: the shared options here
 * (-h/--help prints usage to stdout and exits 0), each other one to
 * shape_opt(c), which reads optarg and returns false on an error (after a
 * message) or an option it does not know (getopt_long's '?' and ':'
 * included). */
template<class ShapeOpt>
bool parse_options(int argc, char **argv, const char *shortopts, const option *longopts,
                   common_options &o, void (*usage)(FILE *), ShapeOpt &&shape_opt)
{
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, shortopts, longopts, nullptr)) != -1) {
        switch (c) {
        case 'j': o.json = true; break;
        case 'I': o.inproc = true; break;
        case 'N': o.members = std::atoi(optarg); break;
        case 'h': usage(stdout); std::exit(0);
        default:
            if (!shape_opt(c)) {
                return false;
            }
            break;
        }
    }
    return true;
}

/* Last of a shape's checks: --inproc without --members starts
 * inproc_members, and --members is 1..64. */
inline bool check_members(common_options &o, int inproc_members)
{
    if (o.inproc && o.members == 0) {
        o.members = inproc_members;
    }
    if (o.members < 0 || o.members > 64) {
        std::fprintf(stderr, "twochains-perf: --members must be 1..64\n");
        return false;
    }
    return true;
}

} // namespace tc::perf
