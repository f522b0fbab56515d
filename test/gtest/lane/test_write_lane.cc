/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The write lane (ucx_ext/lane/write_lane.c) between two real UCP workers
 * over posix and tcp: the lane each mode chooses, checked bytes, data kept
 * before its counter, and every bad write on the active-message lane
 * rejected, counted and logged once while the next good one lands.
 */
#include "common.h"

#include <twochains/config.h>
#include <twochains/lane.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace {

/* A sender set as the lane takes it: bit i of word i / 64 for sender i. */
struct sender_bits {
    std::vector<uint64_t> words;

    sender_bits(std::initializer_list<uint32_t> ids)
    {
        for (uint32_t id : ids) {
            if (id / 64 >= words.size()) {
                words.resize(id / 64 + 1, 0);
            }
            words[id / 64] |= uint64_t{1} << (id % 64);
        }
    }
    size_t bits() const { return words.size() * 64; }
};

/* Two workers of one context, an endpoint from the sender to the receiver,
 * and a write lane on each (the receiver's stores, the sender's sends). */
class lane_pair {
public:
    lane_pair(const std::string &tls, const char *mode)
    {
        tc_test::scoped_env env_tls("UCX_TLS", tls.c_str());
        tc_test::scoped_env env_mode("UCX_TC_WRITE_LANE", mode);
        /* a process reads UCX_TC_* when it loads the library; this test
         * sets them later, so read them before UCP checks for unused ones */
        tc_config_t tc_config;
        EXPECT_EQ(UCS_OK, tc_config_read(&tc_config));
        tc_config_release(&tc_config);
        ucp_config_t *config;
        EXPECT_EQ(UCS_OK, ucp_config_read(nullptr, nullptr, &config));
        ucp_params_t params{};
        params.field_mask = UCP_PARAM_FIELD_FEATURES;
        params.features   = UCP_FEATURE_RMA | UCP_FEATURE_AM;
        EXPECT_EQ(UCS_OK, ucp_init(&params, config, &context_));
        ucp_config_release(config);
        ucp_worker_params_t wparams{};
        EXPECT_EQ(UCS_OK, ucp_worker_create(context_, &wparams, &sender_));
        EXPECT_EQ(UCS_OK, ucp_worker_create(context_, &wparams, &receiver_));
        EXPECT_EQ(UCS_OK, tc_write_lane_create(sender_, &send_lane_));
        EXPECT_EQ(UCS_OK, tc_write_lane_create(receiver_, &recv_lane_));

        ucp_address_t *address;
        size_t length;
        EXPECT_EQ(UCS_OK, ucp_worker_get_address(receiver_, &address, &length));
        ucp_ep_params_t ep_params{};
        ep_params.field_mask      = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                                    UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
        ep_params.address         = address;
        /* as the replication layer's: peer errors where the transport
         * has them (not shared memory) */
        peer_errors_              = (tls.rfind("tcp", 0) == 0);
        ep_params.err_mode        = peer_errors_ ? UCP_ERR_HANDLING_MODE_PEER :
                                                   UCP_ERR_HANDLING_MODE_NONE;
        EXPECT_EQ(UCS_OK, ucp_ep_create(sender_, &ep_params, &ep_));
        ucp_worker_release_address(receiver_, address);
        /* the receiver's endpoint back: UCP matches it with ep_ into one
         * pair, and the lane knows a sender by it */
        EXPECT_EQ(UCS_OK, ucp_worker_get_address(sender_, &address, &length));
        ep_params.address = address;
        EXPECT_EQ(UCS_OK, ucp_ep_create(receiver_, &ep_params, &back_ep_));
        ucp_worker_release_address(sender_, address);

        ucp_mem_map_params_t map{};
        map.field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
        map.length     = kRegion;
        map.flags      = UCP_MEM_MAP_ALLOCATE;
        EXPECT_EQ(UCS_OK, ucp_mem_map(context_, &map, &memh_));
        ucp_mem_attr_t attr{};
        attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
        EXPECT_EQ(UCS_OK, ucp_mem_query(memh_, &attr));
        region_ = static_cast<uint8_t*>(attr.address);
        std::memset(region_, 0, kRegion);
        void *packed;
        size_t packed_len;
        EXPECT_EQ(UCS_OK, ucp_rkey_pack(context_, memh_, &packed, &packed_len));
        EXPECT_EQ(UCS_OK, ucp_ep_rkey_unpack(ep_, packed, &rkey_));
        ucp_rkey_buffer_release(packed);
        kind_ = tc_write_lane_resolve(send_lane_, ep_);
    }

