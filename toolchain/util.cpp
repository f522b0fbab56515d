/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * twochains-pkg helpers. Child processes are spawned without a shell, with
 * stdout and stderr captured through one pipe.
 */
#include "util.hpp"

#include <elf.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

extern char **environ;

namespace tc::pkg {

bool g_verbose = false;

const char *arch_name(target_arch arch)
{
    return (arch == target_arch::x86_64) ? "x86_64" : "aarch64";
}

unsigned arch_elf_machine(target_arch arch)
{
    return (arch == target_arch::x86_64) ? EM_X86_64 : EM_AARCH64;
}

bool arch_parse(std::string_view name, target_arch &arch_p)
{
    if ((name == "x86_64") || (name == "amd64")) {
        arch_p = target_arch::x86_64;
    } else if ((name == "aarch64") || (name == "arm64")) {
        arch_p = target_arch::aarch64;
    } else {
        return false;
    }
    return true;
}

void fnv1a64::update(const void *data, std::size_t size)
{
    auto p = static_cast<const unsigned char *>(data);
    for (std::size_t i = 0; i < size; ++i) {
        m_value ^= p[i];
        m_value *= prime;
    }
}

void fnv1a64::update_field(std::string_view s)
{
    update(s);
    const char nul = '\0';
    update(&nul, 1);
}

std::uint64_t fnv1a64_of(const void *data, std::size_t size)
{
    fnv1a64 h;
    h.update(data, size);
    return h.value();
}

std::string hex64(std::uint64_t v)
{
    char buf[17];
    std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

std::string read_file(const std::filesystem::path &path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw pkg_error(path.string() + ": cannot open: " + std::strerror(errno));
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<std::uint8_t> read_binary(const std::filesystem::path &path)
{
    std::string s = read_file(path);
    return std::vector<std::uint8_t>(s.begin(), s.end());
}

void write_file(const std::filesystem::path &path, std::string_view data)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out) {
        throw pkg_error(path.string() + ": cannot write: " + std::strerror(errno));
    }
}

void write_binary(const std::filesystem::path &path,
                  const std::vector<std::uint8_t> &data)
{
    write_file(path, std::string_view(reinterpret_cast<const char *>(data.data()),
                                      data.size()));
}

std::vector<std::string> split_flags(std::string_view flags)
{
    std::vector<std::string> out;
    std::string cur;
    bool in_word = false;
    char quote   = 0;
    for (std::size_t i = 0; i < flags.size(); ++i) {
        char c = flags[i];
        if (quote) {
            if (c == quote) {
                quote = 0;
            } else if ((c == '\\') && (quote == '"') && (i + 1 < flags.size())) {
                cur += flags[++i];
            } else {
                cur += c;
            }
        } else if ((c == '\'') || (c == '"')) {
            quote   = c;
            in_word = true;
        } else if ((c == '\\') && (i + 1 < flags.size())) {
            cur    += flags[++i];
            in_word = true;
        } else if ((c == ' ') || (c == '\t') || (c == '\n')) {
            if (in_word) {
                out.push_back(cur);
                cur.clear();
                in_word = false;
            }
        } else {
            cur    += c;
            in_word = true;
        }
    }
    if (quote) {
        throw pkg_error("unterminated quote in flags: " + std::string(flags));
    }
    if (in_word) {
        out.push_back(cur);
    }
    return out;
}

bool is_c_identifier(std::string_view s)
{
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) {
        return false;
    }
    for (char c : s) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && (c != '_')) {
            return false;
        }
    }
    return true;
}

std::string join_command(const std::vector<std::string> &argv)
{
    std::string s;
    for (const auto &a : argv) {
        if (!s.empty()) {
            s += ' ';
        }
        if (a.find_first_of(" \t'\"$") != std::string::npos) {
            s += "'" + a + "'";
        } else {
            s += a;
        }
    }
    return s;
}

process_result run_process(const std::vector<std::string> &argv,
                           const std::filesystem::path &stdin_path)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        throw pkg_error(std::string("pipe: ") + std::strerror(errno));
    }

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    posix_spawn_file_actions_addopen(&fa, 0, stdin_path.c_str(), O_RDONLY, 0);

    std::vector<char *> cargv;
    for (const auto &a : argv) {
        cargv.push_back(const_cast<char *>(a.c_str()));
    }
    cargv.push_back(nullptr);

    if (g_verbose) {
        std::cerr << "+ " << join_command(argv) << "\n";
    }

    pid_t pid;
    int rc = posix_spawnp(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        return {127, argv[0] + ": cannot run: " + std::strerror(rc) + "\n"};
    }

    process_result res{0, {}};
    char buf[4096];
    for (;;) {
        ssize_t n = read(fds[0], buf, sizeof(buf));
        if (n > 0) {
            res.output.append(buf, static_cast<std::size_t>(n));
        } else if ((n < 0) && (errno == EINTR)) {
            continue;
        } else {
            break;
        }
    }
    close(fds[0]);

    int wstatus;
    while (waitpid(pid, &wstatus, 0) < 0) {
        if (errno != EINTR) {
            throw pkg_error(std::string("waitpid: ") + std::strerror(errno));
        }
    }
    res.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus)
                                    : 128 + WTERMSIG(wstatus);
    return res;
}

std::string run_checked(const std::vector<std::string> &argv,
                        const std::string &what, const std::filesystem::path &stdin_path)
{
    process_result res = run_process(argv, stdin_path);
    if (res.status != 0) {
        throw pkg_error(what + " failed (exit " + std::to_string(res.status) +
                        "): " + join_command(argv) + "\n" + res.output);
    }
    return res.output;
}

work_dir::work_dir(const std::string &keep_path) : m_keep(!keep_path.empty())
{
    if (m_keep) {
        m_path = std::filesystem::absolute(keep_path);
        std::filesystem::create_directories(m_path);
        return;
    }
    const char *tmp = std::getenv("TMPDIR");
    std::string templ = std::string((tmp && *tmp) ? tmp : "/tmp") +
                        "/twochains-pkg.XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) == nullptr) {
        throw pkg_error(templ + ": mkdtemp: " + std::strerror(errno));
    }
    m_path = buf.data();
}

work_dir::~work_dir()
{
    if (!m_keep) {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
    }
}

} // namespace tc::pkg
