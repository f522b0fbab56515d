/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * PMIx bootstrap, for jobs started by a PMIx launcher (Open MPI's mpirun,
 * prterun, srun --mpi=pmix). Rank and size come from the PMIx server;
 * allgatherv is PMIx_Put(PMIX_GLOBAL, "tc.ag.<seq>") + PMIx_Commit +
 * PMIx_Fence(every rank of the job, PMIX_COLLECT_DATA) + PMIx_Get of every
 * rank's key. Each value is a byte object: a 16-byte big-endian header
 * {magic, seq, len} and the contribution, so a short or stale value is
 * recognised and a zero-length contribution is still a value.
 *
 * Time bounds: every fence and get carries PMIX_TIMEOUT (whole seconds, the
 * time left until the deadline of the collective), but whether the host
 * server honours it on a fence is up to the host (Open MPI 4.1's does not
 * document it). So the fence and the gets are issued non-blocking and waited
 * for here against the deadline of the collective (UCX_TC_BOOTSTRAP_TIMEOUT).
 * An abandoned request stays allocated until PMIx calls back (it holds the
 * key and info the get still points to). PMIx_Put and PMIx_Commit do not
 * wait for peers. PMIx_Init has no timeout in PMIx 4.2: it returns at once
 * when there is no server, but waits for a server that accepts the
 * connection and never answers. PMIx_Finalize bounds its own wait (2 s in
 * PMIx 4.2).
 *
 * Threads: a handle is used by one thread at a time; PMIx callbacks run in
 * the PMIx progress thread and touch only their request, under its lock.
 * Invariants: once a fence or get fails or times out the members are out of
 * step, so the handle is failed for good; every key is used once in a
 * process (PMIx caches remote values, so a reused key could return an old
 * round): one PMIx handle lives at a time, and the next one carries on the
 * sequence where the last one stopped (every rank makes the same calls).
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include <bootstrap/core/bootstrap_int.h>

#include <base/debug.h>
#include <twochains/config.h>

#include <ucs/debug/log_def.h>
#include <pmix.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TC_BOOT_PMIX_MAGIC       0x54435058u  /* "TCPX" */
#define TC_BOOT_PMIX_HDR_LEN     16
#define TC_BOOT_PMIX_KEY_PREFIX  "tc.ag."

typedef struct tc_boot_pmix {
    pmix_proc_t myproc;
    pmix_proc_t job;         /* every rank of our namespace */
    int         size;
    double      timeout_s;   /* UCX_TC_BOOTSTRAP_TIMEOUT, per step */
    uint32_t    seq;         /* of the last collective */
    int         failed;      /* a fence or get failed: out of step */
} tc_boot_pmix_t;

/* One live handle per process; the sequence number of the last collective
 * of the previous ones. */
static pthread_mutex_t tc_boot_pmix_global_lock = PTHREAD_MUTEX_INITIALIZER;
static int             tc_boot_pmix_live        = 0;
static uint32_t        tc_boot_pmix_last_seq    = 0;

/*
 * One non-blocking PMIx operation. Two references while it is outstanding:
 * the waiter's and PMIx's (dropped by the callback). A waiter that gives up
 * drops its own and leaves the rest to the callback.
 */
typedef struct tc_boot_pmix_req {
    pthread_mutex_t  lock;
    pthread_cond_t   cond;
    int              refs;
    int              done;
    pmix_status_t    status;
    pmix_data_type_t type;      /* of the value a get returned */
    uint64_t         number;    /* an unsigned integer value */
    void             *bytes;    /* a byte object value, malloc()ed copy */
    size_t           nbytes;
    char             key[PMIX_MAX_KEYLEN + 1];  /* a get points to it */
    pmix_info_t      info[2];                   /* a get points to it */
    size_t           ninfo;
} tc_boot_pmix_req_t;

static double tc_boot_pmix_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ((double)ts.tv_nsec * 1e-9);
}

