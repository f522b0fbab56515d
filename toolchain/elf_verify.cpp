/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * libelf verification of GOT-patched jams. See elf_verify.hpp.
 */
#include "elf_verify.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "twochains/jam_format.h"

namespace tc::pkg {

namespace {

class elf_file {
public:
    explicit elf_file(const std::filesystem::path &path) : m_path(path.string())
    {
        if (elf_version(EV_CURRENT) == EV_NONE) {
            throw pkg_error(std::string("libelf: ") + elf_errmsg(-1));
        }
        m_fd = open(m_path.c_str(), O_RDONLY | O_CLOEXEC);
        if (m_fd < 0) {
            throw pkg_error(m_path + ": cannot open: " + std::strerror(errno));
        }
        m_elf = elf_begin(m_fd, ELF_C_READ, nullptr);
        if ((m_elf == nullptr) || (elf_kind(m_elf) != ELF_K_ELF)) {
            cleanup();
            throw pkg_error(m_path + ": not an ELF file");
        }
        if ((gelf_getehdr(m_elf, &m_ehdr) == nullptr) ||
            (gelf_getclass(m_elf) != ELFCLASS64) ||
            (elf_getshdrstrndx(m_elf, &m_shstrndx) != 0)) {
            cleanup();
            throw pkg_error(m_path + ": not a 64-bit ELF file");
        }
    }

    ~elf_file() { cleanup(); }
    elf_file(const elf_file &) = delete;
    elf_file &operator=(const elf_file &) = delete;

    Elf *get() const { return m_elf; }
    const GElf_Ehdr &ehdr() const { return m_ehdr; }
    const std::string &path() const { return m_path; }

    std::string section_name(const GElf_Shdr &sh) const
    {
        const char *n = elf_strptr(m_elf, m_shstrndx, sh.sh_name);
        return n ? n : "";
    }

    /* All sections as (index, header, name) */
    struct section {
        std::size_t index;
        Elf_Scn     *scn;
        GElf_Shdr   shdr;
        std::string name;
    };

    std::vector<section> sections() const
    {
        std::vector<section> out;
        for (Elf_Scn *scn = elf_nextscn(m_elf, nullptr); scn != nullptr;
             scn = elf_nextscn(m_elf, scn)) {
            section s{elf_ndxscn(scn), scn, {}, {}};
            gelf_getshdr(scn, &s.shdr);
            s.name = section_name(s.shdr);
            out.push_back(s);
        }
        return out;
    }

    struct symbol {
        std::string name;
        GElf_Sym    sym;
    };

    /* symbols of the section of type @a type (SHT_SYMTAB / SHT_DYNSYM) */
    std::vector<symbol> symbols(unsigned type) const
    {
        std::vector<symbol> out;
        for (const auto &s : sections()) {
            if (s.shdr.sh_type != type) {
                continue;
            }
            Elf_Data *data = elf_getdata(s.scn, nullptr);
            std::size_t n  = s.shdr.sh_entsize ? s.shdr.sh_size / s.shdr.sh_entsize : 0;
            for (std::size_t i = 0; data && (i < n); ++i) {
                symbol sy;
                gelf_getsym(data, static_cast<int>(i), &sy.sym);
                const char *nm = elf_strptr(m_elf, s.shdr.sh_link, sy.sym.st_name);
                sy.name = nm ? nm : "";
                out.push_back(sy);
            }
        }
        return out;
    }

private:
    void cleanup()
    {
        if (m_elf) {
            elf_end(m_elf);
            m_elf = nullptr;
        }
        if (m_fd >= 0) {
            close(m_fd);
            m_fd = -1;
        }
    }

