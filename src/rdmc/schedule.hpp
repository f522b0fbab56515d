/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * RDMC schedules: which block each member sends to whom, and receives from
 * whom, in each step of a multicast of k blocks from a root to N members.
 * A schedule is a pure function of (kind, N, root, k, member, step): no
 * network, no clock, so it is tested by simulation (schedule_check) for N up
 * to 1024 and k up to 10 000 before any byte moves.
 *
 * Invariants every kind keeps (schedule_check verifies them):
 *  - per step, a member sends at most one block and receives at most one;
 *  - a member sends only a block it already had before the step;
 *  - every member other than the root receives every block exactly once;
 *  - the root never receives.
 *
 * Kinds and step counts (l = floor(log2 N), L = ceil(log2 N)):
 *
 *  sequential  the root sends the whole message to member 1, then to member
 *              2, ...: (N-1)k steps.
 *  chain       member m relays block b to m+1 in step b+m: k+N-2 steps.
 *  tree        binomial tree without pipelining: in stage j (k steps each)
 *              every member m < 2^j sends the whole message to m + 2^j:
 *              L*k steps.
 *  binomial    binomial pipeline on a hypercube overlay: k+L-1 steps, the
 *              lower bound (the root emits one block per step, and the last
 *              block needs L doublings to reach N members).
 *
 * The binomial pipeline, N = 2^l (vertices are relative ranks, root = 0):
 * in step s every vertex v exchanges with v ^ 2^d, d = s mod l. Block b
 * leaves the root in step b towards 2^(b mod l), spreads for l-1 steps
 * inside the subcube of vertices whose bit (b mod l) is set (in step b+j
 * along dimension (b+j) mod l), and in step b+l every vertex of that subcube
 * hands it across dimension b mod l to its partner, which has that bit
 * clear. So in step s a vertex v whose bit d is set receives the block
 * b = s + i - l, i being the cyclic distance from d to v's next set bit above
 * d (i = l when v = 2^d), and a vertex whose bit d is clear receives block
 * s - l. Each pair trades one block each way per step. Block b is everywhere
 * after step b+l; for the last block that would cost one step too many, so
 * the tail uses the root's idle steps: in step k-1+j (j = 1..l-1) the root
 * sends block k-1 again towards 2^((c+j) mod l), c = (k-1) mod l, and it
 * spreads like a block of index k-1+j, but only to the vertices with bit c
 * clear whose lowest set bit above c is at cyclic distance j (each such
 * vertex needs it exactly once, and gets it by step k+l-2). Total k+l-1.
 *
 * Any N, 2^l < N < 2^(l+1) (the twin scheme): the E = N-2^l extra members
 * are twins of hypercube vertices 1..E (relative rank 2^l+v-1 is v's twin).
 * The hypercube schedule runs among the 2^l vertices; a twin pair plays one
 * vertex, and one extra step at the end drains what is left between twins:
 * k+l = k+L-1 steps. Within a pair, in each step the member that owns the
 * block the vertex must send (the one that received it from outside) sends
 * it; the other member receives the vertex's incoming block, and sends one
 * block the twin lacks to the sender (the oldest one it owns; when the vertex
 * only receives, the member with more unforwarded blocks takes the incoming
 * block and forwards one; when it neither sends nor receives, both twins
 * forward one). This is a small deterministic simulation per pair, done once
 * when the schedule is built (O(E * steps)); queries are then O(l).
 */
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tc::rdmc {

enum class schedule_kind : uint8_t {
    binomial,    /* binomial pipeline on a hypercube overlay (default) */
    sequential,  /* the root sends everything to each member in turn */
    chain,       /* pipelined chain */
    tree         /* binomial tree, whole message per hop */
};

const char *schedule_name(schedule_kind kind);

/* "binomial", "sequential", "chain", "tree"; false if unknown */
bool schedule_parse(std::string_view name, schedule_kind &kind);

/* One block between two members (indexes in view order); peer < 0: none. */
struct block_transfer {
    int     peer  = -1;
    int64_t block = -1;

    bool valid() const { return peer >= 0; }
    bool operator==(const block_transfer &) const = default;
};

/* What one member does in one step. */
struct step_actions {
    block_transfer send;  /* peer = receiver */
    block_transfer recv;  /* peer = sender */
};

/* One transfer of a step, as the simulator sees it. */
struct transfer_edge {
    int     from;
    int     to;
    int64_t block;
};

/* Steps a kind needs for N members and k blocks (0 when N <= 1 or k == 0). */
int64_t schedule_steps(schedule_kind kind, int members, int64_t blocks);

class schedule {
public:
    /* @a root and members are indexes 0..members-1; @a blocks >= 1. */
    static std::unique_ptr<schedule> create(schedule_kind kind, int members, int root,
                                            int64_t blocks);
    virtual ~schedule() = default;

    schedule_kind kind() const { return kind_; }
    int members() const { return n_; }
    int root() const { return root_; }
    int64_t blocks() const { return k_; }
    int64_t steps() const { return steps_; }

    /* What @a member does in @a step (nothing outside 0..steps()-1). */
    step_actions at(int member, int64_t step) const;

    /* Append every transfer of @a step to @a out. */
    void transfers(int64_t step, std::vector<transfer_edge> &out) const;

protected:
    schedule(schedule_kind kind, int members, int root, int64_t blocks);

    /* In relative ranks (root = 0); peers in the result are relative too. */
    virtual step_actions at_relative(int rel, int64_t step) const = 0;
    /* Relative ranks that may act in @a step; default: everyone. */
    virtual void active_relative(int64_t step, std::vector<int> &rels) const;

    int     n_;
    int     root_;
    int64_t k_;
    int64_t steps_ = 0;

private:
    schedule_kind kind_;
};

/* --- the simulator ------------------------------------------------------ */

struct check_result {
    bool        ok        = false;
    int64_t     steps     = 0;
    int64_t     transfers = 0;  /* block transfers simulated */
    std::string error;          /* first violation, empty when ok */
};

/*
 * Simulate @a s: every member receives every block exactly once, only from a
 * member that had it before the step, with at most one send and one receive
 * per member per step, and what each member's at() says matches the step's
 * transfer list on both ends. With @a exhaustive, also every (member, step)
 * pair is queried, so that at() can report nothing the list lacks
 * (O(N * steps) queries; use for small cases).
 */
check_result schedule_check(const schedule &s, bool exhaustive = false);

} // namespace tc::rdmc
