/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Application callbacks run on the engine's thread, inside UCX progress and
 * under the C API: an exception they throw must stop here. The one place
 * that contains them, for the group's delivery and RDMC's callbacks alike.
 */
#pragma once

#include <ucs/debug/log_def.h>

#include <exception>
#include <utility>

namespace tc {

/* Run @a callback. If it throws, the exception is contained: @a count_error
 * is called (it returns how many came before this one) and the first is
 * logged as "<who> threw (<what>); contained, <then>". */
template<class Callback, class Count>
void call_contained(const char *who, const char *then, Callback &&callback, Count &&count_error)
{
    const char *what = nullptr;
    try {
        std::forward<Callback>(callback)();
        return;
    } catch (const std::exception &e) {
        if (count_error() == 0) {
            ucs_warn("%s threw (%s); contained, %s", who, e.what(), then);
        }
        return;
    } catch (...) {
        what = "unknown exception";
    }
    if (count_error() == 0) {
        ucs_warn("%s threw (%s); contained, %s", who, what, then);
    }
}

} // namespace tc