    ~lane_pair()
    {
        ucp_rkey_destroy(rkey_);
        ucp_request_param_t param{};
        param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        param.flags        = peer_errors_ ? UCP_EP_CLOSE_FLAG_FORCE : 0;
        wait(ucp_ep_close_nbx(ep_, &param));
        wait(ucp_ep_close_nbx(back_ep_, &param));
        tc_write_lane_destroy(send_lane_);
        tc_write_lane_destroy(recv_lane_);
        ucp_mem_unmap(context_, memh_);
        ucp_worker_destroy(sender_);
        ucp_worker_destroy(receiver_);
        ucp_cleanup(context_);
    }

    static constexpr size_t kRegion = 64 * 1024;

    void progress()
    {
        ucp_worker_progress(sender_);
        ucp_worker_progress(receiver_);
    }

    ucs_status_t wait(ucs_status_ptr_t req)
    {
        if (UCS_PTR_IS_ERR(req)) {
            return UCS_PTR_STATUS(req);
        }
        if (req == nullptr) {
            return UCS_OK;
        }
        ucs_status_t status;
        while ((status = ucp_request_check_status(req)) == UCS_INPROGRESS) {
            progress();
        }
        ucp_request_free(req);
        return status;
    }

    /* the region the writes go to: [base, base+len) for @a senders */
    ucs_status_t allow(void *base, size_t len, const sender_bits &senders)
    {
        return tc_write_lane_allow(recv_lane_, base, len, senders.words.data(), senders.bits(),
                                   &key_);
    }

    /* a write, completed at the sender, then the receiver drained; to the
     * region last allowed unless @a key names another */
    ucs_status_t write(const void *src, size_t len, uint64_t raddr, uint32_t sender = 0,
                       uint64_t key = 0)
    {
        tc_write_header_t header{};
        ucp_request_param_t param{};
        if (bind_on_write && sender < (1u << 20)) {
            /* the honest case: the sender is who it says */
            EXPECT_EQ(UCS_OK, tc_write_lane_bind_sender(recv_lane_, sender, back_ep_));
        }
        ucs_status_t status = wait(tc_write_lane_write(send_lane_, kind_, ep_, sender, src, len,
                                                       raddr, rkey_, key ? key : key_, &param,
                                                       &header));
        am_sent_ += (kind_ == TC_WRITE_LANE_AM);
        drain();
        return status;
    }

    /* an active message of the lane's id, not sent by the lane */
    void send_raw(const void *header, size_t header_len, const void *data, size_t len)
    {
        ucp_request_param_t param{};
        param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        param.flags        = UCP_AM_SEND_FLAG_EAGER;
        wait(ucp_am_send_nbx(ep_, TC_WRITE_LANE_AM_ID, header, header_len, data, len, &param));
        ++am_sent_;
        drain();
    }

    /* everything sent so far has been handled at the receiver: puts are
     * flushed; active messages counted, stored or rejected */
    void drain()
    {
        ucp_request_param_t param{};
        wait(ucp_ep_flush_nbx(ep_, &param));
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while ((handled() < am_sent_) && (std::chrono::steady_clock::now() < deadline)) {
            progress();
        }
        EXPECT_EQ(am_sent_, handled());
    }

    uint64_t handled() const
    {
        const auto s = stats();
        return s.stored + s.rejected_malformed + s.rejected_unknown + s.rejected_range +
               s.rejected_sender + s.rejected_forged + s.dropped_late;
    }

    uint64_t base() const { return reinterpret_cast<uintptr_t>(region_); }

    tc_write_lane_stats_t stats() const
    {
        tc_write_lane_stats_t s{};
        tc_write_lane_query(recv_lane_, &s);
        return s;
    }

