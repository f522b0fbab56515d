/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * twochains-pkg helpers: the error type, hashing, files and child processes.
 * Single-threaded tool; nothing here keeps global state.
 */
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tc::pkg {

/* A build or check failed; what() is the complete message for the user. */
class pkg_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class target_arch { x86_64, aarch64 };

const char *arch_name(target_arch arch);
unsigned arch_elf_machine(target_arch arch);      /* EM_X86_64 / EM_AARCH64 */
bool arch_parse(std::string_view name, target_arch &arch_p);

/* 64-bit FNV-1a (see twochains/jam_format.h) */
class fnv1a64 {
public:
    static constexpr std::uint64_t basis = 0xcbf29ce484222325ULL;
    static constexpr std::uint64_t prime = 0x100000001b3ULL;

    void update(const void *data, std::size_t size);
    void update(std::string_view s) { update(s.data(), s.size()); }
    /* a string and its terminating NUL, so "ab"+"c" != "a"+"bc" */
    void update_field(std::string_view s);
    std::uint64_t value() const { return m_value; }

private:
    std::uint64_t m_value = basis;
};

std::uint64_t fnv1a64_of(const void *data, std::size_t size);
std::string hex64(std::uint64_t v);                /* 16 lowercase digits */

std::string read_file(const std::filesystem::path &path);
std::vector<std::uint8_t> read_binary(const std::filesystem::path &path);
void write_file(const std::filesystem::path &path, std::string_view data);
void write_binary(const std::filesystem::path &path,
                  const std::vector<std::uint8_t> &data);

/* Split a flag string the way a shell would, for quotes and backslashes. */
std::vector<std::string> split_flags(std::string_view flags);

bool is_c_identifier(std::string_view s);

struct process_result {
    int         status;   /* exit code; 128+signal if killed */
    std::string output;   /* stdout and stderr, interleaved */
};

/* Run argv[0] (PATH lookup) without a shell. */
/* @a stdin_path: the child's standard input (default /dev/null) */
process_result run_process(const std::vector<std::string> &argv,
                           const std::filesystem::path &stdin_path = "/dev/null");

/* Run and throw pkg_error naming @a what with the tool's output on failure. */
std::string run_checked(const std::vector<std::string> &argv,
                        const std::string &what,
                        const std::filesystem::path &stdin_path = "/dev/null");

std::string join_command(const std::vector<std::string> &argv);

/* A temporary directory removed on destruction unless kept. */
class work_dir {
public:
    explicit work_dir(const std::string &keep_path);
    ~work_dir();
    work_dir(const work_dir &) = delete;
    work_dir &operator=(const work_dir &) = delete;
    const std::filesystem::path &path() const { return m_path; }

private:
    std::filesystem::path m_path;
    bool                  m_keep;
};

extern bool g_verbose;

// ASCII upper case: package and jam names in generated macros, and names
// that must stay distinct once upper-cased
inline std::string upper(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return s;
}

} // namespace tc::pkg
