/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * `twochains-pkg inspect` and `twochains-pkg verify`.
 */
#pragma once

#include <string>

namespace tc::pkg {

/* Print a manifest, a package directory or a jam file. Returns exit code. */
int package_inspect(const std::string &path);

/* Re-check an installed package; prints every problem. Returns exit code. */
int package_verify(const std::string &path);

} // namespace tc::pkg
