/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Who takes over when a view retires. A view that admitted a joiner, or
 * was rebuilt over the survivors, is a new group_impl; the old one hands
 * it to its owner (the facade, api/group.hpp), which keeps the old one
 * retired and moves calls to the new. The view knows its owner only by
 * this interface: the facade sits above it.
 */
#pragma once

#include <memory>

namespace tc {

class group_impl;

class view_owner {
public:
    virtual void replace(std::unique_ptr<group_impl> next) = 0;

protected:
    ~view_owner() = default;
};

} // namespace tc
