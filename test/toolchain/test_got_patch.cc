/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The GOT patcher on hand-written assembly: each rewritten form, the
 * scratch register choice, and the forms it must refuse (with file:line).
 */
#include "got_patch.hpp"

#include <gtest/gtest.h>

using tc::pkg::got_patch;
using tc::pkg::got_patch_result;
using tc::pkg::pkg_error;
using tc::pkg::target_arch;

namespace {

const char *const x86_head = "\t.file 1 \"jam_t.amc\"\n"
                             "\t.text\n"
                             "\t.globl\tt_main\n"
                             "\t.type\tt_main, @function\n"
                             "t_main:\n"
                             "\t.loc 1 12 5\n";

std::string patch_error(target_arch arch, const std::string &text)
{
    try {
        got_patch(arch, text, "pkg/jam_t.amc", "");
    } catch (const pkg_error &e) {
        return e.what();
    }
    return "";
}

bool has(const std::string &text, const std::string &needle)
{
    return text.find(needle) != std::string::npos;
}

} // namespace

TEST(got_patch_x86_64, calls_and_jumps_load_the_table_into_r11)
{
    got_patch_result r = got_patch(target_arch::x86_64,
                                   std::string(x86_head) +
                                       "\tcall\t*zeta@GOTPCREL(%rip)\n"
                                       "\tcall\talpha@PLT\n"
                                       "\tjmp\t*zeta@GOTPCREL(%rip)\n"
                                       "\tcall\tt_main@PLT\n"
                                       "\tret\n",
                                   "pkg/jam_t.amc", "");
    ASSERT_EQ(r.externals, (std::vector<std::string>{"alpha", "zeta"}));
    EXPECT_TRUE(has(r.asm_text, "\tmovq\t__tc_got_slot(%rip), %r11\n\tcall\t*8(%r11)\n"));
    EXPECT_TRUE(has(r.asm_text, "\tmovq\t__tc_got_slot(%rip), %r11\n\tcall\t*0(%r11)\n"));
    EXPECT_TRUE(has(r.asm_text, "\tmovq\t__tc_got_slot(%rip), %r11\n\tjmp\t*8(%r11)\n"));
    EXPECT_TRUE(has(r.asm_text, "call\tt_main@PLT"));    /* local: stays direct */
    EXPECT_FALSE(has(r.asm_text, "\tcall\t*zeta@GOTPCREL"));
    EXPECT_TRUE(has(r.asm_text, "__tc_got_slot:\n\t.quad\t0\n\t.long\t0x314a4354\n"));
}

TEST(got_patch_x86_64, mov_uses_its_destination_and_others_a_saved_scratch)
{
    got_patch_result r = got_patch(target_arch::x86_64,
                                   std::string(x86_head) +
                                       "\tmovq\tv@GOTPCREL(%rip), %rax\n"
                                       "\taddq\tv@GOTPCREL(%rip), %r11\n"
                                       "\tpushq\tv@GOTPCREL(%rip)\n"
                                       "\tmovhps\tv@GOTPCREL(%rip), %xmm0\n"
                                       "\tret\n",
                                   "pkg/jam_t.amc", "");
    EXPECT_TRUE(has(r.asm_text, "\tmovq\t__tc_got_slot(%rip), %rax\n\tmovq\t0(%rax), %rax\n"));
    EXPECT_TRUE(has(r.asm_text, "\tpushq\t%r10\n\tmovq\t__tc_got_slot(%rip), %r10\n"
                                "\taddq\t0(%r10), %r11\n\tpopq\t%r10\n"));
    EXPECT_TRUE(has(r.asm_text, "\tleaq\t-8(%rsp), %rsp\n\tpushq\t%r11\n"));
    EXPECT_TRUE(has(r.asm_text, "\tmovhps\t0(%r11), %xmm0\n\tpopq\t%r11\n"));
}

