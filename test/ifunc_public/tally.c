/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * tally: an ifunc in the style of the public Two-Chains API with no
 * external symbol at all (it links to an empty GOT table, also where the
 * receiver does not have it installed, in trust mode). It checks every
 * payload byte against the sweep's pattern and counts into the receiver's
 * target arguments.
 */
#include <stddef.h>
#include <stdint.h>

#include "sweep_pattern.h"

size_t tally_payload_get_max_size(void *source_args, size_t source_args_size)
{
    (void)source_args;
    return source_args_size;     /* the sweep passes the payload size */
}

int tally_payload_init(void *payload, size_t payload_size, void *source_args,
                       size_t source_args_size)
{
    (void)source_args;
    (void)source_args_size;
    sweep_fill(payload, payload_size);
    return 0;
}

void tally_main(void *payload, size_t payload_size, void *target_args)
{
    sweep_target_t *t = target_args;

    t->bad   += sweep_mismatches(payload, payload_size);
    t->bytes += payload_size;
    ++t->runs;
}
