/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Test receiver for injectable jams; see jam_exec.h. Single-threaded: the
 * caller owns the package and every placed span.
 */
#define _GNU_SOURCE
#include "jam_exec.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <twochains/jam.h>

#include "tcbench.h"

static void tc_test_errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void tc_test_errf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static uint64_t tc_test_fnv1a64(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

static int tc_test_load_span(const char *path, tc_test_element_t *e, char *err,
                             size_t errlen)
{
    tc_jam_file_header_t h;
    FILE *f = fopen(path, "rb");
    int rc  = -1;

    if (f == NULL) {
        tc_test_errf(err, errlen, "%s: cannot open", path);
        return -1;
    }
    if (fread(&h, sizeof(h), 1, f) != 1) {
        tc_test_errf(err, errlen, "%s: short header", path);
        goto out;
    }
    if ((memcmp(h.magic, TC_JAM_FILE_MAGIC, sizeof(h.magic)) != 0) ||
        (h.version != TC_JAM_FILE_VERSION) || (h.span_size != e->rec.span_size) ||
        (h.entry_offset != e->rec.entry_offset) || (h.span_hash != e->rec.span_hash)) {
        tc_test_errf(err, errlen, "%s: header does not match the manifest", path);
        goto out;
    }
    e->span = malloc(h.span_size);
    if ((e->span == NULL) || (fseek(f, (long)h.span_offset, SEEK_SET) != 0) ||
        (fread(e->span, 1, h.span_size, f) != h.span_size)) {
        tc_test_errf(err, errlen, "%s: cannot read the span", path);
        goto out;
    }
    if (tc_test_fnv1a64(e->span, h.span_size) != e->rec.span_hash) {
        tc_test_errf(err, errlen, "%s: span hash mismatch", path);
        goto out;
    }
    rc = 0;
out:
    fclose(f);
    return rc;
}

int tc_test_pkg_load(const char *manifest_path, tc_test_pkg_t *pkg, char *err,
                     size_t errlen)
{
    char line[2048], dir[TC_TEST_PATH_MAX], path[2 * TC_TEST_PATH_MAX + 2];
    char word[TC_TEST_PATH_MAX], word2[TC_TEST_PATH_MAX];
    const char *slash;
    int have_magic = 0, have_end = 0;
    unsigned lineno = 0;
    FILE *f;

    memset(pkg, 0, sizeof(*pkg));
    slash = strrchr(manifest_path, '/');
    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - manifest_path) : 1,
             slash ? manifest_path : ".");

    f = fopen(manifest_path, "r");
    if (f == NULL) {
        tc_test_errf(err, errlen, "%s: cannot open", manifest_path);
        return -1;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        tc_test_element_t *e;
        unsigned a, n;
        char sym[128];
        tc_jam_manifest_element_t rec;

        ++lineno;
        if ((line[0] == '#') || (line[0] == '\n')) {
            continue;
        }
        if (!have_magic) {
            if ((sscanf(line, "tc-manifest %u", &a) != 1) ||
                (a != TC_PKG_MANIFEST_VERSION)) {
                tc_test_errf(err, errlen, "%s:%u: not a manifest", manifest_path, lineno);
                goto err;
            }
            have_magic = 1;
        } else if (sscanf(line, "package %63s", pkg->package) == 1) {
        } else if (sscanf(line, "arch %15s", pkg->arch) == 1) {
        } else if (sscanf(line, "build-id %" SCNx64, &pkg->build_id) == 1) {
        } else if (sscanf(line, "local %1023s %1023s", word, word2) == 2) {
        } else if (sscanf(line, "ried %1023s %1023s", word, word2) == 2) {
            if (pkg->num_rieds == TC_TEST_MAX_RIEDS) {
                tc_test_errf(err, errlen, "too many rieds");
                goto err;
            }
            snprintf(path, sizeof(path), "%s/%s", dir, word2);
            pkg->rieds[pkg->num_rieds] = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
            if (pkg->rieds[pkg->num_rieds] == NULL) {
                tc_test_errf(err, errlen, "dlopen %s: %s", path, dlerror());
                goto err;
            }
            ++pkg->num_rieds;
        } else if (tc_jam_manifest_element_parse(line, &rec)) {
            if ((rec.id != pkg->num_elements) || (rec.id == TC_TEST_MAX_ELEMENTS) ||
                (rec.num_externals > TC_TEST_MAX_EXTERNALS)) {
                tc_test_errf(err, errlen, "%s:%u: bad element", manifest_path, lineno);
                goto err;
            }
            e = &pkg->elements[pkg->num_elements++];
            e->rec = rec;
            snprintf(path, sizeof(path), "%s/%s", dir, rec.file);
            if (tc_test_load_span(path, e, err, errlen) != 0) {
                goto err;
            }
        } else if (sscanf(line, "extern %u %u %127s", &a, &n, sym) == 3) {
            if ((pkg->num_elements == 0) || (a != pkg->num_elements - 1) ||
                (n >= pkg->elements[a].rec.num_externals)) {
                tc_test_errf(err, errlen, "%s:%u: bad extern", manifest_path, lineno);
                goto err;
            }
            memcpy(pkg->elements[a].externals[n], sym, sizeof(sym));
        } else if (strncmp(line, "end", 3) == 0) {
            have_end = 1;
        } else {
            tc_test_errf(err, errlen, "%s:%u: unknown record", manifest_path, lineno);
            goto err;
        }
    }
    fclose(f);
    f = NULL;
    if (!have_end) {
        tc_test_errf(err, errlen, "%s: no 'end' record", manifest_path);
        goto err;
    }

    /* the GOT table of every element, in its external order */
    for (uint32_t k = 0; k < pkg->num_elements; ++k) {
        tc_test_element_t *e = &pkg->elements[k];
        for (uint32_t s = 0; s < e->rec.num_externals; ++s) {
            e->got[s] = tc_test_pkg_symbol(pkg, e->externals[s]);
            if (e->got[s] == NULL) {
                tc_test_errf(err, errlen, "element %s: cannot resolve '%s'", e->rec.name,
                             e->externals[s]);
                goto err;
            }
        }
    }
    return 0;

