/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The row of a group's SST: one row per member of the creation view, int64
 * words, each member writes only its own row and pushes byte ranges of it.
 * Columns keep their creation-view positions in every later view (an
 * original member index is a row; an original sender index is a column
 * entry), so a put into a narrowed view lands where it always did.
 *
 *  column      entries  writer                      meaning
 *  ----------  -------  --------------------------  ----------------------------------
 *  sent        1        smc/sender                  messages this member pushed
 *  received    S        smc/receiver                messages received from each sender
 *  published   1        smc/receiver                1 + highest sequence received contiguously
 *  delivered   1        order/delivery              1 + highest sequence delivered
 *  phase       1        group/group_impl (close)    0 open, 1 draining, 2 drained
 *  epoch       1        group/group_impl            epoch of this row's counters
 *  heartbeat   1        membership/failure_detector bumped every UCX_TC_HEARTBEAT_INTERVAL
 *  suspected   M        membership/failure_detector mask of suspected original members
 *  wedged      1        membership/view_change      epoch wedged in, 0: not wedged
 *  trim        S        membership/view_change      per original sender: messages kept
 *  admit       1        membership/view_change      with the trim: 1 + sponsor row, 0: none
 *  leaving     M        membership/view_change      with the trim: mask of rows the next
 *                                                   view drops (the leader's suspicion, agreed)
 *  trim_epoch  1        membership/view_change      epoch of the trim above
 *  done        1        membership/view_change      epoch whose trim is delivered here
 *  join_req    1        membership/join_sponsor     epoch in which this member sponsors a joiner
 *  rdv_addr    1        membership/join_sponsor     the joiner's rendezvous: IPv4 << 16 | port
 *
 * S: senders of the creation view; M: member_mask::words_for(members of
 * the creation view), one word per 64 members (one up to 64: a small group
 * pays what it always did), pushed together (core/member_mask.hpp).
 *
 * Published and delivered are stored plus one so that a row nobody has
 * written yet, all zeros, reads as "nothing", never as "sequence 0".
 * received, published and delivered are adjacent: they go out as one put
 * (the receive report). sent..delivered are the counters: they restart at
 * each epoch, and a row whose epoch is not ours reads them as zero.
 */
#pragma once

#include "core/member_mask.hpp"
#include "sst/table.hpp"

namespace tc {

struct row_columns {
    using column = sst::column<int64_t>;

    column sent, received, published, delivered, phase, epoch, heartbeat, suspected, wedged,
            trim, admit, leaving, trim_epoch, done, join_req, rdv_addr;

    /* In this order: pushes of adjacent ranges depend on it. */
    static row_columns lay_out(sst::layout &l, int senders, int members)
    {
        row_columns c;
        c.sent       = l.add<int64_t>();
        c.received   = l.add<int64_t>(senders);
        c.published  = l.add<int64_t>();
        c.delivered  = l.add<int64_t>();
        c.phase      = l.add<int64_t>();
        c.epoch      = l.add<int64_t>();
        c.heartbeat  = l.add<int64_t>();
        c.suspected  = l.add<int64_t>(member_mask::words_for(members));
        c.wedged     = l.add<int64_t>();
        c.trim       = l.add<int64_t>(senders);
        c.admit      = l.add<int64_t>();
        c.leaving    = l.add<int64_t>(member_mask::words_for(members));
        c.trim_epoch = l.add<int64_t>();
        c.done       = l.add<int64_t>();
        c.join_req   = l.add<int64_t>();
        c.rdv_addr   = l.add<int64_t>();
        return c;
    }

    bool is_counter(column c) const { return c.offset >= sent.offset && c.offset < phase.offset; }
};

} // namespace tc
