/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Two-Chains runtime in one process: the frame header validator, the
 * package loader and what it refuses to dlopen, every jam in every mode
 * through a single-member mailbox (self transport), and the public
 * Two-Chains calls (ucp_register_ifunc ... ucp_poll_ifunc).
 */
#include "common.h"

#include "ifunc/carried/carried.h"
#include "ifunc/code/code_cache.h"
#include "ifunc/compat/ucp_ifunc_int.h"
#include "ifunc/config/ifunc_config.h"
#include "ifunc/mailbox/mailbox_int.h"
#include "ifunc/rx/slot.inl"
#include "ifunc/wire/frame.h"

#include <chrono>
#include <twochains/config.h>
#include <twochains/ifunc.h>
#include <twochains/ucp_ifunc.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "tcbench.h"

namespace {

std::string pkg_prefix()
{
    return tc_test::build_path("test/twochains-pkgs");
}

/* A loaded tcbench for one test */
class ifunc_pkg_test : public ::testing::Test {
protected:
    void SetUp() override
    {
        ASSERT_EQ(UCS_OK, tc_ifunc_pkg_load(pkg_prefix().c_str(), "tcbench", &pkg));
        ASSERT_EQ(UCS_OK, tc_ifunc_pkg_element(pkg, "server_side_sum", &sum_id));
        ASSERT_EQ(UCS_OK, tc_ifunc_pkg_element(pkg, "indirect_put", &put_id));
    }
    void TearDown() override
    {
        if (pkg != nullptr) {
            tc_ifunc_pkg_unload(pkg);
        }
    }

    template <typename T> T &state(const char *name)
    {
        return *static_cast<T*>(tc_ifunc_pkg_symbol(pkg, name));
    }

    tc_ifunc_pkg_h pkg = nullptr;
    uint32_t       sum_id = 0, put_id = 0;
};

/* ---- the header validator ---- */

class frame_check : public ifunc_pkg_test {
protected:
    /* a good frame of server_side_sum, 3 values, in buf */
    uint32_t build(tc_frame_type_t type, uint32_t seq = 5)
    {
        tc_frame_desc_t desc;
        std::memset(buf, 0, sizeof(buf));
        tc_frame_prepare(buf, pkg, tc_ifunc_pkg_elem(pkg, sum_id),
                               type != TC_FRAME_LOCAL, &desc);
        return tc_frame_stamp(buf, &desc, type, 0, seq, 1, 3 * sizeof(int64_t));
    }
    tc_frame_hdr_t &hdr() { return *reinterpret_cast<tc_frame_hdr_t*>(buf); }
    tc_ifunc_reject_t check(uint64_t expect = 5)
    {
        return tc_frame_check_header(&hdr(), sizeof(buf), expect, nullptr);
    }