    ucp_context_h        context_ = nullptr;
    ucp_worker_h         sender_ = nullptr, receiver_ = nullptr;
    tc_write_lane_h      send_lane_ = nullptr, recv_lane_ = nullptr;
    ucp_ep_h             ep_      = nullptr;
    ucp_ep_h             back_ep_ = nullptr;   /* receiver -> sender */
    bool                 bind_on_write = true;
    ucp_mem_h            memh_    = nullptr;
    ucp_rkey_h           rkey_    = nullptr;
    uint8_t              *region_ = nullptr;
    uint64_t             key_     = 0;   /* of the region last allowed */
    bool                 peer_errors_ = true;
    uint64_t             am_sent_     = 0;
    tc_write_lane_mode_t kind_    = TC_WRITE_LANE_AUTO;
};

std::vector<uint8_t> pattern(size_t len, uint8_t seed)
{
    std::vector<uint8_t> v(len);
    for (size_t i = 0; i < len; ++i) {
        v[i] = static_cast<uint8_t>(seed + i * 7);
    }
    return v;
}

struct lane_case {
    const char *tls;
    const char *mode;
    tc_write_lane_mode_t expected;
};

class write_lane : public testing::TestWithParam<lane_case> {};

} // namespace

TEST_P(write_lane, chooses_the_lane_and_the_bytes_land)
{
    lane_pair p(GetParam().tls, GetParam().mode);
    EXPECT_EQ(GetParam().expected, p.kind_);
    ASSERT_EQ(UCS_OK, p.allow(p.region_, p.kRegion, {0}));

    for (size_t len : {size_t{1}, size_t{8}, size_t{192}, size_t{4096}, p.kRegion - 64}) {
        const auto src = pattern(len, static_cast<uint8_t>(len));
        ASSERT_EQ(UCS_OK, p.write(src.data(), len, p.base() + 64, 0));
        EXPECT_EQ(0, std::memcmp(src.data(), p.region_ + 64, len)) << len << " bytes";
    }
    char name[80];
    tc_write_lane_describe(p.send_lane_, p.ep_, name, sizeof(name));
    EXPECT_EQ(0, std::strncmp(name, tc_write_lane_mode_names[GetParam().expected],
                              std::strlen(tc_write_lane_mode_names[GetParam().expected])))
        << name;
    const auto s = p.stats();
    EXPECT_EQ((GetParam().expected == TC_WRITE_LANE_AM) ? 5u : 0u, s.stored);
    EXPECT_EQ(0u, s.rejected_malformed + s.rejected_unknown + s.rejected_range +
                  s.rejected_sender);
}

/* A counter written after its data, with no completion waited between,
 * is never seen before the data: the order a fence gives puts. */
TEST_P(write_lane, data_stays_before_its_counter)
{
    lane_pair p(GetParam().tls, GetParam().mode);
    ASSERT_EQ(UCS_OK, p.allow(p.region_, p.kRegion, {0}));
    ASSERT_EQ(UCS_OK, tc_write_lane_bind_sender(p.recv_lane_, 0, p.back_ep_));
    constexpr size_t kData = 1024;
    constexpr uint64_t kRounds = 2000;
    std::vector<uint64_t> data(kData / sizeof(uint64_t));
    uint64_t counter = 0;
    uint64_t violations = 0, last_seen = 0;
    tc_write_header_t data_header{}, counter_header{};
    ucp_request_param_t param{};
    for (uint64_t i = 1; i <= kRounds; ++i) {
        std::fill(data.begin(), data.end(), i);
        counter = i;
        ucs_status_ptr_t r1 = tc_write_lane_write(p.send_lane_, p.kind_, p.ep_, 0, data.data(),
                                                  kData, p.base() + 64, p.rkey_, p.key_, &param,
                                                  &data_header);
        ASSERT_EQ(UCS_OK, ucp_worker_fence(p.sender_));
        ucs_status_ptr_t r2 = tc_write_lane_write(p.send_lane_, p.kind_, p.ep_, 0, &counter,
                                                  sizeof(counter), p.base(), p.rkey_, p.key_, &param,
                                                  &counter_header);
        /* watch the receiver while both are in flight */
        for (int k = 0; k < 4; ++k) {
            p.progress();
            uint64_t seen, first, last;
            std::memcpy(&seen, p.region_, sizeof(seen));
            std::memcpy(&first, p.region_ + 64, sizeof(first));
            std::memcpy(&last, p.region_ + 64 + kData - sizeof(last), sizeof(last));
            violations += (first < seen) || (last < seen);
            last_seen = std::max(last_seen, seen);
        }
        ASSERT_EQ(UCS_OK, p.wait(r1));
        ASSERT_EQ(UCS_OK, p.wait(r2));
        p.am_sent_ += (p.kind_ == TC_WRITE_LANE_AM) ? 2 : 0;
    }
    p.drain();
    uint64_t seen;
    std::memcpy(&seen, p.region_, sizeof(seen));
    EXPECT_EQ(kRounds, seen);
    EXPECT_EQ(0u, violations);
}