err:
    if (f != NULL) {
        fclose(f);
    }
    tc_test_pkg_unload(pkg);
    return -1;
}

void tc_test_pkg_unload(tc_test_pkg_t *pkg)
{
    for (uint32_t k = 0; k < pkg->num_elements; ++k) {
        free(pkg->elements[k].span);
        pkg->elements[k].span = NULL;
    }
    for (uint32_t r = 0; r < pkg->num_rieds; ++r) {
        dlclose(pkg->rieds[r]);
    }
    pkg->num_rieds    = 0;
    pkg->num_elements = 0;
}

const tc_test_element_t *tc_test_pkg_element(const tc_test_pkg_t *pkg, const char *name)
{
    for (uint32_t k = 0; k < pkg->num_elements; ++k) {
        if (strcmp(pkg->elements[k].rec.name, name) == 0) {
            return &pkg->elements[k];
        }
    }
    return NULL;
}

void *tc_test_pkg_symbol(const tc_test_pkg_t *pkg, const char *name)
{
    void *p;
    for (uint32_t r = 0; r < pkg->num_rieds; ++r) {
        p = dlsym(pkg->rieds[r], name);
        if (p != NULL) {
            return p;
        }
    }
    return dlsym(RTLD_DEFAULT, name);
}

int tc_test_exec_place(const tc_test_element_t *elem, tc_test_map_mode_t mode,
                       size_t offset, tc_test_exec_t *exec, char *err, size_t errlen)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void *got   = (void *)elem->got;
    int prot    = PROT_READ | PROT_WRITE | ((mode == TC_TEST_MAP_RWX) ? PROT_EXEC : 0);

    if ((mode == TC_TEST_MAP_RX) && (elem->rec.flags & TC_JAM_F_WRITABLE_DATA)) {
        tc_test_errf(err, errlen, "element %s has writable data: it cannot run from a "
                     "read+execute mapping", elem->rec.name);
        return -1;
    }
    if (elem->rec.flags & TC_JAM_F_PAGE_ALIGN) {
        offset = 0;
    }
    if (offset % TC_JAM_SPAN_ALIGN) {
        tc_test_errf(err, errlen, "offset %zu is not %u-aligned", offset, TC_JAM_SPAN_ALIGN);
        return -1;
    }
    exec->map_len = (offset + elem->rec.span_size + page - 1) & ~(page - 1);
    exec->map     = mmap(NULL, exec->map_len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (exec->map == MAP_FAILED) {
        tc_test_errf(err, errlen, "mmap: %m");
        return -1;
    }
    exec->span = (uint8_t *)exec->map + offset;
    exec->elem = elem;
    memcpy(exec->span, elem->span, elem->rec.span_size);
    memcpy(exec->span + elem->rec.got_slot_offset, &got, sizeof(got));
    if ((mode == TC_TEST_MAP_RX) &&
        (mprotect(exec->map, exec->map_len, PROT_READ | PROT_EXEC) != 0)) {
        tc_test_errf(err, errlen, "mprotect: %m");
        munmap(exec->map, exec->map_len);
        return -1;
    }
    __builtin___clear_cache((char *)exec->span, (char *)exec->span + elem->rec.span_size);
    return 0;
}

