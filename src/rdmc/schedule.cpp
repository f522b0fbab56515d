/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Schedules as pure functions (see schedule.hpp for the schemes). Threads:
 * a built schedule is immutable, any thread may query it.
 */
#include "rdmc/schedule.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <deque>
#include <stdexcept>

namespace tc::rdmc {

namespace {

int ceil_log2(int n)
{
    return (n <= 1) ? 0 : static_cast<int>(std::bit_width(static_cast<unsigned>(n - 1)));
}

int floor_log2(int n)
{
    return (n <= 1) ? 0 : static_cast<int>(std::bit_width(static_cast<unsigned>(n))) - 1;
}

/* --- sequential --------------------------------------------------------- */

class sequential_schedule final : public schedule {
public:
    sequential_schedule(int n, int root, int64_t k) : schedule(schedule_kind::sequential, n, root, k)
    {
        steps_ = schedule_steps(schedule_kind::sequential, n, k);
    }

protected:
    step_actions at_relative(int rel, int64_t step) const override
    {
        step_actions a;
        if (step < 0 || step >= steps_) {
            return a;
        }
        const int     target = 1 + static_cast<int>(step / k_);
        const int64_t block  = step % k_;
        if (rel == 0) {
            a.send = {target, block};
        } else if (rel == target) {
            a.recv = {0, block};
        }
        return a;
    }

    void active_relative(int64_t step, std::vector<int> &rels) const override
    {
        if (step >= 0 && step < steps_) {
            rels.push_back(0);
        }
    }
};

/* --- chain -------------------------------------------------------------- */

class chain_schedule final : public schedule {
public:
    chain_schedule(int n, int root, int64_t k) : schedule(schedule_kind::chain, n, root, k)
    {
        steps_ = schedule_steps(schedule_kind::chain, n, k);
    }

protected:
    /* member m sends block step-m to m+1 */
    step_actions at_relative(int rel, int64_t step) const override
    {
        step_actions a;
        if (step < 0 || step >= steps_) {
            return a;
        }
        const int64_t out = step - rel;
        if (rel < n_ - 1 && out >= 0 && out < k_) {
            a.send = {rel + 1, out};
        }
        const int64_t in = step - (rel - 1);
        if (rel > 0 && in >= 0 && in < k_) {
            a.recv = {rel - 1, in};
        }
        return a;
    }

    void active_relative(int64_t step, std::vector<int> &rels) const override
    {
        /* senders m with 0 <= step-m < k and m <= n-2 */
        const int64_t lo = std::max<int64_t>(0, step - k_ + 1);
        const int64_t hi = std::min<int64_t>(n_ - 2, step);
        for (int64_t m = lo; m <= hi; ++m) {
            rels.push_back(static_cast<int>(m));
        }
    }
};

/* --- binomial tree ------------------------------------------------------ */

class tree_schedule final : public schedule {
public:
    tree_schedule(int n, int root, int64_t k) : schedule(schedule_kind::tree, n, root, k)
    {
        steps_ = schedule_steps(schedule_kind::tree, n, k);
    }

protected:
    /* stage j = step / k: every m < 2^j with m + 2^j < n sends to m + 2^j */
    step_actions at_relative(int rel, int64_t step) const override
    {
        step_actions a;
        if (step < 0 || step >= steps_) {
            return a;
        }
        const int64_t stage = step / k_;
        const int64_t block = step % k_;
        const int64_t half  = int64_t{1} << stage;
        if (rel < half && rel + half < n_) {
            a.send = {static_cast<int>(rel + half), block};
        } else if (rel >= half && rel < 2 * half) {
            a.recv = {static_cast<int>(rel - half), block};
        }
        return a;
    }

    void active_relative(int64_t step, std::vector<int> &rels) const override
    {
        if (step < 0 || step >= steps_) {
            return;
        }
        const int64_t half = int64_t{1} << (step / k_);
        for (int64_t m = 0; m < half && m + half < n_; ++m) {
            rels.push_back(static_cast<int>(m));
        }
    }
};

/* --- binomial pipeline -------------------------------------------------- */

/* The hypercube schedule over 2^l vertices (vertex 0 is the root). */
class hypercube {
public:
    struct edge {
        int     vertex = -1;  /* the other end */
        int64_t block  = -1;
        explicit operator bool() const { return vertex >= 0; }
    };

