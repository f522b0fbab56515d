/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The SST: a table with one row per member, mirrored at every member by
 * one-sided puts. Columns are typed (any trivially copyable T, `count`
 * entries each) and laid out at creation, so that a protocol whose width
 * depends on the view (one counter per sender) still gets named columns.
 * A member writes only its own row and pushes byte ranges of it: one column,
 * or a run of adjacent columns in one put. Each row is a registration of
 * its own whose rkey only its member holds (sst/region.hpp), so a member
 * can put into its own row at its peers and nowhere else.
 *
 * Reads of peers' rows are racy by design (peers overwrite them at any time):
 * 8-byte columns are read with one atomic load, so each value is one that a
 * peer wrote; protocols built on the SST use monotone counters.
 *
 * Threads: confined to the thread that drives the node's progress engine.
 */
#pragma once

#include "sst/region.hpp"

#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

namespace tc::sst {

template<class T> struct column {
    size_t offset = 0;  /* bytes from the start of a row */
    size_t count  = 0;  /* entries */
    size_t end() const { return offset + count * sizeof(T); }
};

class layout {
public:
    template<class T> column<T> add(size_t count = 1)
    {
        static_assert(std::is_trivially_copyable_v<T>, "SST columns are copied by puts");
        size_t align = std::max<size_t>(alignof(T), 8);
        bytes_       = (bytes_ + align - 1) & ~(align - 1);
        column<T> c{bytes_, count};
        bytes_ += count * sizeof(T);
        return c;
    }
    /* rows are cache-line aligned so that members' rows never share a line */
    size_t row_bytes() const { return (bytes_ + 63) & ~size_t(63); }

private:
    size_t bytes_ = 0;
};

class table {
public:
    /* Collective over the node's bootstrap; @a out stays empty off-group. */
    static ucs_status_t create(ucp_node &node, std::span<const int> members, const layout &l,
                               std::unique_ptr<table> &out);

    int member_count() const { return region_->member_count(); }
    void set_active(std::vector<bool> active) { region_->set_active(std::move(active)); }
    int my_index() const { return region_->my_index(); }
    const mirrored_region &region() const { return *region_; }

    template<class T> T get(int member, column<T> c, size_t i = 0) const
    {
        const std::byte *p = cell(member, c, i);
        if constexpr (sizeof(T) == 8 && std::is_integral_v<T>) {
            return __atomic_load_n(reinterpret_cast<const T*>(p), __ATOMIC_ACQUIRE);
        } else {
            T v;
            std::memcpy(&v, p, sizeof(T));
            return v;
        }
    }

    /* where a cell lives, for a watcher that compares raw words */
    template<class T> const T *address(int member, column<T> c, size_t i = 0) const
    {
        return reinterpret_cast<const T*>(cell(member, c, i));
    }

    template<class T> void set(column<T> c, size_t i, T v)
    {
        std::byte *p = cell(my_index(), c, i);
        if constexpr (sizeof(T) == 8 && std::is_integral_v<T>) {
            __atomic_store_n(reinterpret_cast<T*>(p), v, __ATOMIC_RELEASE);
        } else {
            std::memcpy(p, &v, sizeof(T));
        }
    }

    template<class T> T min_over_members(column<T> c, size_t i = 0) const
    {
        T m = get(0, c, i);
        for (int r = 1; r < member_count(); ++r) {
            m = std::min(m, get(r, c, i));
        }
        return m;
    }

    /* Push our row's columns first..last (adjacent in layout order) to every
     * peer as one put each. */
    template<class A, class B>
    ucs_status_t push(pusher &p, column<A> first, column<B> last, put_purpose purpose) const
    {
        return push_bytes(p, first.offset, last.end() - first.offset, purpose);
    }

    template<class T> ucs_status_t push(pusher &p, column<T> c, put_purpose purpose) const
    {
        return push(p, c, c, purpose);
    }

private:
    template<class T> std::byte *cell(int member, column<T> c, size_t i) const
    {
        return rows_[member] + c.offset + i * sizeof(T);
    }

    ucs_status_t push_bytes(pusher &p, size_t offset, size_t len, put_purpose purpose) const;

    std::unique_ptr<mirrored_region> region_;
    std::byte *const                 *rows_     = nullptr;   /* region_'s parts: row m */
    size_t                           row_bytes_ = 0;
};

/*
 * Derecho's predicate/trigger pairs: "when this condition holds, do that".
 * The owner evaluates them from its poller on the progress engine, in the
 * order they were added; a trigger returns how many events it handled.
 */
class predicates {
public:
    enum class kind { recurrent, one_time };

    int add(std::function<bool()> predicate, std::function<unsigned()> trigger,
            kind k = kind::recurrent);
    void remove(int id);
    unsigned evaluate();

private:
    struct entry {
        int                       id;
        std::function<bool()>     predicate;
        std::function<unsigned()> trigger;
        kind                      k;
        bool                      live;
    };
    std::deque<entry> entries_;  /* push_back keeps references: triggers may add */
    int               next_id_ = 0;
    bool              dirty_   = false;
};

} // namespace tc::sst
