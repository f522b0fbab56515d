/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * twochains-pkg build/inspect/verify: outputs, the Local Function library,
 * rebuild determinism, and rejection of malformed or unsupported jams.
 */
#include "toolchain_test.hpp"

#include <dlfcn.h>

#include <cstring>
#include <regex>

#include <twochains/jam.h>
#include <twochains/jam_format.h>

namespace fs = std::filesystem;
using namespace tc_tctest;

namespace {

const char *const tcbench_jams[] = {"calls_libc", "indirect_put", "ping", "server_side_sum"};

/* tcbench built once for the tests of this file */
const fs::path &tcbench_prefix()
{
    static fs::path prefix = []() {
        fs::path p   = fresh_dir("tcbench");
        cmd_result r = build("tcbench", src_path("test/packages/tcbench"), p);
        EXPECT_EQ(r.status, 0) << r.output;
        return p;
    }();
    return prefix;
}

} // namespace

TEST(toolchain_build, installs_header_libraries_jams_and_manifest)
{
    const fs::path &p = tcbench_prefix();
    EXPECT_TRUE(fs::exists(p / "include" / "tcbench.h"));
    EXPECT_TRUE(fs::exists(p / "include" / "twochains" / "jam.h"));
    EXPECT_TRUE(fs::exists(p / "lib" / "libtcbench_local.so"));
    EXPECT_TRUE(fs::exists(p / "lib" / "libtcbench_ried_tcbench_state.so"));
    for (const char *j : tcbench_jams) {
        EXPECT_TRUE(fs::exists(p / "share/twochains/tcbench" / (std::string("jam_") + j + ".bin")))
            << j;
    }

    std::string m = slurp(manifest_of(p, "tcbench"));
    EXPECT_EQ(m.rfind("# ", 0), 0u);
    EXPECT_NE(m.find("\ntc-manifest 1\npackage tcbench\narch x86_64\nbuild-id "), std::string::npos);
    EXPECT_NE(m.find("\nelement 1 indirect_put "), std::string::npos) << m;
    EXPECT_NE(m.find("\nextern 1 0 tcbench_array\n"), std::string::npos) << m;
    EXPECT_NE(m.find("\nextern 0 0 memcpy\n"), std::string::npos) << m;
    EXPECT_NE(m.find("\nend\n"), std::string::npos);

    std::string h = slurp(p / "include" / "tcbench.h");
    EXPECT_NE(h.find("TCBENCH_CALLS_LIBC = 0,"), std::string::npos) << h;
    EXPECT_NE(h.find("TCBENCH_SERVER_SIDE_SUM = 3,"), std::string::npos) << h;
    EXPECT_NE(h.find("TC_JAM_PROTO_PAYLOAD_INIT(indirect_put);"), std::string::npos) << h;
    EXPECT_NE(h.find("#define TCBENCH_TC_BUILD_ID      UINT64_C(0x"), std::string::npos) << h;

    cmd_result v = run(shell_quote(tool()) + " verify " + shell_quote(p.string()));
    EXPECT_EQ(v.status, 0) << v.output;
    EXPECT_NE(v.output.find("package 'tcbench' (x86_64) OK: 4 elements, 1 rieds"),
              std::string::npos) << v.output;
}

TEST(toolchain_build, generated_header_compiles_in_c_and_cxx)
{
    const fs::path &p = tcbench_prefix();
    fs::path d = fresh_dir("hdr");
    write_text(d / "use.c",
               "#include <tcbench.h>\n"
               "_Static_assert(TCBENCH_INDIRECT_PUT == 1, \"id\");\n"
               "static const char *const names[] = TCBENCH_TC_ELEMENT_NAMES;\n"
               "int main(void) { return (int)(sizeof(names) / sizeof(names[0])) - 4; }\n");
    cmd_result r = run("cc -std=c11 -Wall -Werror -I" + shell_quote((p / "include").string()) +
                       " -fsyntax-only " + shell_quote((d / "use.c").string()));
    EXPECT_EQ(r.status, 0) << r.output;
    r = run("c++ -std=c++20 -Wall -Werror -I" + shell_quote((p / "include").string()) +
            " -x c++ -fsyntax-only " + shell_quote((d / "use.c").string()) + " -D_Static_assert=static_assert");
    EXPECT_EQ(r.status, 0) << r.output;
}

