#!/usr/bin/env bash
#
# Before and after ucx_ext/ifunc and src/ moved into rooms, with the host's
# noise beside it: before (b9209c0), after, and after again (the A/A run),
# interleaved round by round by contrib/bench/builds_compare.sh --aa, posix,
# the ifunc shapes at its default iterations. Both trees built with
# contrib/setup-deps.sh and `make -C build perftest`.
#
#   run.sh BEFORE_BUILD AFTER_BUILD [ROUNDS]    (ROUNDS: 9)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
rounds=${3:-9}
shapes="ifunc_lat_local ifunc_lat_injected ifunc_lat_cached ifunc_bw_local
        ifunc_lat_public ifunc_bw_public ifunc_lat_portable-cached ifunc_bw_portable-cached
        smc_lat smc_bw smc_bw_batched rdmc_64k rdmc_4m"
"$top/contrib/bench/builds_compare.sh" "$1" "$2" --aa --rounds "$rounds" --shapes "$(echo $shapes)" \
    > "$here/points.r$rounds.jsonl" 2> "$here/summary.r$rounds.txt"