    hypercube(int l, int64_t k)
        : l_(l), k_(k), mask_((1u << l) - 1), steps_(l > 0 ? k + l - 1 : 0),
          c_(l > 0 ? static_cast<int>((k - 1) % l) : 0)
    {
    }

    int64_t steps() const { return steps_; }

    /* The block vertex v receives in step s, and from whom. */
    edge recv(int v, int64_t s) const
    {
        if (v == 0 || s < 0 || s >= steps_) {
            return {};
        }
        const int d = static_cast<int>(s % l_);
        const int w = v ^ (1 << d);
        if (((v >> d) & 1) == 0) {
            /* across dimension d from the subcube that has block s-l */
            const int64_t b = s - l_;
            return (b >= 0 && b <= k_ - 2) ? edge{w, b} : edge{};
        }
        /* inside the subcube of block s+i-l */
        const unsigned above = rotr(static_cast<unsigned>(v), d) >> 1;
        const int      i     = above ? std::countr_zero(above) + 1 : l_;
        const int64_t  b     = s + i - l_;
        if (b < 0) {
            return {};
        }
        if (b <= k_ - 1) {
            return {w, b};
        }
        /* a tail copy of block k-1, index k-1+j: only for its own vertices */
        const unsigned from_c = rotr(static_cast<unsigned>(v), c_);
        if ((from_c & 1) != 0 || b - (k_ - 1) != std::countr_zero(from_c)) {
            return {};
        }
        return {w, k_ - 1};
    }

    /* The block vertex v sends in step s, and to whom. */
    edge send(int v, int64_t s) const
    {
        if (s < 0 || s >= steps_) {
            return {};
        }
        const int w = v ^ (1 << static_cast<int>(s % l_));
        edge e      = recv(w, s);
        return e ? edge{w, e.block} : edge{};
    }

private:
    unsigned rotr(unsigned v, int by) const
    {
        return by == 0 ? v : (((v >> by) | (v << (l_ - by))) & mask_);
    }

    int      l_;
    int64_t  k_;
    unsigned mask_;
    int64_t  steps_;
    int      c_;  /* (k-1) mod l: the dimension of the last block */
};

class binomial_schedule final : public schedule {
public:
    binomial_schedule(int n, int root, int64_t k)
        : schedule(schedule_kind::binomial, n, root, k), l_(floor_log2(n)), m_(1 << l_),
          e_(n - m_), cube_(l_, k)
    {
        steps_ = schedule_steps(schedule_kind::binomial, n, k);
        pairs_.resize(e_ + 1);
        for (int v = 1; v <= e_; ++v) {
            simulate_pair(v);
        }
    }

protected:
    step_actions at_relative(int rel, int64_t step) const override
    {
        step_actions a;
        if (step < 0 || step >= steps_) {
            return a;
        }
        const int  v      = (rel < m_) ? rel : rel - m_ + 1;
        const int  role   = (rel < m_) ? 0 : 1;
        const bool paired = (v >= 1 && v <= e_);

        if (auto in = cube_.recv(v, step); in && (!paired || pair_role(v, step).r == role)) {
            a.recv = {member_of(in.vertex, sender_role(in.vertex, step)), in.block};
        }
        if (auto out = cube_.send(v, step); out && (!paired || pair_role(v, step).s == role)) {
            a.send = {member_of(out.vertex, receiver_role(out.vertex, step)), out.block};
        }
        if (paired) {
            const auto &st  = pairs_[v].steps[step];
            const int  twin = member_of(v, 1 - role);
            if (st.intra[role] >= 0) {
                a.send = {twin, st.intra[role]};
            }
            if (st.intra[1 - role] >= 0) {
                a.recv = {twin, st.intra[1 - role]};
            }
        }
        return a;
    }

private:
    struct pair_step {
        int8_t  r = -1;           /* member (0: vertex, 1: twin) receiving from outside */
        int8_t  s = -1;           /* member sending to outside */
        int64_t intra[2]{-1, -1}; /* block member i sends to its twin, -1: none */
    };
    struct pair_plan {
        std::vector<pair_step> steps;
    };

    const pair_step &pair_role(int v, int64_t step) const { return pairs_[v].steps[step]; }

    int member_of(int vertex, int role) const { return role == 0 ? vertex : m_ + vertex - 1; }

    int sender_role(int vertex, int64_t step) const
    {
        return (vertex >= 1 && vertex <= e_) ? pairs_[vertex].steps[step].s : 0;
    }

