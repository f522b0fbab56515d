/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The public Two-Chains ifunc calls (twochains/ucp_ifunc.h) on top of the
 * package loader, the frame format and the receive path of mailboxes.
 *
 * Threads: single-threaded like the API it implements. The receive state
 * of ucp_poll_ifunc (code cache, statistics, per-buffer rings) is
 * process-wide and taken under a lock only when it is first created.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/compat/ucp_ifunc_int.h"
#include "ifunc/code/code_cache.h"
#include "ifunc/code/package.h"
#include "ifunc/config/ifunc_config.h"
#include "ifunc/portable/portable.h"
#include "ifunc/receiver/receiver.h"
#include "ifunc/rx/rx.h"
#include "ifunc/rx/slot.inl"
#include "ifunc/tx/frame_encode.h"
#include "ifunc/tx/message.h"
#include "ifunc/wire/frame.h"

#include <twochains/lane.h>
#include <twochains/ucp_ifunc.h>
#include <base/debug.h>
#include <ucs/sys/string.h>

#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TC_UCP_IFUNC_PREFIX  64u   /* hidden bytes in front of every frame */
#define TC_UCP_IFUNC_SETS    64u   /* buffers ucp_poll_ifunc tracks: sets of ... */
#define TC_UCP_IFUNC_WAYS    4u    /* ... this many, by address */
#define TC_UCP_IFUNC_CHECKED_LOCAL   0u       /* UCX_TC_IFUNC_CHECKED_MAX=auto, */
#define TC_UCP_IFUNC_CHECKED_NETWORK 65536u   /* see tc_ucp_ifunc_checked_max */

struct ucp_ifunc {
    tc_ifunc_pkg_h           pkg;
    const tc_ifunc_element_t *elem;
    ucp_context_h            context;
    tc_frame_desc_t    desc;
    tc_frame_type_t          type;     /* Injected, or Portable (UCX_TC_IFUNC_PUBLIC_CODE) */
    uint8_t                  *module;  /* Portable: this host's module, for every frame */
};

typedef struct {
    ucp_mem_h     memh;
    ucp_context_h context;
    uint32_t      payload_size;
    void          *inflight;     /* the last put's request, while UCX may still
                                    read the frame for it */
    ucp_ep_h      inflight_ep;   /* its endpoint */
} tc_ucp_ifunc_prefix_t;

_Static_assert(sizeof(tc_ucp_ifunc_prefix_t) <= TC_UCP_IFUNC_PREFIX, "prefix");

/* The configuration, on the send and poll paths without pthread_once */
static const tc_ifunc_config_t *tc_ucp_ifunc_config(void)
{
    static const tc_ifunc_config_t *config;

    if (ucs_unlikely(config == NULL)) {
        config = tc_ifunc_config_get();
    }
    return config;
}

/* ---- registration ---- */

static tc_ifunc_pkg_h tc_ucp_ifunc_try(const char *path, const char *name,
                                       const char *ifunc, uint32_t *id_p)
{
    tc_ifunc_pkg_h pkg;

    if (tc_ifunc_pkg_load(path, name, &pkg) != UCS_OK) {
        return NULL;
    }
    if (tc_ifunc_pkg_element(pkg, ifunc, id_p) == UCS_OK) {
        return pkg;
    }
    tc_ifunc_pkg_unload(pkg);
    return NULL;
}

/* A path entry: a manifest, a package directory, or a prefix whose
 * share/twochains/ holds packages */
