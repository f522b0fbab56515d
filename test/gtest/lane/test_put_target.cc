/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The put-target check (ucx_ext/lane/put_target.c) over posix, where UCX
 * maps a peer's segment into our process and turns an address into a
 * pointer unchecked. One UCP context registers several segments, as the
 * members of a region do; an endpoint of a second worker unpacks their
 * rkeys as a batch. Honest targets pass with two reads of the maps; a
 * target that names a range past its own segment, or inside another
 * target's segment of the same batch, is refused while the others pass.
 */
#include "common.h"

#include <twochains/lane.h>

#include <gtest/gtest.h>

#include <ucp/api/ucp.h>

#include <vector>

namespace {

class put_target_batch : public ::testing::Test {
protected:
    static constexpr size_t kSegments = 6;
    static constexpr size_t kSegment  = 64 * 1024;

    void SetUp() override
    {
        tc_test::scoped_env env_tls("UCX_TLS", "posix,self");
        ucp_config_t *config;
        ASSERT_EQ(UCS_OK, ucp_config_read(nullptr, nullptr, &config));
        ucp_params_t params{};
        params.field_mask = UCP_PARAM_FIELD_FEATURES;
        params.features   = UCP_FEATURE_RMA;
        ASSERT_EQ(UCS_OK, ucp_init(&params, config, &context_));
        ucp_config_release(config);
        ucp_worker_params_t wparams{};
        ASSERT_EQ(UCS_OK, ucp_worker_create(context_, &wparams, &owner_));
        ASSERT_EQ(UCS_OK, ucp_worker_create(context_, &wparams, &putter_));
        ucp_address_t *address;
        size_t length;
        ASSERT_EQ(UCS_OK, ucp_worker_get_address(owner_, &address, &length));
        ucp_ep_params_t ep_params{};
        ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
        ep_params.address    = address;
        ASSERT_EQ(UCS_OK, ucp_ep_create(putter_, &ep_params, &ep_));
        ucp_worker_release_address(owner_, address);
        for (size_t i = 0; i < kSegments; ++i) {
            ucp_mem_map_params_t map{};
            map.field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
            map.length     = kSegment;
            map.flags      = UCP_MEM_MAP_ALLOCATE;
            ucp_mem_h memh;
            ASSERT_EQ(UCS_OK, ucp_mem_map(context_, &map, &memh));
            memhs_.push_back(memh);
            ucp_mem_attr_t attr{};
            attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
            ASSERT_EQ(UCS_OK, ucp_mem_query(memh, &attr));
            bases_.push_back(reinterpret_cast<uint64_t>(attr.address));
            void *packed;
            size_t packed_len;
            ASSERT_EQ(UCS_OK, ucp_rkey_pack(context_, memh, &packed, &packed_len));
            packed_.push_back(packed);
        }
    }

    void TearDown() override
    {
        for (void *p : packed_) {
            ucp_rkey_buffer_release(p);
        }
        for (ucp_mem_h m : memhs_) {
            ucp_mem_unmap(context_, m);
        }
        if (ep_ != nullptr) {
            ucp_request_param_t param{};
            param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
            param.flags        = UCP_EP_CLOSE_FLAG_FORCE;
            ucs_status_ptr_t req = ucp_ep_close_nbx(ep_, &param);
            while (req != nullptr && !UCS_PTR_IS_ERR(req) &&
                   ucp_request_check_status(req) == UCS_INPROGRESS) {
                ucp_worker_progress(putter_);
                ucp_worker_progress(owner_);
            }
            if (req != nullptr && !UCS_PTR_IS_ERR(req)) {
                ucp_request_free(req);
            }
        }
        if (putter_ != nullptr) {
            ucp_worker_destroy(putter_);
        }
        if (owner_ != nullptr) {
            ucp_worker_destroy(owner_);
        }
        if (context_ != nullptr) {
            ucp_cleanup(context_);
        }
    }

    std::vector<tc_put_target_t> honest_targets() const
    {
        std::vector<tc_put_target_t> t(kSegments);
        for (size_t i = 0; i < kSegments; ++i) {
            t[i] = tc_put_target_t{ep_, packed_[i], bases_[i], kSegment, nullptr,
                                   UCS_INPROGRESS};
        }
        return t;
    }

