/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The runtime's package loader (ucx_ext/ifunc/code/package.c) on the portable
 * records of twochains-pkg --portable: what it keeps of them, the files it
 * refuses, and a package without them, which loads as it always did. Works
 * on copies of the tcbench that `make` built into test/twochains-pkgs.
 */
#include "fnv1a64_here.hpp"
#include "common.h"

#include "ifunc/code/package.h"
#include "ifunc/portable/portable.h"

#include <stdlib.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

namespace {

const char *const tcbench_jams[] = {"calls_libc", "indirect_put", "ping", "server_side_sum"};
const char *const triples[]      = {"x86_64-linux-gnu", "aarch64-linux-gnu"};

std::string slurp(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void spill(const std::string &path, const std::string &bytes)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
}

/* A copy of the installed tcbench, to edit and load */
class portable_loader : public ::testing::Test {
protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/tc-portable-pkg-XXXXXX";
        ASSERT_NE(nullptr, mkdtemp(tmpl));
        dir = tmpl;
        const std::string src = tc_test::build_path("test/twochains-pkgs");
        ASSERT_EQ(0, tc_test::run_command("cp -r " + src + "/. " + dir).exit_code);
        share = dir + "/share/twochains/tcbench";
        /* `make` built it with --portable: nothing to test otherwise */
        ASSERT_NE(std::string::npos, slurp(share + "/manifest").find("\nportable 0 "))
            << "test/Makefile.am built tcbench without --portable";
    }
    void TearDown() override { tc_test::run_command("rm -rf " + dir); }

    void edit_manifest(const std::function<void(std::string &)> &fn)
    {
        std::string m = slurp(share + "/manifest");
        fn(m);
        spill(share + "/manifest", m);
    }

    static void replace(std::string &text, const std::string &from, const std::string &to)
    {
        std::size_t at = text.find(from);
        ASSERT_NE(std::string::npos, at) << from;
        text.replace(at, from.size(), to);
    }

    /* loading must fail, logging @a needle */
    void expect_refused(const std::string &needle)
    {
        tc_test::scoped_log_expect expect;
        tc_ifunc_pkg_h pkg = nullptr;
        EXPECT_NE(UCS_OK, tc_ifunc_pkg_load(dir.c_str(), "tcbench", &pkg));
        EXPECT_EQ(nullptr, pkg);
        if (pkg != nullptr) {
            tc_ifunc_pkg_unload(pkg);   /* wrongly loaded: not for the next test */
        }
        EXPECT_GE(expect.count(needle), 1u)
            << needle << ": "
            << (expect.messages().empty() ? "(nothing logged)" : expect.messages()[0]);
    }

    std::string dir, share;
};

TEST_F(portable_loader, records_are_kept_with_real_paths)
{
    tc_ifunc_pkg_h pkg;
    ASSERT_EQ(UCS_OK, tc_ifunc_pkg_load(dir.c_str(), "tcbench", &pkg));
    ASSERT_EQ(4u, tc_ifunc_pkg_element_count(pkg));
    for (uint32_t id = 0; id < 4; ++id) {
        const tc_ifunc_element_t *e = tc_ifunc_pkg_elem(pkg, id);
        ASSERT_NE(nullptr, e);
        EXPECT_STREQ(tcbench_jams[id], e->name);
        EXPECT_EQ(2u, e->num_portable) << e->name;
        EXPECT_NE(nullptr, e->got) << e->name;
        for (const char *triple : triples) {
            const tc_ifunc_portable_bc_t *bc = tc_ifunc_elem_portable(e, triple);
            ASSERT_NE(nullptr, bc) << e->name << " " << triple;
            const std::string file = share + "/jam_" + e->name + "." + triple + ".bc";
            char *real = realpath(file.c_str(), nullptr);
            ASSERT_NE(nullptr, real) << file;
            EXPECT_STREQ(real, bc->path);
            free(real);
            const std::string bytes = slurp(file);
            EXPECT_STREQ(triple, bc->triple);
            EXPECT_EQ(bytes.size(), bc->bc_size);
            EXPECT_EQ(fnv1a64_here(bytes), bc->bc_hash);
        }
        EXPECT_EQ(nullptr, tc_ifunc_elem_portable(e, "riscv64-linux-gnu"));
        EXPECT_EQ(nullptr, tc_ifunc_elem_portable(e, "x86_64"));
    }
    tc_ifunc_pkg_unload(pkg);
}

