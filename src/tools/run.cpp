/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * twochains-run: start N copies of a program on this machine, wired for the
 * TCP bootstrap. The launcher binds a listening socket on 127.0.0.1 port 0
 * (the kernel picks the port, nothing is guessed) and hands it to rank 0 as
 * UCX_TC_LISTEN_FD; every rank gets UCX_TC_RANK, UCX_TC_SIZE and
 * UCX_TC_ROOT=127.0.0.1:<port>. Output of rank r is forwarded line by line
 * with a "[r] " prefix, stdout to stdout and stderr to stderr.
 *
 * One thread. Every wait is a poll() on the children's pipes and a self-pipe
 * that the signal handler writes to, with a timeout taken from the nearest
 * deadline (--timeout, the SIGKILL grace, the final drain), so the launcher
 * never spins and never hangs on a child that ignores SIGTERM.
 *
 * --netns PREFIX (an emulated cluster, contrib/cluster/): rank r runs inside
 * the network namespace PREFIXr (/var/run/netns/PREFIXr, as made by
 * `ip netns add`), entered with setns() between fork and exec. The listening
 * socket is then opened inside PREFIX0 (the launcher enters it for that and
 * comes back), and UCX_TC_ROOT names rank 0's first non-loopback IPv4
 * address there, so every rank reaches rank 0 over the emulated network.
 */
#include "tools/run_options.hpp"

#include <twochains/job_key.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <sched.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using namespace tc::run;
using clock_type = std::chrono::steady_clock;
using seconds_d  = std::chrono::duration<double>;

constexpr int kExitTimeout = 124;
constexpr auto kDrainTime  = std::chrono::milliseconds(200);    // output after the last exit
constexpr size_t kMaxLine  = 64 * 1024;                         // longer lines are split

/* Messages of the launcher itself: one write() each, never torn. */
[[gnu::format(printf, 1, 2)]] void say(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = std::vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    size_t len = std::min(static_cast<size_t>(n), sizeof(buf) - 2);
    buf[len++] = '\n';
    [[maybe_unused]] ssize_t ret = ::write(STDERR_FILENO, buf, len);
}

class unique_fd {
public:
    unique_fd() = default;
    explicit unique_fd(int fd) : fd_(fd) {}
    unique_fd(unique_fd &&o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    unique_fd &operator=(unique_fd &&o) noexcept
    {
        if (this != &o) {
            reset();
            fd_ = std::exchange(o.fd_, -1);
        }
        return *this;
    }
    unique_fd(const unique_fd &)            = delete;
    unique_fd &operator=(const unique_fd &) = delete;
    ~unique_fd() { reset(); }

    int get() const { return fd_; }
    explicit operator bool() const { return fd_ >= 0; }
    void reset()
    {
        if (fd_ >= 0) {
            ::close(fd_);
            fd_ = -1;
        }
    }

private:
    int fd_ = -1;
};

bool write_all(int fd, std::string_view data)
{
    while (!data.empty()) {
        ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return false;
        }
        data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
}

/* --- signals: the handler only writes the signal number to a pipe --- */

int g_signal_pipe_wr = -1;

extern "C" void on_signal(int signo)
{
    int saved             = errno;
    unsigned char byte    = static_cast<unsigned char>(signo);
    [[maybe_unused]] auto n = ::write(g_signal_pipe_wr, &byte, 1);
    errno = saved;
}

constexpr int kHandledSignals[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP};

/* --- children --- */

/* One output stream of one child, forwarded line by line. */
struct stream {
    unique_fd   fd;
    int         out_fd = -1;    // where prefixed lines go
    std::string partial;        // bytes after the last newline
};

struct child {
    int     rank   = 0;
    pid_t   pid    = -1;        // also its process group
    bool    exited = false;
    int     wstatus = 0;
    stream  out, err;
    std::string prefix;
};

class launcher {
public:
    explicit launcher(options opts) : opts_(std::move(opts)) {}

