/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Replicated active messages: a jam multicast in the group's total order
 * runs at every member at delivery, against the state the member registered
 * (params.jam_state), with a tc_jam_replica_t context. State-machine
 * replication whose commands are functions.
 *
 * A jam is an SMC message (or an RDMC one, when its frame is large) whose
 * slot says SLOT_FLAG_JAM; its bytes are a Two-Chains frame that the
 * executor (twochains/ifunc_exec.h) plans and writes in place at the sender
 * and validates and runs at each member.
 *
 * Invariants:
 *  - every member runs the same jams in the same order, exactly once per
 *    view: they run where delivery hands out messages, in sequence order,
 *    and the ragged edge trims jams as it trims messages;
 *  - a Cached frame names only code whose shipping frame was delivered
 *    before it at every member (the sender asks its own executor, which
 *    knows a code once a frame with it ran here) or that came with the
 *    state transfer; a code shipped in a frame the trim discarded is known
 *    nowhere, and the sender ships it again;
 *  - a reject that every member makes alike (a malformed frame, a type the
 *    group's security mode refuses, an unknown hash) is counted and logged
 *    once, and delivery goes on: no member diverges. A reject that depends
 *    on this member (a package or build it lacks, its code cache) would
 *    make it diverge: it leaves the view instead, with the reason logged,
 *    and the others go on without it;
 *  - the state region is the application's memory on the engine's thread:
 *    jams, on_jam and the state transfer touch it there only.
 */
#pragma once

#include "core/group_types.hpp"
#include "core/stats.hpp"

#include <twochains/ifunc_exec.h>

#include <memory>
#include <span>
#include <vector>

namespace tc {

class replicated_jams {
public:
    static ucs_status_t create(const group_params &p, std::shared_ptr<replicated_jams> &out);
    /* what the members compare: the code of p.jam_packages (0: none) */
    static uint64_t packages_digest(const group_params &p);
    /* p.jam_security, else UCX_TC_IFUNC_SECURITY */
    static ucs_status_t resolve_security(const group_params &p, tc_ifunc_security_t &out);
    /* takes @a exec */
    replicated_jams(tc_ifunc_exec_h exec, const group_params &p);
    ~replicated_jams();
    replicated_jams(const replicated_jams &)            = delete;
    replicated_jams &operator=(const replicated_jams &) = delete;

    tc_ifunc_security_t security() const { return tc_ifunc_exec_security(exec_.get()); }

    /* sending: what the frame will be, then its bytes in the slot */
    ucs_status_t plan(const tc_ifunc_exec_jam_t &jam, tc_ifunc_exec_plan_t &plan) const;
    ucs_status_t write(const tc_ifunc_exec_jam_t &jam, const tc_ifunc_exec_plan_t &plan,
                       std::span<std::byte> slot) const;

    enum class outcome {
        ran,       /* status 0 */
        failed,    /* it ran and set a failure status */
        rejected,  /* every member rejects it alike */
        diverged,  /* this member cannot run it: it must leave */
        pending    /* its module still compiles here: nothing ran; deliver it
                      again later, nothing after it before */
    };
    struct delivered {
        int     sender;
        int64_t index, seq, view;
    };
    /* runs it and counts it in @a stats (jams_run, jam_errors, jam_rejects,
     * and callback_errors for an on_jam that threw) */
    outcome run(const delivered &d, std::span<const std::byte> frame, group_counters &stats);

    /* State transfer: the region and the codes, then the application's own
     * state; the joiner takes ours and returns the application's part. */
    std::vector<std::byte> state_for_joiner(std::vector<std::byte> app_state) const;
    ucs_status_t take_state(std::span<const std::byte> blob,
                            std::span<const std::byte> &app_state);

private:
    struct exec_deleter {
        void operator()(tc_ifunc_exec *e) const { tc_ifunc_exec_destroy(e); }
    };
    void log_reject(const delivered &d, const tc_ifunc_exec_result_t &r, bool diverges);

    std::unique_ptr<tc_ifunc_exec, exec_deleter> exec_;
    std::span<std::byte>                         state_;
    std::function<void(const jam_event &)>       on_jam_;
    uint32_t                                     warned_ = 0;  /* reasons logged */
    uint64_t                                     exceptions_ = 0;  /* jams that threw */
};

} // namespace tc
