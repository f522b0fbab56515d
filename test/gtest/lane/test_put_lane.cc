/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The put lane as read from ucp_ep_print_info() (ucx_ext/lane/put_lane.c):
 * UCX 1.13's text for an RMA lane, for puts emulated over am, and for text
 * that names neither; then a real endpoint's own description.
 */
#include "common.h"

#include <twochains/lane.h>

#include <gtest/gtest.h>

TEST(put_lane, the_lane_put_names)
{
    const char *info = "#\n# UCP endpoint\n#\n"
                       "#               peer: <no debug data>\n"
                       "#                 lane[0]:  1:posix/memory.0 md[1]           -> md[1]/posix/sysdev[255] am am_bw#0\n"
                       "#                 lane[1]:  2:cma/memory.0 md[2]             -> md[2]/cma/sysdev[255] rma_bw#0\n"
                       "#                 lane[2]:  0:sysv/memory.0 md[0]            -> md[0]/sysv/sysdev[255] rma_bw#1\n"
                       "#\n"
                       "#                put[1]: 0..<egr/short>..4089..<egr/bcopy>..8192..<egr/zcopy>..(inf)\n";
    char out[64];
    ASSERT_EQ(UCS_OK, tc_put_lane_parse(info, out, sizeof(out)));
    EXPECT_STREQ("cma/memory.0", out);
}

TEST(put_lane, puts_emulated_over_am_name_lane_zero)
{
    const char *info = "#                 lane[0]:  3:tcp/lo.0 md[3]                 -> md[3]/tcp/sysdev[255] am am_bw#0\n"
                       "#                 am_bw#0: 0..<egr/short>..8185..<egr/bcopy>..(inf)\n";
    char out[64];
    ASSERT_EQ(UCS_OK, tc_put_lane_parse(info, out, sizeof(out)));
    EXPECT_STREQ("tcp/lo.0 (put emulated over am)", out);
}

TEST(put_lane, text_without_lanes_is_unknown)
{
    char out[64];
    EXPECT_EQ(UCS_ERR_NO_ELEM, tc_put_lane_parse("put[4]: 0..(inf)\n", out, sizeof(out)));
    EXPECT_STREQ("unknown", out);
    EXPECT_EQ(UCS_ERR_NO_ELEM, tc_put_lane_parse("", out, sizeof(out)));
    EXPECT_STREQ("unknown", out);
}

TEST(put_lane, a_short_buffer_is_terminated)
{
    const char *info = "lane[0]:  3:tcp/lo.0 md[3] -> am\n";
    char out[8];
    tc_put_lane_parse(info, out, sizeof(out));
    EXPECT_EQ('\0', out[7]);
    EXPECT_STREQ("tcp/lo.", out);
}