    alignas(64) uint8_t buf[2048];
};

TEST_F(frame_check, good_frames_of_every_type)
{
    tc_frame_info_t info;
    for (auto type : {TC_FRAME_LOCAL, TC_FRAME_INJECTED, TC_FRAME_CACHED}) {
        uint32_t size = build(type);
        EXPECT_EQ(0u, size % TC_FRAME_ALIGN);
        ASSERT_EQ(TC_IFUNC_REJECT_NONE,
                  tc_frame_check_header(&hdr(), sizeof(buf), 5, &info)) << type;
        EXPECT_EQ(type, info.type);
        EXPECT_EQ(size, info.frame_size);
        EXPECT_EQ(TC_FRAME_TRAILER(5), buf[size - 1]);
        EXPECT_EQ(0u, hdr().payload_offset % TC_FRAME_ALIGN);
    }
    build(TC_FRAME_INJECTED);
    EXPECT_EQ(TC_IFUNC_REJECT_NONE, tc_frame_check_symtab(&hdr(), buf));
    /* the shipped span hashes to the manifest's hash, slot as zero */
    EXPECT_EQ(tc_ifunc_pkg_elem(pkg, sum_id)->span_hash,
              tc_frame_span_hash(buf + hdr().code_offset, hdr().code_size, 0));
    EXPECT_EQ(TC_IFUNC_REJECT_NONE, check(TC_FRAME_SEQ_ANY));
}

TEST_F(frame_check, every_bad_field_has_its_reason)
{
    struct mutation {
        const char *what;
        tc_frame_type_t type;
        void (*edit)(tc_frame_hdr_t &h);
        tc_ifunc_reject_t reason;
    };
    const mutation mutations[] = {
        {"magic", TC_FRAME_LOCAL, [](auto &h) { h.signal ^= 1ull << 40; }, TC_IFUNC_REJECT_SIGNAL},
        {"version", TC_FRAME_LOCAL, [](auto &h) { h.version = 2; }, TC_IFUNC_REJECT_VERSION},
        {"header lines", TC_FRAME_LOCAL, [](auto &h) { h.hdr_lines = 1; }, TC_IFUNC_REJECT_VERSION},
        {"size 0", TC_FRAME_LOCAL, [](auto &h) { h.frame_size = 0; }, TC_IFUNC_REJECT_SIZE},
        {"size > slot", TC_FRAME_LOCAL, [](auto &h) { h.frame_size = 4096; }, TC_IFUNC_REJECT_SIZE},
        {"size unaligned", TC_FRAME_LOCAL, [](auto &h) { h.frame_size += 8; }, TC_IFUNC_REJECT_SIZE},
        {"seq", TC_FRAME_LOCAL, [](auto &h) { h.seq = 6; h.signal = TC_FRAME_SIGNAL(6); },
         TC_IFUNC_REJECT_SEQUENCE},
        {"signal seq", TC_FRAME_LOCAL, [](auto &h) { h.signal = TC_FRAME_SIGNAL(4); },
         TC_IFUNC_REJECT_SEQUENCE},
        {"type 0", TC_FRAME_LOCAL, [](auto &h) { h.type = 0; }, TC_IFUNC_REJECT_TYPE},
        {"type 5", TC_FRAME_LOCAL, [](auto &h) { h.type = 5; }, TC_IFUNC_REJECT_TYPE},
        {"flags", TC_FRAME_LOCAL, [](auto &h) { h.flags = 0x100; }, TC_IFUNC_REJECT_TYPE},
        {"payload outside", TC_FRAME_LOCAL, [](auto &h) { h.payload_offset = h.frame_size; },
         TC_IFUNC_REJECT_OFFSET},
        {"payload over trailer", TC_FRAME_LOCAL,
         [](auto &h) { h.payload_size = h.frame_size - h.payload_offset; }, TC_IFUNC_REJECT_OFFSET},
        {"payload in header", TC_FRAME_LOCAL, [](auto &h) { h.payload_offset = 64; },
         TC_IFUNC_REJECT_OFFSET},
        {"payload unaligned", TC_FRAME_LOCAL, [](auto &h) { h.payload_offset += 8; },
         TC_IFUNC_REJECT_OFFSET},
        {"payload wraps", TC_FRAME_LOCAL, [](auto &h) { h.payload_size = 0xfffffff0u; },
         TC_IFUNC_REJECT_OFFSET},
        {"local with code", TC_FRAME_LOCAL, [](auto &h) { h.entry_offset = 200; },
         TC_IFUNC_REJECT_OFFSET},
        {"code over payload", TC_FRAME_INJECTED, [](auto &h) { h.code_size += 4 * 64; },
         TC_IFUNC_REJECT_OFFSET},
        {"entry outside code", TC_FRAME_INJECTED,
         [](auto &h) { h.entry_offset = h.code_offset + h.code_size; }, TC_IFUNC_REJECT_OFFSET},
        {"got outside code", TC_FRAME_INJECTED,
         [](auto &h) { h.got_offset = h.code_offset + h.code_size - 4; }, TC_IFUNC_REJECT_OFFSET},
        {"got size", TC_FRAME_INJECTED, [](auto &h) { h.got_size = 4; }, TC_IFUNC_REJECT_OFFSET},
        {"code too small", TC_FRAME_INJECTED, [](auto &h) { h.code_size = 8; },
         TC_IFUNC_REJECT_OFFSET},
        {"symbols without table", TC_FRAME_INJECTED, [](auto &h) { h.symtab_size = 0; h.symtab_offset = 0; },
         TC_IFUNC_REJECT_OFFSET},
        {"symbols over payload", TC_FRAME_INJECTED,
         [](auto &h) { h.symtab_offset = h.payload_offset; }, TC_IFUNC_REJECT_OFFSET},
        {"cached with code", TC_FRAME_CACHED, [](auto &h) { h.code_size = 64; h.code_offset = 128; },
         TC_IFUNC_REJECT_OFFSET},
        {"cached without hash", TC_FRAME_CACHED, [](auto &h) { h.code_hash = 0; },
         TC_IFUNC_REJECT_CACHE_MISS},
    };
    for (const auto &m : mutations) {
        build(m.type);
        m.edit(hdr());
        EXPECT_EQ(m.reason, check()) << m.what << ": got "
                                     << tc_ifunc_reject_name(check());
    }
}

TEST_F(frame_check, symbol_names_are_checked)
{
    build(TC_FRAME_INJECTED);
    char *names = reinterpret_cast<char*>(buf + hdr().symtab_offset);
    names[0] = '9';                                  /* not an identifier */
    EXPECT_EQ(TC_IFUNC_REJECT_LINK, tc_frame_check_symtab(&hdr(), buf));
    build(TC_FRAME_INJECTED);
    std::memset(names, 'a', hdr().symtab_size);      /* never terminated */
    EXPECT_EQ(TC_IFUNC_REJECT_LINK, tc_frame_check_symtab(&hdr(), buf));
    build(TC_FRAME_INJECTED);
    ++hdr().num_symbols;                             /* more names than there are */
    EXPECT_EQ(TC_IFUNC_REJECT_LINK, tc_frame_check_symtab(&hdr(), buf));
}

/* ---- the package loader ---- */

TEST_F(ifunc_pkg_test, manifest_elements_and_registry)
{
    EXPECT_STREQ("tcbench", tc_ifunc_pkg_name(pkg));
    EXPECT_EQ(tc_frame_pkg_id("tcbench"), tc_ifunc_pkg_id(pkg));
    EXPECT_EQ(4u, tc_ifunc_pkg_element_count(pkg));
    EXPECT_EQ(3u, sum_id);
    EXPECT_EQ(1u, put_id);
    uint32_t id;
    EXPECT_EQ(UCS_ERR_NO_ELEM, tc_ifunc_pkg_element(pkg, "nope", &id));
    EXPECT_EQ(pkg, tc_ifunc_pkg_find(tc_frame_pkg_id("tcbench")));
    EXPECT_NE(nullptr, tc_ifunc_pkg_symbol(pkg, "tcbench_accumulator"));
    for (unsigned i = 0; i < 4; ++i) {
        EXPECT_NE(nullptr, tc_ifunc_pkg_elem(pkg, i)->got) << i;   /* all resolved */
    }

    /* the manifest path, the package directory and prefix+name: one package */
    tc_ifunc_pkg_h again;
    std::string dir = pkg_prefix() + "/share/twochains/tcbench";
    ASSERT_EQ(UCS_OK, tc_ifunc_pkg_load((dir + "/manifest").c_str(), nullptr, &again));
    EXPECT_EQ(pkg, again);
    tc_ifunc_pkg_unload(again);
    ASSERT_EQ(UCS_OK, tc_ifunc_pkg_load(dir.c_str(), nullptr, &again));
    EXPECT_EQ(pkg, again);
    tc_ifunc_pkg_unload(again);
}

/* A copy of the installed package with one manifest line edited */
class ifunc_bad_manifest : public ::testing::Test {
protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/tc-ifunc-pkg-XXXXXX";
        ASSERT_NE(nullptr, mkdtemp(tmpl));
        dir = tmpl;
        ASSERT_EQ(0, tc_test::run_command("cp -r " + pkg_prefix() + "/. " + dir).exit_code);
    }
    void TearDown() override { tc_test::run_command("rm -rf " + dir); }

