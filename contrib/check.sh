#!/usr/bin/env bash
#
# The README's test command: set up (Debian packages, build), run every test
# suite, and end with one summary line "N passed, N failed, N skipped" over
# all of them. Exits non-zero on any failure.
#
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=contrib/setup-deps.sh
source "$here/setup-deps.sh"

tc_install_packages
tc_build

cd "$TC_BUILD"
rc=0
make -j"$(nproc)" check || rc=$?

"$here/summarize-tests.sh" "$TC_BUILD" || rc=1
exit $rc
