/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * See own_row_writer.hpp: a test's way to write its own row as a hostile
 * member would.
 */
#include "api/own_row_writer.hpp"

#include "group/group_impl.hpp"

#include <array>
#include <utility>

namespace tc {

struct fault_injection_access {
    static group_context &context(group &g) { return g.impl_->ctx_; }
    static large_messages &large(group &g) { return g.impl_->large_; }
};

} // namespace tc

namespace tc::fault_injection {

namespace {

using column = row_columns::column;

constexpr std::array<std::pair<std::string_view, column row_columns::*>, 16> named_columns{{
        {"sent", &row_columns::sent},
        {"received", &row_columns::received},
        {"published", &row_columns::published},
        {"delivered", &row_columns::delivered},
        {"phase", &row_columns::phase},
        {"epoch", &row_columns::epoch},
        {"heartbeat", &row_columns::heartbeat},
        {"suspected", &row_columns::suspected},
        {"wedged", &row_columns::wedged},
        {"trim", &row_columns::trim},
        {"admit", &row_columns::admit},
        {"leaving", &row_columns::leaving},
        {"trim_epoch", &row_columns::trim_epoch},
        {"done", &row_columns::done},
        {"join_req", &row_columns::join_req},
        {"rdv_addr", &row_columns::rdv_addr},
}};

} // namespace

std::vector<row_column> own_row_columns(group &g)
{
    const group_context &ctx = fault_injection_access::context(g);
    std::vector<row_column> out;
    for (const auto &[name, member] : named_columns) {
        out.push_back({name, (ctx.cols.*member).count});
    }
    return out;
}

ucs_status_t write_own_row(group &g, std::string_view name, size_t entry, int64_t value)
{
    group_context &ctx = fault_injection_access::context(g);
    for (const auto &[n, member] : named_columns) {
        const column c = ctx.cols.*member;
        if (n != name) {
            continue;
        }
        if (entry >= c.count) {
            return UCS_ERR_INVALID_PARAM;
        }
        ctx.set(c, value, entry);
        return ctx.push(c, sst::put_purpose::other);
    }
    return UCS_ERR_INVALID_PARAM;
}

ucs_status_t keep_own_rdmc_word(group &g, std::string_view which, int root, int64_t value)
{
    rdmc::engine *e = fault_injection_access::large(g).engine();
    if (e == nullptr) {
        return UCS_ERR_UNSUPPORTED;
    }
    return rdmc::fault_injection::keep_own_control_word(*e, which, root, value);
}

} // namespace tc::fault_injection
