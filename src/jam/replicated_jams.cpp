/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "jam/replicated_jams.hpp"

#include "common/contained_call.hpp"

#include <twochains/config.h>
#include <twochains/jam.h>
#include <ucs/debug/log_def.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace tc {

namespace {

static_assert(-1000 - TC_IFUNC_TRAP_MEMORY == TC_JAM_STATUS_TRAP_MEMORY &&
                      -1000 - TC_IFUNC_TRAP_FUEL == TC_JAM_STATUS_TRAP_FUEL &&
                      -1000 - TC_IFUNC_TRAP_STACK == TC_JAM_STATUS_TRAP_STACK &&
                      -1000 - TC_IFUNC_TRAP_UNREACHABLE == TC_JAM_STATUS_TRAP_UNREACHABLE,
              "a trap's status is -1000 - its tc_ifunc_trap_t");

/* The state transfer's part: [u64 region][region][u64 codes][codes], then
 * the application's bytes */
void append(std::vector<std::byte> &out, const void *data, size_t size)
{
    const auto *p = static_cast<const std::byte*>(data);
    out.insert(out.end(), p, p + size);
}

bool take(std::span<const std::byte> &in, std::span<const std::byte> &part)
{
    uint64_t size;
    if (in.size() < sizeof(size)) {
        return false;
    }
    std::memcpy(&size, in.data(), sizeof(size));
    in = in.subspan(sizeof(size));
    if (size > in.size()) {
        return false;
    }
    part = in.first(size);
    in   = in.subspan(size);
    return true;
}

} // namespace

replicated_jams::replicated_jams(tc_ifunc_exec_h exec, const group_params &p)
    : exec_(exec), state_(p.jam_state), on_jam_(p.on_jam)
{
    /* what a confined jam may touch: its replica context and the state */
    tc_ifunc_exec_confine_regions(exec, sizeof(tc_jam_replica_t), state_.data(),
                                  state_.size());
}

uint64_t replicated_jams::packages_digest(const group_params &p)
{
    std::vector<std::pair<uint64_t, uint64_t>> codes;
    /* Portable jams run each member's own module of one bitcode: their
     * hashes are what must agree, whatever architecture compiled them */
    const bool portable = (p.jam_mode == TC_IFUNC_MODE_PORTABLE) ||
                          (p.jam_mode == TC_IFUNC_MODE_PORTABLE_CACHED);
    for (tc_ifunc_pkg_h pkg : p.jam_packages) {
        codes.emplace_back(tc_ifunc_pkg_id(pkg), portable ? tc_ifunc_pkg_portable_digest(pkg) :
                                                            tc_ifunc_pkg_code_digest(pkg));
    }
    std::sort(codes.begin(), codes.end());
    uint64_t h = 0;
    for (const auto &[id, digest] : codes) {
        for (uint64_t w : {id, digest}) {
            h = (h ^ w) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
        }
    }
    return h;
}

replicated_jams::~replicated_jams() = default;

ucs_status_t replicated_jams::resolve_security(const group_params &p, tc_ifunc_security_t &out)
{
    if (p.jam_security) {
        out = *p.jam_security;
        return UCS_OK;
    }
    tc_ifunc_config_t config;
    ucs_status_t status = tc_ifunc_config_read(&config);
    if (status == UCS_OK) {
        out = config.security;
        tc_ifunc_config_release(&config);
    }
    return status;
}

ucs_status_t replicated_jams::create(const group_params &p, std::shared_ptr<replicated_jams> &out)
{
    tc_ifunc_security_t security;
    ucs_status_t status = resolve_security(p, security);
    if (status != UCS_OK) {
        return status;
    }
    tc_ifunc_exec_h exec;
    status = tc_ifunc_exec_create(security, &exec);
    if (status == UCS_OK) {
        /* the members compared their code: rejects of these are alike */
        status = tc_ifunc_exec_declare(exec, p.jam_packages.data(),
                                       static_cast<unsigned>(p.jam_packages.size()));
        if (status != UCS_OK) {
            tc_ifunc_exec_destroy(exec);
        }
    }
    if (status != UCS_OK) {
        ucs_error("group: cannot create the jam executor: %s", ucs_status_string(status));
        return status;
    }
    if ((p.jam_mode == TC_IFUNC_MODE_PORTABLE) ||
        (p.jam_mode == TC_IFUNC_MODE_PORTABLE_CACHED)) {
        /* every member runs its own modules, compiled now, before it is a
         * member: a compile at the first delivery would hold the group */
        for (tc_ifunc_pkg_h pkg : p.jam_packages) {
            status = tc_ifunc_portable_prepare(pkg, 120.0);
            if (status != UCS_OK) {
                ucs_error("group: the Portable jams of %s do not compile here: %s",
                          tc_ifunc_pkg_name(pkg), ucs_status_string(status));
                tc_ifunc_exec_destroy(exec);
                return status;
            }
        }
    }
    out = std::make_shared<replicated_jams>(exec, p);
    return UCS_OK;
}

ucs_status_t replicated_jams::plan(const tc_ifunc_exec_jam_t &jam,
                                   tc_ifunc_exec_plan_t &plan) const
{
    return tc_ifunc_exec_plan_frame(exec_.get(), &jam, &plan);
}

ucs_status_t replicated_jams::write(const tc_ifunc_exec_jam_t &jam,
                                    const tc_ifunc_exec_plan_t &plan,
                                    std::span<std::byte> slot) const
{
    size_t size;
    ucs_status_t status = tc_ifunc_exec_write_frame(exec_.get(), &jam, &plan, slot.data(), &size);
    if (status != UCS_OK) {
        /* the slot is taken: leave bytes that every member rejects alike */
        std::memset(slot.data(), 0, std::min<size_t>(slot.size(), 64));
    }
    return status;
}