    /* the pointer each passed target's base maps to here */
    static std::vector<uintptr_t> locals(const std::vector<tc_put_target_t> &t)
    {
        std::vector<uintptr_t> out;
        for (const auto &x : t) {
            void *p = nullptr;
            EXPECT_EQ(UCS_OK, ucp_rkey_ptr(x.rkey, x.address, &p));
            out.push_back(reinterpret_cast<uintptr_t>(p));
        }
        return out;
    }

    static void destroy(std::vector<tc_put_target_t> &t)
    {
        for (auto &x : t) {
            if (x.rkey != nullptr) {
                ucp_rkey_destroy(x.rkey);
                x.rkey = nullptr;
            }
        }
    }

    ucp_context_h context_ = nullptr;
    ucp_worker_h owner_ = nullptr, putter_ = nullptr;
    ucp_ep_h ep_ = nullptr;
    std::vector<ucp_mem_h> memhs_;
    std::vector<uint64_t> bases_;
    std::vector<void*> packed_;
};

TEST_F(put_target_batch, honest_targets_all_pass)
{
    auto t = honest_targets();
    ASSERT_EQ(UCS_OK, tc_put_targets_unpack(t.data(), t.size()));
    for (size_t i = 0; i < t.size(); ++i) {
        EXPECT_EQ(UCS_OK, t[i].status) << "target " << i;
        EXPECT_NE(nullptr, t[i].rkey) << "target " << i;
    }
    destroy(t);
}

TEST_F(put_target_batch, a_range_past_its_own_segment_is_refused_alone)
{
    auto t = honest_targets();
    t[2].address += kSegment / 2;   /* half of it past the segment's end */
    t[4].address = 0;               /* no address at all */
    ASSERT_EQ(UCS_OK, tc_put_targets_unpack(t.data(), t.size()));
    for (size_t i = 0; i < t.size(); ++i) {
        const bool bad = (i == 2 || i == 4);
        EXPECT_EQ(bad ? UCS_ERR_OUT_OF_RANGE : UCS_OK, t[i].status) << "target " << i;
        EXPECT_EQ(bad, t[i].rkey == nullptr) << "target " << i;
    }
    destroy(t);
}

/* Target 1 names, through its own rkey, the place where target 3's segment
 * is mapped: with a check per batch that only asked "is it in a new
 * mapping", target 1 would pass and our puts to it would land in the
 * owner of target 3's memory. Where the two mappings land is learned from
 * an honest batch first; the kernel lays them out the same way, one below
 * the other, when the batch repeats (checked: if not, the target lands
 * elsewhere and must be refused all the same). */
TEST_F(put_target_batch, a_target_naming_another_targets_segment_is_refused)
{
    auto probe = honest_targets();
    ASSERT_EQ(UCS_OK, tc_put_targets_unpack(probe.data(), probe.size()));
    const auto first = locals(probe);
    destroy(probe);

    auto t = honest_targets();
    t[1].address = bases_[1] + (first[3] - first[1]);
    t[1].length  = kSegment;
    ASSERT_EQ(UCS_OK, tc_put_targets_unpack(t.data(), t.size()));
    for (size_t i = 0; i < t.size(); ++i) {
        EXPECT_EQ(i == 1 ? UCS_ERR_OUT_OF_RANGE : UCS_OK, t[i].status) << "target " << i;
    }
    /* The uncontested targets mapped where they did the first time: the
     * layout repeated, so in the batch target 1 named the very mapping
     * target 3 got, and both were redone alone (target 3 elsewhere). */
    void *p0 = nullptr, *p2 = nullptr;
    ASSERT_EQ(UCS_OK, ucp_rkey_ptr(t[0].rkey, t[0].address, &p0));
    ASSERT_EQ(UCS_OK, ucp_rkey_ptr(t[2].rkey, t[2].address, &p2));
    if (reinterpret_cast<uintptr_t>(p0) != first[0] ||
        reinterpret_cast<uintptr_t>(p2) != first[2]) {
        std::printf("note: the segments were laid out differently the second time; "
                    "target 1 named no other target's mapping\n");
    }
    destroy(t);
}

} // namespace