static tc_ifunc_pkg_h tc_ucp_ifunc_search(const char *entry, const char *ifunc,
                                          uint32_t *id_p)
{
    char dir[PATH_MAX + 32], probe[PATH_MAX + 32];
    tc_ifunc_pkg_h pkg = NULL;
    struct dirent *de;
    FILE *f;
    DIR *d;

    if (snprintf(probe, sizeof(probe), "%s/" TC_PKG_MANIFEST_NAME, entry) >=
        (int)sizeof(probe)) {
        return NULL;
    }
    f = fopen(probe, "r");
    if ((f != NULL) || (strstr(entry, TC_PKG_MANIFEST_NAME) != NULL)) {
        if (f != NULL) {
            fclose(f);
        }
        return tc_ucp_ifunc_try(entry, NULL, ifunc, id_p);
    }
    if (snprintf(dir, sizeof(dir), "%s/share/twochains", entry) >= (int)sizeof(dir)) {
        return NULL;
    }
    d = opendir(dir);
    if (d == NULL) {
        return NULL;
    }
    while ((pkg == NULL) && ((de = readdir(d)) != NULL)) {
        if (de->d_name[0] == '.') {
            continue;
        }
        if (snprintf(probe, sizeof(probe), "%s/%s/" TC_PKG_MANIFEST_NAME, dir,
                     de->d_name) >= (int)sizeof(probe)) {
            continue;
        }
        f = fopen(probe, "r");
        if (f == NULL) {
            continue;
        }
        fclose(f);
        pkg = tc_ucp_ifunc_try(entry, de->d_name, ifunc, id_p);
    }
    closedir(d);
    return pkg;
}

/* The search path: UCX_IFUNC_LIB_DIR, then UCX_TC_IFUNC_PKG_PATH */
static char *tc_ucp_ifunc_search_path(void)
{
    const char *lib_dir = tc_ifunc_lib_dir();
    const char *pkg_path = tc_ifunc_config_get()->pkg_path;
    size_t len;
    char *path;

    lib_dir  = (lib_dir != NULL) ? lib_dir : "";
    pkg_path = (pkg_path != NULL) ? pkg_path : "";
    len      = strlen(lib_dir) + strlen(pkg_path) + 2;
    path     = malloc(len);
    if (path != NULL) {
        snprintf(path, len, "%s:%s", lib_dir, pkg_path);
    }
    return path;
}

/* Registration on arrival: the package a frame names, from the search
 * path. The name passed tc_frame_name_ok (a C identifier that hashes to
 * the frame's pkg_id), so it joins a path of our own making and nothing
 * else from the wire does. The reference lasts as long as the process, as
 * a registration by the public API lasts as long as its context. */
static tc_ifunc_pkg_h tc_ucp_ifunc_autoload(const tc_frame_hdr_t *hdr)
{
    char probe[PATH_MAX + 64], *path, *entry, *save = NULL;
    tc_ifunc_pkg_h pkg = NULL;

    path = tc_ucp_ifunc_search_path();
    if (path == NULL) {
        return NULL;
    }
    for (entry = strtok_r(path, ":", &save); (entry != NULL) && (pkg == NULL);
         entry = strtok_r(NULL, ":", &save)) {
        if ((snprintf(probe, sizeof(probe), "%s/share/twochains/%s/" TC_PKG_MANIFEST_NAME,
                      entry, hdr->pkg_name) >= (int)sizeof(probe)) ||
            (access(probe, R_OK) != 0) ||
            (tc_ifunc_pkg_load(entry, hdr->pkg_name, &pkg) != UCS_OK)) {
            pkg = NULL;
            continue;
        }
        if (pkg->id != hdr->pkg_id) {
            tc_ifunc_pkg_unload(pkg);
            pkg = NULL;
        }
    }
    free(path);
    if (pkg != NULL) {
        ucs_info("ifunc: registered package '%s' from %s on the arrival of its first "
                 "frame", pkg->name, pkg->manifest);
    }
    return pkg;
}

/* The module of this host's architecture: the public API knows nothing of
 * its peers, so a Portable frame carries the sender's own */
