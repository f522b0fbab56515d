/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * GOT patching for x86_64 (AT&T syntax, gcc -fPIC -fno-plt -O2).
 *
 * Rewrites, with i the symbol's GOT index and SLOT = __tc_got_slot:
 *
 *   call *S@GOTPCREL(%rip)       movq SLOT(%rip), %r11 ; call *8i(%r11)
 *   jmp  *S@GOTPCREL(%rip)       movq SLOT(%rip), %r11 ; jmp  *8i(%r11)
 *   call S@PLT / jmp S@PLT       the same, when S is not defined by the jam
 *   movq S@GOTPCREL(%rip), %R    movq SLOT(%rip), %R ; movq 8i(%R), %R
 *   OP   S@GOTPCREL(%rip), ...   pushq %T ; movq SLOT(%rip), %T ;
 *                                OP 8i(%T), ... ; popq %T
 *   pushq S@GOTPCREL(%rip)       leaq -8(%rsp), %rsp ; pushq %r11 ; <load %r11> ;
 *                                movq %r11, 8(%rsp) ; popq %r11
 *
 * Scratch registers. %r11 is call-clobbered and never carries an argument
 * (the SysV ABI uses rdi..r9, rax for varargs, r10 for the static chain),
 * so it holds nothing live at a call or a tail jump. The mov form uses its
 * own destination. Any other instruction that reads a GOT entry as its
 * source operand (cmp, add, movq into %xmm, movhps, ...) reads the receiver's
 * table entry instead, which holds the same 8 bytes; it may sit where every
 * register is live, so its scratch %T (%r11, or %r10 if the instruction
 * names %r11) is saved and restored with push/pop, which leave flags alone.
 * That is only correct without a red zone: twochains-pkg compiles jams with
 * -mno-red-zone. A GOT entry as a destination, or with an addend, is
 * rejected. If S is defined by the jam itself, the access becomes a direct
 * PC-relative one (leaq S(%rip) / call S).
 */
#include "got_patch.hpp"

#include <algorithm>
#include <cctype>
#include <regex>

namespace tc::pkg {

namespace {

struct reloc_ref {
    std::string sym;
    std::string op;        /* lowercase operator after '@' */
    std::size_t operand;   /* index in split operands */
};

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

std::vector<reloc_ref> find_relocs(const std::vector<std::string> &ops)
{
    std::vector<reloc_ref> refs;
    for (std::size_t k = 0; k < ops.size(); ++k) {
        const std::string &o = ops[k];
        for (std::size_t at = o.find('@'); at != std::string::npos;
             at = o.find('@', at + 1)) {
            std::size_t b = at;
            while ((b > 0) && (std::isalnum(static_cast<unsigned char>(o[b - 1])) ||
                               (o[b - 1] == '_') || (o[b - 1] == '.') ||
                               (o[b - 1] == '$'))) {
                --b;
            }
            std::size_t e = at + 1;
            while ((e < o.size()) && std::isalnum(static_cast<unsigned char>(o[e]))) {
                ++e;
            }
            refs.push_back({o.substr(b, at - b), lower(o.substr(at + 1, e - at - 1)), k});
        }
    }
    return refs;
}

bool is_tls_op(const std::string &op)
{
    static const char *tls[] = {"tpoff", "ntpoff", "gottpoff", "gotntpoff",
                                "indntpoff", "tlsgd", "tlsld", "dtpoff",
                                "tlsdesc", "tlscall", "dtpmod"};
    return std::any_of(std::begin(tls), std::end(tls),
                       [&op](const char *t) { return op == t; });
}

bool is_prefix(const std::string &m)
{
    static const char *p[] = {"rep", "repe", "repz", "repne", "repnz", "lock", "notrack",
                              "bnd", "data16", "data32", "addr32", "rex64", "cs", "ds",
                              "es", "ss", "fs", "gs", "xacquire", "xrelease"};
    return std::any_of(std::begin(p), std::end(p), [&m](const char *x) { return m == x; });
}

bool is_gpr64(const std::string &r)
{
    static const char *regs[] = {"%rax", "%rbx", "%rcx", "%rdx", "%rsi", "%rdi",
                                 "%rbp", "%r8",  "%r9",  "%r10", "%r11", "%r12",
                                 "%r13", "%r14", "%r15"};
    return std::any_of(std::begin(regs), std::end(regs),
                       [&r](const char *g) { return r == g; });
}

/* mnemonics whose GOT-entry source operand may be replaced by a register */
bool is_read_only_alu(const std::string &m)
{
    static const char *ops[] = {"mov",  "movq", "add",  "addq", "sub",  "subq",
                                "cmp",  "cmpq", "and",  "andq", "or",   "orq",
                                "xor",  "xorq", "test", "testq", "adc", "adcq",
                                "sbb",  "sbbq", "imul", "imulq"};
    return std::any_of(std::begin(ops), std::end(ops),
                       [&m](const char *o) { return m == o; });
}

class x86_patcher {
public:
    explicit x86_patcher(asm_unit &u) : m_u(u) {}

