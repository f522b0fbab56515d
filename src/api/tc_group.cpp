/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The C API over tc::ucp_node and tc::group. No exception crosses it: a
 * failed allocation becomes UCS_ERR_NO_MEMORY.
 */
#include "api/group.hpp"

#include <twochains/group.h>

#include <ucs/debug/log_def.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

struct tc_node {
    tc::ucp_node node;
    explicit tc_node(tc_bootstrap_h boot) : node(boot) {}
};

struct tc_group {
    std::unique_ptr<tc::group> group;
};

namespace {

/* C descriptors of a span go out in chunks of this many, built on the stack */
constexpr size_t kSpanChunk = 64;

tc::group_params to_cpp(const tc_group_params_t &c)
{
    tc::group_params p;
    if (c.members != nullptr && c.member_count > 0) {
        p.members.assign(c.members, c.members + c.member_count);
    }
    if (c.senders != nullptr) {
        p.senders.assign(c.senders, c.senders + c.sender_count);
    }
    p.max_payload      = c.max_payload;
    p.window           = c.window;
    p.mode             = c.unordered ? tc::delivery_mode::raw : tc::delivery_mode::ordered;
    p.rdmc_max_message = c.rdmc_max_message;
    p.join_port        = c.join_port;
    if (c.deliver != nullptr) {
        auto cb  = c.deliver;
        auto arg = c.deliver_arg;
        p.on_deliver = [cb, arg](const tc::message &m) {
            tc_group_message_t cm{m.sender, m.index, m.seq, m.data.data(), m.data.size()};
            cb(&cm, arg);
        };
    }
    if (c.deliver_span != nullptr) {
        auto cb  = c.deliver_span;
        auto arg = c.deliver_arg;
        p.on_deliver_span = [cb, arg](std::span<const tc::message> msgs) {
            tc_group_message_t cm[kSpanChunk];
            size_t n = 0;
            for (const auto &m : msgs) {
                cm[n++] = {m.sender, m.index, m.seq, m.data.data(), m.data.size()};
                if (n == kSpanChunk) {
                    cb(cm, n, arg);
                    n = 0;
                }
            }
            if (n != 0) {
                cb(cm, n, arg);
            }
        };
    }
    if (c.get_state != nullptr) {
        auto cb  = c.get_state;
        auto arg = c.state_arg;
        p.get_state = [cb, arg] {
            void *data  = nullptr;
            size_t size = 0;
            std::vector<std::byte> state;
            if (cb(&data, &size, arg) == UCS_OK && data != nullptr) {
                state.assign(static_cast<std::byte*>(data), static_cast<std::byte*>(data) + size);
            }
            std::free(data);
            return state;
        };
    }
    p.jam_state = {static_cast<std::byte*>(c.jam_state),
                   (c.jam_state != nullptr) ? c.jam_state_size : 0};
    p.jam_mode  = c.jam_mode;
    if (c.jam_packages != nullptr && c.jam_package_count > 0) {
        p.jam_packages.assign(c.jam_packages, c.jam_packages + c.jam_package_count);
    }
    if (c.jam_ran != nullptr) {
        auto cb  = c.jam_ran;
        auto arg = c.jam_arg;
        p.on_jam = [cb, arg](const tc::jam_event &e) {
            const tc_group_jam_event_t ce{e.sender, e.index, e.seq, e.view, e.pkg_id,
                                          e.element, e.payload.data(), e.payload.size(),
                                          e.status, e.reject};
            cb(&ce, arg);
        };
    }
    if (c.set_state != nullptr) {
        auto cb  = c.set_state;
        auto arg = c.state_arg;
        p.set_state = [cb, arg](std::span<const std::byte> s) { cb(s.data(), s.size(), arg); };
    }
    return p;
}

template<class F> ucs_status_t no_throw(F &&f)
{
    try {
        return f();
    } catch (const std::bad_alloc &) {
        ucs_error("out of memory");
        return UCS_ERR_NO_MEMORY;
    } catch (const std::exception &e) {
        ucs_error("unexpected error: %s", e.what());
        return UCS_ERR_IO_ERROR;
    }
}

ucs_status_t send_copy(tc_group_h g, const void *data, size_t size, bool block)
{
    if (g == nullptr || (data == nullptr && size != 0)) {
        ucs_error("tc_group_send: NULL group or data");
        return UCS_ERR_INVALID_PARAM;
    }
    return no_throw([&] {
        return g->group->send(size, [&](std::span<std::byte> buf) {
            std::memcpy(buf.data(), data, size);
        }, block);
    });
}

} // namespace

