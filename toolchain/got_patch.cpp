/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Assembly front end shared by the x86_64 and aarch64 GOT patchers: splits
 * the compiler's output into statements, tracks sections, labels, functions
 * and source lines (.file/.loc from -g1), and rejects what no architecture
 * can ship: thread-local variables, constructors, and data initialized with
 * addresses. Every problem is collected; finish() reports them all at once.
 */
#include "got_patch.hpp"

#include <twochains/jam_format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>

namespace tc::pkg {

namespace {

bool is_ident_start(char c)
{
    return std::isalpha(static_cast<unsigned char>(c)) || (c == '_') ||
           (c == '.') || (c == '$');
}

bool is_ident_char(char c)
{
    return is_ident_start(c) || std::isdigit(static_cast<unsigned char>(c));
}

bool starts_with(const std::string &s, const std::string &prefix)
{
    return s.compare(0, prefix.size(), prefix) == 0;
}

bool is_local_label(const std::string &sym)
{
    return starts_with(sym, ".L") ||
           (!sym.empty() && std::isdigit(static_cast<unsigned char>(sym[0])));
}

/* Identifiers referenced by an assembler expression (numbers skipped). */
std::vector<std::string> expr_identifiers(const std::string &expr)
{
    std::vector<std::string> ids;
    for (std::size_t i = 0; i < expr.size();) {
        char c = expr[i];
        if (std::isdigit(static_cast<unsigned char>(c))) {
            while ((i < expr.size()) && is_ident_char(expr[i])) {
                ++i;
            }
        } else if (is_ident_start(c)) {
            std::size_t b = i;
            while ((i < expr.size()) && is_ident_char(expr[i])) {
                ++i;
            }
            ids.push_back(expr.substr(b, i - b));
        } else {
            ++i;
        }
    }
    return ids;
}

bool known_alloc_section(const std::string &name)
{
    static const char *prefixes[] = {".text", ".data", ".bss", ".rodata",
                                     ".tdata", ".tbss", ".init_array",
                                     ".fini_array", ".preinit_array", ".ctors",
                                     ".dtors", ".tc_preamble", ".sdata",
                                     ".sbss", ".lrodata", ".ldata", ".lbss"};
    for (const char *p : prefixes) {
        if (starts_with(name, p)) {
            return true;
        }
    }
    return false;
}

const std::set<std::string> &data_directives()
{
    static const std::set<std::string> d = {
        ".quad",  ".long",  ".int",   ".word",  ".hword", ".short", ".value",
        ".byte",  ".xword", ".dword", ".8byte", ".4byte", ".2byte", ".dc.a",
        ".dc.l",  ".dc.w",  ".dc.b",  ".sleb128", ".uleb128", ".octa"};
    return d;
}

} // namespace

std::string trim(const std::string &s)
{
    std::size_t b = 0, e = s.size();
    while ((b < e) && std::isspace(static_cast<unsigned char>(s[b]))) {
        ++b;
    }
    while ((e > b) && std::isspace(static_cast<unsigned char>(s[e - 1]))) {
        --e;
    }
    return s.substr(b, e - b);
}

std::vector<std::string> split_operands(const std::string &ops)
{
    std::vector<std::string> out;
    int depth = 0;
    bool in_str = false;
    std::string cur;
    for (std::size_t i = 0; i < ops.size(); ++i) {
        char c = ops[i];
        if (in_str) {
            cur += c;
            if ((c == '\\') && (i + 1 < ops.size())) {
                cur += ops[++i];
            } else if (c == '"') {
                in_str = false;
            }
            continue;
        }
        if (c == '"') {
            in_str = true;
        } else if ((c == '(') || (c == '[')) {
            ++depth;
        } else if ((c == ')') || (c == ']')) {
            --depth;
        } else if ((c == ',') && (depth == 0)) {
            out.push_back(trim(cur));
            cur.clear();
            continue;
        }
        cur += c;
    }
    if (!trim(cur).empty() || !out.empty()) {
        out.push_back(trim(cur));
    }
    return out;
}

asm_unit::asm_unit(target_arch arch, const std::string &asm_text,
                   const std::string &display_src, const std::string &source_text) :
    m_arch(arch), m_display(display_src), m_source(source_text)
{
    parse(asm_text);
}

void asm_unit::parse(const std::string &asm_text)
{
    struct section_state {
        std::string name;
        bool        alloc;
        bool        tls;
    };
    section_state cur{".text", true, false}, prev = cur;
    std::vector<section_state> stack;
    std::set<std::string> functions;
    std::string function, object, src_file;
    unsigned src_line = 0;

    const char comment = (m_arch == target_arch::x86_64) ? '#' : 0;

    std::istringstream in(asm_text);
    std::string line;
    unsigned lineno = 0;
    while (std::getline(in, line)) {
        ++lineno;
        /* split into statements at ';' and drop comments, outside strings */
        std::vector<std::string> parts;
        std::string cur_part;
        bool in_str = false;
        for (std::size_t i = 0; i < line.size(); ++i) {
            char c = line[i];
            if (in_str) {
                cur_part += c;
                if ((c == '\\') && (i + 1 < line.size())) {
                    cur_part += line[++i];
                } else if (c == '"') {
                    in_str = false;
                }
                continue;
            }
            if (c == '"') {
                in_str = true;
            } else if ((c == comment) ||
                       ((c == '/') && (i + 1 < line.size()) && (line[i + 1] == '/')) ||
                       ((c == '#') && trim(cur_part).empty() && parts.empty())) {
                break;
            } else if (c == ';') {
                parts.push_back(cur_part);
                cur_part.clear();
                continue;
            }
            cur_part += c;
        }
        parts.push_back(cur_part);

        for (std::string text : parts) {
            text = trim(text);
            while (!text.empty()) {
                asm_stmt st;
                st.asm_line = lineno;

                /* a leading label "name:" becomes its own statement */
                std::size_t i = 0;
                while ((i < text.size()) && is_ident_char(text[i])) {
                    ++i;
                }
                if ((i > 0) && (i < text.size()) && (text[i] == ':') &&
                    ((i + 1 == text.size()) || (text[i + 1] != ':'))) {
                    st.label = text.substr(0, i);
                    st.raw   = st.label + ":";
                    text     = trim(text.substr(i + 1));
                    m_defined.insert(st.label);
                    if (functions.count(st.label)) {
                        function = st.label;
                    }
                    if (!is_local_label(st.label)) {
                        object = st.label;
                    }
                } else {
                    st.raw = text;
                    std::size_t sp = text.find_first_of(" \t");
                    st.mnemonic = text.substr(0, sp);
                    st.operands = (sp == std::string::npos) ? "" :
                                  trim(text.substr(sp + 1));
                    text.clear();
                }

                const std::string &m = st.mnemonic;
                if ((m == ".text") || (m == ".data") || (m == ".bss")) {
                    prev = cur;
                    cur  = {m, true, false};
                } else if ((m == ".section") || (m == ".pushsection")) {
                    auto ops = split_operands(st.operands);
                    if (m == ".pushsection") {
                        stack.push_back(cur);
                    } else {
                        prev = cur;
                    }
                    section_state s{ops.empty() ? "" : ops[0], false, false};
                    if (ops.size() > 1) {
                        std::string fl = ops[1];
                        s.alloc = fl.find('a') != std::string::npos;
                        s.tls   = fl.find('T') != std::string::npos;
                    } else {
                        s.alloc = known_alloc_section(s.name);
                    }
                    if (starts_with(s.name, ".tdata") || starts_with(s.name, ".tbss")) {
                        s.tls = true;
                    }
                    cur = s;
                } else if (m == ".popsection") {
                    if (!stack.empty()) {
                        cur = stack.back();
                        stack.pop_back();
                    }
                } else if (m == ".previous") {
                    std::swap(cur, prev);
                } else if (m == ".type") {
                    auto ops = split_operands(st.operands);
                    if ((ops.size() == 2) && (ops[1].find("function") != std::string::npos)) {
                        functions.insert(ops[0]);
                    }
                } else if ((m == ".set") || (m == ".equ") || (m == ".comm") ||
                           (m == ".lcomm")) {
                    auto ops = split_operands(st.operands);
                    if (!ops.empty()) {
                        m_defined.insert(ops[0]);
                    }
                } else if (m == ".file") {
                    std::istringstream fs(st.operands);
                    unsigned num;
                    if (fs >> num) {
                        /* .file N "name" or .file N "dir" "name" */
                        std::vector<std::string> strs;
                        std::size_t p = 0;
                        while ((p = st.operands.find('"', p)) != std::string::npos) {
                            std::size_t q = st.operands.find('"', p + 1);
                            if (q == std::string::npos) {
                                break;
                            }
                            strs.push_back(st.operands.substr(p + 1, q - p - 1));
                            p = q + 1;
                        }
                        if (!strs.empty()) {
                            std::string name = strs.back();
                            if ((strs.size() > 1) && !name.empty() && (name[0] != '/')) {
                                name = strs[0] + "/" + name;
                            }
                            m_files[num] = name;
                        }
                    }
                } else if (m == ".loc") {
                    std::istringstream ls(st.operands);
                    unsigned fnum, lnum;
                    if (ls >> fnum >> lnum) {
                        auto it  = m_files.find(fnum);
                        src_file = (it != m_files.end()) ? it->second : "";
                        src_line = lnum;
                    }
                }

                st.section       = cur.name;
                st.section_alloc = cur.alloc;
                st.section_tls   = cur.tls;
                st.function      = function;
                st.object        = object;
                st.src_file      = src_file;
                st.src_line      = src_line;
                m_stmts.push_back(std::move(st));
            }
        }
    }
}

unsigned asm_unit::got_index(const std::string &sym) const
{
    auto it = m_externals.find(sym);
    return static_cast<unsigned>(std::distance(m_externals.begin(), it));
}

std::string asm_unit::where(const asm_stmt &st) const
{
    std::string loc;
    if (st.src_line > 0) {
        std::string file = st.src_file;
        std::string base = std::filesystem::path(m_display).filename().string();
        if (file.empty() || (std::filesystem::path(file).filename().string() == base)) {
            file = m_display;
        }
        loc = file + ":" + std::to_string(st.src_line);
    } else {
        loc = m_display + " (assembly line " + std::to_string(st.asm_line) + ")";
    }
    if (!st.function.empty() && st.section_alloc &&
        starts_with(st.section, ".text")) {
        loc += " in function '" + st.function + "'";
    }
    return loc;
}

std::string asm_unit::where_declared(const std::string &sym) const
{
    std::istringstream in(m_source);
    std::string line;
    unsigned n = 0;
    while (std::getline(in, line)) {
        ++n;
        std::size_t p = 0;
        while ((p = line.find(sym, p)) != std::string::npos) {
            bool left  = (p == 0) || !is_ident_char(line[p - 1]) || (line[p - 1] == '.');
            bool right = (p + sym.size() >= line.size()) ||
                         !is_ident_char(line[p + sym.size()]) ||
                         (line[p + sym.size()] == '.');
            if (left && right) {
                return m_display + ":" + std::to_string(n);
            }
            p += sym.size();
        }
    }
    return m_display;
}

void asm_unit::fail(const asm_stmt &st, const std::string &msg)
{
    m_errors.push_back(where(st) + ": error: " + msg);
}

void asm_unit::emit_comment(const std::string &text)
{
    emit(std::string((m_arch == target_arch::x86_64) ? "# " : "// ") + text);
}

void asm_unit::emit_preamble()
{
    const bool x86       = (m_arch == target_arch::x86_64);
    const char *type     = x86 ? "@object" : "%object";
    const char *quad     = x86 ? ".quad" : ".xword";
    const char *word     = x86 ? ".long" : ".word";
    char magic[16];
    std::snprintf(magic, sizeof(magic), "%#x", TC_JAM_PREAMBLE_MAGIC);
    emit_comment("twochains-pkg: GOT slot, preamble of the shipped span");
    emit("\t.section\t.tc_preamble,\"ax\",@progbits");
    emit("\t.balign\t16");
    emit(std::string("\t.type\t__tc_got_slot, ") + type);
    emit("\t.size\t__tc_got_slot, 8");
    emit("__tc_got_slot:");
    emit(std::string("\t") + quad + "\t0");
    emit(std::string("\t") + word + "\t" + magic);
    emit(std::string("\t") + word + "\t0");
}

void asm_unit::check_common(const asm_stmt &st)
{
    if (!st.label.empty() && st.section_tls && !is_local_label(st.label)) {
        m_errors.push_back(where_declared(st.label) + ": error: thread-local variable '" +
                           st.label + "' cannot ship in a jam (the span has no TLS "
                           "block on the receiver); keep per-thread state in a ried and "
                           "reach it through an external function");
        return;
    }
    if (!st.label.empty() && st.section_alloc &&
        (starts_with(st.section, ".init_array") || starts_with(st.section, ".fini_array") ||
         starts_with(st.section, ".preinit_array") || starts_with(st.section, ".ctors") ||
         starts_with(st.section, ".dtors"))) {
        m_errors.push_back(m_display + ": error: constructor/destructor table in section '" +
                           st.section + "' cannot ship in a jam; do set-up in a ried "
                           "or in <name>_payload_init");
        return;
    }
    if (st.mnemonic.empty() || !st.section_alloc ||
        !data_directives().count(st.mnemonic)) {
        return;
    }
    for (const std::string &expr : split_operands(st.operands)) {
        auto ids = expr_identifiers(expr);
        if (ids.empty()) {
            continue;
        }
        std::string what = st.object.empty() ? std::string("data") :
                           ("'" + st.object + "'");
        std::string loc  = st.object.empty() ? m_display : where_declared(st.object);
        bool all_local   = std::all_of(ids.begin(), ids.end(),
                                       [this](const std::string &s) { return defines(s); });
        if (all_local && (expr.find('-') != std::string::npos)) {
            continue;   /* a difference of span addresses: position independent */
        }
        for (const auto &id : ids) {
            if (!defines(id)) {
                m_errors.push_back(loc + ": error: " + what + " is initialized with the "
                                   "address of external symbol '" + id + "'; a shipped "
                                   "span cannot be relocated at load time: look the "
                                   "symbol up at run time, or keep the table in a ried");
                return;
            }
        }
        m_errors.push_back(loc + ": error: " + what + " is initialized with the absolute "
                           "address of '" + ids[0] + "' (" + st.mnemonic + " " + expr +
                           "); a shipped span cannot be relocated at load time: store "
                           "offsets, or fill the pointers in at run time");
        return;
    }
}

got_patch_result asm_unit::finish(bool page_relative)
{
    if (!m_errors.empty()) {
        std::string msg;
        for (const auto &e : m_errors) {
            msg += e + "\n";
        }
        msg.pop_back();
        throw pkg_error(msg);
    }
    got_patch_result res;
    res.asm_text      = m_out;
    res.externals.assign(m_externals.begin(), m_externals.end());
    res.page_relative = page_relative;
    return res;
}

got_patch_result got_patch(target_arch arch, const std::string &asm_text,
                           const std::string &display_src,
                           const std::string &source_text)
{
    asm_unit unit(arch, asm_text, display_src, source_text);
    return (arch == target_arch::x86_64) ? got_patch_x86_64(unit)
                                         : got_patch_aarch64(unit);
}

} // namespace tc::pkg
