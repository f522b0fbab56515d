/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * UCX_TC_* configuration and twochains-info.
 */
#include "common.h"

#include <twochains/config.h>
#include <twochains/version.h>

#include <cstdlib>
#include <string>

namespace {

using tc_test::scoped_env;
using tc_test::seconds_since;


TEST(config, defaults)
{
    scoped_env policy("UCX_TC_WAIT_POLICY", nullptr);
    tc_config_t cfg;
    ASSERT_EQ(UCS_OK, tc_config_read(&cfg));
    EXPECT_EQ(TC_WAIT_ADAPTIVE, cfg.wait_policy);
    EXPECT_DOUBLE_EQ(50e-6, cfg.spin_time);
    EXPECT_DOUBLE_EQ(1e-6, cfg.sleep_min);
    EXPECT_DOUBLE_EQ(500e-6, cfg.sleep_max);
    EXPECT_EQ(1024u, cfg.max_pollers);   /* a node holds many shards, one poller each */
    EXPECT_DOUBLE_EQ(30.0, cfg.boot_timeout);
    tc_config_release(&cfg);
}

TEST(config, environment_overrides_with_units)
{
    scoped_env policy("UCX_TC_WAIT_POLICY", "busy");
    scoped_env smax("UCX_TC_SLEEP_MAX", "2ms");
    scoped_env tmo("UCX_TC_BOOTSTRAP_TIMEOUT", "1.5s");
    tc_config_t cfg;
    ASSERT_EQ(UCS_OK, tc_config_read(&cfg));
    EXPECT_EQ(TC_WAIT_BUSY, cfg.wait_policy);
    EXPECT_DOUBLE_EQ(2e-3, cfg.sleep_max);
    EXPECT_DOUBLE_EQ(1.5, cfg.boot_timeout);
    tc_config_release(&cfg);
}

TEST(config, invalid_value_is_an_error)
{
    scoped_env policy("UCX_TC_WAIT_POLICY", "spinny");
    tc_test::scoped_log_expect logs;
    tc_config_t cfg;
    EXPECT_NE(UCS_OK, tc_config_read(&cfg));
    EXPECT_GE(logs.count("spinny"), 1u);
}

TEST(info, lists_every_variable_with_docs)
{
    auto r = tc_test::run_command(tc_test::build_path("src/tools/twochains-info") + " -cf");
    ASSERT_EQ(0, r.exit_code) << r.output;
    for (const char *var : {"UCX_TC_WAIT_POLICY=", "UCX_TC_SPIN_TIME=", "UCX_TC_SLEEP_MIN=", "UCX_TC_SLEEP_MAX=",
                            "UCX_TC_MAX_POLLERS=", "UCX_TC_BOOTSTRAP=", "UCX_TC_ROOT=",
                            "UCX_TC_RANK=", "UCX_TC_SIZE=", "UCX_TC_LISTEN_FD=",
                            "UCX_TC_BOOTSTRAP_TIMEOUT=", "UCX_TC_SMC_MODE=", "UCX_TC_SMC_BATCH=",
                            "UCX_TC_SMC_FLUSH_US=", "UCX_TC_HEARTBEAT_INTERVAL=",
                            "UCX_TC_SUSPECT_TIMEOUT=", "UCX_TC_GROUP_TIMEOUT=",
                            "UCX_TC_GROUP_MAX_MEMBERS=", "UCX_TC_IFUNC_SECURITY=",
                            "UCX_TC_RDMC_BLOCK="}) {
        EXPECT_NE(std::string::npos, r.output.find(var)) << var << " missing in:\n" << r.output;
    }
    EXPECT_NE(std::string::npos, r.output.find("bounded exponential backoff")) << r.output;
}

TEST(info, shows_current_values)
{
    auto r = tc_test::run_command("UCX_TC_WAIT_POLICY=wfe " +
                                  tc_test::build_path("src/tools/twochains-info") + " -c");
    ASSERT_EQ(0, r.exit_code) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("UCX_TC_WAIT_POLICY=wfe")) << r.output;
}

TEST(info, version_names_ucx)
{
    auto r = tc_test::run_command(tc_test::build_path("src/tools/twochains-info") + " -v");
    ASSERT_EQ(0, r.exit_code) << r.output;
    EXPECT_NE(std::string::npos, r.output.find(std::string("Two-Chains version ") +
                                               TC_VERSION_STRING)) << r.output;
    EXPECT_NE(std::string::npos, r.output.find(std::string("Built with UCX ") +
                                               TC_UCX_BUILT_VERSION)) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("Running with UCX")) << r.output;
}

/* the job key is a secret: -c says it is set, never what it is */
TEST(info, never_prints_the_job_key)
{
    auto r = tc_test::run_command("UCX_TC_JOB_KEY=do-not-print-this-secret-key " +
                                  tc_test::build_path("src/tools/twochains-info") + " -c");
    ASSERT_EQ(0, r.exit_code) << r.output;
    EXPECT_EQ(std::string::npos, r.output.find("do-not-print-this-secret-key")) << r.output;
    EXPECT_NE(std::string::npos, r.output.find("UCX_TC_JOB_KEY=<hidden>")) << r.output;
}

/* the lane UCP's lanes and UCX_TC_WRITE_LANE give: puts where UCP has RMA,
 * active messages where it emulates puts, or what the variable forces */
TEST(info, names_the_write_lane)
{
    const std::string info = tc_test::build_path("src/tools/twochains-info") + " -l";
    const std::pair<std::string, std::string> cases[] = {
        {"UCX_TLS=posix,self", "# write lane: rma posix/memory"},
        {"UCX_TLS=tcp,self", "# write lane: am tcp/"},
        {"UCX_TLS=posix,self UCX_TC_WRITE_LANE=am", "# write lane: am posix/memory"},
        {"UCX_TLS=tcp,self UCX_TC_WRITE_LANE=rma", "# write lane: rma tcp/"},
    };
    for (const auto &[env, expected] : cases) {
        auto r = tc_test::run_command(env + " " + info);
        ASSERT_EQ(0, r.exit_code) << env << "\n" << r.output;
        EXPECT_NE(std::string::npos, r.output.find(expected)) << env << "\n" << r.output;
    }
}

TEST(info, usage_error)
{
    auto r = tc_test::run_command(tc_test::build_path("src/tools/twochains-info") + " -q");
    EXPECT_EQ(1, r.exit_code);
    EXPECT_NE(std::string::npos, r.output.find("Usage")) << r.output;
}

} // namespace