    got_patch_result run()
    {
        for (const asm_stmt &st : m_u.stmts()) {
            if (!is_insn(st)) {
                continue;
            }
            for (const auto &r : find_relocs(split_operands(st.operands))) {
                if (((r.op == "gotpcrel") || (r.op == "plt")) && !m_u.defines(r.sym)) {
                    m_u.add_external(r.sym);
                }
            }
        }
        for (const asm_stmt &st : m_u.stmts()) {
            m_u.check_common(st);
            if (!is_insn(st)) {
                m_u.emit_original(st);
            } else {
                patch(st);
            }
        }
        m_u.emit_preamble();
        return m_u.finish(false);
    }

private:
    static bool is_insn(const asm_stmt &st)
    {
        return !st.mnemonic.empty() && (st.mnemonic[0] != '.');
    }

    void load_address(const std::string &sym, const std::string &reg)
    {
        if (m_u.defines(sym)) {
            m_u.emit("\tleaq\t" + sym + "(%rip), " + reg);
        } else {
            m_u.emit("\tmovq\t" + std::string(k_got_slot_symbol) + "(%rip), " + reg);
            m_u.emit("\tmovq\t" + std::to_string(8 * m_u.got_index(sym)) + "(" + reg +
                     "), " + reg);
        }
    }

    void call_through_got(const std::string &insn, const std::string &sym)
    {
        m_u.emit("\tmovq\t" + std::string(k_got_slot_symbol) + "(%rip), %r11");
        m_u.emit("\t" + m_prefix + insn + "\t*" + std::to_string(8 * m_u.got_index(sym)) +
                 "(%r11)");
    }

    void patch(const asm_stmt &st_in)
    {
        /* instruction prefixes (rep, lock, notrack, ...) stay in front */
        asm_stmt st = st_in;
        std::string prefix;
        while (is_prefix(lower(st.mnemonic)) && !st.operands.empty()) {
            prefix += st.mnemonic + " ";
            std::size_t sp = st.operands.find_first_of(" \t");
            st.mnemonic    = st.operands.substr(0, sp);
            st.operands    = (sp == std::string::npos) ? "" : trim(st.operands.substr(sp + 1));
        }
        m_prefix = prefix;

        auto ops  = split_operands(st.operands);
        auto refs = find_relocs(ops);
        if (refs.empty()) {
            check_plain_symbols(st, ops);
            m_u.emit_original(st_in);
            return;
        }
        const reloc_ref &r = refs[0];
        if (is_tls_op(r.op)) {
            m_u.fail(st, "thread-local variable '" + r.sym + "' (" + st.raw +
                          ") cannot be used by a jam; keep per-thread state in a ried "
                          "and reach it through an external function");
            return;
        }
        if (refs.size() > 1) {
            m_u.fail(st, "more than one relocation operator in '" + st.raw + "'");
            return;
        }

        std::string m = lower(st.mnemonic);
        m_u.emit_comment("tc: " + st.raw);
        if (r.op == "plt") {
            bool is_call = (m == "call") || (m == "callq");
            bool is_jmp  = (m == "jmp") || (m == "jmpq");
            if (m_u.defines(r.sym)) {
                m_u.emit_original(st);
            } else if ((is_call || is_jmp) && (ops.size() == 1) &&
                       (ops[0] == r.sym + "@PLT")) {
                call_through_got(is_call ? "call" : "jmp", r.sym);
            } else {
                m_u.fail(st, "unsupported PLT reference to '" + r.sym + "' (" + st.raw +
                              "); only call and jmp are rewritten");
            }
            return;
        }
        if (r.op != "gotpcrel") {
            m_u.fail(st, "unsupported relocation operator @" + r.op + " on '" + r.sym +
                          "' (" + st.raw + "); a jam may reach other code only through "
                          "the GOT (compile with -fPIC -fno-plt, no inline asm relocations)");
            return;
        }
        patch_gotpcrel(st, m, ops, r);
    }

    /*
     * A symbol operand without a relocation operator is either PC-relative
     * (S(%rip), a branch target) and must then be defined by the jam, or an
     * absolute address ($S, S(%reg)), which cannot ship.
     */
    void check_plain_symbols(const asm_stmt &st, const std::vector<std::string> &ops)
    {
        static const std::regex sym_re("^(\\*?)(\\$?)([A-Za-z_.][A-Za-z0-9_.$]*)"
                                       "([+-][0-9]+)?(\\(.*\\))?$");
        const std::string m = lower(st.mnemonic);
        const bool branch   = (m[0] == 'j') || (m.rfind("call", 0) == 0) ||
                              (m.rfind("loop", 0) == 0);
        for (const auto &o : ops) {
            std::smatch sm;
            if (!std::regex_match(o, sm, sym_re)) {
                continue;
            }
            const std::string sym = sm[3];
            const bool rip        = (sm[5] == "(%rip)");
            if (sm[2].length() || (!rip && !branch) || (sm[5].length() && !rip)) {
                m_u.fail(st, "absolute address of '" + sym + "' (" + st.raw + "); a jam "
                              "must address memory PC-relatively, compile with -fPIC and "
                              "avoid absolute addresses in inline asm");
                return;
            }
            if (!m_u.defines(sym)) {
                m_u.fail(st, "reference to external symbol '" + sym + "' (" + st.raw +
                              ") does not go through the GOT; declare it extern with default "
                              "visibility and do not reference it from inline asm");
                return;
            }
        }
    }

