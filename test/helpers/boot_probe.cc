/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * boot_probe: a bootstrap member for the multi-process tests, started by
 * twochains-run. Without options it runs allgather, allgatherv and barrier
 * rounds and checks every byte; it exits 0 only if all of it was right.
 * The other modes misbehave on purpose, and exit 0 only if this rank saw the
 * failure it should see:
 *
 *   --mismatch-rank R  rank R passes a longer allgather; every rank must get
 *                      UCS_ERR_INVALID_PARAM, and a barrier afterwards works
 *   --vanish-rank R    rank R _exit(0)s right after create; the others must
 *                      see their first collective fail (they exit 3)
 *   --dup-rank         the last rank claims to be rank 1; create must fail
 *                      on every rank
 *   --bad-size         the last rank announces size + 1; create must fail on
 *                      every rank
 */
#include <twochains/bootstrap.h>
#include <twochains/config.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace {

struct boot_deleter {
    void operator()(tc_bootstrap *b) const { tc_bootstrap_destroy(b); }
};
using boot_ptr = std::unique_ptr<tc_bootstrap, boot_deleter>;

struct malloc_deleter {
    void operator()(void *p) const { std::free(p); }
};
using malloc_ptr = std::unique_ptr<void, malloc_deleter>;

enum class mode { normal, mismatch, vanish, dup_rank, bad_size };

struct options {
    mode m          = mode::normal;
    int  which_rank = -1;
    int  rounds     = 20;
};

int g_rank = -1;

[[gnu::format(printf, 1, 2)]] void note(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    std::printf("probe rank %d: %s\n", g_rank, buf);
    std::fflush(stdout);
}

uint8_t pattern(int rank, int round, size_t i, int salt)
{
    return static_cast<uint8_t>(rank * 31 + round * 7 + static_cast<int>(i) * 3 + salt);
}

size_t varlen(int rank, int round)
{
    if (rank == 1) {
        return 0;               // one member always contributes nothing
    }
    return static_cast<size_t>((rank * 37 + round * 11) % 200 + 1);
}

bool check_allgather(tc_bootstrap_h boot, int round, size_t len)
{
    const int rank = tc_bootstrap_rank(boot), size = tc_bootstrap_size(boot);
    std::vector<uint8_t> mine(len), all(len * static_cast<size_t>(size));
    for (size_t i = 0; i < len; ++i) {
        mine[i] = pattern(rank, round, i, 1);
    }
    ucs_status_t status = tc_bootstrap_allgather(boot, mine.data(), len, all.data());
    if (status != UCS_OK) {
        note("allgather round %d failed: %s", round, ucs_status_string(status));
        return false;
    }
    for (int r = 0; r < size; ++r) {
        for (size_t i = 0; i < len; ++i) {
            if (all[static_cast<size_t>(r) * len + i] != pattern(r, round, i, 1)) {
                note("allgather round %d: byte %zu of rank %d is wrong", round, i, r);
                return false;
            }
        }
    }
    return true;
}

bool check_allgatherv(tc_bootstrap_h boot, int round, size_t scale)
{
    const int rank = tc_bootstrap_rank(boot), size = tc_bootstrap_size(boot);
    std::vector<uint8_t> mine(varlen(rank, round) * scale);
    for (size_t i = 0; i < mine.size(); ++i) {
        mine[i] = pattern(rank, round, i, 2);
    }
    std::vector<size_t> lens(static_cast<size_t>(size));
    void *raw           = nullptr;
    ucs_status_t status = tc_bootstrap_allgatherv(boot, mine.data(), mine.size(), &raw,
                                                  lens.data());
    if (status != UCS_OK) {
        note("allgatherv round %d failed: %s", round, ucs_status_string(status));
        return false;
    }
    malloc_ptr all(raw);
    const auto *bytes = static_cast<const uint8_t*>(raw);
    size_t off        = 0;
    for (int r = 0; r < size; ++r) {
        if (lens[static_cast<size_t>(r)] != varlen(r, round) * scale) {
            note("allgatherv round %d: rank %d length %zu, expected %zu", round, r,
                 lens[static_cast<size_t>(r)], varlen(r, round) * scale);
            return false;
        }
        for (size_t i = 0; i < lens[static_cast<size_t>(r)]; ++i) {
            if (bytes[off + i] != pattern(r, round, i, 2)) {
                note("allgatherv round %d: byte %zu of rank %d is wrong", round, i, r);
                return false;
            }
        }
        off += lens[static_cast<size_t>(r)];
    }
    return true;
}

int run_normal(tc_bootstrap_h boot, const options &opts)
{
    for (int round = 0; round < opts.rounds; ++round) {
        if (!check_allgather(boot, round, 8 + static_cast<size_t>(round)) ||
            !check_allgatherv(boot, round, 1)) {
            return 1;
        }
        ucs_status_t status = tc_bootstrap_barrier(boot);
        if (status != UCS_OK) {
            note("barrier round %d failed: %s", round, ucs_status_string(status));
            return 1;
        }
    }
    // one large exchange: many partial reads and writes on every socket
    if (!check_allgatherv(boot, opts.rounds, 4096) ||
        !check_allgather(boot, opts.rounds + 1, 0)) {
        return 1;
    }
    note("%d rounds of %d ranks ok", opts.rounds, tc_bootstrap_size(boot));
    return 0;
}