INSTANTIATE_TEST_SUITE_P(
    lanes, write_lane,
    testing::Values(lane_case{"posix,self", "auto", TC_WRITE_LANE_RMA},
                    lane_case{"tcp,self", "auto", TC_WRITE_LANE_AM},
                    lane_case{"posix,self", "am", TC_WRITE_LANE_AM},
                    lane_case{"tcp,self", "rma", TC_WRITE_LANE_RMA}),
    [](const testing::TestParamInfo<lane_case> &c) {
        std::string tls = c.param.tls;
        return tls.substr(0, tls.find(',')) + "_" + c.param.mode;
    });

class write_lane_rejects : public testing::TestWithParam<const char*> {};

/* Every kind of bad write from the wire: counted by reason, logged once
 * per reason, the region's bytes untouched, and the next good write lands. */
TEST_P(write_lane_rejects, bad_writes_are_counted_and_the_next_one_lands)
{
    lane_pair p(GetParam(), "am");
    ASSERT_EQ(TC_WRITE_LANE_AM, p.kind_);
    /* the region is the second half; sender 2 only */
    uint8_t *half = p.region_ + p.kRegion / 2;
    const uint64_t half_addr = p.base() + p.kRegion / 2;
    ASSERT_EQ(UCS_OK, p.allow(half, p.kRegion / 2, {2}));
    const uint64_t key = p.key_;
    tc_test::scoped_log_expect logs;
    uint64_t overlap_key = 0;
    EXPECT_EQ(UCS_ERR_ALREADY_EXISTS,
              tc_write_lane_allow(p.recv_lane_, half + 8, 8, nullptr, 0, &overlap_key));
    EXPECT_EQ(1u, logs.count("overlaps"));
    const auto bad  = pattern(256, 0xa5);
    uint64_t good_n = 0;
    auto good = [&] {
        const auto src = pattern(128, static_cast<uint8_t>(++good_n));
        ASSERT_EQ(UCS_OK, p.write(src.data(), src.size(), half_addr + 1024, 2));
        EXPECT_EQ(0, std::memcmp(src.data(), half + 1024, src.size())) << "good write " << good_n;
    };

    for (int twice = 0; twice < 2; ++twice) {
        good();
        p.write(bad.data(), bad.size(), half_addr + 64, 2, key + 100);  /* a key never given */
        good();
        p.write(bad.data(), bad.size(), p.base() + 64, 2);              /* before the region */
        good();
        p.write(bad.data(), bad.size(), half_addr + p.kRegion / 2 - 100, 2); /* past its end */
        good();
        p.write(bad.data(), bad.size(), half_addr + 4096, 3);          /* not a member */
        good();
        p.write(bad.data(), bad.size(), half_addr + 4096, 64);         /* no such sender */
        good();
        /* a header that is not the lane's: too short, then a bad magic */
        uint64_t short_header = half_addr + 4096;
        p.send_raw(&short_header, sizeof(short_header), bad.data(), bad.size());
        good();
        tc_write_header_t forged{half_addr + 4096, key, 2, 0x12345678};
        p.send_raw(&forged, sizeof(forged), bad.data(), bad.size());
        good();
    }
    for (size_t i = 0; i < p.kRegion / 2; ++i) {
        if ((i >= 1024) && (i < 1024 + 128)) {
            continue;
        }
        ASSERT_EQ(0, half[i]) << "a rejected write stored byte " << i;
    }
    for (size_t i = 0; i < p.kRegion / 2; ++i) {
        ASSERT_EQ(0, p.region_[i]) << "a write outside every region stored byte " << i;
    }

    const auto s = p.stats();
    EXPECT_EQ(good_n, s.stored);
    EXPECT_EQ(4u, s.rejected_malformed);
    EXPECT_EQ(2u, s.rejected_unknown);
    EXPECT_EQ(4u, s.rejected_range);
    EXPECT_EQ(0u, s.dropped_late);
    EXPECT_EQ(4u, s.rejected_sender);
    EXPECT_EQ(1u, logs.count("rejected a malformed write"));
    EXPECT_EQ(1u, logs.count("rejected a unknown-region write"));
    EXPECT_EQ(1u, logs.count("rejected a out-of-range write"));
    EXPECT_EQ(1u, logs.count("rejected a non-member write"));

    /* a write for a forbidden region is late: dropped, its bytes stay,
     * counted, and no error (a peer's teardown races ours) */
    tc_write_lane_forbid(p.recv_lane_, half);
    const auto late = pattern(128, 0x3c);
    const size_t errors = logs.messages().size();
    p.write(late.data(), late.size(), half_addr + 1024, 2);
    EXPECT_NE(0, std::memcmp(late.data(), half + 1024, late.size()));
    EXPECT_EQ(1u, p.stats().dropped_late);
    EXPECT_EQ(2u, p.stats().rejected_unknown);
    EXPECT_EQ(errors, logs.messages().size()) << "a late write is not an error";

    /* a new region at the same address has a new key: a late write for
     * the old one still does not land in it */
    ASSERT_EQ(UCS_OK, p.allow(half, p.kRegion / 2, {2}));
    EXPECT_NE(key, p.key_);
    p.write(late.data(), late.size(), half_addr + 1024, 2, key);
    EXPECT_NE(0, std::memcmp(late.data(), half + 1024, late.size()));
    EXPECT_EQ(2u, p.stats().dropped_late);

    /* a view changed: sender 2 left, sender 3 joined */
    const sender_bits three{3};
    ASSERT_EQ(UCS_OK, tc_write_lane_set_senders(p.recv_lane_, half, three.words.data(),
                                                three.bits()));
    p.write(late.data(), late.size(), half_addr + 1024, 2);
    EXPECT_EQ(5u, p.stats().rejected_sender);
    ASSERT_EQ(UCS_OK, p.write(late.data(), late.size(), half_addr + 1024, 3));
    EXPECT_EQ(0, std::memcmp(late.data(), half + 1024, late.size()));
}