    int receiver_role(int vertex, int64_t step) const
    {
        return (vertex >= 1 && vertex <= e_) ? pairs_[vertex].steps[step].r : 0;
    }

    /* Decide, step by step, which twin of vertex v talks to the outside and
     * what the twins hand each other (see schedule.hpp). */
    void simulate_pair(int v)
    {
        pair_plan &p = pairs_[v];
        p.steps.resize(static_cast<size_t>(steps_));
        std::vector<int8_t> owner(static_cast<size_t>(k_), -1);
        std::deque<int64_t> unforwarded[2];

        for (int64_t s = 0; s < steps_; ++s) {
            pair_step &st = p.steps[s];
            const auto in  = cube_.recv(v, s);
            const auto out = cube_.send(v, s);
            auto forward   = [&](int from) {
                if (!unforwarded[from].empty()) {
                    st.intra[from] = unforwarded[from].front();
                    unforwarded[from].pop_front();
                }
            };
            if (out) {
                st.s = owner[out.block];
                if (st.s < 0) {
                    throw std::logic_error("binomial: a twin pair sends a block it never got");
                }
                const int other = 1 - st.s;
                if (in) {
                    st.r = static_cast<int8_t>(other);
                }
                forward(other);
            } else if (in) {
                st.r = (unforwarded[0].size() >= unforwarded[1].size()) ? 0 : 1;
                forward(st.r);
            } else {
                forward(0);
                forward(1);
            }
            if (in) {
                owner[in.block] = st.r;
                unforwarded[st.r].push_back(in.block);
            }
        }
        if (!unforwarded[0].empty() || !unforwarded[1].empty()) {
            throw std::logic_error("binomial: twins did not drain");
        }
    }

