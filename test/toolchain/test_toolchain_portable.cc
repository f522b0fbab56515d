/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * twochains-pkg --portable: every jam as LLVM bitcode per target triple.
 * The files, their manifest records (sizes and hashes recomputed here, the
 * externals asked of llvm-nm again), what llvm-dis sees in them, verify
 * against a flipped byte, the manifest parsers (C and C++), up-to-date
 * detection and a package built without --portable.
 */
#include "fnv1a64_here.hpp"
#include "toolchain_test.hpp"

#include "pkg_format.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <regex>
#include <sstream>
#include <vector>

#include <twochains/jam_format.h>

namespace fs = std::filesystem;
using namespace tc_tctest;

namespace {

const char *const tcbench_jams[] = {"calls_libc", "indirect_put", "ping", "server_side_sum"};
const char *const triples[]      = {"x86_64-linux-gnu", "aarch64-linux-gnu"};
const char *const both_triples   = "--portable x86_64-linux-gnu,aarch64-linux-gnu";

std::string hex16(std::uint64_t v)
{
    char buf[17];
    std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

std::vector<std::string> lines_of(const std::string &text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        out.push_back(line);
    }
    return out;
}

std::vector<std::string> fields_of(const std::string &line)
{
    std::vector<std::string> f;
    std::istringstream in(line);
    std::string w;
    while (in >> w) {
        f.push_back(w);
    }
    return f;
}

/* One portable record and its pextern lines, read from the manifest text */
struct portable_rec {
    std::string              line;
    std::vector<std::string> fields;     /* portable <id> <triple> <size> <hash> <n> <file> */
    std::vector<std::string> pexterns;   /* symbols, in index order */
};

/* element id -> triple -> record; fails the test on misordered lines */
std::map<unsigned, std::map<std::string, portable_rec>> portable_records(const std::string &m)
{
    std::map<unsigned, std::map<std::string, portable_rec>> out;
    portable_rec *cur = nullptr;
    for (const auto &line : lines_of(m)) {
        auto f = fields_of(line);
        if (f.empty()) {
            continue;
        }
        if (f[0] == "portable") {
            EXPECT_EQ(f.size(), 7u) << line;
            if (f.size() != 7u) {
                cur = nullptr;
                continue;
            }
            portable_rec &r = out[std::stoul(f[1])][f[2]];
            r.line   = line;
            r.fields = f;
            cur      = &r;
        } else if (f[0] == "pextern") {
            EXPECT_NE(cur, nullptr) << "pextern before any portable record: " << line;
            EXPECT_EQ(f.size(), 5u) << line;
            if ((cur == nullptr) || (f.size() != 5u)) {
                continue;
            }
            EXPECT_EQ(f[1], cur->fields[1]) << line;
            EXPECT_EQ(f[2], cur->fields[2]) << line;
            EXPECT_EQ(f[3], std::to_string(cur->pexterns.size())) << line;
            cur->pexterns.push_back(f[4]);
        } else {
            cur = nullptr;
        }
    }
    return out;
}

std::vector<std::string> nm_undefined(const fs::path &bc)
{
    cmd_result r = run("llvm-nm-14 --undefined-only --format=just-symbols " +
                       shell_quote(bc.string()));
    EXPECT_EQ(r.status, 0) << r.output;
    auto syms = lines_of(r.output);
    syms.erase(std::remove(syms.begin(), syms.end(), ""), syms.end());
    std::sort(syms.begin(), syms.end());
    return syms;
}

fs::path share_of(const fs::path &prefix, const std::string &pkg)
{
    return prefix / "share" / "twochains" / pkg;
}

/* tcbench with bitcode for both triples, built once for this file */
const fs::path &portable_prefix()
{
    static fs::path prefix = []() {
        fs::path p   = fresh_dir("portable");
        cmd_result r = build("tcbench", src_path("test/packages/tcbench"), p, both_triples);
        EXPECT_EQ(r.status, 0) << r.output;
        return p;
    }();
    return prefix;
}

/* Every record and file of a package built with both triples */
void expect_portable_package(const fs::path &prefix, const std::string &pkg,
                             const std::vector<std::string> &jams)
{
    const fs::path share = share_of(prefix, pkg);
    const std::string m  = slurp(share / "manifest");
    auto recs            = portable_records(m);
    ASSERT_EQ(recs.size(), jams.size()) << m;
    for (unsigned id = 0; id < jams.size(); ++id) {
        const std::string &jam = jams[id];
        ASSERT_EQ(recs[id].size(), 2u) << jam << ":\n" << m;
        for (const char *triple : triples) {
            SCOPED_TRACE(pkg + " " + jam + " " + triple);
            const std::string file = "jam_" + jam + "." + triple + ".bc";
            const fs::path bc      = share / file;
            ASSERT_TRUE(fs::is_regular_file(bc)) << bc;
            ASSERT_EQ(recs[id].count(triple), 1u) << m;
            const portable_rec &r = recs[id][triple];
            const std::string bytes = slurp(bc);

            /* the record: size and hash of the file, its name, its count */
            EXPECT_EQ(r.fields[3], std::to_string(bytes.size())) << r.line;
            EXPECT_EQ(r.fields[4], hex16(fnv1a64_here(bytes))) << r.line;
            EXPECT_EQ(r.fields[5], std::to_string(r.pexterns.size())) << r.line;
            EXPECT_EQ(r.fields[6], file) << r.line;

            /* the C reader of the record agrees */
            tc_jam_manifest_portable_t p{};
            ASSERT_EQ(tc_jam_manifest_portable_parse(r.line.c_str(), &p), 1) << r.line;
            EXPECT_EQ(p.element_id, id);
            EXPECT_STREQ(p.triple, triple);
            EXPECT_EQ(p.bc_size, bytes.size());
            EXPECT_EQ(p.bc_hash, fnv1a64_here(bytes));
            EXPECT_EQ(p.num_externals, r.pexterns.size());
            EXPECT_STREQ(p.file, file.c_str());

            /* the externals are what the bitcode leaves undefined */
            EXPECT_EQ(r.pexterns, nm_undefined(bc));

            /* the bitcode is for that triple and defines the entry by name */
            cmd_result d = run("llvm-dis-14 -o - " + shell_quote(bc.string()));
            ASSERT_EQ(d.status, 0) << d.output;
            const std::string arch = std::string(triple).substr(0, std::string(triple).find('-'));
            EXPECT_TRUE(std::regex_search(
                d.output, std::regex("\ntarget triple = \"" + arch + "-[a-z0-9_-]*linux-gnu\"")))
                << d.output.substr(0, 400);
            std::smatch def;
            ASSERT_TRUE(std::regex_search(d.output, def,
                                          std::regex("\ndefine ([^\n]*)@" + jam + "_main\\(")))
                << d.output;
            EXPECT_EQ(def[1].str().find("hidden"), std::string::npos) << def[0];
            EXPECT_EQ(def[1].str().find("internal"), std::string::npos) << def[0];
        }
    }
}

} // namespace