/* Sender ids are ranks of any job size: ids past 64 that a region admits
 * land, others are rejected as non-members, and a region that admits any
 * sender takes any id. */
TEST_P(write_lane_rejects, senders_of_any_rank)
{
    lane_pair p(GetParam(), "am");
    ASSERT_EQ(TC_WRITE_LANE_AM, p.kind_);
    uint8_t *half            = p.region_ + p.kRegion / 2;
    const uint64_t half_addr = p.base() + p.kRegion / 2;
    ASSERT_EQ(UCS_OK, p.allow(half, p.kRegion / 2, {1, 64, 69, 4095}));
    tc_test::scoped_log_expect logs;
    uint64_t stored = 0;
    for (uint32_t sender : {1u, 64u, 69u, 4095u}) {
        const auto src = pattern(64, static_cast<uint8_t>(sender));
        ASSERT_EQ(UCS_OK, p.write(src.data(), src.size(), half_addr + 256, sender));
        EXPECT_EQ(0, std::memcmp(src.data(), half + 256, src.size())) << "sender " << sender;
        EXPECT_EQ(++stored, p.stats().stored);
    }
    const auto bad = pattern(64, 0xee);
    for (uint32_t sender : {0u, 63u, 65u, 4094u, 4096u, 1u << 31}) {
        p.write(bad.data(), bad.size(), half_addr + 256, sender);
    }
    EXPECT_EQ(6u, p.stats().rejected_sender);
    EXPECT_NE(0, std::memcmp(bad.data(), half + 256, bad.size()));
    EXPECT_EQ(1u, logs.count("rejected a non-member write"));

    /* any sender: no set */
    tc_write_lane_forbid(p.recv_lane_, half);
    ASSERT_EQ(UCS_OK, tc_write_lane_allow(p.recv_lane_, half, p.kRegion / 2, nullptr, 0,
                                          &p.key_));
    const auto any = pattern(64, 0x42);
    ASSERT_EQ(UCS_OK, p.write(any.data(), any.size(), half_addr + 512, 100000));
    EXPECT_EQ(0, std::memcmp(any.data(), half + 512, any.size()));
}