    int                    l_;
    int                    m_;
    int                    e_;
    hypercube              cube_;
    std::vector<pair_plan> pairs_;  /* index: vertex 1..e_ */
};

} // namespace

/* --- common ------------------------------------------------------------- */

const char *schedule_name(schedule_kind kind)
{
    switch (kind) {
    case schedule_kind::binomial: return "binomial";
    case schedule_kind::sequential: return "sequential";
    case schedule_kind::chain: return "chain";
    case schedule_kind::tree: return "tree";
    }
    return "?";
}

bool schedule_parse(std::string_view name, schedule_kind &kind)
{
    for (auto k : {schedule_kind::binomial, schedule_kind::sequential, schedule_kind::chain,
                   schedule_kind::tree}) {
        if (name == schedule_name(k)) {
            kind = k;
            return true;
        }
    }
    return false;
}

int64_t schedule_steps(schedule_kind kind, int n, int64_t k)
{
    if (n <= 1 || k <= 0) {
        return 0;
    }
    switch (kind) {
    case schedule_kind::sequential: return (n - 1) * k;
    case schedule_kind::chain: return k + n - 2;
    case schedule_kind::tree: return ceil_log2(n) * k;
    case schedule_kind::binomial: return k + ceil_log2(n) - 1;
    }
    return 0;
}

schedule::schedule(schedule_kind kind, int members, int root, int64_t blocks)
    : n_(members), root_(root), k_(blocks), kind_(kind)
{
}

std::unique_ptr<schedule> schedule::create(schedule_kind kind, int members, int root,
                                           int64_t blocks)
{
    if (members < 1 || root < 0 || root >= members || blocks < 1) {
        return nullptr;
    }
    switch (kind) {
    case schedule_kind::sequential:
        return std::make_unique<sequential_schedule>(members, root, blocks);
    case schedule_kind::chain: return std::make_unique<chain_schedule>(members, root, blocks);
    case schedule_kind::tree: return std::make_unique<tree_schedule>(members, root, blocks);
    case schedule_kind::binomial:
        return std::make_unique<binomial_schedule>(members, root, blocks);
    }
    return nullptr;
}

step_actions schedule::at(int member, int64_t step) const
{
    step_actions a = at_relative((member - root_ + n_) % n_, step);
    if (a.send.valid()) {
        a.send.peer = (a.send.peer + root_) % n_;
    }
    if (a.recv.valid()) {
        a.recv.peer = (a.recv.peer + root_) % n_;
    }
    return a;
}

void schedule::active_relative(int64_t step, std::vector<int> &rels) const
{
    if (step < 0 || step >= steps_) {
        return;
    }
    for (int r = 0; r < n_; ++r) {
        rels.push_back(r);
    }
}

void schedule::transfers(int64_t step, std::vector<transfer_edge> &out) const
{
    std::vector<int> rels;
    active_relative(step, rels);
    for (int rel : rels) {
        const int member = (rel + root_) % n_;
        auto a           = at(member, step);
        if (a.send.valid()) {
            out.push_back({member, a.send.peer, a.send.block});
        }
    }
}

/* --- simulator ---------------------------------------------------------- */

check_result schedule_check(const schedule &s, bool exhaustive)
{
    check_result r;
    const int     n = s.members();
    const int64_t k = s.blocks();
    r.steps         = s.steps();

    char buf[256];
    auto fail = [&](int64_t step, const char *what, int from, int to, int64_t block) {
        std::snprintf(buf, sizeof(buf), "%s n=%d root=%d k=%ld: step %ld: %s (%d -> %d, block %ld)",
                      schedule_name(s.kind()), n, s.root(), static_cast<long>(k),
                      static_cast<long>(step), what, from, to, static_cast<long>(block));
        r.error = buf;
        r.ok    = false;
        return r;
    };

    /* has[m*k + b]: member m holds block b; received[m]: how many */
    std::vector<uint8_t>  has(static_cast<size_t>(n) * static_cast<size_t>(k), 0);
    std::vector<int64_t>  received(n, 0);
    std::vector<int64_t>  sent_in(n, -1), recv_in(n, -1);  /* last step with a send/recv */
    std::vector<transfer_edge> edges, landed;
    for (int64_t b = 0; b < k; ++b) {
        has[static_cast<size_t>(s.root()) * k + b] = 1;
    }

    for (int64_t step = 0; step < s.steps(); ++step) {
        edges.clear();
        landed.clear();
        s.transfers(step, edges);
        for (const auto &e : edges) {
            if (e.from < 0 || e.from >= n || e.to < 0 || e.to >= n || e.from == e.to ||
                e.block < 0 || e.block >= k) {
                return fail(step, "transfer out of range", e.from, e.to, e.block);
            }
            if (sent_in[e.from] == step) {
                return fail(step, "member sends twice in one step", e.from, e.to, e.block);
            }
            if (recv_in[e.to] == step) {
                return fail(step, "member receives twice in one step", e.from, e.to, e.block);
            }
            sent_in[e.from] = step;
            recv_in[e.to]   = step;
            if (!has[static_cast<size_t>(e.from) * k + e.block]) {
                return fail(step, "sender does not have the block", e.from, e.to, e.block);
            }
            if (has[static_cast<size_t>(e.to) * k + e.block]) {
                return fail(step, "receiver already has the block", e.from, e.to, e.block);
            }
            landed.push_back(e);
        }
        /* both ends of every transfer must agree with the per-member view */
        for (const auto &e : landed) {
            const auto at_to = s.at(e.to, step);
            if (!(at_to.recv == block_transfer{e.from, e.block})) {
                return fail(step, "receiver's plan disagrees", e.from, e.to, e.block);
            }
            const auto at_from = s.at(e.from, step);
            if (!(at_from.send == block_transfer{e.to, e.block})) {
                return fail(step, "sender's plan disagrees", e.from, e.to, e.block);
            }
        }
        if (exhaustive) {
            for (int m = 0; m < n; ++m) {
                const auto a = s.at(m, step);
                if (a.send.valid() && sent_in[m] != step) {
                    return fail(step, "member plans a send the step lacks", m, a.send.peer,
                                a.send.block);
                }
                if (a.recv.valid() && recv_in[m] != step) {
                    return fail(step, "member plans a receive the step lacks", a.recv.peer, m,
                                a.recv.block);
                }
            }
        }
        /* blocks received in a step can be sent from the next one on */
        for (const auto &e : landed) {
            has[static_cast<size_t>(e.to) * k + e.block] = 1;
            ++received[e.to];
            ++r.transfers;
        }
    }
    for (int m = 0; m < n; ++m) {
        if (m != s.root() && received[m] != k) {
            return fail(s.steps(), "member is missing blocks at the end", -1, m,
                        k - received[m]);
        }
    }
    if (s.at(s.root(), 0).recv.valid()) {
        return fail(0, "the root receives", -1, s.root(), -1);
    }
    r.ok = true;
    return r;
}

} // namespace tc::rdmc
