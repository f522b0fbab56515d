/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The slot sender::get_buffer() handed the application to fill, until its
 * commit() or drop_held_buffer(): a reserved index that nothing later may
 * be pushed past.
 */
#pragma once

#include <cstddef>
#include <cstdint>

namespace tc {
namespace smc {

struct held_buffer {
    int64_t index = -1;   /* -1: none held */
    size_t  size  = 0;
};

} // namespace smc
} // namespace tc
