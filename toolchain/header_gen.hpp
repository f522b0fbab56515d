/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Generated C: the package header (<pkg>.h) and the element table source
 * compiled into the Local Function library.
 */
#pragma once

#include "util.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace tc::pkg {

struct header_element {
    std::uint32_t id;
    std::string   name;
    bool          has_init;
    bool          has_max_size;
    bool          public_api;   /* payload_init has the public argument order */
};

struct header_info {
    std::string                 package;
    std::uint64_t               build_id;
    target_arch                 arch;
    std::vector<header_element> elements;   /* by id */
    std::vector<std::string>    rieds;
};

std::string header_guard(const std::string &pkg);
std::string header_enum_name(const std::string &pkg, const std::string &jam);
std::string generate_package_header(const header_info &info);
std::string generate_element_table(const header_info &info);

} // namespace tc::pkg