static ucs_status_t tc_ucp_ifunc_load_module(ucp_ifunc_h ih)
{
    const tc_ifunc_portable_bc_t *bc = tc_ifunc_elem_portable(ih->elem,
                                                              tc_portable_host_triple());
    char detail[192];
    size_t size;

    if (bc == NULL) {
        ucs_error("ifunc %s: UCX_TC_IFUNC_PUBLIC_CODE=portable, but its package has no "
                  "module for %s (twochains-pkg ifunc --portable)", ih->elem->name,
                  tc_portable_host_triple());
        return UCS_ERR_UNSUPPORTED;
    }
    ih->module = tc_portable_read_module(bc->path, bc->bc_hash, &size, detail,
                                         sizeof(detail));
    if (ih->module == NULL) {
        ucs_error("ifunc %s: %s", ih->elem->name, detail);
        return UCS_ERR_IO_ERROR;
    }
    ih->type = TC_FRAME_PORTABLE;
    tc_frame_prepare_portable(NULL, ih->pkg, ih->elem, ih->module, (uint32_t)size,
                              (uint32_t)size, bc->bc_hash, &ih->desc);
    return UCS_OK;
}

/* Lay a frame of @a ih out, its code copied into @a frame when not NULL */
static void tc_ucp_ifunc_layout(ucp_ifunc_h ih, uint8_t *frame)
{
    if (ih->type == TC_FRAME_PORTABLE) {
        tc_frame_prepare_portable(frame, ih->pkg, ih->elem, ih->module, ih->desc.code_size,
                                  ih->desc.code_size, ih->desc.code_hash, &ih->desc);
    } else {
        tc_frame_prepare(frame, ih->pkg, ih->elem, 1, &ih->desc);
    }
}

ucs_status_t ucp_register_ifunc(ucp_context_h context, const char *ifunc_name,
                                ucp_ifunc_h *ifunc_p)
{
    char *path = NULL, *entry, *save = NULL;
    ucs_status_t status;
    tc_ifunc_pkg_h pkg;
    ucp_ifunc_h ih;
    uint32_t id;

    pkg = tc_ifunc_pkg_find_element(ifunc_name, &id);
    if (pkg != NULL) {
        tc_ifunc_pkg_ref(pkg);
    } else if ((path = tc_ucp_ifunc_search_path()) != NULL) {
        for (entry = strtok_r(path, ":", &save); (entry != NULL) && (pkg == NULL);
             entry = strtok_r(NULL, ":", &save)) {
            pkg = tc_ucp_ifunc_search(entry, ifunc_name, &id);
        }
        free(path);
    }
    if (pkg == NULL) {
        ucs_error("ifunc '%s' is in no loaded package, nor in UCX_IFUNC_LIB_DIR or "
                  "UCX_TC_IFUNC_PKG_PATH", ifunc_name);
        return UCS_ERR_NO_ELEM;
    }

    ih = calloc(1, sizeof(*ih));
    if (ih == NULL) {
        tc_ifunc_pkg_unload(pkg);
        return UCS_ERR_NO_MEMORY;
    }
    ih->pkg     = pkg;
    ih->elem    = tc_ifunc_pkg_elem(pkg, id);
    ih->context = context;
    ih->type    = TC_FRAME_INJECTED;
    if (tc_ucp_ifunc_config()->public_code == TC_IFUNC_PUBLIC_CODE_PORTABLE) {
        status = tc_ucp_ifunc_load_module(ih);
        if (status != UCS_OK) {
            tc_ifunc_pkg_unload(pkg);
            free(ih);
            return status;
        }
    }
    tc_ucp_ifunc_layout(ih, NULL);
    *ifunc_p = ih;
    return UCS_OK;
}

void ucp_deregister_ifunc(ucp_context_h context, ucp_ifunc_h ifunc_h)
{
    if (ifunc_h == NULL) {
        return;
    }
    tc_ifunc_pkg_unload(ifunc_h->pkg);
    free(ifunc_h->module);
    free(ifunc_h);
}

/* ---- messages ---- */