TEST(toolchain_portable, bitcode_per_triple_with_matching_records)
{
    std::vector<std::string> jams(std::begin(tcbench_jams), std::end(tcbench_jams));
    expect_portable_package(portable_prefix(), "tcbench", jams);

    /* what the jams need from the receiver, as the manifest says it */
    const std::string m = slurp(manifest_of(portable_prefix(), "tcbench"));
    auto recs           = portable_records(m);
    for (const char *triple : triples) {
        const auto &libc = recs[0][triple].pexterns;
        EXPECT_NE(std::find(libc.begin(), libc.end(), "snprintf"), libc.end()) << m;
        const std::vector<std::string> put = {"tcbench_array", "tcbench_array_len",
                                              "tcbench_put_rejected"};
        EXPECT_EQ(recs[1][triple].pexterns, put) << m;
    }

    /* the records come right after their element's extern lines */
    EXPECT_NE(m.find("\nextern 1 2 tcbench_put_rejected\nportable 1 x86_64-linux-gnu "),
              std::string::npos) << m;
    EXPECT_NE(m.find("\npextern 1 x86_64-linux-gnu 2 tcbench_put_rejected\n"
                     "portable 1 aarch64-linux-gnu "),
              std::string::npos) << m;

    cmd_result v = run(shell_quote(tool()) + " verify " + shell_quote(portable_prefix().string()));
    EXPECT_EQ(v.status, 0) << v.output;
    EXPECT_NE(v.output.find("8 bitcode files"), std::string::npos) << v.output;

    cmd_result i = run(shell_quote(tool()) + " inspect " + shell_quote(portable_prefix().string()));
    EXPECT_EQ(i.status, 0) << i.output;
    EXPECT_NE(i.output.find("indirect_put portable aarch64-linux-gnu: "
                            "jam_indirect_put.aarch64-linux-gnu.bc"),
              std::string::npos) << i.output;
}

