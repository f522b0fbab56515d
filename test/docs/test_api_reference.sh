#!/usr/bin/env bash
#
# The API reference builds from the public headers (docs/Doxyfile, what
# `make docs` runs) and documents the public entry points of each subsystem.
set -uo pipefail
src=${TC_SRCDIR:?TC_SRCDIR: the source tree}
build=${TC_BUILDDIR:?TC_BUILDDIR: the build tree}
doxygen=$(command -v doxygen) || {
    echo "FAIL: doxygen is missing (contrib/setup-deps.sh installs it)"; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if ! (cd "$src" && TC_DOCS_OUT=$out TC_VERSION=test TC_BUILD_API=$build/ucx_ext/api \
        "$doxygen" docs/Doxyfile) >"$out/doxygen.log" 2>&1; then
    echo "FAIL: doxygen failed:"; cat "$out/doxygen.log"; exit 1
fi
missing=0
for symbol in ucp_register_ifunc ucp_ifunc_send_nbix ucp_poll_ifunc tc_ifunc_mailbox_create \
              tc_progress_until tc_bootstrap_create tc_group_create tc_group_join \
              tc_put_lane_describe tc_group_send_jam tc_ifunc_exec_run; do
    if ! grep -rqs "$symbol" "$out/html/globals.html" "$out/html/globals_func.html"; then
        echo "  $symbol is not in the reference"; missing=$((missing + 1))
    fi
done
[ -f "$out/html/classtc_1_1group.html" ] || { echo "  tc::group (group.hpp) is not in the reference"; missing=$((missing + 1)); }
[ "$missing" -eq 0 ] || { echo "FAIL: $missing entry points missing from the API reference"; exit 1; }
echo "PASS: API reference built ($(ls "$out/html" | wc -l) pages), public entry points documented"
