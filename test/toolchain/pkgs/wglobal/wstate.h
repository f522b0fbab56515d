/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Test package wglobal: a jam with its own writable globals (a per-message
 * copy inside the span) next to receiver state in a ried (reached through
 * the GOT, persistent).
 */
#ifndef WSTATE_H_
#define WSTATE_H_

#include <stdint.h>

extern int64_t  wstate_seen[16];   /* one value per message */
extern uint64_t wstate_messages;   /* messages run so far */

#endif