/* PMIX_TIMEOUT is whole seconds and 0 means forever: round up, at least 1. */
static int tc_boot_pmix_timeout_arg(double deadline)
{
    double left = deadline - tc_boot_pmix_now();

    if (left <= 1.0) {
        return 1;
    }
    if (left >= (double)INT_MAX) {
        return INT_MAX;
    }
    return (int)left + (((double)(int)left < left) ? 1 : 0);
}

static ucs_status_t tc_boot_pmix_status(pmix_status_t rc)
{
    switch (rc) {
    case PMIX_SUCCESS:
        return UCS_OK;
    case PMIX_ERR_TIMEOUT:
        return UCS_ERR_TIMED_OUT;
    case PMIX_ERR_NOMEM:
        return UCS_ERR_NO_MEMORY;
    case PMIX_ERR_NOT_FOUND:
        return UCS_ERR_NO_ELEM;
    case PMIX_ERR_UNREACH:
    case PMIX_ERR_LOST_CONNECTION:
        return UCS_ERR_UNREACHABLE;
    case PMIX_ERR_PARTIAL_SUCCESS:      /* a participant terminated */
    case PMIX_ERR_PROC_TERM_WO_SYNC:
        return UCS_ERR_CONNECTION_RESET;
    case PMIX_ERR_BAD_PARAM:
        return UCS_ERR_INVALID_PARAM;
    default:
        return UCS_ERR_IO_ERROR;
    }
}

static void tc_boot_pmix_put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t tc_boot_pmix_get_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
           ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

/* --- requests ------------------------------------------------------------- */

static tc_boot_pmix_req_t *tc_boot_pmix_req_new(double deadline)
{
    tc_boot_pmix_req_t *req;
    pthread_condattr_t cattr;
    int timeout;

    req = calloc(1, sizeof(*req));
    if (req == NULL) {
        ucs_error("PMIx bootstrap: failed to allocate a request");
        return NULL;
    }

    pthread_mutex_init(&req->lock, NULL);
    pthread_condattr_init(&cattr);
    pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
    pthread_cond_init(&req->cond, &cattr);
    pthread_condattr_destroy(&cattr);
    req->refs   = 2;
    req->status = PMIX_ERROR;
    req->type   = PMIX_UNDEF;

    PMIX_INFO_CONSTRUCT(&req->info[0]);
    PMIX_INFO_CONSTRUCT(&req->info[1]);
    timeout = tc_boot_pmix_timeout_arg(deadline);
    PMIx_Info_load(&req->info[0], PMIX_TIMEOUT, &timeout, PMIX_INT);
    req->ninfo = 1;
    return req;
}

static void tc_boot_pmix_req_put(tc_boot_pmix_req_t *req)
{
    int last;
    size_t i;

    pthread_mutex_lock(&req->lock);
    last = (--req->refs == 0);
    pthread_mutex_unlock(&req->lock);
    if (!last) {
        return;
    }

    for (i = 0; i < req->ninfo; ++i) {
        PMIX_INFO_DESTRUCT(&req->info[i]);
    }
    pthread_cond_destroy(&req->cond);
    pthread_mutex_destroy(&req->lock);
    free(req->bytes);
    free(req);
}

/* Completion, in the PMIx progress thread. */
static void tc_boot_pmix_req_complete(tc_boot_pmix_req_t *req,
                                      pmix_status_t status,
                                      const pmix_value_t *value)
{
    pthread_mutex_lock(&req->lock);
    req->status = status;
    if ((status == PMIX_SUCCESS) && (value != NULL)) {
        req->type = value->type;
        switch (value->type) {
        case PMIX_BYTE_OBJECT:
            req->nbytes = value->data.bo.size;
            if (req->nbytes > 0) {
                req->bytes = malloc(req->nbytes);
                if (req->bytes == NULL) {
                    req->status = PMIX_ERR_NOMEM;
                } else {
                    memcpy(req->bytes, value->data.bo.bytes, req->nbytes);
                }
            }
            break;
        case PMIX_UINT32:
            req->number = value->data.uint32;
            break;
        case PMIX_UINT64:
            req->number = value->data.uint64;
            break;
        case PMIX_SIZE:
            req->number = value->data.size;
            break;
        case PMIX_UINT16:
            req->number = value->data.uint16;
            break;
        default:
            break;
        }
    }
    req->done = 1;
    pthread_cond_signal(&req->cond);
    pthread_mutex_unlock(&req->lock);
    tc_boot_pmix_req_put(req);
}