void tc_test_exec_run(const tc_test_exec_t *exec, void *payload, size_t payload_size,
                      void *target_args)
{
    void *entry = exec->span + exec->elem->rec.entry_offset;
    tc_jam_main_fn_t fn;

    memcpy(&fn, &entry, sizeof(fn));
    fn(payload, payload_size, target_args);
}

void tc_test_exec_release(tc_test_exec_t *exec)
{
    if (exec->map != NULL) {
        munmap(exec->map, exec->map_len);
        exec->map = NULL;
    }
}

/* ------------------------------------------------------------------------ */
/* Scenarios                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct {
    tc_test_pkg_t            *pkg;
    const tc_test_element_t  *elem;
    tc_test_map_mode_t       mode;
    tc_test_exec_t           prev;      /* kept until the next is placed */
    unsigned                 messages;
    int                      failures;
    char                     *report;
    size_t                   report_len;
} tc_test_ctx_t;

static void tc_test_failf(tc_test_ctx_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void tc_test_failf(tc_test_ctx_t *c, const char *fmt, ...)
{
    size_t used = strlen(c->report);
    va_list ap;

    ++c->failures;
    if (used + 2 >= c->report_len) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(c->report + used, c->report_len - used - 1, fmt, ap);
    va_end(ap);
    used = strlen(c->report);
    c->report[used]     = '\n';
    c->report[used + 1] = '\0';
}

#define TC_TEST_CHECK(_c, _cond, ...) \
    do { \
        if (!(_cond)) { \
            tc_test_failf((_c), __VA_ARGS__); \
        } \
    } while (0)

static int tc_test_ctx_init(tc_test_ctx_t *c, tc_test_pkg_t *pkg, const char *jam,
                            tc_test_map_mode_t mode, char *report, size_t report_len)
{
    memset(c, 0, sizeof(*c));
    c->pkg        = pkg;
    c->mode       = mode;
    c->report     = report;
    c->report_len = report_len;
    c->elem       = tc_test_pkg_element(pkg, jam);
    if (c->elem == NULL) {
        tc_test_failf(c, "package %s has no element '%s'", pkg->package, jam);
        return -1;
    }
    return 0;
}

/* One message: a fresh mapping at a new address, then run. */
static void tc_test_message(tc_test_ctx_t *c, void *payload, size_t size, void *targs)
{
    char err[256];
    tc_test_exec_t ex;
    size_t offset = (16 + 48 * (size_t)c->messages) % 2048;

    if (tc_test_exec_place(c->elem, c->mode, offset, &ex, err, sizeof(err)) != 0) {
        tc_test_failf(c, "%s: %s", c->elem->rec.name, err);
        return;
    }
    if ((c->prev.map != NULL) && (ex.span == c->prev.span)) {
        tc_test_failf(c, "%s: span placed at the same address twice", c->elem->rec.name);
    }
    tc_test_exec_run(&ex, payload, size, targs);
    tc_test_exec_release(&c->prev);
    c->prev = ex;
    ++c->messages;
}

static int tc_test_ctx_done(tc_test_ctx_t *c)
{
    tc_test_exec_release(&c->prev);
    return c->failures;
}

#define TC_TEST_SYM(_c, _type, _name) ((_type)tc_test_pkg_symbol((_c)->pkg, _name))

int tc_test_scenario_indirect_put(tc_test_pkg_t *pkg, tc_test_map_mode_t mode,
                                  char *report, size_t report_len)
{
    tc_test_ctx_t c;
    int64_t *array, expect[TCBENCH_ARRAY_LEN];
    uint64_t *rejected;

    if (tc_test_ctx_init(&c, pkg, "indirect_put", mode, report, report_len) != 0) {
        return c.failures;
    }
    array    = TC_TEST_SYM(&c, int64_t *, "tcbench_array");
    rejected = TC_TEST_SYM(&c, uint64_t *, "tcbench_put_rejected");
    memset(array, 0, sizeof(int64_t) * TCBENCH_ARRAY_LEN);
    memset(expect, 0, sizeof(expect));
    *rejected = 0;

    tcbench_put_t m1[] = {{3, 111}, {1023, -5}, {0, 42}, {5000, 9}, {TCBENCH_ARRAY_LEN, 1}};
    tc_test_message(&c, m1, sizeof(m1), NULL);
    expect[3] = 111;
    expect[1023] = -5;
    expect[0] = 42;
    TC_TEST_CHECK(&c, memcmp(array, expect, sizeof(expect)) == 0,
                  "indirect_put msg 1: array differs (a[0]=%" PRId64 " a[3]=%" PRId64
                  " a[1023]=%" PRId64 ")", array[0], array[3], array[1023]);
    TC_TEST_CHECK(&c, *rejected == 2, "indirect_put msg 1: rejected %" PRIu64 " != 2",
                  *rejected);

    tcbench_put_t m2[] = {{3, 7}, {512, INT64_C(1) << 40}, {3, 8}};
    tc_test_message(&c, m2, sizeof(m2), NULL);
    expect[3] = 8;
    expect[512] = INT64_C(1) << 40;
    TC_TEST_CHECK(&c, memcmp(array, expect, sizeof(expect)) == 0,
                  "indirect_put msg 2: array differs (a[3]=%" PRId64 " a[512]=%" PRId64 ")",
                  array[3], array[512]);
    TC_TEST_CHECK(&c, *rejected == 2, "indirect_put msg 2: rejected %" PRIu64 " != 2",
                  *rejected);

    /* a full payload: every index once, values i * 3 - 1000 */
    static tcbench_put_t m3[TCBENCH_ARRAY_LEN];
    for (unsigned i = 0; i < TCBENCH_ARRAY_LEN; ++i) {
        m3[i].index = (i * 7) % TCBENCH_ARRAY_LEN;   /* a permutation */
        m3[i].value = (int64_t)m3[i].index * 3 - 1000;
        expect[m3[i].index] = m3[i].value;
    }
    tc_test_message(&c, m3, sizeof(m3), NULL);
    TC_TEST_CHECK(&c, memcmp(array, expect, sizeof(expect)) == 0,
                  "indirect_put msg 3: array differs");
    return tc_test_ctx_done(&c);
}

int tc_test_scenario_server_side_sum(tc_test_pkg_t *pkg, tc_test_map_mode_t mode,
                                     char *report, size_t report_len)
{
    tc_test_ctx_t c;
    int64_t *acc;
    uint64_t *calls;

    if (tc_test_ctx_init(&c, pkg, "server_side_sum", mode, report, report_len) != 0) {
        return c.failures;
    }
    acc   = TC_TEST_SYM(&c, int64_t *, "tcbench_accumulator");
    calls = TC_TEST_SYM(&c, uint64_t *, "tcbench_sum_calls");
    *acc   = 0;
    *calls = 0;

    int64_t m1[10];
    for (int i = 0; i < 10; ++i) {
        m1[i] = i + 1;
    }
    tc_test_message(&c, m1, sizeof(m1), NULL);
    TC_TEST_CHECK(&c, *acc == 55, "server_side_sum msg 1: %" PRId64 " != 55", *acc);

    int64_t m2[] = {-100, INT64_C(1000000000000), 3};
    tc_test_message(&c, m2, sizeof(m2), NULL);
    TC_TEST_CHECK(&c, *acc == INT64_C(999999999958),
                  "server_side_sum msg 2: %" PRId64 " != 999999999958", *acc);

    tc_test_message(&c, m2, 0, NULL);   /* empty payload: counts, adds nothing */
    TC_TEST_CHECK(&c, *acc == INT64_C(999999999958),
                  "server_side_sum msg 3: %" PRId64 " changed", *acc);
    TC_TEST_CHECK(&c, *calls == 3, "server_side_sum: calls %" PRIu64 " != 3", *calls);
    return tc_test_ctx_done(&c);
}

int tc_test_scenario_ping(tc_test_pkg_t *pkg, tc_test_map_mode_t mode, char *report,
                          size_t report_len)
{
    tc_test_ctx_t c;
    uint64_t *count, reply = 0, first = 0;
    uint64_t (*last_seq)(void);

    if (tc_test_ctx_init(&c, pkg, "ping", mode, report, report_len) != 0) {
        return c.failures;
    }
    count = TC_TEST_SYM(&c, uint64_t *, "tcbench_ping_count");
    *(void **)&last_seq = tc_test_pkg_symbol(pkg, "tcbench_ping_last_seq");
    *count = 0;

    for (uint64_t seq = 100; seq < 105; ++seq) {
        tcbench_ping_t p = {seq};
        tc_test_message(&c, &p, sizeof(p), &reply);
        if (seq == 100) {
            first = reply;
        }
        TC_TEST_CHECK(&c, last_seq() == seq, "ping: last seq %" PRIu64 " != %" PRIu64,
                      last_seq(), seq);
        TC_TEST_CHECK(&c, reply == first + (seq - 100),
                      "ping: reply %" PRIu64 " != %" PRIu64, reply, first + (seq - 100));
    }
    TC_TEST_CHECK(&c, *count == 5, "ping: count %" PRIu64 " != 5", *count);
    TC_TEST_CHECK(&c, first >= 1, "ping: no reply");
    return tc_test_ctx_done(&c);
}

static int tc_test_checksum(const char *s, size_t n)
{
    static const int w[4] = {1, 10, 100, 1000};
    int sum = 0;
    for (size_t i = 0; i < n; ++i) {
        sum += w[i % 4] * (unsigned char)s[i];
    }
    return sum;
}

int tc_test_scenario_calls_libc(tc_test_pkg_t *pkg, tc_test_map_mode_t mode,
                                char *report, size_t report_len)
{
    static char long_text[301];
    const char *texts[3];
    tc_test_ctx_t c;
    char *copy;

    if (tc_test_ctx_init(&c, pkg, "calls_libc", mode, report, report_len) != 0) {
        return c.failures;
    }
    copy = TC_TEST_SYM(&c, char *, "tcbench_copy");
    memset(long_text, 'x', sizeof(long_text) - 1);
    long_text[7] = 'Q';
    texts[0] = "hello jam";
    texts[1] = "";
    texts[2] = long_text;

    for (int k = 0; k < 3; ++k) {
        char out[TCBENCH_TEXT_LEN], expect[TCBENCH_TEXT_LEN];
        size_t n = strlen(texts[k]);
        char payload[512];

        memcpy(payload, texts[k], n);   /* not NUL-terminated on the wire */
        memset(out, '#', sizeof(out));
        tc_test_message(&c, payload, n, out);
        snprintf(expect, sizeof(expect), "%s: got \"%s\" (%zu bytes, sum %d)", "two-chains",
                 texts[k], n, tc_test_checksum(texts[k], n));
        TC_TEST_CHECK(&c, memcmp(out, expect, strlen(expect) + 1) == 0,
                      "calls_libc msg %d: '%.*s' != '%s'", k + 1, (int)sizeof(out), out,
                      expect);
        TC_TEST_CHECK(&c, strcmp(copy, texts[k]) == 0,
                      "calls_libc msg %d: receiver copy '%s' != '%s'", k + 1, copy, texts[k]);
    }
    return tc_test_ctx_done(&c);
}

int tc_test_scenario_wglobal(tc_test_pkg_t *pkg, tc_test_map_mode_t mode, char *report,
                             size_t report_len)
{
    tc_test_ctx_t c;
    int64_t *seen;
    uint64_t *messages;
    const int64_t fresh = 42 * 1000 + 5 * 10 + 14;   /* see jam_wglobal.amc */
    char err[256];
    tc_test_exec_t ex;

    if (tc_test_ctx_init(&c, pkg, "wglobal", mode, report, report_len) != 0) {
        return c.failures;
    }
    TC_TEST_CHECK(&c, (c.elem->rec.flags & TC_JAM_F_WRITABLE_DATA) &&
                      (c.elem->rec.data_offset < c.elem->rec.span_size),
                  "wglobal: not flagged as having writable data");
    if (mode == TC_TEST_MAP_RX) {
        /* the receiver must refuse a read+execute-only mapping for it */
        TC_TEST_CHECK(&c, tc_test_exec_place(c.elem, mode, 0, &ex, err, sizeof(err)) != 0,
                      "wglobal: placed read+execute although it has writable data");
        return tc_test_ctx_done(&c);
    }

    seen     = TC_TEST_SYM(&c, int64_t *, "wstate_seen");
    messages = TC_TEST_SYM(&c, uint64_t *, "wstate_messages");
    memset(seen, 0, 16 * sizeof(int64_t));
    *messages = 0;

    /* every message starts from a fresh copy: initial values every time */
    for (int k = 0; k < 3; ++k) {
        tc_test_message(&c, NULL, 0, NULL);
        TC_TEST_CHECK(&c, seen[k] == fresh, "wglobal msg %d: saw %" PRId64 " != %" PRId64,
                      k + 1, seen[k], fresh);
    }
    /* ried state reached through the GOT persists across messages */
    TC_TEST_CHECK(&c, *messages == 3, "wglobal: ried counter %" PRIu64 " != 3", *messages);

    /* the globals live inside the span: running one copy twice shows it */
    if (tc_test_exec_place(c.elem, mode, 32, &ex, err, sizeof(err)) == 0) {
        tc_test_exec_run(&ex, NULL, 0, NULL);
        tc_test_exec_run(&ex, NULL, 0, NULL);
        tc_test_exec_release(&ex);
        TC_TEST_CHECK(&c, seen[3] == fresh && seen[4] == 43 * 1000 + 10 * 10 + 28,
                      "wglobal reused copy: %" PRId64 ", %" PRId64, seen[3], seen[4]);
    } else {
        tc_test_failf(&c, "wglobal: %s", err);
    }
    return tc_test_ctx_done(&c);
}

int tc_test_scenario_gotforms(tc_test_pkg_t *pkg, tc_test_map_mode_t mode, char *report,
                              size_t report_len)
{
    tc_test_ctx_t c;
    int *a, *b;
    void **pair, **g, **h;
    long *flags, *sum;

    if (tc_test_ctx_init(&c, pkg, "gotforms", mode, report, report_len) != 0) {
        return c.failures;
    }
    a     = TC_TEST_SYM(&c, int *, "gf_a");
    b     = TC_TEST_SYM(&c, int *, "gf_b");
    pair  = TC_TEST_SYM(&c, void **, "gf_pair");
    flags = TC_TEST_SYM(&c, long *, "gf_flags");
    sum   = TC_TEST_SYM(&c, long *, "gf_sum");
    g     = TC_TEST_SYM(&c, void **, "gf_g");
    h     = TC_TEST_SYM(&c, void **, "gf_h");
    pair[0] = pair[1] = *g = *h = NULL;
    flags[0] = flags[1] = -1;
    *sum = 0;

    tc_test_message(&c, a, sizeof(int), a);
    TC_TEST_CHECK(&c, (flags[0] == 1) && (flags[1] == 0),
                  "gotforms msg 1: compares gave %ld,%ld (want 1,0)", flags[0], flags[1]);
    TC_TEST_CHECK(&c, (pair[0] == (void *)a) && (pair[1] == (void *)b),
                  "gotforms msg 1: pair %p,%p (want %p,%p)", pair[0], pair[1], (void *)a,
                  (void *)b);
    TC_TEST_CHECK(&c, *sum == 654321, "gotforms msg 1: register args sum %ld", *sum);
    TC_TEST_CHECK(&c, (*g == (void *)a) && (*h == (void *)b),
                  "gotforms msg 1: stack args %p,%p (want %p,%p)", *g, *h, (void *)a,
                  (void *)b);

    tc_test_message(&c, b, sizeof(int), b);
    TC_TEST_CHECK(&c, (flags[0] == 0) && (flags[1] == 1),
                  "gotforms msg 2: compares gave %ld,%ld (want 0,1)", flags[0], flags[1]);
    return tc_test_ctx_done(&c);
}

static long tc_test_switchy_ref(unsigned long k, long x)
{
    switch (k) {
    case 0: return x + 1;
    case 1: return x * 3;
    case 2: return x - 7;
    case 3: return (long)((unsigned long)x << 4); /* what shl does; x << 4 is UB for x < 0 */
    case 4: return -x;
    case 5: return x / 3;
    case 6: return x ^ 0x55;
    case 7: return x % 11;
    case 8: return x & 0xf0;
    default: return 1000 + (long)k;
    }
}

int tc_test_scenario_switchy(tc_test_pkg_t *pkg, tc_test_map_mode_t mode, char *report,
                             size_t report_len)
{
    tc_test_ctx_t c;
    long in[2 * 12], out[12];

    if (tc_test_ctx_init(&c, pkg, "switchy", mode, report, report_len) != 0) {
        return c.failures;
    }
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < 12; ++i) {
            in[2 * i]     = (i + round * 5) % 12;      /* every case and the default */
            in[2 * i + 1] = 1000 * i - 3777 + round;
            out[i]        = -1;
        }
        tc_test_message(&c, in, sizeof(in), out);
        for (int i = 0; i < 12; ++i) {
            long x      = in[2 * i + 1];
            long expect = tc_test_switchy_ref((unsigned long)in[2 * i], x) + (long)(x * 2.7);
            TC_TEST_CHECK(&c, out[i] == expect, "switchy round %d case %ld: %ld != %ld", round,
                          in[2 * i], out[i], expect);
        }
    }
    return tc_test_ctx_done(&c);
}

const tc_test_scenario_t tc_test_scenarios[] = {
    {"indirect_put", tc_test_scenario_indirect_put},
    {"server_side_sum", tc_test_scenario_server_side_sum},
    {"ping", tc_test_scenario_ping},
    {"calls_libc", tc_test_scenario_calls_libc},
    {"wglobal", tc_test_scenario_wglobal},
    {"gotforms", tc_test_scenario_gotforms},
    {"switchy", tc_test_scenario_switchy},
    {NULL, NULL}
};
