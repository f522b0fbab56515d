/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * twochains-info: what `ucx_info` is to UCX. -c lists the UCX_TC_* variables
 * (UCX's own `ucx_info -c` only lists tables already loaded in its process),
 * -v prints our version and the UCX we were built with and run against.
 */
#include <twochains/twochains.h>

#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace {

void usage(FILE *out)
{
    std::fprintf(out,
                 "Usage: twochains-info [-c] [-f] [-v] [-h]\n"
                 "  -c   print the UCX_TC_* configuration with current values\n"
                 "  -f   with -c: add each variable's documentation\n"
                 "  -v   print the version and the UCX it was built with\n"
                 "  -h   this help\n");
}

void print_version()
{
    unsigned major, minor, release;
    ucp_get_version(&major, &minor, &release);
    std::printf("# Two-Chains version %s\n", TC_VERSION_STRING);
    std::printf("# Built with UCX %s (%s)\n", TC_UCX_BUILT_VERSION, TC_UCX_BUILT_PREFIX);
    std::printf("# Running with UCX %u.%u.%u (%s)\n", major, minor, release,
                ucp_get_version_string());
}

} // namespace

int main(int argc, char **argv)
{
    bool config = false, doc = false, version = false;
    int opt;

    while ((opt = getopt(argc, argv, "cfvh")) != -1) {
        switch (opt) {
        case 'c': config = true; break;
        case 'f': doc = true; break;
        case 'v': version = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 1;
        }
    }
    if (!config && !version) {
        usage(stderr);
        return 1;
    }
    if (version) {
        print_version();
    }
    if (config) {
        tc_config_print(stdout, doc);  /* every UCX_TC_* table loaded, ifunc and RDMC too */
    }
    return 0;
}