    int run();

private:
    bool setup_signals();
    bool open_listener();
    bool open_listener_in_netns();
    bool spawn(child &c);
    [[noreturn]] void exec_child(child &c, int out_wr, int err_wr);
    void pump(stream &s, const std::string &prefix);
    void emit(stream &s, const std::string &prefix, std::string_view line);
    void flush_partial(stream &s, const std::string &prefix);
    void reap();
    void on_failure(const child &c);
    void terminate(int signo);
    void signal_all(int signo);
    bool all_exited() const;

    options             opts_;
    unique_fd           listen_fd_;
    unique_fd           sig_rd_, sig_wr_;
    int                 port_ = 0;
    std::vector<child>  children_;
    int                 exit_code_   = 0;
    bool                terminating_ = false;
    bool                killed_      = false;
    clock_type::time_point kill_at_;
    std::string         env_size_, env_root_;
    std::vector<char*>  argv_;      // opts_.command, for execvp
};

bool launcher::setup_signals()
{
    int p[2];
    if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0) {
        say("twochains-run: pipe: %s", std::strerror(errno));
        return false;
    }
    sig_rd_          = unique_fd(p[0]);
    sig_wr_          = unique_fd(p[1]);
    g_signal_pipe_wr = p[1];

    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_NOCLDSTOP;
    for (int signo : kHandledSignals) {
        sigaction(signo, &sa, nullptr);
    }
    std::signal(SIGPIPE, SIG_IGN);      // a closed stdout is an error, not death
    return true;
}

/* rank 0's namespace: listen there, on its first non-loopback IPv4 address */
bool launcher::open_listener_in_netns()
{
    const std::string path = "/var/run/netns/" + opts_.netns_prefix + "0";
    unique_fd home(::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC));
    unique_fd ns(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!home || !ns) {
        say("twochains-run: cannot open network namespace %s: %s", path.c_str(),
            std::strerror(errno));
        return false;
    }
    if (::setns(ns.get(), CLONE_NEWNET) < 0) {
        say("twochains-run: cannot enter network namespace %s: %s", path.c_str(),
            std::strerror(errno));
        return false;
    }

    bool ok = false;
    std::string host;
    ifaddrs *ifs = nullptr;
    if (::getifaddrs(&ifs) == 0) {
        for (ifaddrs *i = ifs; i != nullptr; i = i->ifa_next) {
            if ((i->ifa_addr == nullptr) || (i->ifa_addr->sa_family != AF_INET) ||
                (i->ifa_flags & IFF_LOOPBACK) || !(i->ifa_flags & IFF_UP)) {
                continue;
            }
            char buf[INET_ADDRSTRLEN];
            auto *sin = reinterpret_cast<sockaddr_in*>(i->ifa_addr);
            if (::inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof(buf)) != nullptr) {
                host = buf;
                break;
            }
        }
        ::freeifaddrs(ifs);
    }
    if (host.empty()) {
        say("twochains-run: network namespace %s has no IPv4 address that is up",
            path.c_str());
    } else {
        listen_fd_ = unique_fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port   = 0;
        ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
        socklen_t len = sizeof(addr);
        if (listen_fd_ &&
            (::bind(listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) &&
            (::listen(listen_fd_.get(), SOMAXCONN) == 0) &&
            (::getsockname(listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr), &len) == 0)) {
            port_     = ntohs(addr.sin_port);
            env_root_ = host + ":" + std::to_string(port_);
            ok        = true;
        } else {
            say("twochains-run: cannot listen on %s in %s: %s", host.c_str(), path.c_str(),
                std::strerror(errno));
        }
    }
    if (::setns(home.get(), CLONE_NEWNET) < 0) {
        say("twochains-run: cannot return to our network namespace: %s", std::strerror(errno));
        return false;
    }
    return ok;
}

bool launcher::open_listener()
{
    if (!opts_.netns_prefix.empty()) {
        return open_listener_in_netns();
    }
    listen_fd_ = unique_fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!listen_fd_) {
        say("twochains-run: socket: %s", std::strerror(errno));
        return false;
    }

    sockaddr_in addr{};
    addr.sin_family      = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port        = 0;       // the kernel picks a free port
    socklen_t len        = sizeof(addr);
    if ((::bind(listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) < 0) ||
        (::listen(listen_fd_.get(), SOMAXCONN) < 0) ||
        (::getsockname(listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr), &len) < 0)) {
        say("twochains-run: cannot listen on 127.0.0.1: %s", std::strerror(errno));
        return false;
    }
    port_     = ntohs(addr.sin_port);
    env_root_ = "127.0.0.1:" + std::to_string(port_);
    return true;
}

