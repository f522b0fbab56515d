/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Our own SST row, written as a buggy or hostile member would: for the
 * hostile-member tests (test/helpers/group_fault_probe.cc), which need a
 * member that writes values the protocol never writes, through the lane it
 * really has. A member may write its own row at any time, so nothing here
 * reaches memory a member could not write anyway: the value lands in our
 * row and goes out with an ordinary push of its column.
 *
 * Not part of the installed API.
 */
#pragma once

#include "api/group.hpp"

#include <string_view>
#include <vector>

namespace tc::fault_injection {

struct row_column {
    std::string_view name;
    size_t           entries;
};

/* The columns of the row of @a g's current view (core/row.hpp). */
std::vector<row_column> own_row_columns(group &g);

/* Entry @a entry of column @a name of our row := @a value, pushed to every
 * member of the view. UCS_ERR_INVALID_PARAM for a column or entry the row
 * does not have. */
ucs_status_t write_own_row(group &g, std::string_view name, size_t entry, int64_t value);

/* Our own RDMC control word @a which ("offer", "ready", "arrived") for
 * root row @a root := @a value, at every member, and kept so
 * (rdmc::fault_injection::keep_own_control_word). UCS_ERR_UNSUPPORTED in a
 * group without RDMC. */
ucs_status_t keep_own_rdmc_word(group &g, std::string_view which, int root, int64_t value);

} // namespace tc::fault_injection