TEST(toolchain_build, local_function_library_element_table)
{
    const fs::path &p = tcbench_prefix();
    void *h = dlopen((p / "lib" / "libtcbench_local.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(h, nullptr) << dlerror();

    auto *table = static_cast<const tc_jam_element_t *>(dlsym(h, "tcbench_tc_elements"));
    auto *count = static_cast<const uint32_t *>(dlsym(h, "tcbench_tc_element_count"));
    ASSERT_NE(table, nullptr);
    ASSERT_NE(count, nullptr);
    ASSERT_EQ(*count, 4u);
    for (uint32_t i = 0; i < 4; ++i) {
        EXPECT_EQ(table[i].id, i);
        EXPECT_STREQ(table[i].name, tcbench_jams[i]);
        EXPECT_NE(table[i].main, nullptr);
    }
    const tc_jam_element_t &put = table[1];
    ASSERT_NE(put.payload_get_max_size, nullptr);
    ASSERT_NE(put.payload_init, nullptr);
    EXPECT_EQ(table[3].payload_init, nullptr);
    EXPECT_EQ(table[3].payload_get_max_size, nullptr);

    /* the sender side: payload functions */
    uint64_t src[4] = {7, 70, 9, 90};
    EXPECT_EQ(put.payload_get_max_size(src, sizeof(src)), sizeof(src));
    uint64_t payload[8] = {};
    size_t size = sizeof(payload);
    EXPECT_EQ(put.payload_init(src, sizeof(src), payload, &size), 0);
    EXPECT_EQ(size, sizeof(src));
    EXPECT_EQ(0, std::memcmp(payload, src, sizeof(src)));

    /* the jam as a plain local function, on the ried's state */
    auto *acc = static_cast<int64_t *>(dlsym(h, "tcbench_accumulator"));
    auto *arr = static_cast<int64_t *>(dlsym(h, "tcbench_array"));
    ASSERT_NE(acc, nullptr);
    ASSERT_NE(arr, nullptr);
    *acc = 5;
    int64_t v[3] = {1, 2, 39};
    table[3].main(v, sizeof(v), nullptr);
    EXPECT_EQ(*acc, 47);
    put.main(payload, size, nullptr);
    EXPECT_EQ(arr[7], 70);
    EXPECT_EQ(arr[9], 90);
    dlclose(h);
}

TEST(toolchain_build, inspect_shows_elements_sizes_hashes_and_got_slot)
{
    const fs::path &p = tcbench_prefix();
    cmd_result r = run(shell_quote(tool()) + " inspect " + shell_quote(p.string()));
    ASSERT_EQ(r.status, 0) << r.output;
    for (const char *j : tcbench_jams) {
        EXPECT_NE(r.output.find(j), std::string::npos) << r.output;
    }
    EXPECT_NE(r.output.find("indirect_put externals (3): [0]tcbench_array "
                            "[1]tcbench_array_len [2]tcbench_put_rejected"),
              std::string::npos) << r.output;

    fs::path bin = p / "share/twochains/tcbench/jam_indirect_put.bin";
    r = run(shell_quote(tool()) + " inspect " + shell_quote(bin.string()));
    ASSERT_EQ(r.status, 0) << r.output;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.output, m, std::regex("code size +([0-9]+) bytes")))
        << r.output;
    tc_jam_file_header_t hdr;
    std::string raw = slurp(bin);
    ASSERT_GE(raw.size(), sizeof(hdr));
    std::memcpy(&hdr, raw.data(), sizeof(hdr));
    EXPECT_EQ(std::stoul(m[1]), hdr.span_size);
    EXPECT_EQ(raw.size(), hdr.span_offset + hdr.span_size);
    EXPECT_NE(slurp(manifest_of(p, "tcbench"))
                  .find("element 1 indirect_put " + m[1].str() + " "), std::string::npos);
    EXPECT_NE(r.output.find("GOT slot offset 0"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("entry offset    16"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("[2] tcbench_put_rejected"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("MISMATCH"), std::string::npos) << r.output;
    std::printf("indirect_put injectable size (x86_64): %s bytes\n", m[1].str().c_str());
}

TEST(toolchain_build, verify_detects_a_corrupted_span_and_manifest)
{
    fs::path copy = fresh_dir("corrupt");
    fs::copy(tcbench_prefix(), copy, fs::copy_options::recursive);
    fs::path bin = copy / "share/twochains/tcbench/jam_ping.bin";
    std::string b = slurp(bin);
    b[b.size() - 4] ^= 0x40;   /* one bit of the span */
    write_text(bin, b);
    cmd_result r = run(shell_quote(tool()) + " verify " + shell_quote(copy.string()));
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.output.find("jam_ping.bin: span hash"), std::string::npos) << r.output;

    fs::path m = manifest_of(copy, "tcbench");
    std::string text = slurp(m);
    text.replace(text.find("extern 2 1 tcbench_ping_reply"), 29, "extern 2 1 tcbench_ping_other");
    write_text(m, text);
    r = run(shell_quote(tool()) + " verify " + shell_quote(copy.string()));
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.output.find("external symbol list differs"), std::string::npos) << r.output;
}

TEST(toolchain_build, rebuild_gives_identical_hashes_and_ids)
{
    fs::path a = fresh_dir("rebuild-a"), b = fresh_dir("rebuild-b"), c = fresh_dir("rebuild-c");
    fs::path src = src_path("test/packages/tcbench");
    ASSERT_EQ(build("tcbench", src, a).status, 0);
    ASSERT_EQ(build("tcbench", src, b, "--force").status, 0);
    EXPECT_EQ(slurp(manifest_of(a, "tcbench")), slurp(manifest_of(b, "tcbench")));
    EXPECT_EQ(slurp(a / "include/tcbench.h"), slurp(b / "include/tcbench.h"));
    for (const char *j : tcbench_jams) {
        std::string f = std::string("share/twochains/tcbench/jam_") + j + ".bin";
        EXPECT_EQ(slurp(a / f), slurp(b / f)) << f;
    }

    /* unchanged sources: nothing is rebuilt */
    cmd_result r = build("tcbench", src, a);
    EXPECT_EQ(r.status, 0);
    EXPECT_NE(r.output.find("is up to date"), std::string::npos) << r.output;

    /* other flags: another build id, the same element ids */
    ASSERT_EQ(build("tcbench", src, c, "--cflags -DTCBENCH_UNUSED_FLAG=1").status, 0);
    std::string ma = slurp(manifest_of(a, "tcbench")), mc = slurp(manifest_of(c, "tcbench"));
    std::regex bid("build-id ([0-9a-f]{16})");
    std::smatch sa, sc;
    ASSERT_TRUE(std::regex_search(ma, sa, bid));
    ASSERT_TRUE(std::regex_search(mc, sc, bid));
    EXPECT_NE(sa[1].str(), sc[1].str());
    for (int id = 0; id < 4; ++id) {
        std::string rec = "\nelement " + std::to_string(id) + " " + tcbench_jams[id] + " ";
        EXPECT_NE(ma.find(rec), std::string::npos);
        EXPECT_NE(mc.find(rec), std::string::npos);
    }
}

TEST(toolchain_build, make_rules_built_the_test_packages)
{
    /* contrib/twochains-pkg.mk, included by test/Makefile.am, builds every
     * package of TWOCHAINS_PACKAGES into one prefix */
    fs::path prefix = fs::path(TC_BUILDDIR) / "test" / "twochains-pkgs";
    for (const char *name : {"tcbench", "tckv"}) {
        /* `make` in test/ builds them: an absence is our failure, not a skip */
        ASSERT_TRUE(fs::exists(manifest_of(prefix, name)))
            << "no package " << name << " built by contrib/twochains-pkg.mk under " << prefix;
        const fs::path dir = prefix / "share" / "twochains" / name;
        cmd_result r = run(shell_quote(tool()) + " verify " + shell_quote(dir.string()));
        EXPECT_EQ(r.status, 0) << name << ": " << r.output;
    }
}

/* ------------------------------------------------------------------------ */

namespace {

struct bad_build {
    cmd_result     result;
    fs::path       prefix;
};

/* Build a package made of @a files (relative path -> text) */
bad_build build_files(const std::string &name,
                      const std::vector<std::pair<std::string, std::string>> &files,
                      const std::string &extra = "")
{
    fs::path dir = fresh_dir("bad-" + name);
    for (const auto &[rel, text] : files) {
        write_text(dir / "src" / rel, text);
    }
    fs::create_directories(dir / "src");
    bad_build b{{}, dir / "prefix"};
    b.result = build(name, dir / "src", b.prefix, extra);
    return b;
}

void expect_rejected(const bad_build &b, const std::vector<std::string> &needles)
{
    EXPECT_NE(b.result.status, 0) << b.result.output;
    for (const auto &n : needles) {
        EXPECT_NE(b.result.output.find(n), std::string::npos)
            << "missing '" << n << "' in:\n" << b.result.output;
    }
    EXPECT_FALSE(fs::exists(b.prefix / "share/twochains")) << "a failed build installed files";
}

const char *const good_jam = "#include <twochains/jam.h>\n"
                             "TC_JAM_MAIN(good) { (void)payload; (void)payload_size; "
                             "(void)target_args; }\n";

} // namespace

TEST(toolchain_errors, tls_variable_names_file_line_and_symbol)
{
    auto b = build_files("tls", {{"jam_tlsjam.amc",
                                  "#include <twochains/jam.h>\n"
                                  "\n"
                                  "static __thread long per_thread;\n"
                                  "TC_JAM_MAIN(tlsjam)\n"
                                  "{\n"
                                  "    per_thread += (long)payload_size;\n"
                                  "}\n"}});
    expect_rejected(b, {"thread-local variable 'per_thread'", "tlsjam"});
    EXPECT_TRUE(std::regex_search(b.result.output, std::regex("jam_tlsjam\\.amc:[36]")))
        << b.result.output;

    auto e = build_files("tlsext", {{"jam_tlsext.amc",
                                     "#include <twochains/jam.h>\n"
                                     "extern __thread int ext_tls;\n"
                                     "TC_JAM_MAIN(tlsext) { ext_tls = 1; }\n"}});
    expect_rejected(e, {"jam_tlsext.amc:3", "'ext_tls'", "thread-local"});
}

TEST(toolchain_errors, missing_entry_function)
{
    auto b = build_files("noentry", {{"jam_noentry.amc",
                                      "#include <stddef.h>\n"
                                      "void noentry_start(void *p, size_t n, void *t);\n"
                                      "void noentry_start(void *p, size_t n, void *t) {}\n"}});
    expect_rejected(b, {"jam_noentry.amc", "missing entry function 'noentry_main'"});
}

TEST(toolchain_errors, entry_with_wrong_signature)
{
    auto b = build_files("badsig", {{"jam_badsig.amc",
                                     "int badsig_main(int x);\n"
                                     "int badsig_main(int x) { return x; }\n"}});
    expect_rejected(b, {"jam_badsig.amc:1", "badsig_main"});
}

TEST(toolchain_errors, name_clash_between_jams)
{
    auto b = build_files("dup", {{"a/jam_twice.amc", good_jam}, {"b/jam_twice.amc", good_jam}});
    expect_rejected(b, {"jam name clash: 'twice'", "a/jam_twice.amc", "b/jam_twice.amc"});

    const char *helper = "#include <twochains/jam.h>\n"
                         "int shared_helper(int x);\n"
                         "int shared_helper(int x) { return x + 1; }\n";
    auto s = build_files("symclash",
                         {{"jam_one.amc", std::string(helper) + "TC_JAM_MAIN(one) {}\n"},
                          {"jam_two.amc", std::string(helper) + "TC_JAM_MAIN(two) {}\n"}});
    expect_rejected(s, {"name clash: symbol 'shared_helper'", "jam_one.amc", "jam_two.amc"});
}

TEST(toolchain_errors, empty_package)
{
    auto b = build_files("empty", {{"ried_only.rdc", "int only_state;\n"}});
    expect_rejected(b, {"package 'empty' is empty", "no jam_<name>.amc"});
}

TEST(toolchain_errors, bad_jam_name)
{
    auto b = build_files("badname", {{"jam_bad-name.amc", good_jam}});
    expect_rejected(b, {"jam_bad-name.amc", "'bad-name' is not a C identifier"});
}

TEST(toolchain_errors, pointer_initialized_data)
{
    auto b = build_files("ptrs", {{"jam_ptrs.amc",
                                   "#include <string.h>\n"
                                   "#include <twochains/jam.h>\n"
                                   "static const char *const names[] = {\"alpha\", \"beta\"};\n"
                                   "TC_JAM_MAIN(ptrs)\n"
                                   "{\n"
                                   "    memcpy(target_args, names[payload_size & 1], 5);\n"
                                   "}\n"}});
    expect_rejected(b, {"jam_ptrs.amc:3", "'names'", "absolute address"});

    auto e = build_files("extptr", {{"jam_extptr.amc",
                                     "#include <stdio.h>\n"
                                     "#include <twochains/jam.h>\n"
                                     "int (*volatile printer)(const char *) = puts;\n"
                                     "TC_JAM_MAIN(extptr) { printer(\"x\"); }\n"}});
    expect_rejected(e, {"jam_extptr.amc:3", "'printer'", "external symbol 'puts'"});
}

TEST(toolchain_errors, external_reference_outside_the_got)
{
    auto b = build_files("hidden", {{"jam_hidden.amc",
                                     "#include <twochains/jam.h>\n"
                                     "extern int hidden_var __attribute__((visibility(\"hidden\")));\n"
                                     "TC_JAM_MAIN(hidden) { hidden_var = 1; }\n"}});
    expect_rejected(b, {"jam_hidden.amc:3 in function 'hidden_main'", "'hidden_var'",
                        "does not go through the GOT"});

    auto a = build_files("absasm", {{"jam_absasm.amc",
                                     "#include <twochains/jam.h>\n"
                                     "TC_JAM_MAIN(absasm)\n"
                                     "{\n"
                                     "    __asm__ volatile(\"movl $absasm_main, %%eax\" ::: \"eax\");\n"
                                     "}\n"}});
    expect_rejected(a, {"jam_absasm.amc:4", "absolute address of 'absasm_main'"});
}

TEST(toolchain_errors, aarch64_tls_variable_and_hidden_extern)
{
    const cross_tools &x = aarch64_tools();
    if (!x.why_not.empty()) {
        GTEST_SKIP() << x.why_not;
    }
    auto b = build_files("a64tls", {{"jam_a64tls.amc",
                                     "#include <twochains/jam.h>\n"
                                     "extern __thread int ext_tls;\n"
                                     "TC_JAM_MAIN(a64tls) { ext_tls = 1; }\n"}},
                         "--target aarch64 --cc " + shell_quote(x.cc));
    expect_rejected(b, {"jam_a64tls.amc:3", "'ext_tls'", "thread-local"});

    auto h = build_files("a64hidden", {{"jam_a64hidden.amc",
                                        "#include <twochains/jam.h>\n"
                                        "extern int hv __attribute__((visibility(\"hidden\")));\n"
                                        "TC_JAM_MAIN(a64hidden) { hv = 1; }\n"}},
                         "--target aarch64 --cc " + shell_quote(x.cc));
    expect_rejected(h, {"jam_a64hidden.amc:3", "'hv'", "does not go through the GOT"});
}

TEST(toolchain_errors, wrong_compiler_for_target)
{
    auto b = build_files("wrongcc", {{"jam_good.amc", good_jam}}, "--target aarch64 --cc cc");
    expect_rejected(b, {"compiler 'cc' targets x86_64", "not aarch64"});
}