    /* sed expression on the manifest, then load: must fail, naming @a needle */
    void expect_refused(const std::string &sed, const std::string &needle)
    {
        std::string manifest = dir + "/share/twochains/tcbench/manifest";
        ASSERT_EQ(0, tc_test::run_command("sed -i '" + sed + "' " + manifest).exit_code);
        tc_test::scoped_log_expect expect;
        tc_ifunc_pkg_h pkg = nullptr;
        EXPECT_NE(UCS_OK, tc_ifunc_pkg_load(dir.c_str(), "tcbench", &pkg)) << sed;
        EXPECT_EQ(nullptr, pkg);
        EXPECT_GE(expect.count(needle), 1u) << sed << ": " <<
                (expect.messages().empty() ? "(nothing logged)" : expect.messages()[0]);
    }

    std::string dir;
};

TEST_F(ifunc_bad_manifest, copy_loads)
{
    tc_ifunc_pkg_h pkg;
    ASSERT_EQ(UCS_OK, tc_ifunc_pkg_load(dir.c_str(), "tcbench", &pkg));
    tc_ifunc_pkg_unload(pkg);
}

TEST_F(ifunc_bad_manifest, absolute_library_path)
{
    expect_refused("s|^local [^ ]*|local /usr/lib/x86_64-linux-gnu/libc.so.6|", "not found");
}

TEST_F(ifunc_bad_manifest, library_outside_the_prefix)
{
    ASSERT_EQ(0, tc_test::run_command("cp " + dir + "/lib/libtcbench_local.so " + dir +
                                      "/share/libtcbench_local.so").exit_code);
    expect_refused("s|^local [^ ]*|local ../../libtcbench_local.so|", "refusing to load");
}

TEST_F(ifunc_bad_manifest, library_of_another_name)
{
    ASSERT_EQ(0, tc_test::run_command("cp " + dir + "/lib/libtcbench_local.so " + dir +
                                      "/lib/libevil.so").exit_code);
    expect_refused("s|^local [^ ]*|local ../../../lib/libevil.so|", "refusing to load");
}

TEST_F(ifunc_bad_manifest, ried_escaping_with_dotdot)
{
    expect_refused("s|^ried tcbench_state [^ ]*|ried tcbench_state ../../../../../../etc/passwd|",
                   "refusing to load");
}

TEST_F(ifunc_bad_manifest, span_hash_mismatch)
{
    expect_refused("s|^element 3 server_side_sum 96 [0-9a-f]*|element 3 server_side_sum 96 "
                   "0123456789abcdef|", "does not match the manifest");
}

TEST_F(ifunc_bad_manifest, jam_file_of_another_name)
{
    expect_refused("s|jam_ping.bin|../../../lib/libtcbench_local.so|", "is not 'jam_ping.bin'");
}

TEST_F(ifunc_bad_manifest, truncated_manifest)
{
    expect_refused("/^end/d", "incomplete manifest");
}

/* ---- one process, every jam, every mode (self transport) ---- */

/* placement, and the write lane ("auto": puts here; "am": the active
 * message, which carries a frame as one write) */
