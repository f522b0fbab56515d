/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Every word a peer writes into its SST row is within what the protocol
 * lets it be. The protocol's readers each bound what they use (a bad value
 * can stall them, never crash them or make them loop without bound); this
 * audit finds the writer, so that it leaves the view and the stall ends.
 *
 * Invariants:
 *  - a peer's row is read once per look into a private copy and checked
 *    there, against bounds computed from our own row and view only;
 *  - a row is blamed (group_context::blame: counted, logged once, the
 *    writer suspected) only when two consecutive looks both find an
 *    impossible value: a put may land in any byte order, so one look may
 *    see a word half written, never two looks the same tear;
 *  - a look reads at most UCX_TC_GROUP_AUDIT_ROWS rows (round robin), so its cost
 *    does not grow with the group; it runs once per heartbeat interval,
 *    and for one row whenever that row suspects someone we do not;
 *  - a row that holds an impossible value now is not believed: its
 *    suspicions do not spread, and its suspicion of us does not expel us.
 *
 * What a value may be (S: creation senders, M: creation members, w: the
 * window, e: our epoch, rcv[o]: what we received from original sender o):
 *  epoch, wedged, trim_epoch, done, join_req in [0, e + 1]; phase in [0, 2];
 *  heartbeat >= 0; admit in [0, M]; rdv_addr in [0, 2^48);
 *  suspected and leaving: no bit past M, and the writer never suspects
 *  itself; in a row of our epoch, sent and received[o] in [0, rcv[o] + w]
 *  (a sender reuses a slot only once every member received it), published
 *  and delivered in [0, (max rcv + w + 1) * S]; with trim_epoch == e,
 *  trim[o] in [0, rcv[o] + w].
 */
#pragma once

#include "core/context.hpp"

#include <vector>

namespace tc::membership {

class row_audit {
public:
    explicit row_audit(group_context &ctx);

    /* Check the next rows of the view; blames the writers of impossible
     * values (seen twice). */
    void look();

    /* Check @a row now (a look of its own): false if it holds an
     * impossible value. The failure detector asks before it believes what
     * the row says about others: a member whose own row is impossible (its
     * state corrupt, or hostile) judged the others by it. */
    bool credible(int row);

private:
    /* one row: read once, judged, blamed on the second bad look */
    const char *look_at(int row);
    /* nullptr, or what is impossible in @a row (its private copy) */
    const char *impossible(int row, const std::vector<int64_t> &words);

    group_context            &ctx_;
    size_t                   next_ = 0;          /* index into the view's rows */
    std::vector<const char*> last_look_;         /* by row: the previous look's verdict */
    std::vector<int64_t>     copy_;              /* one row's words */
    char                     why_[160] = {};
};

} // namespace tc::membership