TEST_F(portable_loader, without_portable_records_loads_as_before)
{
    ASSERT_EQ(0, tc_test::run_command("sed -i '/^portable /d; /^pextern /d' " + share +
                                      "/manifest").exit_code);
    ASSERT_EQ(0, tc_test::run_command("rm -f " + share + "/*.bc").exit_code);
    tc_ifunc_pkg_h pkg;
    ASSERT_EQ(UCS_OK, tc_ifunc_pkg_load(dir.c_str(), "tcbench", &pkg));
    for (uint32_t id = 0; id < 4; ++id) {
        const tc_ifunc_element_t *e = tc_ifunc_pkg_elem(pkg, id);
        EXPECT_EQ(0u, e->num_portable);
        EXPECT_NE(nullptr, e->span);
        EXPECT_NE(nullptr, e->got);
        EXPECT_EQ(nullptr, tc_ifunc_elem_portable(e, triples[0]));
    }
    tc_ifunc_pkg_unload(pkg);
}

TEST_F(portable_loader, flipped_bitcode_byte)
{
    std::string bc = slurp(share + "/jam_ping.x86_64-linux-gnu.bc");
    bc[bc.size() / 2] ^= 0x01;
    spill(share + "/jam_ping.x86_64-linux-gnu.bc", bc);
    expect_refused("jam_ping.x86_64-linux-gnu.bc: bitcode hash mismatch");
}

TEST_F(portable_loader, bitcode_of_another_size)
{
    std::string bc = slurp(share + "/jam_ping.aarch64-linux-gnu.bc");
    spill(share + "/jam_ping.aarch64-linux-gnu.bc", bc + "x");
    expect_refused("the manifest says " + std::to_string(bc.size()));
}

TEST_F(portable_loader, missing_bitcode)
{
    ASSERT_EQ(0, tc_test::run_command("rm " + share + "/jam_ping.aarch64-linux-gnu.bc")
                     .exit_code);
    expect_refused("not found");
}

TEST_F(portable_loader, bitcode_file_of_another_name)
{
    edit_manifest([](std::string &m) {
        replace(m, " jam_ping.x86_64-linux-gnu.bc\n", " jam_ping.bin\n");
    });
    expect_refused("is not 'jam_ping.x86_64-linux-gnu.bc'");
}

TEST_F(portable_loader, bitcode_symlinked_out_of_the_package)
{
    const std::string bc = share + "/jam_ping.x86_64-linux-gnu.bc";
    ASSERT_EQ(0, tc_test::run_command("mv " + bc + " " + dir + "/outside.bc && ln -s " + dir +
                                      "/outside.bc " + bc).exit_code);
    expect_refused("refusing it");
}

TEST_F(portable_loader, bad_triple)
{
    edit_manifest([](std::string &m) {
        replace(m, "portable 2 x86_64-linux-gnu ", "portable 2 x86_64/linux ");
    });
    expect_refused("bad portable record");
}

TEST_F(portable_loader, triple_twice)
{
    edit_manifest([](std::string &m) {
        replace(m, "portable 1 aarch64-linux-gnu ", "portable 1 x86_64-linux-gnu ");
    });
    expect_refused("bad portable record");
}

TEST_F(portable_loader, record_of_another_element)
{
    edit_manifest([](std::string &m) {
        replace(m, "portable 1 aarch64-linux-gnu ", "portable 0 aarch64-linux-gnu ");
    });
    expect_refused("bad portable record");
}