class ifunc_self : public ifunc_pkg_test,
                   public ::testing::WithParamInterface<std::tuple<tc_ifunc_placement_t,
                                                                   const char*>> {
protected:
    void SetUp() override
    {
        ifunc_pkg_test::SetUp();
        lane_env = std::make_unique<tc_test::scoped_env>("UCX_TC_WRITE_LANE",
                                                         std::get<1>(GetParam()));
        /* read UCX_TC_* now, as a process does at load, before UCP checks
         * for variables no table took */
        tc_config_t config;
        ASSERT_EQ(UCS_OK, tc_config_read(&config));
        tc_config_release(&config);
        ASSERT_EQ(UCS_OK, tc_bootstrap_create_from_env(&boot));
        ASSERT_EQ(1, tc_bootstrap_size(boot));
        ASSERT_EQ(UCS_OK, tc_ifunc_ucp_init(&ucp));
        tc_ifunc_mailbox_params_t params = {};
        params.field_mask  = TC_IFUNC_MAILBOX_PARAM_FIELD_PLACEMENT |
                             TC_IFUNC_MAILBOX_PARAM_FIELD_SECURITY |
                             TC_IFUNC_MAILBOX_PARAM_FIELD_TARGET_ARGS |
                             TC_IFUNC_MAILBOX_PARAM_FIELD_RING_DEPTH;
        params.placement   = std::get<0>(GetParam());
        /* in-place code runs where its sender can still write: trust only */
        params.security    = (params.placement == TC_IFUNC_PLACEMENT_INPLACE) ?
                             TC_IFUNC_SECURITY_TRUST : TC_IFUNC_SECURITY_VERIFY;
        params.target_args = target;
        params.ring_depth  = 8;
        ASSERT_EQ(UCS_OK, tc_ifunc_mailbox_create(ucp.context, ucp.engine, boot, &params,
                                                  &mbox));
    }
    void TearDown() override
    {
        if (mbox != nullptr) {
            tc_ifunc_mailbox_destroy(mbox);
        }
        tc_ifunc_ucp_cleanup(&ucp);
        if (boot != nullptr) {
            tc_bootstrap_destroy(boot);
        }
        ifunc_pkg_test::TearDown();
    }

    /* send until accepted, then run everything that arrived */
    void send(tc_ifunc_msg_h msg)
    {
        ucs_status_t status;
        while ((status = tc_ifunc_send(mbox, 0, msg)) == UCS_ERR_NO_RESOURCE) {
            tc_progress(ucp.engine);
        }
        ASSERT_TRUE((status == UCS_OK) || (status == UCS_INPROGRESS))
                << ucs_status_string(status);
    }
    void drain()
    {
        ASSERT_EQ(UCS_OK, tc_ifunc_mailbox_flush(mbox, 10));
        while (tc_progress(ucp.engine) != 0) {
        }
    }

    std::unique_ptr<tc_test::scoped_env> lane_env;
    tc_bootstrap_h   boot = nullptr;
    tc_ifunc_ucp_t   ucp  = {};
    tc_ifunc_mailbox_h mbox = nullptr;
    alignas(8) char  target[TCBENCH_TEXT_LEN] = {};
};

TEST_P(ifunc_self, every_jam_every_mode)
{
    const int64_t sum0   = state<int64_t>("tcbench_accumulator");
    const uint64_t ping0 = state<uint64_t>("tcbench_ping_count");
    int64_t expect_sum   = 0;
    int frames           = 0;

    /* Portable modes in real processes: test_ifunc_procs, ifunc_bad */
    for (int mode = 0; mode <= TC_IFUNC_MODE_CACHED; ++mode) {
        /* server_side_sum: payload = the values */
        int64_t v[4] = {mode + 1, 10, 100, -3};
        tc_ifunc_msg_h msg;
        ASSERT_EQ(UCS_OK, tc_ifunc_msg_create(mbox, pkg, sum_id, (tc_ifunc_mode_t)mode, v,
                                              sizeof(v), &msg));
        for (int i = 0; i < 20; ++i, ++frames) {
            v[0] = i;
            ASSERT_EQ(UCS_OK, tc_ifunc_msg_reinit(msg, v, sizeof(v)));
            send(msg);
            expect_sum += i + 10 + 100 - 3;
        }
        tc_ifunc_msg_free(msg);

        /* indirect_put: payload_init copies the pairs */
        tcbench_put_t p[2] = {{7, 0}, {900 + (uint64_t)mode, 0}};
        ASSERT_EQ(UCS_OK, tc_ifunc_msg_create(mbox, pkg, put_id, (tc_ifunc_mode_t)mode, p,
                                              sizeof(p), &msg));
        for (int i = 0; i < 5; ++i, ++frames) {
            p[0].value = mode * 100 + i;
            p[1].value = -i;
            ASSERT_EQ(UCS_OK, tc_ifunc_msg_reinit(msg, p, sizeof(p)));
            send(msg);
        }
        tc_ifunc_msg_free(msg);

        /* ping and calls_libc through the same target argument */
        uint32_t id;
        ASSERT_EQ(UCS_OK, tc_ifunc_pkg_element(pkg, "ping", &id));
        tcbench_ping_t ping = {42};
        ASSERT_EQ(UCS_OK, tc_ifunc_msg_create(mbox, pkg, id, (tc_ifunc_mode_t)mode, &ping,
                                              sizeof(ping), &msg));
        send(msg);
        ++frames;
        drain();
        tc_ifunc_msg_free(msg);
        EXPECT_EQ(ping0 + mode + 1, state<uint64_t>("tcbench_ping_count"));

        ASSERT_EQ(UCS_OK, tc_ifunc_pkg_element(pkg, "calls_libc", &id));
        char text[] = "hello";
        ASSERT_EQ(UCS_OK, tc_ifunc_msg_create(mbox, pkg, id, (tc_ifunc_mode_t)mode, text,
                                              sizeof(text), &msg));
        send(msg);
        ++frames;
        drain();
        tc_ifunc_msg_free(msg);
        EXPECT_STREQ("two-chains: got \"hello\" (6 bytes, sum 120025)", target) << mode;

        EXPECT_EQ(expect_sum, state<int64_t>("tcbench_accumulator") - sum0) << mode;
        const int64_t *array = &state<int64_t>("tcbench_array");
        EXPECT_EQ(mode * 100 + 4, array[7]);
        EXPECT_EQ(-4, array[900 + mode]);
    }

    tc_ifunc_stats_t st;
    tc_ifunc_mailbox_stats(mbox, &st);
    EXPECT_EQ(0u, st.rejects_total);
    EXPECT_EQ((uint64_t)frames, st.frames[0] + st.frames[1] + st.frames[2]);
    EXPECT_EQ(st.frames[TC_IFUNC_FRAME_LOCAL], (uint64_t)frames / 3);
    /* Cached: one Injected frame per element, then hash-only frames */
    EXPECT_EQ(4u + (uint64_t)frames / 3, st.frames[TC_IFUNC_FRAME_INJECTED]);
    EXPECT_EQ((uint64_t)frames / 3 - 4, st.frames[TC_IFUNC_FRAME_CACHED]);
    EXPECT_GT(st.credit_stalls, 0u);       /* depth 8, 20 frames in a row */
    /* the default check signal: Local and hash-only frames are compact, one
     * put each; frames with code are data, fence, signal over puts, and one
     * write on the active-message lane, whose handler stores a frame whole */
    const bool am = std::string(std::get<1>(GetParam())) == "am";
    ASSERT_EQ(TC_IFUNC_SIGNAL_CHECK, tc_ifunc_mailbox_signal(mbox));
    EXPECT_EQ(std::string(am ? "am " : "rma "),
              std::string(tc_ifunc_mailbox_write_lane(mbox, 0)).substr(0, am ? 3 : 4));
    const uint64_t with_code = st.frames[TC_IFUNC_FRAME_INJECTED];
    EXPECT_EQ((uint64_t)frames - with_code + with_code * (am ? 1 : 2), st.puts);
}

