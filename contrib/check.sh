#!/usr/bin/env bash
#
# The README's test command: set up (Debian packages, build), run every test
# suite, and end with one summary line "N passed, N failed, N skipped" over
# all of them. Exits non-zero on any failure.
#
#   contrib/check.sh                the suite on this machine as it is
#   contrib/check.sh --under-load   the same suite beside the CPU hog the
#                                   stress tests use (stress-ng --cpu 2
#                                   --cpu-load 60, test/stress/hog_lib.sh),
#                                   started before the first test and checked
#                                   to be alive after the last: a user's
#                                   machine is rarely idle
#
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
under_load=0
case "${1:-}" in
"") ;;
--under-load) under_load=1 ;;
*) echo "usage: $0 [--under-load]" >&2; exit 2 ;;
esac
# shellcheck source=contrib/setup-deps.sh
source "$here/setup-deps.sh"

tc_install_packages
tc_build

cd "$TC_BUILD"
rc=0
if [ "$under_load" = 1 ]; then
    # shellcheck source=test/stress/hog_lib.sh
    source "$TC_TOP/test/stress/hog_lib.sh"
    trap hog_stop EXIT
    make -j"$(nproc)" check TESTS= >/dev/null   # build first: the load is for the tests
    hog_start
    echo "check.sh: the suite runs beside stress-ng --cpu 2 --cpu-load 60 (pid $hog)"
fi
make -j"$(nproc)" check || rc=$?
if [ "$under_load" = 1 ]; then
    hog_alive
    echo "check.sh: stress-ng ran beside every test"
fi

"$here/summarize-tests.sh" "$TC_BUILD" || rc=1
exit $rc
