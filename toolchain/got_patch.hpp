/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The paper's GOT transformation, on the compiler's assembly output.
 *
 * A jam is compiled with -fPIC -fno-plt, so every reference to a symbol it
 * does not define goes through a GOT entry. got_patch() rewrites each of
 * those accesses to load the receiver's GOT table address from the slot at
 * span offset 0 (__tc_got_slot, emitted here in section .tc_preamble) and
 * index it by the symbol's position in the jam's external list. It rejects,
 * with file:line and symbol, every form it cannot make position independent
 * (TLS, unknown relocation operators, pointer-initialized data).
 *
 * The sequences per architecture are documented in got_patch_x86_64.cpp and
 * got_patch_aarch64.cpp; the front end (statements, sections, labels, source
 * lines, data checks) is shared, in got_patch.cpp.
 */
#pragma once

#include "util.hpp"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace tc::pkg {

struct got_patch_result {
    std::string              asm_text;    /* assemble with relaxation off */
    std::vector<std::string> externals;   /* GOT table order, sorted */
    bool                     page_relative = false; /* aarch64 adrp kept */
};

/* One assembler statement with the context needed for diagnostics. */
struct asm_stmt {
    unsigned    asm_line = 0;   /* 1-based line in the .s */
    std::string src_file;       /* from the last .loc, may be empty */
    unsigned    src_line = 0;
    std::string section;        /* current section name */
    bool        section_alloc = true;
    bool        section_tls   = false;
    std::string function;       /* enclosing function, if known */
    std::string object;         /* last non-local label */
    std::string label;          /* label defined by this statement, if any */
    std::string mnemonic;       /* directive (".quad") or instruction */
    std::string operands;       /* comment stripped, trimmed */
    std::string raw;            /* the original text of the statement */
};

/*
 * The parsed assembly of one jam. Arch-specific patchers walk stmts and
 * call emit_* to build the output, and fail() to report.
 */
class asm_unit {
public:
    asm_unit(target_arch arch, const std::string &asm_text,
             const std::string &display_src, const std::string &source_text);

    const std::vector<asm_stmt> &stmts() const { return m_stmts; }
    bool defines(const std::string &sym) const { return m_defined.count(sym) > 0; }

    /* GOT index of an external symbol (final order assigned by finish()) */
    unsigned got_index(const std::string &sym) const;
    const std::set<std::string> &externals() const { return m_externals; }
    /* Record a symbol as external; must be called in a pre-pass. */
    void add_external(const std::string &sym) { m_externals.insert(sym); }

    /* Diagnostics: collected, reported together by finish(). */
    void fail(const asm_stmt &st, const std::string &msg);
    /* Location of a statement: "src:line" or "src (asm line N)" */
    std::string where(const asm_stmt &st) const;
    /* Best-effort "file:line" of a symbol's declaration in the jam source */
    std::string where_declared(const std::string &sym) const;

    void emit(const std::string &line) { m_out += line + "\n"; }
    void emit_original(const asm_stmt &st)
    {
        emit((st.label.empty() ? "\t" : "") + st.raw);
    }
    void emit_comment(const std::string &text);
    /* The preamble of the shipped span: the GOT slot (__tc_got_slot, 8
     * bytes), TC_JAM_PREAMBLE_MAGIC and 4 bytes of padding, in this
     * architecture's directives. */
    void emit_preamble();

    /* Shared checks applied to every statement (TLS sections, data). */
    void check_common(const asm_stmt &st);

    /* Throws pkg_error if anything failed; else returns the patched text. */
    got_patch_result finish(bool page_relative);

    target_arch arch() const { return m_arch; }
    const std::string &display_src() const { return m_display; }

private:
    void parse(const std::string &asm_text);

    target_arch                    m_arch;
    std::string                    m_display;
    std::string                    m_source;
    std::vector<asm_stmt>          m_stmts;
    std::set<std::string>          m_defined;
    std::set<std::string>          m_externals;
    std::map<std::string, unsigned> m_index;
    std::map<unsigned, std::string> m_files;   /* .file N "name" */
    std::vector<std::string>       m_errors;
    std::string                    m_out;
};

/* Name of the slot symbol referenced by rewritten sequences. */
inline constexpr const char *k_got_slot_symbol = "__tc_got_slot";

got_patch_result got_patch_x86_64(asm_unit &unit);
got_patch_result got_patch_aarch64(asm_unit &unit);

/*
 * Patch the assembly of jam @a display_src (its C text in @a source_text,
 * for locating declarations). Throws pkg_error listing every problem.
 */
got_patch_result got_patch(target_arch arch, const std::string &asm_text,
                           const std::string &display_src,
                           const std::string &source_text);

/* Split "a, b(c, d), e" at top-level commas, trimming each part. */
std::vector<std::string> split_operands(const std::string &ops);
std::string trim(const std::string &s);

} // namespace tc::pkg