int run_mismatch(tc_bootstrap_h boot, const options &opts)
{
    const int rank = tc_bootstrap_rank(boot), size = tc_bootstrap_size(boot);
    size_t len     = (rank == opts.which_rank) ? 17 : 16;
    std::vector<uint8_t> mine(len, static_cast<uint8_t>(rank));
    std::vector<uint8_t> all(17 * static_cast<size_t>(size));

    ucs_status_t status = tc_bootstrap_allgather(boot, mine.data(), len, all.data());
    if (status != UCS_ERR_INVALID_PARAM) {
        note("allgather with mismatched lengths returned %s, expected %s",
             ucs_status_string(status), ucs_status_string(UCS_ERR_INVALID_PARAM));
        return 1;
    }
    note("allgather length mismatch detected: %s", ucs_status_string(status));
    status = tc_bootstrap_barrier(boot);
    if (status != UCS_OK) {
        note("barrier after the mismatch failed: %s", ucs_status_string(status));
        return 1;
    }
    return check_allgather(boot, 1, 16) ? 0 : 1;
}

int run_vanish(tc_bootstrap_h boot, const options &opts)
{
    if (tc_bootstrap_rank(boot) == opts.which_rank) {
        note("vanishing before the first collective");
        ::_exit(0);
    }
    std::vector<uint8_t> mine(16), all(16 * static_cast<size_t>(tc_bootstrap_size(boot)));
    ucs_status_t status = tc_bootstrap_allgather(boot, mine.data(), mine.size(), all.data());
    if (status == UCS_OK) {
        note("allgather succeeded although rank %d is gone", opts.which_rank);
        return 1;
    }
    note("allgather failed as expected: %s", ucs_status_string(status));
    return 3;
}

/* --dup-rank / --bad-size: create with a lie, expect failure everywhere. */
int run_bad_hello(const options &opts)
{
    tc_config_t config;
    if (tc_config_read(&config) != UCS_OK) {
        return 1;
    }
    int rank = config.rank, size = config.size;
    const bool liar = (rank == size - 1);
    if (liar && (opts.m == mode::dup_rank)) {
        rank = 1;
    }
    if (liar && (opts.m == mode::bad_size)) {
        size = config.size + 1;
    }

    tc_bootstrap_h raw  = nullptr;
    ucs_status_t status = tc_bootstrap_tcp_create(config.root, (rank == 0) ? config.listen_fd : -1,
                                                  rank, size, config.boot_timeout, &raw);
    boot_ptr boot(raw);
    if (config.listen_fd >= 0) {
        ::close(config.listen_fd);
    }
    tc_config_release(&config);

    if (status == UCS_OK) {
        note("create succeeded although a rank lied in its hello");
        return 1;
    }
    note("create failed as expected: %s", ucs_status_string(status));
    return 0;
}

bool parse(int argc, char **argv, options &opts)
{
    for (int i = 1; i < argc; ++i) {
        std::string_view a = argv[i];
        auto next_int      = [&](int &out) {
            if (i + 1 >= argc) {
                return false;
            }
            out = std::atoi(argv[++i]);
            return true;
        };
        if (a == "--mismatch-rank") {
            opts.m = mode::mismatch;
            if (!next_int(opts.which_rank)) {
                return false;
            }
        } else if (a == "--vanish-rank") {
            opts.m = mode::vanish;
            if (!next_int(opts.which_rank)) {
                return false;
            }
        } else if (a == "--rounds") {
            if (!next_int(opts.rounds)) {
                return false;
            }
        } else if (a == "--dup-rank") {
            opts.m = mode::dup_rank;
        } else if (a == "--bad-size") {
            opts.m = mode::bad_size;
        } else {
            return false;
        }
    }
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    options opts;
    if (!parse(argc, argv, opts)) {
        std::fprintf(stderr, "usage: boot_probe [--rounds N] [--mismatch-rank R | "
                             "--vanish-rank R | --dup-rank | --bad-size]\n");
        return 2;
    }
    if (const char *r = std::getenv("UCX_TC_RANK")) {
        g_rank = std::atoi(r);
    }

    if ((opts.m == mode::dup_rank) || (opts.m == mode::bad_size)) {
        return run_bad_hello(opts);
    }

    tc_bootstrap_h raw  = nullptr;
    ucs_status_t status = tc_bootstrap_create_from_env(&raw);
    if (status != UCS_OK) {
        note("bootstrap create failed: %s", ucs_status_string(status));
        return 1;
    }
    boot_ptr boot(raw);
    note("bootstrap %s rank %d size %d", tc_bootstrap_name(boot.get()),
         tc_bootstrap_rank(boot.get()), tc_bootstrap_size(boot.get()));
    if ((g_rank >= 0) && (tc_bootstrap_rank(boot.get()) != g_rank)) {
        note("bootstrap rank %d differs from UCX_TC_RANK", tc_bootstrap_rank(boot.get()));
        return 1;
    }

    switch (opts.m) {
    case mode::mismatch:
        return run_mismatch(boot.get(), opts);
    case mode::vanish:
        return run_vanish(boot.get(), opts);
    default:
        return run_normal(boot.get(), opts);
    }
}
