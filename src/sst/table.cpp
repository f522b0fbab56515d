/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 */
#include "sst/table.hpp"

#include <algorithm>

namespace tc::sst {

ucs_status_t table::create(ucp_node &node, std::span<const int> members, const layout &l,
                           std::unique_ptr<table> &out)
{
    out.reset();
    std::unique_ptr<mirrored_region> region;
    /* row m is member m's part: its rkey goes to m alone */
    std::vector<int> owners(members.size());
    for (size_t m = 0; m < owners.size(); ++m) {
        owners[m] = static_cast<int>(m);
    }
    ucs_status_t status = mirrored_region::create(node, members, l.row_bytes(), owners, region);
    if (status != UCS_OK || !region) {
        return status;
    }
    auto t        = std::make_unique<table>();
    t->region_    = std::move(region);
    t->row_bytes_ = l.row_bytes();
    t->rows_      = t->region_->parts();
    out           = std::move(t);
    return UCS_OK;
}

ucs_status_t table::push_bytes(pusher &p, size_t offset, size_t len, put_purpose purpose) const
{
    return region_->push_all(p, my_index(), offset, len, purpose);
}

int predicates::add(std::function<bool()> predicate, std::function<unsigned()> trigger, kind k)
{
    entries_.push_back({next_id_, std::move(predicate), std::move(trigger), k, true});
    return next_id_++;
}

void predicates::remove(int id)
{
    for (auto &e : entries_) {
        if (e.id == id) {
            e.live = false;  /* erased after evaluation: we may be inside it */
            dirty_ = true;
        }
    }
}

unsigned predicates::evaluate()
{
    unsigned events = 0;
    /* index loop: a trigger may add predicates (deque: references stay valid) */
    for (size_t i = 0; i < entries_.size(); ++i) {
        entry &e = entries_[i];
        if (!e.live || !e.predicate()) {
            continue;
        }
        if (e.k == kind::one_time) {
            e.live = false;
            dirty_ = true;
        }
        events += e.trigger();
    }
    if (dirty_) {
        std::erase_if(entries_, [](const entry &e) { return !e.live; });
        dirty_ = false;
    }
    return events;
}

} // namespace tc::sst