static tc_ucp_ifunc_prefix_t *tc_ucp_ifunc_prefix(const ucp_ifunc_msg_t *msg)
{
    return (tc_ucp_ifunc_prefix_t*)((uint8_t*)msg->frame - TC_UCP_IFUNC_PREFIX);
}

ucs_status_t ucp_ifunc_msg_create(ucp_ifunc_h ifunc_h, void *source_args,
                                  size_t source_args_size, ucp_ifunc_msg_t *msg_p)
{
    const tc_jam_element_t *local = ifunc_h->elem->local;
    ucp_mem_map_params_t mp = {0};
    tc_ucp_ifunc_prefix_t *prefix;
    size_t cap, size, capacity;
    ucp_mem_attr_t attr;
    ucs_status_t status;
    uint8_t *frame;
    ucp_mem_h memh;
    int ret;

    cap = (local->payload_get_max_size != NULL) ?
          local->payload_get_max_size(source_args, source_args_size) :
          source_args_size;
    if (cap > UINT32_MAX / 2) {
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    capacity = tc_frame_size(&ifunc_h->desc, (uint32_t)cap);

    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                    UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    mp.length     = TC_UCP_IFUNC_PREFIX + capacity;
    mp.flags      = UCP_MEM_MAP_ALLOCATE;
    status = ucp_mem_map(ifunc_h->context, &mp, &memh);
    if (status != UCS_OK) {
        ucs_error("ifunc: ucp_mem_map of %zu bytes failed: %s", (size_t)mp.length,
                  ucs_status_string(status));
        return status;
    }
    attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
    status = ucp_mem_query(memh, &attr);
    if (status != UCS_OK) {
        goto err_unmap;
    }
    memset(attr.address, 0, mp.length);
    prefix          = attr.address;
    prefix->memh    = memh;
    prefix->context = ifunc_h->context;
    frame           = (uint8_t*)attr.address + TC_UCP_IFUNC_PREFIX;
    tc_ucp_ifunc_layout(ifunc_h, frame);

    size = cap;
    if (local->payload_init != NULL) {
        ret = local->payload_init(source_args, source_args_size,
                                  frame + ifunc_h->desc.payload_offset, &size);
        if ((ret != 0) || (size > cap)) {
            ucs_warn("ifunc %s: payload_init failed with %d", ifunc_h->elem->name, ret);
            status = UCS_ERR_CANCELED;
            goto err_unmap;
        }
    } else if (source_args_size != 0) {
        memcpy(frame + ifunc_h->desc.payload_offset, source_args, source_args_size);
    }
    prefix->payload_size = (uint32_t)size;

    msg_p->ifunc_h    = ifunc_h;
    msg_p->frame      = frame;
    msg_p->frame_size = tc_frame_stamp(frame, &ifunc_h->desc, ifunc_h->type, 0, 0,
                                       TC_FRAME_SENDER_NONE, (uint32_t)size);
    /* the name, so that a receiver that has not registered it can */
    if (strlen(ifunc_h->pkg->name) < TC_FRAME_PKG_NAME_MAX) {
        strcpy(((tc_frame_hdr_t*)frame)->pkg_name, ifunc_h->pkg->name);
        ((tc_frame_hdr_t*)frame)->flags |= TC_FRAME_F_NAMED;
    }
    return UCS_OK;

err_unmap:
    ucp_mem_unmap(ifunc_h->context, memh);
    return status;
}

ucs_status_t ucp_ifunc_msg_get_payload_ptr(ucp_ifunc_msg_t *msg, void **payload,
                                           size_t *payload_size)
{
    if ((msg == NULL) || (msg->frame == NULL)) {
        return UCS_ERR_INVALID_PARAM;
    }
    if (payload != NULL) {
        *payload = (uint8_t*)msg->frame + msg->ifunc_h->desc.payload_offset;
    }
    if (payload_size != NULL) {
        *payload_size = tc_ucp_ifunc_prefix(msg)->payload_size;
    }
    return UCS_OK;
}

void ucp_ifunc_msg_free(ucp_ifunc_msg_t msg)
{
    tc_ucp_ifunc_prefix_t *prefix;

    if (msg.frame == NULL) {
        return;
    }
    tc_ucp_ifunc_settle(&msg);
    prefix = tc_ucp_ifunc_prefix(&msg);
    ucp_mem_unmap(prefix->context, prefix->memh);
}

/* Frames into caller-managed buffers have no ring: each send takes the next
 * value of a per-thread counter as its seq, starting at a random value, so
 * that consecutive frames into one buffer never share a signal (see
 * frame.h). Per thread and without atomics: a locked add is a full barrier,
 * which would wait for the previous frame's stores into the peer's memory
 * (half the sender's time in ucp_ifunc_bw, by perf). */
static uint32_t tc_ucp_ifunc_send_seq(void)
{
    static __thread uint32_t counter;
    static __thread int seeded;
    struct timespec ts;
    uint64_t id;

    if (ucs_unlikely(!seeded)) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        id      = (uint64_t)getpid() ^ ((uint64_t)(uintptr_t)&counter << 16);
        counter = (uint32_t)tc_fnv1a64_update(tc_fnv1a64(&ts, sizeof(ts)), &id, sizeof(id));
        seeded  = 1;
    }
    return counter++;
}