TEST_F(portable_loader, portable_before_the_externs)
{
    /* element 1's last extern moved after its portable records */
    edit_manifest([](std::string &m) {
        replace(m, "extern 1 2 tcbench_put_rejected\n", "");
        replace(m, "\nelement 2 ", "\nextern 1 2 tcbench_put_rejected\nelement 2 ");
    });
    expect_refused("bad portable record");
}

TEST_F(portable_loader, pextern_missing)
{
    edit_manifest([](std::string &m) {
        replace(m, "pextern 1 x86_64-linux-gnu 2 tcbench_put_rejected\n", "");
    });
    expect_refused("bad portable record");
}

TEST_F(portable_loader, last_pextern_missing)
{
    edit_manifest([](std::string &m) {
        std::size_t at = m.rfind("pextern 3 aarch64-linux-gnu ");
        ASSERT_NE(std::string::npos, at);
        m.erase(at, m.find('\n', at) + 1 - at);
    });
    expect_refused("incomplete manifest");
}

TEST_F(portable_loader, pextern_out_of_order)
{
    edit_manifest([](std::string &m) {
        replace(m, "pextern 1 x86_64-linux-gnu 1 ", "pextern 1 x86_64-linux-gnu 2 ");
    });
    expect_refused("bad pextern record");
}

TEST_F(portable_loader, pextern_of_another_triple)
{
    edit_manifest([](std::string &m) {
        replace(m, "pextern 1 aarch64-linux-gnu 0 ", "pextern 1 x86_64-linux-gnu 0 ");
    });
    expect_refused("bad pextern record");
}

TEST_F(portable_loader, more_triples_than_the_limit)
{
    /* element 0 gets records (and files) for more triples: up to the limit
     * they load, one more is refused */
    auto add_triples = [this](unsigned first, unsigned count) {
        const std::string from = share + "/jam_calls_libc.x86_64-linux-gnu.bc";
        edit_manifest([&](std::string &m) {
            std::size_t rec = m.find("portable 0 x86_64-linux-gnu ");
            std::size_t end = m.find("portable 0 aarch64-linux-gnu ");
            ASSERT_NE(std::string::npos, rec);
            ASSERT_NE(std::string::npos, end);
            const std::string block = m.substr(rec, end - rec);   /* record + pexterns */
            std::string extra;
            for (unsigned i = first; i < first + count; ++i) {
                const std::string t = "test" + std::to_string(i) + "-linux-gnu";
                std::string b = block;
                std::size_t at;
                while ((at = b.find("x86_64-linux-gnu")) != std::string::npos) {
                    b.replace(at, 16, t);
                }
                extra += b;
                ASSERT_EQ(0, tc_test::run_command("cp " + from + " " + share +
                                                  "/jam_calls_libc." + t + ".bc").exit_code);
            }
            m.insert(m.find("\nelement 1 ") + 1, extra);
        });
    };

    add_triples(0, TC_IFUNC_MAX_PORTABLE - 2);   /* with x86_64 and aarch64: full */
    tc_ifunc_pkg_h pkg;
    ASSERT_EQ(UCS_OK, tc_ifunc_pkg_load(dir.c_str(), "tcbench", &pkg));
    const tc_ifunc_element_t *e = tc_ifunc_pkg_elem(pkg, 0);
    EXPECT_EQ((unsigned)TC_IFUNC_MAX_PORTABLE, e->num_portable);
    const tc_ifunc_portable_bc_t *bc = tc_ifunc_elem_portable(e, "test0-linux-gnu");
    ASSERT_NE(nullptr, bc);
    EXPECT_EQ(tc_ifunc_elem_portable(e, triples[0])->bc_hash, bc->bc_hash);
    tc_ifunc_pkg_unload(pkg);

    add_triples(TC_IFUNC_MAX_PORTABLE - 2, 1);
    expect_refused("bad portable record");
}

} // namespace