/* In the child, between fork and exec. The launcher has one thread, so the
 * libc calls here are safe; the command's argv was built before fork. */
void launcher::exec_child(child &c, int out_wr, int err_wr)
{
    struct sigaction sa {};
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    for (int signo : kHandledSignals) {
        sigaction(signo, &sa, nullptr);
    }
    sigaction(SIGPIPE, &sa, nullptr);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);

    ::setpgid(0, 0);    // own group: a kill of the group reaches grandchildren

    if (!opts_.netns_prefix.empty()) {
        char path[512];
        std::snprintf(path, sizeof(path), "/var/run/netns/%s%d", opts_.netns_prefix.c_str(),
                      c.rank);
        int ns = ::open(path, O_RDONLY | O_CLOEXEC);
        if ((ns < 0) || (::setns(ns, CLONE_NEWNET) < 0)) {
            int err = errno;
            ::dprintf(err_wr, "twochains-run: cannot enter network namespace %s: %s\n", path,
                      std::strerror(err));
            ::_exit(126);
        }
        ::close(ns);
    }

    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) {
        ::dup2(devnull, STDIN_FILENO);
    }
    ::dup2(out_wr, STDOUT_FILENO);
    ::dup2(err_wr, STDERR_FILENO);

    char rank[16], lfd[16];
    std::snprintf(rank, sizeof(rank), "%d", c.rank);
    ::setenv("UCX_TC_RANK", rank, 1);
    ::setenv("UCX_TC_SIZE", env_size_.c_str(), 1);
    ::setenv("UCX_TC_ROOT", env_root_.c_str(), 1);
    if (c.rank == 0) {
        int fd = ::dup(listen_fd_.get());       // dup() drops FD_CLOEXEC
        std::snprintf(lfd, sizeof(lfd), "%d", fd);
        ::setenv("UCX_TC_LISTEN_FD", lfd, 1);
    } else {
        ::unsetenv("UCX_TC_LISTEN_FD");         // the socket itself is close-on-exec
    }

    ::execvp(argv_[0], argv_.data());

    int err = errno;
    std::fprintf(stderr, "twochains-run: cannot execute '%s': %s\n", argv_[0], std::strerror(err));
    std::fflush(stderr);
    ::_exit((err == ENOENT) ? 127 : 126);
}

bool launcher::spawn(child &c)
{
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) < 0) {
        say("twochains-run: pipe: %s", std::strerror(errno));
        return false;
    }
    if (::pipe2(err, O_CLOEXEC) < 0) {
        say("twochains-run: pipe: %s", std::strerror(errno));
        ::close(out[0]);
        ::close(out[1]);
        return false;
    }
    c.out.fd     = unique_fd(out[0]);
    c.out.out_fd = STDOUT_FILENO;
    c.err.fd     = unique_fd(err[0]);
    c.err.out_fd = STDERR_FILENO;
    unique_fd out_wr(out[1]), err_wr(err[1]);

    // Block our signals across fork, so the child cannot run our handler
    // before it resets it.
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    pid_t pid = ::fork();
    if (pid == 0) {
        exec_child(c, out_wr.get(), err_wr.get());
    }
    int fork_errno = errno;
    sigprocmask(SIG_SETMASK, &old, nullptr);

    if (pid < 0) {
        say("twochains-run: fork: %s", std::strerror(fork_errno));
        return false;
    }
    ::setpgid(pid, pid);    // also here, so that the group exists before we signal it
    c.pid = pid;
    return true;
}

void launcher::emit(stream &s, const std::string &prefix, std::string_view line)
{
    std::string buf;
    buf.reserve(prefix.size() + line.size() + 1);
    buf.append(prefix).append(line).push_back('\n');
    write_all(s.out_fd, buf);       // one write per line: lines never interleave
}

