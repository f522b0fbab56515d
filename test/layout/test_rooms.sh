#!/usr/bin/env bash
# The house's rooms: the include graph has no cycle and no include runs back
# up the order of contrib/rooms.txt (contrib/check-rooms.py). The runtime,
# ucx_ext/, is checked whole; src/ joins once its ground floor is in place
# (docs/design.md).
set -euo pipefail
: "${TC_SRCDIR:?}"
exec python3 "$TC_SRCDIR/contrib/check-rooms.py" --under ucx_ext "$TC_SRCDIR"