TEST(toolchain_portable, verify_names_the_bitcode_file_that_changed)
{
    fs::path copy = fresh_dir("portable-corrupt");
    fs::copy(portable_prefix(), copy, fs::copy_options::recursive);
    const fs::path share = share_of(copy, "tcbench");

    cmd_result r = run(shell_quote(tool()) + " verify " + shell_quote(copy.string()));
    ASSERT_EQ(r.status, 0) << r.output;

    /* one byte flipped, same size: only the hash can tell */
    fs::path bc = share / "jam_ping.aarch64-linux-gnu.bc";
    std::string b = slurp(bc);
    b[b.size() / 2] ^= 0x01;
    write_text(bc, b);
    r = run(shell_quote(tool()) + " verify " + shell_quote(copy.string()));
    EXPECT_NE(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("jam_ping.aarch64-linux-gnu.bc: bitcode hash"), std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("jam_ping.x86_64-linux-gnu.bc"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("(1 problems)"), std::string::npos) << r.output;

    /* one byte shorter: the size says so */
    fs::path bc2 = share / "jam_indirect_put.x86_64-linux-gnu.bc";
    std::string b2 = slurp(bc2);
    const std::size_t full = b2.size();
    b2.pop_back();
    write_text(bc2, b2);
    r = run(shell_quote(tool()) + " verify " + shell_quote(copy.string()));
    EXPECT_NE(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("jam_indirect_put.x86_64-linux-gnu.bc: " +
                            std::to_string(full - 1) + " bytes, the manifest says " +
                            std::to_string(full)),
              std::string::npos) << r.output;

    /* gone */
    fs::remove(share / "jam_calls_libc.x86_64-linux-gnu.bc");
    r = run(shell_quote(tool()) + " verify " + shell_quote(copy.string()));
    EXPECT_NE(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("jam_calls_libc.x86_64-linux-gnu.bc"), std::string::npos)
        << r.output;
}

TEST(toolchain_portable, without_portable_there_are_no_records)
{
    fs::path p   = fresh_dir("not-portable");
    cmd_result r = build("tcbench", src_path("test/packages/tcbench"), p);
    ASSERT_EQ(r.status, 0) << r.output;
    const std::string m = slurp(manifest_of(p, "tcbench"));
    EXPECT_EQ(m.find("portable"), std::string::npos) << m;
    EXPECT_EQ(m.find("pextern"), std::string::npos) << m;
    for (const auto &de : fs::directory_iterator(share_of(p, "tcbench"))) {
        EXPECT_NE(de.path().extension(), ".bc") << de.path();
    }
    r = run(shell_quote(tool()) + " verify " + shell_quote(p.string()));
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(r.output.find("bitcode"), std::string::npos) << r.output;
}

/* The same sources give the same modules wherever they are: a receiver
 * knows a module as its own by hash, and its package was built elsewhere */
TEST(toolchain_portable, the_same_sources_elsewhere_give_the_same_hashes)
{
    fs::path elsewhere = fresh_dir("portable-elsewhere") / "some" / "other" / "tree";
    fs::create_directories(elsewhere);
    fs::copy(src_path("test/packages/tcbench"), elsewhere, fs::copy_options::recursive);
    fs::path p = fresh_dir("portable-elsewhere-pkg");
    cmd_result r = build("tcbench", elsewhere, p, both_triples);
    ASSERT_EQ(r.status, 0) << r.output;
    const auto here  = portable_records(slurp(manifest_of(portable_prefix(), "tcbench")));
    const auto there = portable_records(slurp(manifest_of(p, "tcbench")));
    ASSERT_FALSE(here.empty());
    ASSERT_EQ(here.size(), there.size());
    for (const auto &[id, by_triple] : here) {
        for (const auto &[triple, rec] : by_triple) {
            EXPECT_EQ(rec.fields.at(4), there.at(id).at(triple).fields.at(4)) << rec.line;
        }
    }
}

TEST(toolchain_portable, rebuilds_follow_the_triples)
{
    fs::path p = fresh_dir("portable-rebuild");
    fs::path src = src_path("test/packages/tcbench");
    const fs::path share = share_of(p, "tcbench");
    ASSERT_EQ(build("tcbench", src, p, both_triples).status, 0);
    const std::string first = slurp(manifest_of(p, "tcbench"));

    /* the same sources and triples: up to date */
    cmd_result r = build("tcbench", src, p, both_triples);
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("is up to date"), std::string::npos) << r.output;

    /* a missing bitcode file is rebuilt, identical */
    fs::remove(share / "jam_ping.aarch64-linux-gnu.bc");
    r = build("tcbench", src, p, both_triples);
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(r.output.find("is up to date"), std::string::npos) << r.output;
    EXPECT_TRUE(fs::exists(share / "jam_ping.aarch64-linux-gnu.bc"));
    EXPECT_EQ(slurp(manifest_of(p, "tcbench")), first);

    /* other triples: another build id, only their files */
    r = build("tcbench", src, p, "--portable aarch64-linux-gnu");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(r.output.find("is up to date"), std::string::npos) << r.output;
    std::string m = slurp(manifest_of(p, "tcbench"));
    std::regex bid("build-id ([0-9a-f]{16})");
    std::smatch s1, s2;
    ASSERT_TRUE(std::regex_search(first, s1, bid));
    ASSERT_TRUE(std::regex_search(m, s2, bid));
    EXPECT_NE(s1[1].str(), s2[1].str());
    EXPECT_EQ(m.find("x86_64-linux-gnu"), std::string::npos) << m;
    EXPECT_NE(m.find("\nportable 3 aarch64-linux-gnu "), std::string::npos) << m;
    EXPECT_FALSE(fs::exists(share / "jam_ping.x86_64-linux-gnu.bc"));
    EXPECT_TRUE(fs::exists(share / "jam_ping.aarch64-linux-gnu.bc"));

    /* none: no records, no files */
    ASSERT_EQ(build("tcbench", src, p).status, 0);
    m = slurp(manifest_of(p, "tcbench"));
    EXPECT_EQ(m.find("portable"), std::string::npos) << m;
    EXPECT_FALSE(fs::exists(share / "jam_ping.aarch64-linux-gnu.bc"));
}