void replicated_jams::log_reject(const delivered &d, const tc_ifunc_exec_result_t &r,
                                 bool diverges)
{
    const char *why = tc_ifunc_reject_name(r.reason);
    const char *sep = (r.detail[0] != '\0') ? ": " : "";
    if (diverges) {
        ucs_error("group: epoch %ld: this member cannot run jam seq %ld (element %u) from "
                  "rank %d, which the others run: %s%s%s; it leaves the group rather than "
                  "diverge", static_cast<long>(d.view), static_cast<long>(d.seq),
                  r.element_id, d.sender, why, sep, r.detail);
        return;
    }
    if (!(warned_ & (1u << r.reason))) {
        warned_ |= 1u << r.reason;
        ucs_warn("group: epoch %ld: every member rejects jam seq %ld (element %u) from rank "
                 "%d: %s%s%s (further '%s' rejects are only counted)",
                 static_cast<long>(d.view), static_cast<long>(d.seq), r.element_id,
                 d.sender, why, sep, r.detail, why);
    }
}

replicated_jams::outcome replicated_jams::run(const delivered &d,
                                              std::span<const std::byte> frame,
                                              group_counters &stats)
{
    tc_jam_replica_t replica{state_.data(), state_.size(), d.sender, d.index, d.seq,
                             d.view, 0};
    tc_ifunc_exec_result_t r{};
    /* an exception reaches us only from a Local jam's C++ ried, through
     * C frames with unwind tables: a failure like any other, alike at
     * every member */
    call_contained("group: replicated jam", "counted as failed (status -1)",
                   [&] { tc_ifunc_exec_run(exec_.get(), frame.data(), frame.size(), &replica,
                                           &r); },
                   [&] {
                       r.reason       = TC_IFUNC_REJECT_NONE;
                       replica.status = (replica.status != 0) ? replica.status : -1;
                       return exceptions_++;
                   });
    if (r.reason == TC_IFUNC_EXEC_PENDING) {
        return outcome::pending;
    }
    if ((r.reason == TC_IFUNC_REJECT_NONE) && (r.trap != TC_IFUNC_TRAP_NONE)) {
        /* the runner ended a confined jam: its status, alike everywhere */
        replica.status = -1000 - static_cast<int>(r.trap);
    }
    outcome result = outcome::ran;
    if (r.reason != TC_IFUNC_REJECT_NONE) {
        result = r.diverges ? outcome::diverged : outcome::rejected;
        log_reject(d, r, r.diverges);
        stats.add(&group_stats::jam_rejects, 1);
    } else {
        stats.add(&group_stats::jams_run, 1);
        if (replica.status != 0) {
            result = outcome::failed;
            stats.add(&group_stats::jam_errors, 1);
        }
    }
    /* a member that leaves tells the application nothing more */
    if (result != outcome::diverged && on_jam_) {
        const jam_event e{d.sender, d.index, d.seq, d.view, r.pkg_id, r.element_id,
                          {static_cast<const std::byte*>(r.payload), r.payload_size},
                          replica.status, r.reason};
        call_contained("group: jam callback", "delivery goes on", [&] { on_jam_(e); },
                       [&] { return stats.count(&group_stats::callback_errors); });
    }
    return result;
}

std::vector<std::byte> replicated_jams::state_for_joiner(std::vector<std::byte> app_state) const
{
    void *codes       = nullptr;
    size_t codes_size = 0;
    if (tc_ifunc_exec_export(exec_.get(), &codes, &codes_size) != UCS_OK) {
        codes_size = 0;   /* the joiner then fails on the first Cached frame: logged there */
        ucs_error("group: no memory for the jam codes of the state transfer");
    }
    std::vector<std::byte> out;
    out.reserve(2 * sizeof(uint64_t) + state_.size() + codes_size + app_state.size());
    const uint64_t region = state_.size(), code_bytes = codes_size;
    append(out, &region, sizeof(region));
    append(out, state_.data(), state_.size());
    append(out, &code_bytes, sizeof(code_bytes));
    append(out, codes, codes_size);
    append(out, app_state.data(), app_state.size());
    std::free(codes);
    return out;
}

ucs_status_t replicated_jams::take_state(std::span<const std::byte> blob,
                                         std::span<const std::byte> &app_state)
{
    std::span<const std::byte> region, codes;
    if (!take(blob, region) || !take(blob, codes)) {
        ucs_error("group: the state transfer is malformed");
        return UCS_ERR_IO_ERROR;
    }
    if (region.size() != state_.size()) {
        ucs_error("group: the sponsor's jam state is %zu bytes, this member's %zu",
                  region.size(), state_.size());
        return UCS_ERR_INVALID_PARAM;
    }
    if (!region.empty()) {
        std::memcpy(state_.data(), region.data(), region.size());
    }
    tc_ifunc_exec_result_t r;
    ucs_status_t status = tc_ifunc_exec_import(exec_.get(), codes.data(), codes.size(), &r);
    if (status != UCS_OK) {
        ucs_error("group: a jam code of the state transfer is refused here: %s%s%s",
                  tc_ifunc_reject_name(r.reason), (r.detail[0] != '\0') ? ": " : "",
                  r.detail);
        return status;
    }
    app_state = blob;
    return UCS_OK;
}

} // namespace tc