INSTANTIATE_TEST_SUITE_P(placement, ifunc_self,
                         ::testing::Combine(::testing::Values(TC_IFUNC_PLACEMENT_COPY,
                                                              TC_IFUNC_PLACEMENT_INPLACE),
                                            ::testing::Values("auto", "am")),
                         [](const auto &pinfo) {
                             return std::string(tc_ifunc_placement_names[std::get<0>(pinfo.param)]) +
                                    "_" + std::get<1>(pinfo.param);
                         });

/* ---- the public Two-Chains calls, in one process ---- */

class ucp_ifunc_api : public ifunc_pkg_test {
protected:
    void SetUp() override
    {
        ifunc_pkg_test::SetUp();
        ASSERT_EQ(UCS_OK, tc_ifunc_ucp_init(&ucp));
        ucp_mem_map_params_t mp = {};
        mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                        UCP_MEM_MAP_PARAM_FIELD_FLAGS;
        mp.length = sizeof_heap;
        mp.flags  = UCP_MEM_MAP_ALLOCATE;
        ASSERT_EQ(UCS_OK, ucp_mem_map(ucp.context, &mp, &memh));
        ucp_mem_attr_t attr;
        attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
        ASSERT_EQ(UCS_OK, ucp_mem_query(memh, &attr));
        heap = attr.address;
        std::memset(heap, 0, sizeof_heap);

        void *rkey_buf;
        size_t rkey_len;
        ASSERT_EQ(UCS_OK, ucp_rkey_pack(ucp.context, memh, &rkey_buf, &rkey_len));
        ucp_address_t *addr;
        size_t addr_len;
        ASSERT_EQ(UCS_OK, ucp_worker_get_address(ucp.worker, &addr, &addr_len));
        ucp_ep_params_t ep_params = {};
        ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
        ep_params.address    = addr;
        ASSERT_EQ(UCS_OK, ucp_ep_create(ucp.worker, &ep_params, &ep));
        ucp_worker_release_address(ucp.worker, addr);
        ASSERT_EQ(UCS_OK, ucp_ep_rkey_unpack(ep, rkey_buf, &rkey));
        ucp_rkey_buffer_release(rkey_buf);
    }
    void TearDown() override
    {
        if (rkey != nullptr) {
            ucp_rkey_destroy(rkey);
        }
        if (ep != nullptr) {
            ucp_request_param_t param = {};
            tc_ifunc_request_wait(ucp.engine, ucp_ep_close_nbx(ep, &param), 5);
        }
        if (memh != nullptr) {
            ucp_mem_unmap(ucp.context, memh);
        }
        tc_ifunc_ucp_cleanup(&ucp);
        ifunc_pkg_test::TearDown();
    }
    void flush()
    {
        ucp_request_param_t param = {};
        ASSERT_EQ(UCS_OK, tc_ifunc_request_wait(ucp.engine,
                                                 ucp_worker_flush_nbx(ucp.worker, &param), 5));
    }