/* Put [offset, offset + length) of the frame. UCX has either consumed the
 * source when this returns (NULL request) or reads it until the request
 * completes: the message keeps that request until tc_ucp_ifunc_settle. */
static ucs_status_t tc_ucp_ifunc_put(ucp_ep_h ep, const ucp_ifunc_msg_t *msg,
                                     size_t offset, size_t length,
                                     uint64_t remote_addr, ucp_rkey_h rkey)
{
    tc_ucp_ifunc_prefix_t *prefix = tc_ucp_ifunc_prefix(msg);
    ucp_request_param_t param;
    ucs_status_ptr_t req;

    param.op_attr_mask = UCP_OP_ATTR_FIELD_MEMH;
    param.memh         = prefix->memh;
    req = ucp_put_nbx(ep, (uint8_t*)msg->frame + offset, length, remote_addr + offset,
                      rkey, &param);
    if (UCS_PTR_IS_ERR(req)) {
        return UCS_PTR_STATUS(req);
    }
    prefix->inflight    = req;
    prefix->inflight_ep = ep;
    return UCS_OK;
}

/* The largest frame sent checked to @a ep. UCX_TC_IFUNC_CHECKED_MAX=auto:
 * where the endpoint's puts go over shared memory they are complete when
 * ucp_put_nbx returns, so the fence's flush waits for nothing, and the
 * fenced frame was faster (ucx_perftest over posix, 4 B: p50 0.477 against
 * 0.546 us checked, the same rate; from 1 KiB the receiver's read of a
 * checked frame whole costs more than that): every frame fenced. Over a
 * network the flush is a round trip (tcp: checked 3.5x faster at 4 B,
 * 1.7x at 16 KiB). The lane is read from UCP once per endpoint, cached by
 * address (a stale entry picks the slower form, never a wrong one). */
static size_t tc_ucp_ifunc_checked_max(ucp_ep_h ep)
{
    static const char *local[] = {"posix/", "sysv/", "cma/", "xpmem/", "knem/", "self/"};
    static struct {
        ucp_ep_h ep;
        size_t   max;
    } cache[64];
    size_t max = tc_ucp_ifunc_config()->checked_max;
    unsigned slot, i;
    char lane[64];

    if (max != UCS_MEMUNITS_AUTO) {
        return max;
    }
    slot = (unsigned)((((uintptr_t)ep >> 4) * 0x9e3779b97f4a7c15ull) >> 58);
    if (cache[slot].ep == ep) {
        return cache[slot].max;
    }
    max = TC_UCP_IFUNC_CHECKED_NETWORK;
    if (tc_put_lane_describe(ep, lane, sizeof(lane)) == UCS_OK) {
        for (i = 0; i < sizeof(local) / sizeof(local[0]); ++i) {
            if (strncmp(lane, local[i], strlen(local[i])) == 0) {
                max = TC_UCP_IFUNC_CHECKED_LOCAL;
            }
        }
    }
    cache[slot].ep  = ep;
    cache[slot].max = max;
    return max;
}