    std::string m_path;
    int         m_fd  = -1;
    Elf         *m_elf = nullptr;
    GElf_Ehdr   m_ehdr{};
    std::size_t m_shstrndx = 0;
};

std::string reloc_name(target_arch arch, unsigned type)
{
    static const std::map<unsigned, const char *> x86 = {
        {R_X86_64_NONE, "R_X86_64_NONE"},   {R_X86_64_64, "R_X86_64_64"},
        {R_X86_64_PC32, "R_X86_64_PC32"},   {R_X86_64_GOT32, "R_X86_64_GOT32"},
        {R_X86_64_PLT32, "R_X86_64_PLT32"}, {R_X86_64_GOTPCREL, "R_X86_64_GOTPCREL"},
        {R_X86_64_32, "R_X86_64_32"},       {R_X86_64_32S, "R_X86_64_32S"},
        {R_X86_64_16, "R_X86_64_16"},       {R_X86_64_PC16, "R_X86_64_PC16"},
        {R_X86_64_8, "R_X86_64_8"},         {R_X86_64_PC8, "R_X86_64_PC8"},
        {R_X86_64_PC64, "R_X86_64_PC64"},   {R_X86_64_GOTOFF64, "R_X86_64_GOTOFF64"},
        {R_X86_64_GOTPC32, "R_X86_64_GOTPC32"}, {R_X86_64_TPOFF32, "R_X86_64_TPOFF32"},
        {R_X86_64_TLSGD, "R_X86_64_TLSGD"}, {R_X86_64_TLSLD, "R_X86_64_TLSLD"},
        {R_X86_64_DTPOFF32, "R_X86_64_DTPOFF32"}, {R_X86_64_GOTTPOFF, "R_X86_64_GOTTPOFF"},
        {R_X86_64_GOTPCRELX, "R_X86_64_GOTPCRELX"},
        {R_X86_64_REX_GOTPCRELX, "R_X86_64_REX_GOTPCRELX"}};
    static const std::map<unsigned, const char *> a64 = {
        {R_AARCH64_NONE, "R_AARCH64_NONE"},       {R_AARCH64_ABS64, "R_AARCH64_ABS64"},
        {R_AARCH64_ABS32, "R_AARCH64_ABS32"},     {R_AARCH64_PREL64, "R_AARCH64_PREL64"},
        {R_AARCH64_PREL32, "R_AARCH64_PREL32"},   {R_AARCH64_PREL16, "R_AARCH64_PREL16"},
        {R_AARCH64_LD_PREL_LO19, "R_AARCH64_LD_PREL_LO19"},
        {R_AARCH64_ADR_PREL_LO21, "R_AARCH64_ADR_PREL_LO21"},
        {R_AARCH64_ADR_PREL_PG_HI21, "R_AARCH64_ADR_PREL_PG_HI21"},
        {R_AARCH64_ADD_ABS_LO12_NC, "R_AARCH64_ADD_ABS_LO12_NC"},
        {R_AARCH64_JUMP26, "R_AARCH64_JUMP26"},   {R_AARCH64_CALL26, "R_AARCH64_CALL26"},
        {R_AARCH64_CONDBR19, "R_AARCH64_CONDBR19"}, {R_AARCH64_TSTBR14, "R_AARCH64_TSTBR14"},
        {R_AARCH64_ADR_GOT_PAGE, "R_AARCH64_ADR_GOT_PAGE"},
        {R_AARCH64_LD64_GOT_LO12_NC, "R_AARCH64_LD64_GOT_LO12_NC"},
        {R_AARCH64_GOT_LD_PREL19, "R_AARCH64_GOT_LD_PREL19"}};
    const auto &m = (arch == target_arch::x86_64) ? x86 : a64;
    auto it = m.find(type);
    return (it != m.end()) ? it->second : ("relocation type " + std::to_string(type));
}

enum class reloc_class { ok, page_relative, got, tls, absolute };

reloc_class classify(target_arch arch, unsigned type)
{
    if (arch == target_arch::x86_64) {
        switch (type) {
        case R_X86_64_NONE:
        case R_X86_64_PC32:
        case R_X86_64_PLT32:
        case R_X86_64_PC64:
        case R_X86_64_PC16:
        case R_X86_64_PC8:
            return reloc_class::ok;
        case R_X86_64_GOT32:
        case R_X86_64_GOTPCREL:
        case R_X86_64_GOTPCRELX:
        case R_X86_64_REX_GOTPCRELX:
        case R_X86_64_GOTOFF64:
        case R_X86_64_GOTPC32:
        case R_X86_64_GOTPC64:
        case R_X86_64_GOTPCREL64:
        case R_X86_64_GOT64:
        case R_X86_64_GOTPLT64:
        case R_X86_64_PLTOFF64:
            return reloc_class::got;
        case R_X86_64_DTPMOD64:
        case R_X86_64_DTPOFF64:
        case R_X86_64_TPOFF64:
        case R_X86_64_TLSGD:
        case R_X86_64_TLSLD:
        case R_X86_64_DTPOFF32:
        case R_X86_64_GOTTPOFF:
        case R_X86_64_TPOFF32:
        case R_X86_64_GOTPC32_TLSDESC:
        case R_X86_64_TLSDESC_CALL:
        case R_X86_64_TLSDESC:
            return reloc_class::tls;
        default:
            return reloc_class::absolute;
        }
    }
    switch (type) {
    case R_AARCH64_NONE:
    case R_AARCH64_PREL64:
    case R_AARCH64_PREL32:
    case R_AARCH64_PREL16:
    case R_AARCH64_LD_PREL_LO19:
    case R_AARCH64_ADR_PREL_LO21:
    case R_AARCH64_TSTBR14:
    case R_AARCH64_CONDBR19:
    case R_AARCH64_JUMP26:
    case R_AARCH64_CALL26:
        return reloc_class::ok;
    case R_AARCH64_ADR_PREL_PG_HI21:
    case R_AARCH64_ADR_PREL_PG_HI21_NC:
    case R_AARCH64_ADD_ABS_LO12_NC:
    case R_AARCH64_LDST8_ABS_LO12_NC:
    case R_AARCH64_LDST16_ABS_LO12_NC:
    case R_AARCH64_LDST32_ABS_LO12_NC:
    case R_AARCH64_LDST64_ABS_LO12_NC:
    case R_AARCH64_LDST128_ABS_LO12_NC:
        return reloc_class::page_relative;
    default:
        if (((type >= R_AARCH64_GOT_LD_PREL19) && (type <= R_AARCH64_LD64_GOTPAGE_LO15)) ||
            (type == R_AARCH64_ADR_GOT_PAGE) || (type == R_AARCH64_LD64_GOT_LO12_NC)) {
            return reloc_class::got;
        }
        if ((type >= 512) && (type < 600)) {
            return reloc_class::tls;   /* R_AARCH64_TLS*, TLSDESC*, TLSLE/IE/LD/GD */
        }
        return reloc_class::absolute;
    }
}

/* "function 'f'+0x1c" for an offset in section @a shndx */
std::string locate(const std::vector<elf_file::symbol> &syms, std::size_t shndx,
                   std::uint64_t addr)
{
    const elf_file::symbol *best = nullptr;
    for (const auto &s : syms) {
        unsigned type = GELF_ST_TYPE(s.sym.st_info);
        if ((s.sym.st_shndx != shndx) || s.name.empty() ||
            ((type != STT_FUNC) && (type != STT_OBJECT))) {
            continue;
        }
        if ((addr >= s.sym.st_value) && (addr < s.sym.st_value + std::max<std::uint64_t>(s.sym.st_size, 1))) {
            best = &s;
        }
    }
    if (best == nullptr) {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "offset 0x%llx", static_cast<unsigned long long>(addr));
        return buf;
    }
    char buf[32];
    std::snprintf(buf, sizeof(buf), "+0x%llx",
                  static_cast<unsigned long long>(addr - best->sym.st_value));
    return std::string((GELF_ST_TYPE(best->sym.st_info) == STT_FUNC) ? "function '"
                                                                     : "object '") +
           best->name + "'" + buf;
}

/* Entry @a i of a REL or RELA section, as a RELA: zeroed first, so that a
 * REL entry's addend (kept in the patched bytes, which nothing here reads)
 * and anything libelf does not fill read as 0. */
GElf_Rela read_reloc(Elf_Data *data, const GElf_Shdr &shdr, std::size_t i)
{
    GElf_Rela r{};
    if (shdr.sh_type == SHT_RELA) {
        gelf_getrela(data, static_cast<int>(i), &r);
    } else {
        GElf_Rel rel;
        gelf_getrel(data, static_cast<int>(i), &rel);
        r.r_offset = rel.r_offset;
        r.r_info   = rel.r_info;
        r.r_addend = 0;
    }
    return r;
}

bool starts_with(const std::string &s, const char *p)
{
    return s.rfind(p, 0) == 0;
}

bool shippable_section(const std::string &name)
{
    static const char *ok[] = {".text", ".rodata", ".data", ".bss", ".tc_preamble",
                               ".eh_frame", ".note", ".comment", ".group"};
    for (const char *p : ok) {
        if (starts_with(name, p)) {
            return true;
        }
    }
    return false;
}

void throw_errors(const std::vector<std::string> &errors)
{
    if (errors.empty()) {
        return;
    }
    std::string msg;
    for (const auto &e : errors) {
        msg += e + "\n";
    }
    msg.pop_back();
    throw pkg_error(msg);
}

} // namespace