    static constexpr size_t sizeof_heap = 8192;
    tc_ifunc_ucp_t ucp  = {};
    ucp_mem_h      memh = nullptr;
    void           *heap = nullptr;
    ucp_ep_h       ep   = nullptr;
    ucp_rkey_h     rkey = nullptr;
};

TEST_F(ucp_ifunc_api, register_create_send_poll)
{
    ucp_ifunc_h ih;
    ASSERT_EQ(UCS_OK, ucp_register_ifunc(ucp.context, "server_side_sum", &ih));
    const int64_t sum0 = state<int64_t>("tcbench_accumulator");

    int64_t v[3] = {1, 2, 39};
    ucp_ifunc_msg_t msg;
    ASSERT_EQ(UCS_OK, ucp_ifunc_msg_create(ih, v, sizeof(v), &msg));
    void *payload;
    size_t payload_size;
    ASSERT_EQ(UCS_OK, ucp_ifunc_msg_get_payload_ptr(&msg, &payload, &payload_size));
    EXPECT_EQ(sizeof(v), payload_size);
    EXPECT_EQ(0, std::memcmp(payload, v, sizeof(v)));

    EXPECT_EQ(UCS_ERR_NO_MESSAGE, ucp_poll_ifunc(ucp.context, heap, sizeof_heap, nullptr));
    for (int i = 0; i < 3; ++i) {
        ucs_status_t status = ucp_ifunc_send_nbix(ep, msg, (uintptr_t)heap, rkey);
        ASSERT_TRUE((status == UCS_OK) || (status == UCS_INPROGRESS));
        flush();
        EXPECT_EQ(UCS_OK, ucp_poll_ifunc(ucp.context, heap, sizeof_heap, nullptr));
        EXPECT_EQ(UCS_ERR_NO_MESSAGE, ucp_poll_ifunc(ucp.context, heap, sizeof_heap, nullptr));
    }
    EXPECT_EQ(3 * 42, state<int64_t>("tcbench_accumulator") - sum0);

    /* a frame larger than the buffer polled: not a frame yet until the
     * trailer timeout (100 ms), then rejected, not run */
    {
        tc_test::scoped_log_expect expect;
        ucs_status_t status = ucp_ifunc_send_nbix(ep, msg, (uintptr_t)heap, rkey);
        ASSERT_TRUE((status == UCS_OK) || (status == UCS_INPROGRESS));
        flush();
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (((status = ucp_poll_ifunc(ucp.context, heap, 256, nullptr)) ==
                UCS_ERR_NO_MESSAGE) && (std::chrono::steady_clock::now() < deadline)) {
        }
        EXPECT_EQ(UCS_ERR_CANCELED, status);
        EXPECT_EQ(1u, expect.count("rejected frame"));
        EXPECT_EQ(UCS_ERR_NO_MESSAGE, ucp_poll_ifunc(ucp.context, heap, sizeof_heap, nullptr));
    }
    EXPECT_EQ(3 * 42, state<int64_t>("tcbench_accumulator") - sum0);

    ucp_ifunc_msg_free(msg);
    ucp_deregister_ifunc(ucp.context, ih);
}

TEST_F(ucp_ifunc_api, unknown_ifunc)
{
    tc_test::scoped_log_expect expect;
    ucp_ifunc_h ih;
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucp_register_ifunc(ucp.context, "no_such_jam", &ih));
    EXPECT_EQ(1u, expect.count("no_such_jam"));
}

TEST(ifunc_config, table_is_registered_and_documented)
{
    char *text  = nullptr;
    size_t size = 0;
    FILE *f     = open_memstream(&text, &size);
    tc_ifunc_config_print(f, 1);
    fclose(f);
    std::string s(text, size);
    std::free(text);
    for (auto var : {"UCX_TC_IFUNC_SECURITY=verify", "UCX_TC_IFUNC_PLACEMENT=copy",
                     "UCX_TC_IFUNC_SIGNAL=check", "UCX_TC_IFUNC_SLOT_SIZE",
                     "UCX_TC_IFUNC_RING_DEPTH", "UCX_TC_IFUNC_TRAILER_TIMEOUT",
                     "UCX_TC_IFUNC_PKG_PATH"}) {
        EXPECT_NE(std::string::npos, s.find(var)) << var << "\n" << s;
    }
}

/* ---- Portable frames, byte by byte ---- */

/* One ring's receiver in this process, judging frames written into its
 * slot: what a mailbox's poll does, without the transport */
