/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * GOT patching for aarch64 (gcc -fPIC -fno-plt -O2, -mcmodel=tiny by
 * default, small accepted).
 *
 * Rewrites, with i the symbol's GOT index and SLOT = __tc_got_slot (a
 * PC-relative literal load, +-1 MiB, so the span is limited to 1 MiB):
 *
 *   adrp xN, :got:S                 ldr xN, SLOT
 *   ldr  xD, [xN, #:got_lo12:S]     ldr xD, [xN, #8i]
 *   ldr  xD, :got:S       (tiny)    ldr xD, SLOT ; ldr xD, [xD, #8i]
 *   bl   S / b S (S external)       ldr x16, SLOT ; ldr x16, [x16, #8i] ;
 *                                   blr x16 / br x16
 *
 * The adrp/ldr pair is rewritten one instruction for one, whatever the
 * compiler scheduled between them: after the rewrite xN holds the table
 * address instead of the GOT page, and the ldr indexes the table instead of
 * the page. x16 (IP0) is free at every call and tail call by the AAPCS64;
 * linker veneers use it the same way. If S is defined by the jam, the pair
 * becomes adr xN, S / mov xD, xN.
 *
 * adrp to the jam's own data (small code model) stays, but makes the code
 * correct only at the linked address modulo 4096: the element is flagged
 * TC_JAM_F_PAGE_ALIGN and the receiver must page-align it. TLS operators,
 * absolute-address operators (:abs_g*:) and any other GOT form are errors.
 */
#include "got_patch.hpp"

#include <algorithm>
#include <cctype>
#include <regex>

namespace tc::pkg {

namespace {

/* ":op:SYM" operators in an operand list */
struct colon_ref {
    std::string op;      /* "got", "got_lo12", "lo12", "tlsdesc", ... */
    std::string sym;
    std::size_t operand;
};

std::vector<colon_ref> find_colon_ops(const std::vector<std::string> &ops)
{
    std::vector<colon_ref> refs;
    for (std::size_t k = 0; k < ops.size(); ++k) {
        const std::string &o = ops[k];
        std::size_t p = 0;
        while ((p = o.find(':', p)) != std::string::npos) {
            std::size_t q = o.find(':', p + 1);
            if (q == std::string::npos) {
                break;
            }
            std::string op = o.substr(p + 1, q - p - 1);
            std::size_t e  = q + 1;
            while ((e < o.size()) && (std::isalnum(static_cast<unsigned char>(o[e])) ||
                                      (o[e] == '_') || (o[e] == '.') || (o[e] == '$'))) {
                ++e;
            }
            refs.push_back({op, o.substr(q + 1, e - q - 1), k});
            p = e;
        }
    }
    return refs;
}

bool is_xreg(const std::string &r)
{
    if ((r.size() < 2) || (r[0] != 'x')) {
        return false;
    }
    return std::all_of(r.begin() + 1, r.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

bool is_symbol_operand(const std::string &o)
{
    if (o.empty() || !(std::isalpha(static_cast<unsigned char>(o[0])) || (o[0] == '_') ||
                       (o[0] == '.'))) {
        return false;
    }
    return std::all_of(o.begin(), o.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || (c == '_') || (c == '.') ||
               (c == '$');
    });
}

bool starts_with(const std::string &s, const char *p)
{
    return s.rfind(p, 0) == 0;
}

bool is_register(const std::string &o)
{
    static const std::regex reg("^([xwbhsdqv][0-9]+|sp|wsp|xzr|wzr|lr|fp)$");
    return std::regex_match(o, reg);
}

/* instructions whose last operand, if a symbol, is a PC-relative target */
bool is_pc_relative_user(const std::string &m)
{
    static const char *ops[] = {"adr", "adrp", "ldr", "ldrsw", "prfm", "b", "bl",
                                "cbz", "cbnz", "tbz", "tbnz"};
    return std::any_of(std::begin(ops), std::end(ops),
                       [&m](const char *o) { return m == o; }) ||
           starts_with(m, "b.");
}

class a64_patcher {
public:
    explicit a64_patcher(asm_unit &u) : m_u(u) {}

    got_patch_result run()
    {
        for (const asm_stmt &st : m_u.stmts()) {
            if (!is_insn(st)) {
                continue;
            }
            auto ops = split_operands(st.operands);
            for (const auto &r : find_colon_ops(ops)) {
                if ((r.op == "got") && !m_u.defines(r.sym)) {
                    m_u.add_external(r.sym);
                }
            }
            if (is_branch_to_external(st, ops)) {
                m_u.add_external(ops[0]);
            }
        }
        for (const asm_stmt &st : m_u.stmts()) {
            m_u.check_common(st);
            if ((st.mnemonic == ".tlsdesccall") || (st.mnemonic == ".tlsdescadd") ||
                (st.mnemonic == ".tlsdescldr")) {
                m_u.fail(st, "thread-local variable '" + st.operands + "' cannot be used "
                              "by a jam; keep per-thread state in a ried and reach it "
                              "through an external function");
                continue;
            }
            if (!is_insn(st)) {
                m_u.emit_original(st);
            } else {
                patch(st);
            }
        }
        m_u.emit_preamble();
        return m_u.finish(m_page_relative);
    }

private:
    static bool is_insn(const asm_stmt &st)
    {
        return !st.mnemonic.empty() && (st.mnemonic[0] != '.');
    }

    bool is_branch_to_external(const asm_stmt &st, const std::vector<std::string> &ops) const
    {
        return ((st.mnemonic == "bl") || (st.mnemonic == "b")) && (ops.size() == 1) &&
               is_symbol_operand(ops[0]) && !m_u.defines(ops[0]);
    }

    std::string slot_offset(const asm_stmt &st, const std::string &sym)
    {
        unsigned off = 8 * m_u.got_index(sym);
        if (off > 32760) {
            m_u.fail(st, "too many external symbols (GOT offset " + std::to_string(off) +
                          " for '" + sym + "' exceeds the ldr immediate range)");
        }
        return "#" + std::to_string(off);
    }

    void patch(const asm_stmt &st)
    {
        const std::string slot = k_got_slot_symbol;
        auto ops  = split_operands(st.operands);
        auto refs = find_colon_ops(ops);

        if (is_branch_to_external(st, ops)) {
            m_u.emit_comment("tc: " + st.raw);
            m_u.emit("\tldr\tx16, " + slot);
            m_u.emit("\tldr\tx16, [x16, " + slot_offset(st, ops[0]) + "]");
            m_u.emit(std::string("\t") + ((st.mnemonic == "bl") ? "blr" : "br") + "\tx16");
            return;
        }
        const std::string &m = st.mnemonic;
        if (refs.empty()) {
            if (!ops.empty() && is_symbol_operand(ops.back()) && !is_register(ops.back()) &&
                !m_u.defines(ops.back()) && is_pc_relative_user(m)) {
                m_u.fail(st, "reference to external symbol '" + ops.back() + "' (" + st.raw +
                              ") does not go through the GOT; declare it extern with default "
                              "visibility and do not reference it from inline asm");
                return;
            }
            if (m == "adrp") {
                m_page_relative = true;     /* adrp to the jam's own data */
            }
            m_u.emit_original(st);
            return;
        }

        const colon_ref &r = refs[0];
        if (starts_with(r.op, "tls") || starts_with(r.op, "tprel") ||
            starts_with(r.op, "dtprel") || starts_with(r.op, "gottprel")) {
            m_u.fail(st, "thread-local variable '" + r.sym + "' (" + st.raw + ") cannot "
                          "be used by a jam; keep per-thread state in a ried and reach it "
                          "through an external function");
            return;
        }
        if (refs.size() > 1) {
            m_u.fail(st, "more than one relocation operator in '" + st.raw + "'");
            return;
        }

        bool local = m_u.defines(r.sym);
        if ((r.op == "got") && (m == "adrp") && (ops.size() == 2) && (r.operand == 1) &&
            (ops[1] == ":got:" + r.sym) && is_xreg(ops[0])) {
            m_u.emit_comment("tc: " + st.raw);
            m_u.emit(local ? ("\tadr\t" + ops[0] + ", " + r.sym)
                           : ("\tldr\t" + ops[0] + ", " + slot));
            return;
        }
        if ((r.op == "got") && (m == "ldr") && (ops.size() == 2) && (r.operand == 1) &&
            (ops[1] == ":got:" + r.sym) && is_xreg(ops[0])) {
            m_u.emit_comment("tc: " + st.raw);
            if (local) {
                m_u.emit("\tadr\t" + ops[0] + ", " + r.sym);
            } else {
                m_u.emit("\tldr\t" + ops[0] + ", " + slot);
                m_u.emit("\tldr\t" + ops[0] + ", [" + ops[0] + ", " +
                         slot_offset(st, r.sym) + "]");
            }
            return;
        }
        if ((r.op == "got_lo12") && (m == "ldr") && (ops.size() == 2) &&
            (r.operand == 1) && is_xreg(ops[0])) {
            /* [xN, #:got_lo12:S] or [xN, :got_lo12:S] */
            std::string mem = ops[1];
            std::string base;
            if ((mem.size() > 2) && (mem.front() == '[') && (mem.back() == ']')) {
                auto parts = split_operands(mem.substr(1, mem.size() - 2));
                if ((parts.size() == 2) && is_xreg(parts[0]) &&
                    ((parts[1] == ":got_lo12:" + r.sym) ||
                     (parts[1] == "#:got_lo12:" + r.sym))) {
                    base = parts[0];
                }
            }
            if (!base.empty()) {
                m_u.emit_comment("tc: " + st.raw);
                m_u.emit(local ? ("\tmov\t" + ops[0] + ", " + base)
                               : ("\tldr\t" + ops[0] + ", [" + base + ", " +
                                  slot_offset(st, r.sym) + "]"));
                return;
            }
        }
        if (r.op == "lo12") {
            m_page_relative = true;     /* :lo12: of the jam's own data */
            m_u.emit_original(st);
            return;
        }
        if (starts_with(r.op, "got")) {
            m_u.fail(st, "unsupported GOT form '" + st.raw + "' for '" + r.sym +
                          "'; only adrp/ldr :got:/:got_lo12: and ldr :got: with 64-bit "
                          "registers are rewritten");
        } else {
            m_u.fail(st, "unsupported relocation operator :" + r.op + ": on '" + r.sym +
                          "' (" + st.raw + "); absolute addresses cannot ship in a jam");
        }
    }

    asm_unit &m_u;
    bool      m_page_relative = false;
};

} // namespace

got_patch_result got_patch_aarch64(asm_unit &unit)
{
    return a64_patcher(unit).run();
}

} // namespace tc::pkg
