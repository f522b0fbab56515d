/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Bitcode of a jam that a receiver must refuse to link, for ifunc_bad's
 * Portable cases: it names server_side_sum's entry but calls a function of
 * the process that is not on UCX_TC_IFUNC_PORTABLE_ALLOW (system), or, with
 * -DTC_UNRESOLVED, one that exists nowhere.
 */
#include <stddef.h>

#ifdef TC_UNRESOLVED
extern int tc_no_such_function_anywhere(const char *what);
#  define CALLED tc_no_such_function_anywhere
#else
extern int system(const char *command);
#  define CALLED system
#endif

void server_side_sum_main(void *payload, size_t payload_size, void *target_args)
{
    (void)payload_size;
    (void)target_args;
    CALLED((const char *)payload);
}