class portable_frames : public ifunc_pkg_test,
                        public ::testing::WithParamInterface<tc_ifunc_security_t> {
protected:
    static constexpr uint32_t slot_size = 8192;

    void SetUp() override
    {
        ifunc_pkg_test::SetUp();
        rx.security        = GetParam();
        rx.placement       = TC_IFUNC_PLACEMENT_COPY;
        rx.trailer_timeout = 0;   /* an incomplete frame is a reject at once */
        rx.portable_wait   = 1;   /* a ring may wait for a compile, as a mailbox's */
        rx.rank            = 0;
        rx.stats           = &stats;
        tc_code_cache_init(&rx.cache, 16);
        tc_ifunc_ring_init(&ring, slot, 1, 64);
    }
    void TearDown() override
    {
        tc_ifunc_ring_cleanup(&ring);
        tc_code_cache_cleanup(&rx.cache);
        ifunc_pkg_test::TearDown();
    }

    /* A Portable frame of server_side_sum with this host's module */
    uint32_t build(std::vector<uint8_t> &frame)
    {
        const tc_ifunc_element_t *e = tc_ifunc_pkg_elem(pkg, sum_id);
        const tc_ifunc_portable_bc_t *bc = tc_ifunc_elem_portable(e, tc_portable_host_triple());
        char detail[192];
        size_t size;
        tc_frame_desc_t desc;

        EXPECT_NE(nullptr, bc);
        std::unique_ptr<uint8_t, decltype(&free)> module(
                tc_portable_read_module(bc->path, bc->bc_hash, &size, detail, sizeof(detail)),
                &free);
        EXPECT_NE(nullptr, module.get()) << detail;
        frame.assign(slot_size, 0);
        tc_frame_prepare_portable(frame.data(), pkg, e, module.get(), (uint32_t)size,
                                  (uint32_t)size, bc->bc_hash, &desc);
        auto *payload = reinterpret_cast<int64_t*>(frame.data() + desc.payload_offset);
        for (int j = 0; j < 5; ++j) {
            payload[j] = 1000 + j;
        }
        return tc_frame_stamp(frame.data(), &desc, TC_FRAME_PORTABLE, TC_FRAME_F_CACHE, 0, 1,
                              5 * sizeof(int64_t));
    }

    /* The sum a frame that runs must add: its own payload, as the header
     * it carries places it */
    static int64_t payload_sum(const std::vector<uint8_t> &frame)
    {
        tc_frame_hdr_t h;
        int64_t sum = 0, v;

        std::memcpy(&h, frame.data(), sizeof(h));
        for (uint32_t off = 0; off + 8 <= h.payload_size; off += 8) {
            std::memcpy(&v, frame.data() + h.payload_offset + off, 8);
            sum += v;
        }
        return sum;
    }

    /* Judge the frame in the slot until it ran or was rejected (a compile
     * or a trailer wait says pending) */
    tc_ifunc_slot_result_t judge(uint32_t in_slot)
    {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        tc_ifunc_slot_result_t r;

        do {
            r = tc_ifunc_slot_process(&rx, &ring, slot, in_slot, 0);
        } while ((r == TC_IFUNC_SLOT_PENDING) &&
                 (std::chrono::steady_clock::now() < deadline));
        return r;
    }

    alignas(64) uint8_t slot[slot_size];
    tc_ifunc_stats_t stats{};
    tc_ifunc_rx_t    rx{};
    tc_ifunc_ring_t  ring;
};

/* Every byte of a Portable frame flipped, and every truncation: each
 * variant is rejected or runs, with exactly the effect of the payload it
 * carries, and never crashes; what runs is only the module of the hash
 * (trust: a flipped module no longer hashes to it; verify: the frame's
 * module is never read). The original runs before and after. */
TEST_P(portable_frames, every_truncation_and_byte_flip_is_rejected_or_runs)
{
    std::vector<uint8_t> good, frame;
    const uint32_t size = build(good);
    int64_t &acc        = state<int64_t>("tcbench_accumulator");
    int64_t expect      = acc + payload_sum(good);
    uint64_t ran = 0, rejected = 0;
    tc_test::scoped_log_expect rejects_are_logged;

    std::memcpy(slot, good.data(), slot_size);
    ASSERT_EQ(TC_IFUNC_SLOT_RUN, judge(slot_size));
    ASSERT_EQ(expect, acc);

    tc_frame_hdr_t h;
    std::memcpy(&h, good.data(), sizeof(h));
    for (uint32_t i = 0; i < size; ++i) {
        frame = good;
        frame[i] ^= 0xff;
        std::memcpy(slot, frame.data(), slot_size);
        const int64_t before = acc;
        const auto r         = judge(slot_size);
        const bool in_module = (i >= h.code_offset) && (i < h.code_offset + h.code_size);
        if (in_module) {
            /* the hash names code compiled already (verify: from our own
             * package's module; trust: from a copy that hashed to it), so
             * the frame's module bytes are not read again and change
             * nothing; a module whose hash is new and does not match is
             * ifunc_bad's portable_hash_mismatch, in a fresh process */
            ASSERT_EQ(TC_IFUNC_SLOT_RUN, r) << "module byte " << i - h.code_offset;
        }
        if (r == TC_IFUNC_SLOT_RUN) {
            ++ran;
            ASSERT_EQ(before + payload_sum(frame), acc) << "byte " << i;
        } else if (r == TC_IFUNC_SLOT_REJECTED) {
            ++rejected;
            ASSERT_EQ(before, acc) << "byte " << i;
        } else if (r != TC_IFUNC_SLOT_EMPTY) {   /* a flipped signal: no frame at all */
            FAIL() << "byte " << i << " left the frame pending";
        }
    }
    for (uint32_t len = 0; len < size; len += 1) {
        std::memset(slot, 0, slot_size);
        std::memcpy(slot, good.data(), len);
        const int64_t before = acc;
        const auto r         = judge(slot_size);
        EXPECT_NE(TC_IFUNC_SLOT_RUN, r) << len << " bytes";
        ASSERT_EQ(before, acc) << len << " bytes";
    }
    std::memcpy(slot, good.data(), slot_size);
    expect = acc + payload_sum(good);
    ASSERT_EQ(TC_IFUNC_SLOT_RUN, judge(slot_size));
    EXPECT_EQ(expect, acc);
    EXPECT_GT(rejected, 0u) << ran << " ran";
}

