#!/usr/bin/env bash
# The house's rooms: the include graph of ucx_ext/ and src/ has no cycle
# and no include runs back up the order of contrib/rooms.txt
# (contrib/check-rooms.py); the runtime, ucx_ext/, includes nothing of the
# replication layer above it; and no product file is over 800 lines, no
# class over 40 members (contrib/check-sizes.py).
set -euo pipefail
: "${TC_SRCDIR:?}"
python3 "$TC_SRCDIR/contrib/check-rooms.py" --under ucx_ext "$TC_SRCDIR"
python3 "$TC_SRCDIR/contrib/check-rooms.py" "$TC_SRCDIR"
python3 "$TC_SRCDIR/contrib/check-sizes.py" "$TC_SRCDIR"