/* Stamp the next send of @a msg to @a ep into its frame (which no put may
 * still be reading: tc_ucp_ifunc_settle first) in the form the
 * configuration says. */
tc_ucp_ifunc_form_t tc_ucp_ifunc_stamp(ucp_ifunc_msg_t *msg, ucp_ep_h ep)
{
    const tc_ifunc_config_t *config = tc_ucp_ifunc_config();
    tc_frame_hdr_t *hdr             = msg->frame;
    uint8_t *trailer                = (uint8_t*)msg->frame + msg->frame_size - 1;
    uint64_t check;
    uint32_t seq;

    if ((config->signal == TC_IFUNC_SIGNAL_CHECK) &&
        (msg->frame_size <= tc_ucp_ifunc_checked_max(ep))) {
        hdr->flags |= TC_FRAME_F_CHECKED;
        do {   /* a check of 0 would mean "incomplete" to the receiver */
            seq           = tc_ucp_ifunc_send_seq();
            hdr->seq      = seq;
            hdr->signal   = TC_FRAME_SIGNAL_CHECKED(seq);
            *trailer      = TC_FRAME_TRAILER(seq);
            hdr->checksum = 0;
            check         = tc_frame_checked_check(hdr, msg->frame, msg->frame_size);
        } while (check == 0);
        hdr->checksum = check;
        return TC_UCP_IFUNC_FORM_CHECKED;
    }
    hdr->flags   &= ~(uint32_t)TC_FRAME_F_CHECKED;
    hdr->checksum = 0;
    seq           = tc_ucp_ifunc_send_seq();
    hdr->seq      = seq;
    *trailer      = TC_FRAME_TRAILER(seq);
    hdr->signal   = TC_FRAME_SIGNAL(seq);
    return (config->signal == TC_IFUNC_SIGNAL_TRAILER) ? TC_UCP_IFUNC_FORM_TRAILER :
                                                         TC_UCP_IFUNC_FORM_FENCED;
}

void tc_ucp_ifunc_settle(ucp_ifunc_msg_t *msg)
{
    tc_ucp_ifunc_prefix_t *prefix = tc_ucp_ifunc_prefix(msg);
    void *req                     = prefix->inflight;

    if (req == NULL) {
        return;
    }
    /* still reading the frame: a flush of its endpoint completes it (and
     * progresses the worker, which nothing here else can name) */
    if (ucp_request_check_status(req) == UCS_INPROGRESS) {
        (void)ucp_ep_flush(prefix->inflight_ep);
    }
    ucp_request_free(req);
    prefix->inflight = NULL;
}

/*
 * One put, and return: a checked frame (the default, up to
 * UCX_TC_IFUNC_CHECKED_MAX) or a trailer frame is whole in it. Each send
 * stamps the frame with its own seq, so a message may be re-sent at once,
 * to the same buffer or another: if UCX still reads the frame for the
 * previous put (a zero-copy put), the new stamp waits for that put first.
 * A fenced frame (signal fence, or larger than UCX_TC_IFUNC_CHECKED_MAX)
 * puts its body, flushes the endpoint (no worker to fence here), then puts
 * its signal.
 */
