/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * SMC receive side: take new slots from every sender in its order, and
 * report what arrived (the receive report: received, published and
 * delivered, one put per peer).
 *
 * Invariants:
 *  - a slot is taken only if its header names the index we expect, its size
 *    fits, and a null run stays inside what the sender says it sent; anything
 *    else is a protocol error, logged once;
 *  - received[s] only grows within an epoch, and published is 1 + the
 *    highest sequence below which nothing is missing;
 *  - urgent mode reports every message at once; batched mode one report
 *    after consuming everything new, and an idle member pushes its delivered
 *    counter alone after kDeliveryReportIdleS.
 */
#pragma once

#include "group/context.hpp"

#include <vector>

namespace tc {

class delivery;
class large_messages;

namespace smc {

class receiver {
public:
    static constexpr int64_t kNotYet = -2;   /* consume(): RDMC data still on its way */

    receiver(group_context &ctx, delivery &deliver, large_messages &large);

    /* Counters restart at an epoch (set here, pushed by the caller). */
    void start_epoch();

    /* Take message @a index of view sender @a sender (or the null run that
     * starts there), of which @a sent are out; returns the next index, -1 on
     * a malformed slot, kNotYet while a large message's data is on its way. */
    int64_t consume(int sender, int64_t index, int64_t sent);

    bool new_messages() const;
    unsigned receive_new();

    ucs_status_t push_report(sst::put_purpose purpose);
    bool report_due() const { return report_due_; }
    void report_later() { report_due_ = true; }
    void note_delivered() { delivery_report_due_ = true; }
    bool delivery_report_due() const { return delivery_report_due_; }
    unsigned push_delivery_report_when_idle();

    int64_t received(int sender) const { return received_[sender]; }
    const std::vector<int64_t> &received() const { return received_; }
    bool is_null(int sender, int64_t index) const
    {
        return null_slot_[ctx_.map.sender_column(sender) * ctx_.settings.window +
                          index % ctx_.settings.window];
    }

private:
    /* An idle member pushes its delivered counter alone after this long. */
    static constexpr double kDeliveryReportIdleS = 20e-6;

    group_context        &ctx_;
    delivery             &deliver_;
    large_messages       &large_;
    std::vector<int64_t> received_;        /* by view sender: mirror of our row */
    std::vector<uint8_t> null_slot_;       /* [column][slot]: a null */
    bool                 report_due_          = false;
    bool                 delivery_report_due_ = false;
    double               last_report_s_       = 0;
    bool                 malformed_logged_    = false;
};

} // namespace smc
} // namespace tc
