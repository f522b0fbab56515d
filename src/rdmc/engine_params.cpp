/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * What an engine's members must agree on before any memory is registered:
 * sizes (parsed the same way everywhere), the block size (UCX_TC_RDMC_BLOCK
 * unless the parameters say), and a digest of every parameter exchanged
 * through the bootstrap.
 *
 * Invariant: every rank, member or not, sees the same digests and so
 * reaches the same verdict; one member's bad parameters fail all of them,
 * never hang one.
 */
#include "rdmc/engine.hpp"

#include <ucs/debug/log_def.h>
#include <ucs/sys/string.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

extern "C" ucs_status_t tc_rdmc_config_block(size_t *block_p); /* rdmc_config.c */

namespace tc::rdmc {

namespace {

/* The ready word's buffer field is 16 bits, and 0xffff names the root. */
constexpr unsigned kMaxBuffers = 0xfffe;

/* What every member must agree on, exchanged at creation. */
struct engine_digest {
    uint64_t max_message;
    uint64_t block_size;
    uint32_t buffers;
    uint32_t kind;
    uint32_t member_count;
    uint32_t manual_accept;
};

} // namespace

bool parse_size(const char *text, size_t &out)
{
    if (text == nullptr || *text == '\0') {
        return false;
    }
    char *end;
    errno                  = 0;
    unsigned long long v   = std::strtoull(text, &end, 10);
    if (errno != 0 || end == text) {
        return false;
    }
    std::string unit(end);
    for (auto &c : unit) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    unsigned long long mult = 1;
    if (unit.empty() || unit == "b") {
        mult = 1;
    } else if (unit == "k" || unit == "kb" || unit == "kib") {
        mult = 1ull << 10;
    } else if (unit == "m" || unit == "mb" || unit == "mib") {
        mult = 1ull << 20;
    } else if (unit == "g" || unit == "gb" || unit == "gib") {
        mult = 1ull << 30;
    } else {
        return false;
    }
    if (v > (~0ull) / mult) {
        return false;
    }
    out = static_cast<size_t>(v * mult);
    return true;
}

size_t block_size_from_env()
{
    size_t v = 0;
    if (tc_rdmc_config_block(&v) != UCS_OK) {
        return 0; /* UCX's parser logged the bad value */
    }
    if (v == 0 || v == UCS_MEMUNITS_INF || v == UCS_MEMUNITS_AUTO) {
        ucs_error("rdmc: UCX_TC_RDMC_BLOCK must be a positive size (e.g. 1m, 256k)");
        return 0;
    }
    return v;
}

ucs_status_t agree_on_params(ucp_node &node, const engine_params &params, bool member,
                             size_t &block_out)
{
    const char *local_error = nullptr;
    size_t block            = params.block_size ? params.block_size : block_size_from_env();
    if (member) {
        if (params.members.empty() || params.max_message == 0 || params.buffers == 0 ||
            params.buffers > kMaxBuffers || block == 0) {
            local_error = "members, max_message, buffers and the block size must be positive";
        }
        for (int m : params.members) {
            if (m < 0 || m >= node.size() ||
                std::count(params.members.begin(), params.members.end(), m) != 1) {
                local_error = "members must be distinct bootstrap ranks";
            }
        }
    }

    std::vector<std::byte> digest;
    if (member) {
        engine_digest d{params.max_message, block, params.buffers,
                        static_cast<uint32_t>(params.kind),
                        static_cast<uint32_t>(params.members.size()), params.manual_accept};
        digest.resize(sizeof(d) + params.members.size() * sizeof(int32_t));
        std::memcpy(digest.data(), &d, sizeof(d));
        for (size_t i = 0; i < params.members.size(); ++i) {
            int32_t v = params.members[i];
            std::memcpy(digest.data() + sizeof(d) + i * sizeof(v), &v, sizeof(v));
        }
        if (local_error != nullptr) {
            digest = {std::byte{0}};
        }
    }
    std::vector<std::vector<std::byte>> all;
    ucs_status_t status = node.allgather_blobs(digest, all);
    if (status != UCS_OK) {
        return status;
    }
    bool mismatch = false;
    const std::vector<std::byte> *reference = nullptr;
    for (const auto &d : all) {
        if (d.empty()) {
            continue;
        }
        if (reference == nullptr) {
            reference = &d;
        }
        mismatch = mismatch || (d != *reference) || d.size() < sizeof(engine_digest);
    }
    if (local_error != nullptr) {
        ucs_error("rdmc: invalid parameters: %s", local_error);
    } else if (mismatch && member) {
        ucs_error("rdmc: parameters differ between members (block size, buffers, schedule, "
                  "max message or member list)");
    }
    if (local_error != nullptr || mismatch) {
        return UCS_ERR_INVALID_PARAM;
    }

    block_out = block;
    return UCS_OK;
}

} // namespace tc::rdmc