    void patch_gotpcrel(const asm_stmt &st, const std::string &m,
                        const std::vector<std::string> &ops, const reloc_ref &r)
    {
        const std::string mem = r.sym + "@GOTPCREL(%rip)";
        std::string got_op    = ops[r.operand];
        bool star             = !got_op.empty() && (got_op[0] == '*');
        if (star) {
            got_op = got_op.substr(1);
        }
        if (got_op != mem) {
            m_u.fail(st, "unsupported GOT operand '" + ops[r.operand] + "' for '" + r.sym +
                          "'; only " + mem + " without an addend is rewritten");
            return;
        }

        bool is_call = (m == "call") || (m == "callq");
        bool is_jmp  = (m == "jmp") || (m == "jmpq");
        if ((is_call || is_jmp) && star && (ops.size() == 1)) {
            if (m_u.defines(r.sym)) {
                m_u.emit("\t" + std::string(is_call ? "call" : "jmp") + "\t" + r.sym);
            } else {
                call_through_got(is_call ? "call" : "jmp", r.sym);
            }
            return;
        }
        if (star) {
            m_u.fail(st, "unsupported indirect use of the GOT entry of '" + r.sym + "' (" +
                          st.raw + ")");
            return;
        }

        if (((m == "mov") || (m == "movq")) && (ops.size() == 2) && (r.operand == 0) &&
            is_gpr64(ops[1])) {
            load_address(r.sym, ops[1]);
            return;
        }

        if (((m == "push") || (m == "pushq")) && (ops.size() == 1)) {
            m_u.emit("\tleaq\t-8(%rsp), %rsp");
            m_u.emit("\tpushq\t%r11");
            load_address(r.sym, "%r11");
            m_u.emit("\tmovq\t%r11, 8(%rsp)");
            m_u.emit("\tpopq\t%r11");
            return;
        }

        /*
         * Any other instruction reads the GOT entry as its source memory
         * operand (AT&T: not the last operand). The receiver's table entry
         * holds the same 8 bytes, so the operand becomes 8i(%T) with %T the
         * table address, saved and restored around it.
         */
        bool source_pos = (ops.size() >= 2) && (r.operand + 1 < ops.size()) &&
                          (m.rfind("xchg", 0) != 0) && (m.rfind("cmpxchg", 0) != 0);
        bool others_ok  = true;
        for (std::size_t k = 0; k < ops.size(); ++k) {
            if (k == r.operand) {
                continue;
            }
            const std::string &o = ops[k];
            if (o.empty() || ((o[0] != '%') && (o[0] != '$')) ||
                (o.find("sp") != std::string::npos)) {
                others_ok = false;
            }
        }
        if (!source_pos || !others_ok || (m_u.defines(r.sym) && !is_read_only_alu(m))) {
            m_u.fail(st, "unsupported use of the GOT entry of '" + r.sym + "' (" + st.raw +
                          "): twochains-pkg rewrites call, jmp, push, and instructions "
                          "that read the entry as a source operand next to registers; "
                          "take the address into a variable first");
            return;
        }

        std::string scratch = "%r11";
        if (st.operands.find("%r11") != std::string::npos) {
            scratch = "%r10";
            if (st.operands.find("%r10") != std::string::npos) {
                m_u.fail(st, "no scratch register free for '" + st.raw + "'");
                return;
            }
        }
        std::string replacement;
        if (m_u.defines(r.sym)) {
            replacement = scratch;     /* the address itself, as a register */
        } else {
            replacement = std::to_string(8 * m_u.got_index(r.sym)) + "(" + scratch + ")";
        }
        std::string rebuilt;
        for (std::size_t k = 0; k < ops.size(); ++k) {
            rebuilt += (k ? ", " : "") + ((k == r.operand) ? replacement : ops[k]);
        }
        m_u.emit("\tpushq\t" + scratch);
        if (m_u.defines(r.sym)) {
            m_u.emit("\tleaq\t" + r.sym + "(%rip), " + scratch);
        } else {
            m_u.emit("\tmovq\t" + std::string(k_got_slot_symbol) + "(%rip), " + scratch);
        }
        m_u.emit("\t" + m_prefix + st.mnemonic + "\t" + rebuilt);
        m_u.emit("\tpopq\t" + scratch);
    }

    asm_unit    &m_u;
    std::string m_prefix;   /* prefixes of the instruction being patched */
};

} // namespace

got_patch_result got_patch_x86_64(asm_unit &unit)
{
    return x86_patcher(unit).run();
}

} // namespace tc::pkg
