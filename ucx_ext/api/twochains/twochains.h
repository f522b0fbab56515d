/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Umbrella header for the Two-Chains UCX extension. Usable from C and C++.
 */
#ifndef TWOCHAINS_H_
#define TWOCHAINS_H_

#include <twochains/version.h>
#include <twochains/config.h>
#include <twochains/wait.h>
#include <twochains/progress.h>
#include <twochains/bootstrap.h>

#endif