extern "C" {

ucs_status_t tc_node_create(tc_bootstrap_h boot, tc_node_h *node_p)
{
    return no_throw([&] {
        auto node = std::make_unique<tc_node>(boot);
        if (node->node.status() != UCS_OK) {
            return node->node.status();
        }
        *node_p = node.release();
        return UCS_OK;
    });
}

void tc_node_destroy(tc_node_h node)
{
    delete node;  /* owned since tc_node_create released it to the C caller */
}

tc_progress_engine_h tc_node_engine(tc_node_h node)
{
    return node->node.engine();
}

ucs_status_t tc_group_create(tc_node_h node, const tc_group_params_t *params, tc_group_h *group_p)
{
    if (node == nullptr || params == nullptr || group_p == nullptr || params->members == nullptr ||
        params->member_count <= 0) {
        ucs_error("tc_group_create: invalid arguments");
        return UCS_ERR_INVALID_PARAM;
    }
    return no_throw([&] {
        tc::group_params p = to_cpp(*params);
        auto handle = std::make_unique<tc_group>();
        ucs_status_t status = tc::group::create(node->node, p, handle->group);
        if (status != UCS_OK) {
            return status;
        }
        *group_p = handle->group ? handle.release() : nullptr;
        return UCS_OK;
    });
}

ucs_status_t tc_group_join(tc_node_h node, const tc_group_params_t *params,
                           const char *contact, tc_group_h *group_p)
{
    if (node == nullptr || params == nullptr || contact == nullptr || group_p == nullptr) {
        ucs_error("tc_group_join: invalid arguments");
        return UCS_ERR_INVALID_PARAM;
    }
    return no_throw([&] {
        auto handle = std::make_unique<tc_group>();
        ucs_status_t status = tc::group::join(node->node, to_cpp(*params), contact,
                                              handle->group);
        if (status == UCS_OK) {
            *group_p = handle.release();
        }
        return status;
    });
}

ucs_status_t tc_group_send(tc_group_h group, const void *data, size_t size)
{
    return send_copy(group, data, size, true);
}

ucs_status_t tc_group_send_nb(tc_group_h group, const void *data, size_t size)
{
    return send_copy(group, data, size, false);
}

ucs_status_t tc_group_send_jam(tc_group_h group, tc_ifunc_pkg_h package, uint32_t element,
                               void *source_args, size_t size)
{
    if (group == nullptr || package == nullptr || (source_args == nullptr && size != 0)) {
        ucs_error("tc_group_send_jam: NULL group, package or source arguments");
        return UCS_ERR_INVALID_PARAM;
    }
    return no_throw([&] { return group->group->send_jam(package, element, source_args, size); });
}

void tc_group_jam_stats_get(tc_group_h group, tc_group_jam_stats_t *stats)
{
    const tc::group_stats s = group->group->stats();
    *stats = {s.jams_sent, s.jam_codes_sent, s.jams_run, s.jam_errors, s.jam_rejects,
              group->group->has_left()};
}

ucs_status_t tc_group_flush(tc_group_h group)
{
    return group->group->flush();
}

ucs_status_t tc_group_close(tc_group_h group)
{
    return no_throw([&] { return group->group->close(); });
}

void tc_group_destroy(tc_group_h group)
{
    delete group;  /* released to the C caller by tc_group_create */
}

uint64_t tc_group_delivered(tc_group_h group)
{
    return group->group->stats().delivered;
}

int64_t tc_group_view_get(tc_group_h group, int *members, int max_members, int *count_p)
{
    const tc::view &v = group->group->current_view();
    const int count   = static_cast<int>(v.members.size());
    if (members != nullptr) {
        std::copy_n(v.members.begin(), std::min(count, std::max(max_members, 0)), members);
    }
    if (count_p != nullptr) {
        *count_p = count;
    }
    return v.epoch;
}

} // extern "C"