std::vector<elf_symbol> elf_read_symbols(const std::filesystem::path &file)
{
    elf_file ef(file);
    auto syms = ef.symbols(SHT_SYMTAB);
    if (syms.empty()) {
        syms = ef.symbols(SHT_DYNSYM);
    }
    std::vector<elf_symbol> out;
    for (const auto &s : syms) {
        if (s.name.empty()) {
            continue;
        }
        elf_symbol e;
        e.name    = s.name;
        e.defined = (s.sym.st_shndx != SHN_UNDEF);
        unsigned bind = GELF_ST_BIND(s.sym.st_info);
        e.global  = (bind == STB_GLOBAL) || (bind == STB_WEAK);
        e.func    = (GELF_ST_TYPE(s.sym.st_info) == STT_FUNC);
        e.value   = s.sym.st_value;
        out.push_back(e);
    }
    return out;
}

unsigned elf_machine(const std::filesystem::path &file)
{
    elf_file ef(file);
    return ef.ehdr().e_machine;
}

void elf_check_jam_object(target_arch arch, const std::filesystem::path &obj,
                          const std::string &display_src)
{
    elf_file ef(obj);
    std::vector<std::string> errors;
    if (ef.ehdr().e_machine != arch_elf_machine(arch)) {
        throw pkg_error(obj.string() + ": wrong machine for " + arch_name(arch));
    }
    auto secs = ef.sections();
    auto syms = ef.symbols(SHT_SYMTAB);

    for (const auto &s : secs) {
        if (s.shdr.sh_flags & SHF_TLS) {
            for (const auto &sy : syms) {
                if ((sy.sym.st_shndx == s.index) && !sy.name.empty() &&
                    (GELF_ST_TYPE(sy.sym.st_info) == STT_TLS)) {
                    errors.push_back(display_src + ": error: thread-local variable '" +
                                     sy.name + "' cannot ship in a jam; keep per-thread "
                                     "state in a ried");
                }
            }
            continue;
        }
        if ((s.shdr.sh_flags & SHF_ALLOC) && !shippable_section(s.name)) {
            errors.push_back(display_src + ": error: section '" + s.name +
                             "' cannot ship in a jam (only code, read-only data and "
                             "globals do); remove __attribute__((section)), "
                             "constructors or exception tables");
        }
    }

    for (const auto &s : secs) {
        if ((s.shdr.sh_type != SHT_RELA) && (s.shdr.sh_type != SHT_REL)) {
            continue;
        }
        std::size_t target = s.shdr.sh_info;
        GElf_Shdr tsh;
        Elf_Scn *tscn = elf_getscn(ef.get(), target);
        if ((tscn == nullptr) || (gelf_getshdr(tscn, &tsh) == nullptr) ||
            !(tsh.sh_flags & SHF_ALLOC)) {
            continue;   /* debug info: not shipped */
        }
        std::string tname = ef.section_name(tsh);
        if (starts_with(tname, ".eh_frame") || starts_with(tname, ".note")) {
            continue;   /* discarded by the span's linker script */
        }
        Elf_Data *data = elf_getdata(s.scn, nullptr);
        std::size_t n  = s.shdr.sh_entsize ? s.shdr.sh_size / s.shdr.sh_entsize : 0;
        for (std::size_t i = 0; data && (i < n); ++i) {
            const GElf_Rela r = read_reloc(data, s.shdr, i);
            unsigned type   = static_cast<unsigned>(GELF_R_TYPE(r.r_info));
            std::size_t si  = GELF_R_SYM(r.r_info);
            const elf_file::symbol *sym = (si < syms.size()) ? &syms[si] : nullptr;
            std::string sname = sym ? sym->name : "?";
            if (sym && sname.empty() && (GELF_ST_TYPE(sym->sym.st_info) == STT_SECTION)) {
                Elf_Scn *ss = elf_getscn(ef.get(), sym->sym.st_shndx);
                GElf_Shdr ssh;
                if (ss && gelf_getshdr(ss, &ssh)) {
                    sname = ef.section_name(ssh);
                }
            }
            std::string where = display_src + ": " + locate(syms, target, r.r_offset);
            if (sym && (sym->sym.st_shndx == SHN_UNDEF) && (si != 0)) {
                errors.push_back(where + ": error: reference to external symbol '" +
                                 sname + "' does not go through the GOT (" +
                                 reloc_name(arch, type) + "); declare it extern with "
                                 "default visibility and do not reference it from "
                                 "inline asm or initialized data");
                continue;
            }
            switch (classify(arch, type)) {
            case reloc_class::ok:
            case reloc_class::page_relative:
                break;
            case reloc_class::tls:
                errors.push_back(where + ": error: thread-local access to '" + sname +
                                 "' (" + reloc_name(arch, type) + ") cannot ship in a jam");
                break;
            case reloc_class::got:
                errors.push_back(where + ": error: GOT relocation " + reloc_name(arch, type) +
                                 " against '" + sname + "' survived patching; this GOT "
                                 "form is not supported, please report it");
                break;
            case reloc_class::absolute:
                errors.push_back(where + ": error: absolute relocation " +
                                 reloc_name(arch, type) + " against '" + sname +
                                 "' in section " + tname + "; a shipped span cannot be "
                                 "relocated at load time: avoid pointer-initialized data "
                                 "and absolute addresses in inline asm");
                break;
            }
        }
    }
    throw_errors(errors);
}