TEST(toolchain_portable, ifunc_sources_too)
{
    fs::path p   = fresh_dir("portable-ifunc");
    cmd_result r = run(shell_quote(tool()) + " ifunc " +
                       shell_quote(src_path("test/ifunc_public/greet.c").string()) +
                       " --prefix " + shell_quote(p.string()) + " " + both_triples);
    ASSERT_EQ(r.status, 0) << r.output;
    expect_portable_package(p, "greet", {"greet"});
}

TEST(toolchain_portable, bad_options_are_refused)
{
    fs::path p = fresh_dir("portable-bad");
    fs::path src = src_path("test/packages/tcbench");
    for (const auto &[opts, needle] :
         std::vector<std::pair<std::string, std::string>>{
             {"--portable x86_64-linux-gnu,", "'' is not a target triple"},
             {"--portable 'x86/64'", "'x86/64' is not a target triple"},
             {"--portable x86_64-linux-gnu,x86_64-linux-gnu", "given twice"},
             {"--portable a,b,c,d,e", "at most 4 triples"},
             {"--portable x86_64-linux-gnu --bc-cc gcc", "is not clang"},
             {"--bc-cc clang-14", "apply with --portable only"}}) {
        cmd_result r = build("tcbench", src, p, opts);
        EXPECT_NE(r.status, 0) << opts << ": " << r.output;
        EXPECT_NE(r.output.find(needle), std::string::npos) << opts << ": " << r.output;
        EXPECT_FALSE(fs::exists(p / "share")) << opts;
    }
}