ucs_status_t ucp_ifunc_send_nbix(ucp_ep_h ep, ucp_ifunc_msg_t msg,
                                 uint64_t remote_addr, ucp_rkey_h rkey)
{
    ucs_status_t status;

    tc_ucp_ifunc_settle(&msg);
    if (tc_ucp_ifunc_stamp(&msg, ep) != TC_UCP_IFUNC_FORM_FENCED) {
        return tc_ucp_ifunc_put(ep, &msg, 0, msg.frame_size, remote_addr, rkey);
    }
    status = tc_ucp_ifunc_put(ep, &msg, 8, msg.frame_size - 8, remote_addr, rkey);
    if (status == UCS_OK) {
        status = ucp_ep_flush(ep);
    }
    tc_ucp_ifunc_settle(&msg);
    if (status != UCS_OK) {
        return status;
    }
    return tc_ucp_ifunc_put(ep, &msg, 0, 8, remote_addr, rkey);
}

/* ---- receive ---- */

typedef struct {
    void            *buffer;
    tc_ifunc_ring_t ring;
} tc_ucp_ifunc_buffer_t;

static pthread_mutex_t       tc_ucp_ifunc_lock = PTHREAD_MUTEX_INITIALIZER;
static tc_ifunc_rx_t         *tc_ucp_ifunc_rx;
static tc_ifunc_stats_t      tc_ucp_ifunc_stats;
static tc_ucp_ifunc_buffer_t tc_ucp_ifunc_buffers[TC_UCP_IFUNC_SETS][TC_UCP_IFUNC_WAYS];
static unsigned              tc_ucp_ifunc_next[TC_UCP_IFUNC_SETS];
static int                   tc_ucp_ifunc_refused;

const tc_ifunc_stats_t *tc_ucp_ifunc_stats_get(void)
{
    return &tc_ucp_ifunc_stats;
}

static tc_ifunc_rx_t *tc_ucp_ifunc_receiver(void)
{
    const tc_ifunc_config_t *config;
    tc_ifunc_rx_t *rx = __atomic_load_n(&tc_ucp_ifunc_rx, __ATOMIC_ACQUIRE);

    if (ucs_likely(rx != NULL)) {
        return rx;
    }
    pthread_mutex_lock(&tc_ucp_ifunc_lock);
    if ((tc_ucp_ifunc_rx == NULL) && !tc_ucp_ifunc_refused) {
        config = tc_ifunc_config_get();
        /* a refused policy is said once; every poll then fails */
        tc_ucp_ifunc_refused = (tc_ifunc_policy_check(config->security,
                                                      config->placement) != UCS_OK);
        rx = tc_ucp_ifunc_refused ? NULL : calloc(1, sizeof(*rx));
        if (rx != NULL) {
            rx->security        = config->security;
            rx->placement       = config->placement;
            rx->trailer_timeout = config->trailer_timeout;
            rx->rank            = -1;
            rx->stats           = &tc_ucp_ifunc_stats;
            rx->autoload        = tc_ucp_ifunc_autoload;
            rx->portable_wait   = 1;
            tc_code_cache_init(&rx->cache, config->cache_entries);
            __atomic_store_n(&tc_ucp_ifunc_rx, rx, __ATOMIC_RELEASE);
        }
    }
    rx = tc_ucp_ifunc_rx;
    pthread_mutex_unlock(&tc_ucp_ifunc_lock);
    return rx;
}

/* The receive state of a buffer (pending frame, last signal, links): kept
 * for the last few buffers of each set, chosen by address, so that looking
 * it up is a few compares however many buffers a program polls */