/* The sender a write names is believed only on the endpoint bound to it:
 * a member that names another member of the region (which that member may
 * write) is rejected as forged, counted, logged once, and the bytes stay;
 * a message without a reply endpoint names nobody it can prove. Fails
 * without the binding: the region admits both ids, so the forged write
 * would land. */
TEST_P(write_lane_rejects, a_forged_sender_is_rejected)
{
    lane_pair p(GetParam(), "am");
    ASSERT_EQ(TC_WRITE_LANE_AM, p.kind_);
    /* a third worker: sender 5 is its process, bound to our endpoint to it */
    ucp_worker_params_t wparams{};
    ucp_worker_h other;
    ASSERT_EQ(UCS_OK, ucp_worker_create(p.context_, &wparams, &other));
    ucp_address_t *address;
    size_t length;
    ASSERT_EQ(UCS_OK, ucp_worker_get_address(other, &address, &length));
    ucp_ep_params_t ep_params{};
    ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep_params.address    = address;
    ucp_ep_h to_other;
    ASSERT_EQ(UCS_OK, ucp_ep_create(p.receiver_, &ep_params, &to_other));
    ucp_worker_release_address(other, address);
    ASSERT_EQ(UCS_OK, tc_write_lane_bind_sender(p.recv_lane_, 5, to_other));
    ASSERT_EQ(UCS_OK, tc_write_lane_bind_sender(p.recv_lane_, 2, p.back_ep_));
    p.bind_on_write = false;

    uint8_t *half            = p.region_ + p.kRegion / 2;
    const uint64_t half_addr = p.base() + p.kRegion / 2;
    ASSERT_EQ(UCS_OK, p.allow(half, p.kRegion / 2, {2, 5}));
    tc_test::scoped_log_expect logs;
    const auto bad = pattern(256, 0x5a);
    for (int i = 0; i < 3; ++i) {
        p.write(bad.data(), bad.size(), half_addr + 512, 5);   /* sender 2 says it is 5 */
    }
    /* a lane header sent without UCP_AM_SEND_FLAG_REPLY: no endpoint to check */
    tc_write_header_t header{half_addr + 512, p.key_, 2, TC_WRITE_HEADER_MAGIC};
    p.send_raw(&header, sizeof(header), bad.data(), bad.size());
    EXPECT_EQ(4u, p.stats().rejected_forged);
    EXPECT_EQ(0u, p.stats().stored);
    EXPECT_EQ(1u, logs.count("rejected a forged-sender write"));
    for (size_t i = 0; i < p.kRegion / 2; ++i) {
        ASSERT_EQ(0, half[i]) << "a forged write stored byte " << i;
    }
    /* the honest write of sender 2, on its own endpoint, lands */
    const auto good = pattern(256, 0x11);
    ASSERT_EQ(UCS_OK, p.write(good.data(), good.size(), half_addr + 512, 2));
    EXPECT_EQ(0, std::memcmp(good.data(), half + 512, good.size()));
    EXPECT_EQ(1u, p.stats().stored);

    /* unbound: sender 2's own writes are no longer believed */
    tc_write_lane_unbind_sender(p.recv_lane_, 2, p.back_ep_);
    p.write(bad.data(), bad.size(), half_addr + 512, 2);
    EXPECT_EQ(5u, p.stats().rejected_forged);
    EXPECT_EQ(0, std::memcmp(good.data(), half + 512, good.size()));

    tc_write_lane_unbind_sender(p.recv_lane_, 5, to_other);
    ucp_request_param_t param{};
    ucs_status_ptr_t close = ucp_ep_close_nbx(to_other, &param);
    while (UCS_PTR_IS_PTR(close) && ucp_request_check_status(close) == UCS_INPROGRESS) {
        p.progress();
        ucp_worker_progress(other);   /* a flushing close needs its peer */
    }
    if (UCS_PTR_IS_PTR(close)) {
        ucp_request_free(close);
    }
    ucp_worker_destroy(other);
}

INSTANTIATE_TEST_SUITE_P(transports, write_lane_rejects, testing::Values("posix,self", "tcp,self"),
                         [](const testing::TestParamInfo<const char*> &c) {
                             std::string tls = c.param;
                             return tls.substr(0, tls.find(','));
                         });
