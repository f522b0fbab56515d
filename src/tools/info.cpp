/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * twochains-info: what `ucx_info` is to UCX. -c lists the UCX_TC_* variables
 * (UCX's own `ucx_info -c` only lists tables already loaded in its process),
 * -v prints our version and the UCX we were built with and run against, -l
 * the write lane that UCX_TLS and UCX_TC_WRITE_LANE give (between two workers
 * of this process, which UCX connects the way it connects two processes).
 */
#include <twochains/lane.h>
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
                 "  -l   print the write lane UCX_TLS and UCX_TC_WRITE_LANE give\n"
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

/* One context, two workers, an endpoint from one to the other: the lane
 * writes would take between two processes over the same transports. */
int print_write_lane()
{
    ucp_config_t *config;
    if (ucp_config_read(nullptr, nullptr, &config) != UCS_OK) {
        return 1;
    }
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features   = UCP_FEATURE_RMA | UCP_FEATURE_AM;
    ucp_context_h context;
    ucs_status_t status = ucp_init(&params, config, &context);
    ucp_config_release(config);
    if (status != UCS_OK) {
        std::fprintf(stderr, "twochains-info: ucp_init: %s\n", ucs_status_string(status));
        return 1;
    }
    ucp_worker_params_t wparams{};
    ucp_worker_h from = nullptr, to = nullptr;
    ucp_address_t *address = nullptr;
    size_t length          = 0;
    ucp_ep_h ep            = nullptr;
    tc_write_lane_h lane   = nullptr;
    status = ucp_worker_create(context, &wparams, &from);
    if (status == UCS_OK) {
        status = ucp_worker_create(context, &wparams, &to);
    }
    if (status == UCS_OK) {
        status = ucp_worker_get_address(to, &address, &length);
    }
    if (status == UCS_OK) {
        ucp_ep_params_t ep_params{};
        ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
        ep_params.address    = address;
        status               = ucp_ep_create(from, &ep_params, &ep);
        ucp_worker_release_address(to, address);
    }
    if (status == UCS_OK) {
        status = tc_write_lane_create(from, &lane);
    }
    if (status == UCS_OK) {
        char name[96];
        tc_write_lane_describe(lane, ep, name, sizeof(name));
        std::printf("# write lane: %s (UCX_TC_WRITE_LANE=%s)\n", name,
                    tc_write_lane_mode_names[tc_write_lane_mode(lane)]);
    } else {
        std::fprintf(stderr, "twochains-info: no endpoint to look at: %s\n",
                     ucs_status_string(status));
    }
    tc_write_lane_destroy(lane);
    if (ep != nullptr) {
        ucp_request_param_t close{};
        ucs_status_ptr_t req = ucp_ep_close_nbx(ep, &close);
        while (UCS_PTR_IS_PTR(req) && ucp_request_check_status(req) == UCS_INPROGRESS) {
            ucp_worker_progress(from);
            ucp_worker_progress(to);
        }
        if (UCS_PTR_IS_PTR(req)) {
            ucp_request_free(req);
        }
    }
    if (to != nullptr) {
        ucp_worker_destroy(to);
    }
    if (from != nullptr) {
        ucp_worker_destroy(from);
    }
    ucp_cleanup(context);
    return status == UCS_OK ? 0 : 1;
}

} // namespace

int main(int argc, char **argv)
{
    bool config = false, doc = false, version = false, lane = false;
    int opt;

    while ((opt = getopt(argc, argv, "cfvlh")) != -1) {
        switch (opt) {
        case 'l': lane = true; break;
        case 'c': config = true; break;
        case 'f': doc = true; break;
        case 'v': version = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 1;
        }
    }
    if (!config && !version && !lane) {
        usage(stderr);
        return 1;
    }
    if (version) {
        print_version();
    }
    if (config) {
        tc_config_print(stdout, doc);  /* every UCX_TC_* table loaded, ifunc and RDMC too */
    }
    return lane ? print_write_lane() : 0;
}