static tc_ifunc_ring_t *tc_ucp_ifunc_ring(void *buffer)
{
    unsigned set = (unsigned)((((uintptr_t)buffer >> 6) * 0x9e3779b97f4a7c15ull) >> 58);
    tc_ucp_ifunc_buffer_t *ways = tc_ucp_ifunc_buffers[set], *b;
    unsigned i;

    TC_STATIC_ASSERT(TC_UCP_IFUNC_SETS == 64, "six bits of set index");
    for (i = 0; i < TC_UCP_IFUNC_WAYS; ++i) {
        if (ways[i].buffer == buffer) {
            return &ways[i].ring;
        }
    }
    /* a new buffer: recycle the set's next entry in turn, passing over
     * those with a frame still arriving (its trailer timeout runs there)
     * unless all have one */
    for (i = 0; i < TC_UCP_IFUNC_WAYS; ++i) {
        b = &ways[tc_ucp_ifunc_next[set]];
        tc_ucp_ifunc_next[set] = (tc_ucp_ifunc_next[set] + 1) % TC_UCP_IFUNC_WAYS;
        if (b->ring.pending_since == 0) {
            break;
        }
    }
    if (b->buffer != NULL) {
        tc_ifunc_ring_cleanup(&b->ring);
    }
    b->buffer = buffer;
    tc_ifunc_ring_init(&b->ring, buffer, -1, 0);
    b->ring.trailer_mode = (tc_ifunc_config_get()->signal == TC_IFUNC_SIGNAL_TRAILER);
    return &b->ring;
}

/* Nothing arrived: every UCX_TC_IFUNC_POLL_PROGRESS-th time, progress the
 * context's worker, so that over transports that emulate puts (the target
 * writes them when it progresses) a program that only polls still
 * receives. Only a context with one worker: which of several the caller
 * owns is not ours to guess. */
static ucs_status_t tc_ucp_ifunc_idle(ucp_context_h context)
{
    static unsigned idle;
    unsigned every = tc_ucp_ifunc_config()->poll_progress;
    ucp_worker_h worker;

    if ((every != 0) && (++idle >= every)) {
        idle   = 0;
        worker = tc_context_only_worker(context);
        if (worker != NULL) {
            ucp_worker_progress(worker);
        }
    }
    return UCS_ERR_NO_MESSAGE;
}

ucs_status_t ucp_poll_ifunc(ucp_context_h context, void *buffer,
                            size_t buffer_size, void *target_args)
{
    tc_ifunc_rx_t *rx = tc_ucp_ifunc_receiver();
    tc_ifunc_slot_result_t result;
    uint32_t magic;
    uint64_t sig;

    if ((rx == NULL) || (buffer == NULL)) {
        return UCS_ERR_INVALID_PARAM;
    }
    /* no frame magic, no message (a buffer may hold anything before its
     * first frame): no ring is looked up, nothing is written */
    sig   = __atomic_load_n(&((tc_frame_hdr_t*)buffer)->signal, __ATOMIC_ACQUIRE);
    magic = TC_FRAME_SIGNAL_MAGIC(sig);
    if ((magic != TC_FRAME_MAGIC_CHECKED) && (magic != TC_FRAME_MAGIC)) {
        return tc_ucp_ifunc_idle(context);
    }
    /* a late second store of a frame run here is known without the
     * buffer's state, so that such buffers do not evict the state of
     * buffers with a frame still arriving (its trailer timeout) */
    if ((magic == TC_FRAME_MAGIC_CHECKED) &&
        tc_checked_recently_run(sig, __atomic_load_n(&((tc_frame_hdr_t*)buffer)->checksum,
                                                     __ATOMIC_RELAXED))) {
        ++tc_ucp_ifunc_stats.stale_signals;
        return tc_ucp_ifunc_idle(context);
    }
    rx->target_args = target_args;
    result = tc_ifunc_slot_process(rx, tc_ucp_ifunc_ring(buffer), buffer,
                                   (buffer_size > UINT32_MAX) ? UINT32_MAX :
                                                                (uint32_t)buffer_size,
                                   TC_FRAME_SEQ_ANY);
    switch (result) {
    case TC_IFUNC_SLOT_RUN:
        return UCS_OK;
    case TC_IFUNC_SLOT_REJECTED:
        return UCS_ERR_CANCELED;
    default:
        return tc_ucp_ifunc_idle(context);   /* arriving, or a late store */
    }
}