void launcher::flush_partial(stream &s, const std::string &prefix)
{
    if (!s.partial.empty()) {
        emit(s, prefix, s.partial);
        s.partial.clear();
    }
}

void launcher::pump(stream &s, const std::string &prefix)
{
    char buf[16384];
    ssize_t n = ::read(s.fd.get(), buf, sizeof(buf));
    if (n < 0) {
        if ((errno == EINTR) || (errno == EAGAIN)) {
            return;
        }
        n = 0;      // treat a read error like EOF
    }
    if (n == 0) {
        flush_partial(s, prefix);
        s.fd.reset();
        return;
    }

    s.partial.append(buf, static_cast<size_t>(n));
    size_t start = 0, nl;
    while ((nl = s.partial.find('\n', start)) != std::string::npos) {
        emit(s, prefix, std::string_view(s.partial).substr(start, nl - start));
        start = nl + 1;
    }
    s.partial.erase(0, start);
    if (s.partial.size() >= kMaxLine) {
        flush_partial(s, prefix);
    }
}

void launcher::signal_all(int signo)
{
    for (const auto &c : children_) {
        if (c.pid > 0) {
            ::kill(-c.pid, signo);  // the whole group, even after the leader exited
        }
    }
}

void launcher::terminate(int signo)
{
    if (!terminating_) {
        terminating_ = true;
        kill_at_     = clock_type::now() + kKillGrace;
        signal_all(signo);
    } else if (!killed_) {
        killed_ = true;
        signal_all(SIGKILL);
    }
}

void launcher::on_failure(const child &c)
{
    if (WIFSIGNALED(c.wstatus)) {
        say("twochains-run: rank %d killed by signal %d (%s)", c.rank, WTERMSIG(c.wstatus),
            strsignal(WTERMSIG(c.wstatus)));
    } else {
        say("twochains-run: rank %d exited with status %d", c.rank, WEXITSTATUS(c.wstatus));
    }
    if (terminating_) {
        return;
    }
    exit_code_ = WIFEXITED(c.wstatus) ? WEXITSTATUS(c.wstatus) : 1;
    if (!all_exited()) {
        say("twochains-run: terminating the other ranks");
    }
    terminate(SIGTERM);
}

void launcher::reap()
{
    for (;;) {
        int wstatus;
        pid_t pid = ::waitpid(-1, &wstatus, WNOHANG);
        if (pid <= 0) {
            return;
        }
        auto it = std::find_if(children_.begin(), children_.end(),
                               [pid](const child &c) { return c.pid == pid; });
        if (it == children_.end()) {
            continue;
        }
        it->exited  = true;
        it->wstatus = wstatus;
        bool ok     = WIFEXITED(wstatus) && (WEXITSTATUS(wstatus) == 0);
        if (!ok && !terminating_) {
            on_failure(*it);
        }
    }
}

bool launcher::all_exited() const
{
    return std::all_of(children_.begin(), children_.end(),
                       [](const child &c) { return c.exited; });
}