TEST(toolchain_portable, manifest_round_trip_and_malformed_records)
{
    const fs::path mpath = manifest_of(portable_prefix(), "tcbench");
    const std::string text = slurp(mpath);
    tc::pkg::manifest m = tc::pkg::manifest_parse(text, mpath.string());
    ASSERT_EQ(m.elements.size(), 4u);
    ASSERT_EQ(m.elements[1].portable.size(), 2u);
    EXPECT_EQ(m.elements[1].portable[1].triple, "aarch64-linux-gnu");
    EXPECT_EQ(m.elements[1].portable[1].file, "jam_indirect_put.aarch64-linux-gnu.bc");
    EXPECT_EQ(m.elements[1].portable[1].externals.size(), 3u);
    EXPECT_EQ(tc::pkg::manifest_format(m), text);

    auto refused = [&](const std::string &from, const std::string &to,
                       const std::string &needle) {
        std::string bad = text;
        std::size_t at  = bad.find(from);
        ASSERT_NE(at, std::string::npos) << from;
        bad.replace(at, from.size(), to);
        try {
            tc::pkg::manifest_parse(bad, "m");
            ADD_FAILURE() << "accepted: " << from << " -> " << to;
        } catch (const tc::pkg::pkg_error &e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
                << from << " -> " << to << ": " << e.what();
        }
    };
    /* a pextern line missing, one out of order, one of another triple */
    refused("pextern 1 aarch64-linux-gnu 2 tcbench_put_rejected\n", "",
            "lists 3 portable externals but has 2");
    refused("pextern 1 aarch64-linux-gnu 1 ", "pextern 1 aarch64-linux-gnu 2 ",
            "pextern record out of order");
    refused("pextern 1 aarch64-linux-gnu 0 ", "pextern 1 x86_64-linux-gnu 0 ",
            "pextern record out of order");
    /* a portable record for another element, before the externs, twice */
    refused("portable 1 aarch64-linux-gnu", "portable 0 aarch64-linux-gnu",
            "portable record out of order");
    refused("extern 1 2 tcbench_put_rejected\n", "", "before all the extern records");
    refused("portable 1 aarch64-linux-gnu ", "portable 1 x86_64-linux-gnu ",
            "two portable records");
    /* a file of another name, a bad triple */
    refused(" jam_indirect_put.aarch64-linux-gnu.bc\n", " jam_ping.aarch64-linux-gnu.bc\n",
            "is not 'jam_indirect_put.aarch64-linux-gnu.bc'");
    refused("portable 2 aarch64-linux-gnu", "portable 2 ../aarch64-linux-gnu",
            "bad target triple");
}

TEST(toolchain_portable, make_rules_built_the_test_packages_portable)
{
    /* test/Makefile.am builds tcbench and tckv with --portable for both */
    fs::path prefix = fs::path(TC_BUILDDIR) / "test" / "twochains-pkgs";
    ASSERT_TRUE(fs::exists(manifest_of(prefix, "tcbench"))) << prefix;
    std::vector<std::string> jams(std::begin(tcbench_jams), std::end(tcbench_jams));
    expect_portable_package(prefix, "tcbench", jams);
    expect_portable_package(prefix, "tckv", {"kv_cas", "kv_inc", "kv_put"});
}
