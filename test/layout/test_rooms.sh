#!/usr/bin/env bash
# The house's rooms: the include graph of ucx_ext/ and src/ has no cycle
# and no include runs back up the order of contrib/rooms.txt
# (contrib/check-rooms.py); the runtime, ucx_ext/, includes nothing of the
# replication layer above it.
set -euo pipefail
: "${TC_SRCDIR:?}"
python3 "$TC_SRCDIR/contrib/check-rooms.py" --under ucx_ext "$TC_SRCDIR"
python3 "$TC_SRCDIR/contrib/check-rooms.py" "$TC_SRCDIR"
