/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * When a batched sender pushes its committed slots, as a pure function of
 * what the engine's pass sees. The order of the rules is the policy:
 *
 *   1. a request (flush(), an urgent message, a full window, threaded
 *      urgent mode) pushes at once;
 *   2. B pending push (full);
 *   3. the oldest pending waited T (deadline; T = 0: every pass);
 *   4. nothing was committed since the previous pass (idle): waiting for
 *      more would only add latency;
 *   5. else wait: the pass keeps the engine awake until the deadline.
 */
#pragma once

#include <cstdint>
#include <optional>

namespace tc::smc {

enum class flush_cause { full, deadline, idle, explicit_call };

struct flush_inputs {
    int64_t  pending;          /* committed, not pushed; > 0 */
    unsigned batch;            /* B */
    double   deadline_s;       /* T */
    double   oldest_waited_s;  /* age of the oldest pending */
    bool     idle;             /* no commit since the previous pass */
    bool     requested;        /* rule 1 */
};

inline std::optional<flush_cause> flush_decision(const flush_inputs &in)
{
    if (in.requested) {
        return flush_cause::explicit_call;
    }
    if (in.pending >= in.batch) {
        return flush_cause::full;
    }
    if (in.deadline_s <= 0 || in.oldest_waited_s >= in.deadline_s) {
        return flush_cause::deadline;
    }
    if (in.idle) {
        return flush_cause::idle;
    }
    return std::nullopt;
}

} // namespace tc::smc