TEST(got_patch_x86_64, refuses_what_it_cannot_make_position_independent)
{
    std::string e = patch_error(target_arch::x86_64,
                                std::string(x86_head) + "\tmovq\t%rax, v@GOTPCREL(%rip)\n");
    EXPECT_TRUE(has(e, "jam_t.amc:12")) << e;
    EXPECT_TRUE(has(e, "unsupported use of the GOT entry of 'v'")) << e;

    e = patch_error(target_arch::x86_64,
                    std::string(x86_head) + "\tmovl\t%fs:counter@tpoff, %eax\n");
    EXPECT_TRUE(has(e, "jam_t.amc:12 in function 't_main': error: thread-local variable "
                       "'counter'")) << e;

    e = patch_error(target_arch::x86_64,
                    std::string(x86_head) + "\tleaq\tv@GOTOFF(%rip), %rax\n");
    EXPECT_TRUE(has(e, "unsupported relocation operator @gotoff on 'v'")) << e;

    e = patch_error(target_arch::x86_64,
                    std::string(x86_head) + "\t.section\t.data.rel.local,\"aw\"\n"
                                            "table:\n\t.quad\tputs\n");
    EXPECT_TRUE(has(e, "'table' is initialized with the address of external symbol 'puts'")) << e;

    e = patch_error(target_arch::x86_64, std::string(x86_head) + "\tmovl\t$table, %eax\n");
    EXPECT_TRUE(has(e, "absolute address of 'table'")) << e;

    /* prefixes are not symbols; the patched instruction keeps them */
    got_patch_result r = got_patch(target_arch::x86_64,
                                   std::string(x86_head) + "\trep movsq\n\trep stosb\n"
                                                           "\tnotrack call\t*f@GOTPCREL(%rip)\n"
                                                           "\tlock addq\tv@GOTPCREL(%rip), %rax\n",
                                   "pkg/jam_t.amc", "");
    EXPECT_TRUE(has(r.asm_text, "\trep movsq\n")) << r.asm_text;
    EXPECT_TRUE(has(r.asm_text, "\tnotrack call\t*0(%r11)\n")) << r.asm_text;
    EXPECT_TRUE(has(r.asm_text, "\tlock addq\t8(%r11), %rax\n")) << r.asm_text;

    /* differences of span labels are position independent: accepted */
    got_patch(target_arch::x86_64,
              std::string(x86_head) + ".L3:\n\tret\n\t.section\t.rodata\n.L4:\n"
                                      "\t.long\t.L3-.L4\n",
              "pkg/jam_t.amc", "");
}

TEST(got_patch_aarch64, rewrites_adrp_ldr_tiny_and_branches)
{
    got_patch_result r = got_patch(target_arch::aarch64,
                                   "\t.file 1 \"jam_t.amc\"\n"
                                   "\t.text\n"
                                   "t_main:\n"
                                   "\tadrp\tx1, :got:beta\n"
                                   "\tmov\tx3, 1\n"
                                   "\tldr\tx2, [x1, #:got_lo12:beta]\n"
                                   "\tldr\tx0, :got:alpha\n"
                                   "\tbl\tgamma\n"
                                   "\tbl\tt_main\n"
                                   "\tb\tgamma\n",
                                   "pkg/jam_t.amc", "");
    ASSERT_EQ(r.externals, (std::vector<std::string>{"alpha", "beta", "gamma"}));
    EXPECT_TRUE(has(r.asm_text, "\tldr\tx1, __tc_got_slot\n"));
    EXPECT_TRUE(has(r.asm_text, "\tldr\tx2, [x1, #8]\n"));
    EXPECT_TRUE(has(r.asm_text, "\tldr\tx0, __tc_got_slot\n\tldr\tx0, [x0, #0]\n"));
    EXPECT_TRUE(has(r.asm_text, "\tldr\tx16, __tc_got_slot\n\tldr\tx16, [x16, #16]\n"
                                "\tblr\tx16\n"));
    EXPECT_TRUE(has(r.asm_text, "\tldr\tx16, [x16, #16]\n\tbr\tx16\n"));
    EXPECT_TRUE(has(r.asm_text, "\tbl\tt_main\n"));
    EXPECT_FALSE(r.page_relative);
}

TEST(got_patch_aarch64, flags_page_relative_and_refuses_tls_and_ilp32)
{
    got_patch_result r = got_patch(target_arch::aarch64,
                                   "t_main:\n\tadrp\tx0, .LC0\n\tadd\tx0, x0, :lo12:.LC0\n"
                                   "\t.section\t.rodata\n.LC0:\n\t.string\t\"x\"\n",
                                   "pkg/jam_t.amc", "");
    EXPECT_TRUE(r.page_relative);

    std::string e = patch_error(target_arch::aarch64,
                                "\t.file 1 \"jam_t.amc\"\nt_main:\n\t.loc 1 7 1\n"
                                "\tadrp\tx0, :tlsdesc:tv\n");
    EXPECT_TRUE(has(e, "jam_t.amc:7")) << e;
    EXPECT_TRUE(has(e, "thread-local variable 'tv'")) << e;

    e = patch_error(target_arch::aarch64, "t_main:\n\tldr\tw0, [x0, #:got_lo12:v]\n");
    EXPECT_TRUE(has(e, "unsupported GOT form")) << e;

    e = patch_error(target_arch::aarch64, "t_main:\n\tmovz\tx0, #:abs_g0:v\n");
    EXPECT_TRUE(has(e, "absolute addresses cannot ship")) << e;
}
