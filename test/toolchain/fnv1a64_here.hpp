/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * FNV-1a 64 written out again for the tests of portable packages: the
 * tool's and the loader's own functions are what they test.
 */
#pragma once

#include <cstdint>
#include <string>

inline std::uint64_t fnv1a64_here(const std::string &bytes)
{
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : bytes) {
        h ^= c;
        h *= 0x100000001b3ULL;
    }
    return h;
}
