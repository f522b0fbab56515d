/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The put lane of an endpoint, read from ucp_ep_print_info(): UCP has no
 * query for it. The format is UCP's, e.g.
 *
 *     lane[0]:  2:posix/memory.0 md[1]  -> rma_bw#0 am am_bw#0
 *     ...
 *     put[0]:  0..<egr/short>..8k..<egr/zcopy>..(inf)
 *
 * Threads: any.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include <twochains/lane.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ucs_status_t tc_put_lane_parse(const char *ep_info, char *out, size_t max)
{
    const char *put = strstr(ep_info, "put[");
    const char *lane, *name;
    char key[32];
    size_t len;

    snprintf(out, max, "unknown");
    /* no RMA lane: UCP emulates puts with active messages on lane 0 */
    snprintf(key, sizeof(key), "lane[%d]:", (put != NULL) ? atoi(put + 4) : 0);
    lane = strstr(ep_info, key);
    name = (lane != NULL) ? strchr(lane + strlen(key), ':') : NULL;
    if (name == NULL) {
        return UCS_ERR_NO_ELEM;
    }
    ++name;
    len = strcspn(name, " \n");
    snprintf(out, max, "%.*s%s", (int)len, name,
             (put == NULL) ? " (put emulated over am)" : "");
    return UCS_OK;
}

ucs_status_t tc_put_lane_describe(ucp_ep_h ep, char *out, size_t max)
{
    char *info      = NULL;
    size_t info_len = 0;
    ucs_status_t status;
    FILE *stream;

    snprintf(out, max, "unknown");
    stream = open_memstream(&info, &info_len);
    if (stream == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    ucp_ep_print_info(ep, stream);
    fclose(stream);
    status = tc_put_lane_parse(info, out, max);
    free(info);
    return status;
}