INSTANTIATE_TEST_SUITE_P(security, portable_frames,
                         ::testing::Values(TC_IFUNC_SECURITY_VERIFY, TC_IFUNC_SECURITY_TRUST),
                         [](const auto &p) {
                             return std::string(tc_ifunc_security_names[p.param]);
                         });

} // namespace

namespace {

/* The mailbox on the caller's endpoints (here: one to our own worker) */
TEST_F(ifunc_pkg_test, mailbox_on_callers_endpoints)
{
    tc_bootstrap_h boot;
    tc_ifunc_ucp_t ucp;
    ASSERT_EQ(UCS_OK, tc_bootstrap_create_from_env(&boot));
    ASSERT_EQ(UCS_OK, tc_ifunc_ucp_init(&ucp));

    ucp_address_t *addr;
    size_t addr_len;
    ucp_ep_h ep;
    ASSERT_EQ(UCS_OK, ucp_worker_get_address(ucp.worker, &addr, &addr_len));
    ucp_ep_params_t ep_params = {};
    ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep_params.address    = addr;
    ASSERT_EQ(UCS_OK, ucp_ep_create(ucp.worker, &ep_params, &ep));
    ucp_worker_release_address(ucp.worker, addr);

    tc_ifunc_mailbox_params_t params = {};
    params.field_mask = TC_IFUNC_MAILBOX_PARAM_FIELD_EPS;
    params.eps        = &ep;
    tc_ifunc_mailbox_h mbox;
    ASSERT_EQ(UCS_OK, tc_ifunc_mailbox_create(ucp.context, ucp.engine, boot, &params, &mbox));

    const int64_t sum0 = state<int64_t>("tcbench_accumulator");
    int64_t v[2] = {20, 22};
    tc_ifunc_msg_h msg;
    ASSERT_EQ(UCS_OK, tc_ifunc_msg_create(mbox, pkg, sum_id, TC_IFUNC_MODE_INJECTED, v,
                                          sizeof(v), &msg));
    ucs_status_t status;
    while ((status = tc_ifunc_send(mbox, 0, msg)) == UCS_ERR_NO_RESOURCE) {
        tc_progress(ucp.engine);   /* first contact: the ring's grant */
    }
    ASSERT_TRUE((status == UCS_OK) || (status == UCS_INPROGRESS));
    ASSERT_EQ(UCS_OK, tc_ifunc_mailbox_flush(mbox, 5));
    while (tc_ifunc_poll(mbox, 0) == 0) {
        tc_progress(ucp.engine);
    }
    EXPECT_EQ(42, state<int64_t>("tcbench_accumulator") - sum0);
    tc_ifunc_msg_free(msg);
    tc_ifunc_mailbox_destroy(mbox);

    /* still ours after the mailbox is gone */
    ucp_request_param_t param = {};
    EXPECT_EQ(UCS_OK, tc_ifunc_request_wait(ucp.engine, ucp_ep_close_nbx(ep, &param), 5));
    tc_ifunc_ucp_cleanup(&ucp);
    tc_bootstrap_destroy(boot);
}

/* In-place code runs in the slot its sender can still write: only trust
 * may place it there; verify and local-only are refused at creation */
TEST_F(ifunc_pkg_test, inplace_placement_is_refused_unless_trusted)
{
    tc_bootstrap_h boot;
    tc_ifunc_ucp_t ucp;
    ASSERT_EQ(UCS_OK, tc_bootstrap_create_from_env(&boot));
    ASSERT_EQ(UCS_OK, tc_ifunc_ucp_init(&ucp));
    for (auto security : {TC_IFUNC_SECURITY_VERIFY, TC_IFUNC_SECURITY_LOCAL_ONLY,
                          TC_IFUNC_SECURITY_TRUST}) {
        SCOPED_TRACE(tc_ifunc_security_names[security]);
        tc_ifunc_mailbox_params_t params = {};
        params.field_mask = TC_IFUNC_MAILBOX_PARAM_FIELD_PLACEMENT |
                            TC_IFUNC_MAILBOX_PARAM_FIELD_SECURITY;
        params.placement  = TC_IFUNC_PLACEMENT_INPLACE;
        params.security   = security;
        tc_ifunc_mailbox_h mbox = nullptr;
        tc_test::scoped_log_expect expect;
        const ucs_status_t status = tc_ifunc_mailbox_create(ucp.context, ucp.engine, boot,
                                                            &params, &mbox);
        if (security == TC_IFUNC_SECURITY_TRUST) {
            ASSERT_EQ(UCS_OK, status);
            EXPECT_TRUE(expect.messages().empty());
            tc_ifunc_mailbox_destroy(mbox);
        } else {
            EXPECT_EQ(UCS_ERR_INVALID_PARAM, status);
            EXPECT_EQ(1u, expect.count("allowed only with security 'trust'"));
        }
    }
    tc_ifunc_ucp_cleanup(&ucp);
    tc_bootstrap_destroy(boot);
}

} // namespace