int launcher::run()
{
    if (!setup_signals() || !open_listener()) {
        return 1;
    }

    env_size_ = std::to_string(opts_.nranks);
    children_.resize(static_cast<size_t>(opts_.nranks));
    for (auto &arg : opts_.command) {
        argv_.push_back(arg.data());
    }
    argv_.push_back(nullptr);

    const auto start = clock_type::now();
    std::optional<clock_type::time_point> deadline;
    if (opts_.timeout_s) {
        deadline = start + std::chrono::duration_cast<clock_type::duration>(
                               seconds_d(*opts_.timeout_s));
    }

    for (int r = 0; r < opts_.nranks; ++r) {
        child &c = children_[static_cast<size_t>(r)];
        c.rank   = r;
        c.prefix = "[" + std::to_string(r) + "] ";
        if (!spawn(c)) {
            // Nobody got the full job: stop those that started.
            c.exited = true;
            for (auto &other : children_) {
                other.exited = other.exited || (other.pid <= 0);
            }
            exit_code_ = 1;
            terminate(SIGTERM);
            break;
        }
    }
    listen_fd_.reset();     // rank 0 holds its own copy

    std::optional<clock_type::time_point> drain_until;
    std::vector<pollfd> pfds;
    std::vector<stream*> owners;

    for (;;) {
        reap();
        if (all_exited() && !drain_until) {
            drain_until = clock_type::now() + kDrainTime;
        }

        pfds.clear();
        owners.clear();
        pfds.push_back({sig_rd_.get(), POLLIN, 0});
        owners.push_back(nullptr);
        for (auto &c : children_) {
            for (stream *s : {&c.out, &c.err}) {
                if (s->fd) {
                    pfds.push_back({s->fd.get(), POLLIN, 0});
                    owners.push_back(s);
                }
            }
        }

        auto now = clock_type::now();
        if (drain_until && ((pfds.size() == 1) || (now >= *drain_until))) {
            break;
        }
        if (deadline && !terminating_ && (now >= *deadline)) {
            say("twochains-run: timeout after %g s, killing all ranks", *opts_.timeout_s);
            exit_code_ = kExitTimeout;
            terminate(SIGTERM);
            continue;
        }
        if (terminating_ && !killed_ && (now >= kill_at_)) {
            killed_ = true;
            signal_all(SIGKILL);
        }

        // sleep until the nearest deadline, or an event
        std::optional<clock_type::time_point> wake;
        auto consider = [&wake](clock_type::time_point t) {
            wake = wake ? std::min(*wake, t) : t;
        };
        if (deadline && !terminating_) {
            consider(*deadline);
        }
        if (terminating_ && !killed_) {
            consider(kill_at_);
        }
        if (drain_until) {
            consider(*drain_until);
        }
        int timeout_ms = -1;
        if (wake) {
            auto ms    = std::chrono::ceil<std::chrono::milliseconds>(*wake - now).count();
            timeout_ms = static_cast<int>(std::clamp<long long>(ms, 0, 60 * 60 * 1000));
        }

        int ret = ::poll(pfds.data(), pfds.size(), timeout_ms);
        if (ret < 0) {
            if (errno == EINTR) {
                continue;
            }
            say("twochains-run: poll: %s", std::strerror(errno));
            exit_code_ = 1;
            terminate(SIGKILL);
            killed_ = true;
            continue;
        }

        if (pfds[0].revents != 0) {
            unsigned char sigs[64];
            ssize_t n = ::read(sig_rd_.get(), sigs, sizeof(sigs));
            for (ssize_t k = 0; k < n; ++k) {
                int signo = sigs[k];
                if (signo == SIGCHLD) {
                    continue;   // reaped at the top of the loop
                }
                if (!terminating_) {
                    say("twochains-run: got signal %d (%s), forwarding it to all ranks", signo,
                        strsignal(signo));
                    exit_code_ = 128 + signo;
                    terminate(signo);
                } else {
                    terminate(SIGKILL);     // a second signal: no more grace
                }
            }
        }
        for (size_t k = 1; k < pfds.size(); ++k) {
            if (pfds[k].revents != 0) {
                auto it = std::find_if(children_.begin(), children_.end(), [&](const child &c) {
                    return (&c.out == owners[k]) || (&c.err == owners[k]);
                });
                pump(*owners[k], it->prefix);
            }
        }
    }

    // Whatever is still open belongs to a grandchild that outlived its rank.
    for (auto &c : children_) {
        flush_partial(c.out, c.prefix);
        flush_partial(c.err, c.prefix);
    }
    if (terminating_ && !killed_) {
        signal_all(SIGKILL);
    }
    return exit_code_;
}

} // namespace

int main(int argc, char **argv)
{
    auto [opts, code] = parse_options(argc, argv);
    if (!opts) {
        return code;
    }
    /* the ranks of one launch share a fresh job key unless the user gave
     * one: only they can take a rank, also across namespaces */
    if (std::getenv("UCX_TC_JOB_KEY") == nullptr && std::getenv("UCX_TC_JOB_KEY_FILE") == nullptr) {
        char key[80];
        if (tc_job_key_generate(key, sizeof(key)) != UCS_OK) {
            return 1;
        }
        ::setenv("UCX_TC_JOB_KEY", key, 1);
    }
    launcher l(std::move(*opts));
    return l.run();
}