static void tc_boot_pmix_op_cb(pmix_status_t status, void *cbdata)
{
    tc_boot_pmix_req_complete(cbdata, status, NULL);
}

static void tc_boot_pmix_value_cb(pmix_status_t status, pmix_value_t *kv,
                                  void *cbdata)
{
    tc_boot_pmix_req_complete(cbdata, status, kv);
}

/* Wait for @a req until the monotonic @a deadline; 1 when it completed. */
static int tc_boot_pmix_req_wait(tc_boot_pmix_req_t *req, double deadline)
{
    struct timespec ts;
    double whole;
    int done;

    whole      = (double)(time_t)deadline;
    ts.tv_sec  = (time_t)deadline;
    ts.tv_nsec = (long)((deadline - whole) * 1e9);
    if (ts.tv_nsec >= 1000000000l) {
        ts.tv_nsec = 999999999l;
    }

    pthread_mutex_lock(&req->lock);
    while (!req->done) {
        if (pthread_cond_timedwait(&req->cond, &req->lock, &ts) == ETIMEDOUT) {
            break;
        }
    }
    done = req->done;
    pthread_mutex_unlock(&req->lock);
    return done;
}

/* Start a get of @a key from @a proc; NULL (logged) when it did not start. */
static tc_boot_pmix_req_t *tc_boot_pmix_get_start(const pmix_proc_t *proc,
                                                  const char *key,
                                                  double deadline,
                                                  pmix_status_t *rc_p)
{
    tc_boot_pmix_req_t *req;
    pmix_status_t rc;

    req = tc_boot_pmix_req_new(deadline);
    if (req == NULL) {
        *rc_p = PMIX_ERR_NOMEM;
        return NULL;
    }
    snprintf(req->key, sizeof(req->key), "%s", key);

    rc = PMIx_Get_nb(proc, req->key, req->info, req->ninfo,
                     tc_boot_pmix_value_cb, req);
    if (rc != PMIX_SUCCESS) {
        tc_boot_pmix_req_put(req);     /* PMIx will not call back */
        tc_boot_pmix_req_put(req);
        *rc_p = rc;
        return NULL;
    }
    return req;
}

/* --- collectives ---------------------------------------------------------- */