span_image elf_check_span(target_arch arch, const std::filesystem::path &linked,
                          const std::string &entry_symbol,
                          const std::string &display_src)
{
    elf_file ef(linked);
    std::vector<std::string> errors;
    const std::string who = display_src + " (" + linked.filename().string() + ")";

    if ((ef.ehdr().e_machine != arch_elf_machine(arch)) || (ef.ehdr().e_type != ET_EXEC)) {
        throw pkg_error(who + ": error: not a linked " + std::string(arch_name(arch)) +
                        " span");
    }

    std::size_t nphdr = 0;
    elf_getphdrnum(ef.get(), &nphdr);
    for (std::size_t i = 0; i < nphdr; ++i) {
        GElf_Phdr ph;
        if (gelf_getphdr(ef.get(), static_cast<int>(i), &ph) == nullptr) {
            continue;
        }
        if (ph.p_type == PT_TLS) {
            errors.push_back(who + ": error: the span has a TLS segment");
        } else if ((ph.p_type == PT_DYNAMIC) || (ph.p_type == PT_INTERP)) {
            errors.push_back(who + ": error: the span was linked dynamically");
        }
    }

    auto secs = ef.sections();
    const elf_file::section *span = nullptr;
    for (const auto &s : secs) {
        if (s.shdr.sh_flags & SHF_TLS) {
            errors.push_back(who + ": error: TLS section '" + s.name + "'");
        }
        if (!(s.shdr.sh_flags & SHF_ALLOC)) {
            continue;
        }
        if (s.name == ".tc_span") {
            span = &s;
        } else if (s.shdr.sh_size > 0) {
            errors.push_back(who + ": error: section '" + s.name + "' lies outside the "
                             "shipped span");
        }
    }
    if (span == nullptr) {
        errors.push_back(who + ": error: no .tc_span section");
        throw_errors(errors);
    }
    if (span->shdr.sh_type != SHT_PROGBITS) {
        errors.push_back(who + ": error: .tc_span has no contents");
        throw_errors(errors);
    }

    const std::uint64_t base = span->shdr.sh_addr;
    const std::uint64_t end  = base + span->shdr.sh_size;
    auto syms = ef.symbols(SHT_SYMTAB);
    auto find_sym = [&syms](const std::string &name) -> const elf_file::symbol * {
        for (const auto &s : syms) {
            if (s.name == name) {
                return &s;
            }
        }
        return nullptr;
    };

    span_image img;
    const elf_file::symbol *slot  = find_sym("__tc_got_slot");
    const elf_file::symbol *entry = find_sym(entry_symbol);
    const elf_file::symbol *dstart = find_sym("__tc_data_start");
    if ((slot == nullptr) || (slot->sym.st_value != base)) {
        errors.push_back(who + ": error: GOT slot __tc_got_slot is not at the start of "
                         "the span");
    }
    if ((entry == nullptr) || (entry->sym.st_shndx != span->index) ||
        (entry->sym.st_value < base + TC_JAM_PREAMBLE_SIZE) || (entry->sym.st_value >= end)) {
        errors.push_back(who + ": error: entry function '" + entry_symbol +
                         "' is not inside the span");
    } else {
        img.entry_offset = static_cast<std::uint32_t>(entry->sym.st_value - base);
    }
    img.data_offset = static_cast<std::uint32_t>(
        dstart ? (dstart->sym.st_value - base) : span->shdr.sh_size);

    for (const auto &s : secs) {
        if ((s.shdr.sh_type != SHT_RELA) && (s.shdr.sh_type != SHT_REL)) {
            continue;
        }
        if (s.shdr.sh_info != span->index) {
            continue;   /* relocations of debug info: not shipped */
        }
        Elf_Data *data = elf_getdata(s.scn, nullptr);
        std::size_t n  = s.shdr.sh_entsize ? s.shdr.sh_size / s.shdr.sh_entsize : 0;
        for (std::size_t i = 0; data && (i < n); ++i) {
            const GElf_Rela r = read_reloc(data, s.shdr, i);
            unsigned type  = static_cast<unsigned>(GELF_R_TYPE(r.r_info));
            std::size_t si = GELF_R_SYM(r.r_info);
            const elf_file::symbol *sym = (si < syms.size()) ? &syms[si] : nullptr;
            std::string sname = (sym && !sym->name.empty()) ? sym->name : ".tc_span";
            std::string where = who + ": " + locate(syms, span->index, r.r_offset);
            ++img.relocations;

            reloc_class cls = classify(arch, type);
            if (cls == reloc_class::page_relative) {
                img.page_relative = true;
            } else if (cls != reloc_class::ok) {
                errors.push_back(where + ": error: relocation " + reloc_name(arch, type) +
                                 " against '" + sname + "' is not PC-relative");
                continue;
            }
            if ((r.r_offset < base) || (r.r_offset >= end)) {
                errors.push_back(where + ": error: relocation outside the span");
                continue;
            }
            if ((si == 0) || (sym == nullptr)) {
                continue;   /* R_*_NONE */
            }
            std::int64_t target = static_cast<std::int64_t>(sym->sym.st_value) + r.r_addend;
            bool in_span = (sym->sym.st_shndx == span->index) &&
                           (target >= static_cast<std::int64_t>(base) - 16) &&
                           (target <= static_cast<std::int64_t>(end) + 16);
            if (!in_span) {
                errors.push_back(where + ": error: relocation " + reloc_name(arch, type) +
                                 " points outside the span, to '" + sname + "'");
            }
        }
    }
    throw_errors(errors);

    Elf_Data *data = elf_getdata(span->scn, nullptr);
    if ((data == nullptr) || (data->d_size != span->shdr.sh_size)) {
        throw pkg_error(who + ": error: cannot read the span");
    }
    if ((data->d_size < TC_JAM_PREAMBLE_SIZE) || (data->d_size > TC_JAM_SPAN_MAX)) {
        throw pkg_error(who + ": error: span of " + std::to_string(data->d_size) +
                        " bytes is outside [" + std::to_string(TC_JAM_PREAMBLE_SIZE) +
                        ", " + std::to_string(TC_JAM_SPAN_MAX) + "]");
    }
    auto p = static_cast<const std::uint8_t *>(data->d_buf);
    img.bytes.assign(p, p + data->d_size);

    tc_jam_preamble_t pre;
    std::memcpy(&pre, img.bytes.data(), sizeof(pre));
    if ((pre.got_slot != 0) || (pre.magic != TC_JAM_PREAMBLE_MAGIC)) {
        throw pkg_error(who + ": error: span does not start with the twochains preamble");
    }
    pre.span_size = static_cast<std::uint32_t>(img.bytes.size());
    std::memcpy(img.bytes.data(), &pre, sizeof(pre));
    img.got_slot_offset = TC_JAM_GOT_SLOT_OFFSET;
    return img;
}

} // namespace tc::pkg