static ucs_status_t tc_boot_pmix_fence(tc_boot_pmix_t *pmix, double deadline)
{
    tc_boot_pmix_req_t *req;
    pmix_status_t rc;
    bool collect = true;

    req = tc_boot_pmix_req_new(deadline);
    if (req == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    PMIx_Info_load(&req->info[1], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    req->ninfo = 2;

    rc = PMIx_Fence_nb(&pmix->job, 1, req->info, req->ninfo,
                       tc_boot_pmix_op_cb, req);
    if (rc != PMIX_SUCCESS) {
        tc_boot_pmix_req_put(req);     /* PMIx will not call back */
        tc_boot_pmix_req_put(req);
        if (rc == PMIX_OPERATION_SUCCEEDED) {
            return UCS_OK;
        }
        ucs_error("PMIx bootstrap: PMIx_Fence of collective %u failed: %s",
                  pmix->seq, PMIx_Error_string(rc));
        return tc_boot_pmix_status(rc);
    }

    if (!tc_boot_pmix_req_wait(req, deadline)) {
        tc_boot_pmix_req_put(req);
        ucs_error("PMIx bootstrap: PMIx_Fence of collective %u timed out after "
                  "%.1f s (a rank did not reach it)", pmix->seq,
                  pmix->timeout_s);
        return UCS_ERR_TIMED_OUT;
    }

    rc = req->status;
    tc_boot_pmix_req_put(req);
    if (rc == PMIX_ERR_TIMEOUT) {
        ucs_error("PMIx bootstrap: PMIx_Fence of collective %u timed out after "
                  "%.1f s (the server gave up waiting for a rank)", pmix->seq,
                  pmix->timeout_s);
        return UCS_ERR_TIMED_OUT;
    } else if (rc != PMIX_SUCCESS) {
        ucs_error("PMIx bootstrap: PMIx_Fence of collective %u failed: %s%s",
                  pmix->seq, PMIx_Error_string(rc),
                  (tc_boot_pmix_status(rc) == UCS_ERR_CONNECTION_RESET) ?
                  " (a rank of the job terminated)" : "");
        return tc_boot_pmix_status(rc);
    }
    return UCS_OK;
}

/* Check rank @a r's value of collective @a seq; its payload length in *len_p. */
static ucs_status_t tc_boot_pmix_check_value(const tc_boot_pmix_t *pmix, int r,
                                             const tc_boot_pmix_req_t *req,
                                             size_t *len_p)
{
    const uint8_t *hdr = req->bytes;
    uint64_t len;

    if ((req->type != PMIX_BYTE_OBJECT) ||
        (req->nbytes < TC_BOOT_PMIX_HDR_LEN) ||
        (tc_boot_pmix_get_be32(hdr) != TC_BOOT_PMIX_MAGIC) ||
        (tc_boot_pmix_get_be32(hdr + 4) != pmix->seq)) {
        ucs_error("PMIx bootstrap: rank %d's value %s of collective %u is not "
                  "ours (type %d, %zu bytes)", r, req->key, pmix->seq,
                  (int)req->type, req->nbytes);
        return UCS_ERR_IO_ERROR;
    }

    len = ((uint64_t)tc_boot_pmix_get_be32(hdr + 8) << 32) |
          tc_boot_pmix_get_be32(hdr + 12);
    if (len > TC_BOOTSTRAP_MAX_LEN) {
        /* the contributor sent only the header: everyone fails alike */
        ucs_error("PMIx bootstrap: rank %d contributed %llu bytes, above the "
                  "limit of %lu", r, (unsigned long long)len,
                  (unsigned long)TC_BOOTSTRAP_MAX_LEN);
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    if (len != req->nbytes - TC_BOOT_PMIX_HDR_LEN) {
        ucs_error("PMIx bootstrap: rank %d's value of collective %u holds %zu "
                  "bytes, its header says %llu", r, pmix->seq,
                  req->nbytes - TC_BOOT_PMIX_HDR_LEN, (unsigned long long)len);
        return UCS_ERR_IO_ERROR;
    }
    *len_p = (size_t)len;
    return UCS_OK;
}

/* Get every rank's value of the current collective and concatenate them. */
static ucs_status_t tc_boot_pmix_collect(tc_boot_pmix_t *pmix, const char *key,
                                         double deadline, void **all_p,
                                         size_t *lens)
{
    tc_boot_pmix_req_t **reqs;
    ucs_status_t status = UCS_OK;
    pmix_proc_t proc;
    pmix_status_t rc;
    size_t total, len, off;
    uint8_t *all;
    int r, started;

    reqs = calloc((size_t)pmix->size, sizeof(*reqs));
    if (reqs == NULL) {
        ucs_error("PMIx bootstrap: failed to allocate %d requests", pmix->size);
        return UCS_ERR_NO_MEMORY;
    }

    /* all gets in flight at once, then wait for them in rank order */
    for (started = 0; started < pmix->size; ++started) {
        PMIX_LOAD_PROCID(&proc, pmix->myproc.nspace, (pmix_rank_t)started);
        reqs[started] = tc_boot_pmix_get_start(&proc, key, deadline, &rc);
        if (reqs[started] == NULL) {
            ucs_error("PMIx bootstrap: PMIx_Get of %s from rank %d failed: %s",
                      key, started, PMIx_Error_string(rc));
            status = tc_boot_pmix_status(rc);
            break;
        }
    }

    total = 0;
    for (r = 0; (r < started) && (status == UCS_OK); ++r) {
        if (!tc_boot_pmix_req_wait(reqs[r], deadline)) {
            ucs_error("PMIx bootstrap: PMIx_Get of %s from rank %d timed out "
                      "after %.1f s", key, r, pmix->timeout_s);
            status = UCS_ERR_TIMED_OUT;
        } else if (reqs[r]->status != PMIX_SUCCESS) {
            ucs_error("PMIx bootstrap: PMIx_Get of %s from rank %d failed: %s",
                      key, r, PMIx_Error_string(reqs[r]->status));
            status = tc_boot_pmix_status(reqs[r]->status);
        } else {
            status = tc_boot_pmix_check_value(pmix, r, reqs[r], &len);
            if ((status == UCS_OK) && (len > TC_BOOTSTRAP_MAX_TOTAL - total)) {
                ucs_error("PMIx bootstrap: collective %u gathers more than "
                          "%lu bytes", pmix->seq,
                          (unsigned long)TC_BOOTSTRAP_MAX_TOTAL);
                status = UCS_ERR_EXCEEDS_LIMIT;
            }
            if (status == UCS_OK) {
                total += len;
            }
        }
    }

    if (status == UCS_OK) {
        all = malloc(total ? total : 1);
        if (all == NULL) {
            ucs_error("PMIx bootstrap: failed to allocate %zu bytes", total);
            status = UCS_ERR_NO_MEMORY;
        } else {
            off = 0;
            for (r = 0; r < pmix->size; ++r) {
                len     = reqs[r]->nbytes - TC_BOOT_PMIX_HDR_LEN;
                lens[r] = len;
                if (len > 0) {
                    memcpy(all + off,
                           (const uint8_t*)reqs[r]->bytes + TC_BOOT_PMIX_HDR_LEN,
                           len);
                }
                off += len;
            }
            *all_p = all;
        }
    }

    for (r = 0; r < started; ++r) {
        tc_boot_pmix_req_put(reqs[r]);
    }
    free(reqs);
    return status;
}

static ucs_status_t tc_boot_pmix_allgatherv(void *ctx, const void *buf,
                                            size_t len, void **all_p,
                                            size_t *lens)
{
    tc_boot_pmix_t *pmix = ctx;
    char key[PMIX_MAX_KEYLEN + 1];
    ucs_status_t status;
    pmix_value_t value;
    pmix_status_t rc;
    size_t send_len;
    double deadline;
    uint8_t *blob;

    if (pmix->failed) {
        ucs_error("PMIx bootstrap: an earlier collective failed, the ranks are "
                  "out of step");
        return UCS_ERR_IO_ERROR;
    }

    deadline = tc_boot_pmix_now() + pmix->timeout_s;
    ++pmix->seq;
    snprintf(key, sizeof(key), TC_BOOT_PMIX_KEY_PREFIX "%u", pmix->seq);

    /* too long: publish the header alone, so that every rank (this one too)
     * fails the collective with the same error instead of timing out */
    send_len = (len > TC_BOOTSTRAP_MAX_LEN) ? 0 : len;
    blob     = malloc(TC_BOOT_PMIX_HDR_LEN + send_len);
    if (blob == NULL) {
        ucs_error("PMIx bootstrap: failed to allocate %zu bytes",
                  TC_BOOT_PMIX_HDR_LEN + send_len);
        status = UCS_ERR_NO_MEMORY;
        goto err_fail;
    }
    tc_boot_pmix_put_be32(blob, TC_BOOT_PMIX_MAGIC);
    tc_boot_pmix_put_be32(blob + 4, pmix->seq);
    tc_boot_pmix_put_be32(blob + 8, (uint32_t)((uint64_t)len >> 32));
    tc_boot_pmix_put_be32(blob + 12, (uint32_t)len);
    if (send_len > 0) {
        memcpy(blob + TC_BOOT_PMIX_HDR_LEN, buf, send_len);
    }

    PMIX_VALUE_CONSTRUCT(&value);
    value.type          = PMIX_BYTE_OBJECT;
    value.data.bo.bytes = (char*)blob;
    value.data.bo.size  = TC_BOOT_PMIX_HDR_LEN + send_len;
    rc = PMIx_Put(PMIX_GLOBAL, key, &value);   /* copies the value */
    free(blob);
    if (rc != PMIX_SUCCESS) {
        ucs_error("PMIx bootstrap: PMIx_Put of %s (%zu bytes) failed: %s", key,
                  len, PMIx_Error_string(rc));
        status = tc_boot_pmix_status(rc);
        goto err_fail;
    }

    rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) {
        ucs_error("PMIx bootstrap: PMIx_Commit of %s failed: %s", key,
                  PMIx_Error_string(rc));
        status = tc_boot_pmix_status(rc);
        goto err_fail;
    }

    status = tc_boot_pmix_fence(pmix, deadline);
    if (status != UCS_OK) {
        goto err_fail;
    }

    status = tc_boot_pmix_collect(pmix, key, deadline, all_p, lens);
    if ((status != UCS_OK) && (status != UCS_ERR_EXCEEDS_LIMIT)) {
        goto err_fail;
    }
    /* EXCEEDS_LIMIT: every rank saw the same header and stays in step */
    return status;

err_fail:
    pmix->failed = 1;
    return status;
}

static void tc_boot_pmix_release(uint32_t seq)
{
    pthread_mutex_lock(&tc_boot_pmix_global_lock);
    tc_boot_pmix_last_seq = seq;
    tc_boot_pmix_live     = 0;
    pthread_mutex_unlock(&tc_boot_pmix_global_lock);
}

static void tc_boot_pmix_destroy(void *ctx)
{
    tc_boot_pmix_t *pmix = ctx;
    pmix_status_t rc;

    tc_boot_pmix_release(pmix->seq);
    free(pmix);
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) {
        ucs_debug("PMIx bootstrap: PMIx_Finalize: %s", PMIx_Error_string(rc));
    }
}

static const tc_bootstrap_ops_t tc_boot_pmix_ops = {
    .name       = "pmix",
    .allgatherv = tc_boot_pmix_allgatherv,
    .destroy    = tc_boot_pmix_destroy
};

/* PMIX_JOB_SIZE of our namespace. */
static ucs_status_t tc_boot_pmix_job_size(tc_boot_pmix_t *pmix, int *size_p)
{
    double deadline = tc_boot_pmix_now() + pmix->timeout_s;
    tc_boot_pmix_req_t *req;
    ucs_status_t status;
    pmix_status_t rc;

    req = tc_boot_pmix_get_start(&pmix->job, PMIX_JOB_SIZE, deadline, &rc);
    if (req == NULL) {
        ucs_error("PMIx bootstrap: PMIx_Get of " PMIX_JOB_SIZE " failed: %s",
                  PMIx_Error_string(rc));
        return tc_boot_pmix_status(rc);
    }

    if (!tc_boot_pmix_req_wait(req, deadline)) {
        ucs_error("PMIx bootstrap: PMIx_Get of " PMIX_JOB_SIZE " timed out "
                  "after %.1f s", pmix->timeout_s);
        status = UCS_ERR_TIMED_OUT;
    } else if (req->status != PMIX_SUCCESS) {
        ucs_error("PMIx bootstrap: PMIx_Get of " PMIX_JOB_SIZE " failed: %s",
                  PMIx_Error_string(req->status));
        status = tc_boot_pmix_status(req->status);
    } else if (((req->type != PMIX_UINT32) && (req->type != PMIX_UINT64) &&
                (req->type != PMIX_SIZE) && (req->type != PMIX_UINT16)) ||
               (req->number < 1) || (req->number > TC_BOOTSTRAP_MAX_SIZE)) {
        ucs_error("PMIx bootstrap: " PMIX_JOB_SIZE " is not a size between 1 "
                  "and %d (type %d, value %llu)", TC_BOOTSTRAP_MAX_SIZE,
                  (int)req->type, (unsigned long long)req->number);
        status = UCS_ERR_INVALID_PARAM;
    } else {
        *size_p = (int)req->number;
        status  = UCS_OK;
    }
    tc_boot_pmix_req_put(req);
    return status;
}

ucs_status_t tc_bootstrap_pmix_create(tc_bootstrap_h *boot_p)
{
    tc_boot_pmix_t *pmix;
    tc_config_t config;
    ucs_status_t status;
    pmix_status_t rc;
    int was_init, size = 0;

    status = tc_config_read(&config);
    if (status != UCS_OK) {
        return status;              /* the parser named the bad variable */
    }

    pmix = calloc(1, sizeof(*pmix));
    if (pmix == NULL) {
        ucs_error("PMIx bootstrap: failed to allocate its state");
        tc_config_release(&config);
        return UCS_ERR_NO_MEMORY;
    }
    pmix->timeout_s = config.boot_timeout;
    tc_config_release(&config);

    pthread_mutex_lock(&tc_boot_pmix_global_lock);
    if (tc_boot_pmix_live) {
        pthread_mutex_unlock(&tc_boot_pmix_global_lock);
        ucs_error("PMIx bootstrap: this process already has one (one at a "
                  "time: their keys would collide)");
        free(pmix);
        return UCS_ERR_BUSY;
    }
    tc_boot_pmix_live = 1;
    pmix->seq         = tc_boot_pmix_last_seq;
    pthread_mutex_unlock(&tc_boot_pmix_global_lock);

    was_init = PMIx_Initialized();
    rc       = PMIx_Init(&pmix->myproc, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        if (getenv("PMIX_RANK") == NULL) {
            ucs_error("PMIx bootstrap: PMIx_Init failed: %s; this process was "
                      "not started by a PMIx launcher (PMIX_RANK is not set): "
                      "start it with mpirun, prterun or srun --mpi=pmix, or "
                      "choose another UCX_TC_BOOTSTRAP", PMIx_Error_string(rc));
        } else {
            ucs_error("PMIx bootstrap: PMIx_Init failed: %s (PMIX_RANK=%s, "
                      "but the PMIx server of the launcher is not reachable)",
                      PMIx_Error_string(rc), getenv("PMIX_RANK"));
        }
        /* PMIx 4.2 leaves itself initialised after a failed PMIx_Init, but
         * PMIx_Finalize is safe only when it merely drops a reference or
         * after a plain singleton (no PMIX_NAMESPACE): otherwise it crashes.
         * What is left is reclaimed at exit. */
        if (was_init ||
            ((rc == PMIX_ERR_UNREACH) && (getenv("PMIX_NAMESPACE") == NULL))) {
            PMIx_Finalize(NULL, 0);
        }
        tc_boot_pmix_release(pmix->seq);
        free(pmix);
        return (rc == PMIX_ERR_UNREACH) ? UCS_ERR_UNREACHABLE :
                                          tc_boot_pmix_status(rc);
    }

    PMIX_LOAD_PROCID(&pmix->job, pmix->myproc.nspace, PMIX_RANK_WILDCARD);
    status = tc_boot_pmix_job_size(pmix, &size);
    if (status != UCS_OK) {
        goto err_finalize;
    }
    if (pmix->myproc.rank >= (pmix_rank_t)size) {
        ucs_error("PMIx bootstrap: rank %u is out of range for job size %d",
                  pmix->myproc.rank, size);
        status = UCS_ERR_INVALID_PARAM;
        goto err_finalize;
    }
    pmix->size = size;

    status = tc_bootstrap_create(&tc_boot_pmix_ops, pmix,
                                 (int)pmix->myproc.rank, size, boot_p);
    if (status != UCS_OK) {
        goto err_finalize;
    }
    ucs_debug("PMIx bootstrap: namespace %s rank %u size %d",
              pmix->myproc.nspace, pmix->myproc.rank, size);
    return UCS_OK;

err_finalize:
    tc_boot_pmix_release(pmix->seq);
    free(pmix);
    PMIx_Finalize(NULL, 0);
    return status;
}
