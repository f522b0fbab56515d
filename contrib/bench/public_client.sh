#!/usr/bin/env bash
#
# The public Two-Chains benchmark client against our implementation of its
# API: openucx/ucx-two-chains (branch ifunc_put) contrib/ifunc/test_ifunc.cpp
# with its ifuncs b.c and hello.c, built UNCHANGED the way
# docs/two-chains.md ("The public Two-Chains ifunc API") says a user builds
# them, then run as its author runs it: a server and a client on localhost,
# pinned to cores 0 and 1. It shows that a program written for the public API
# compiles, links and runs on ours, and what it measures there: its
# back-to-back throughput sweep (1 B - 1 MiB into a ring of slots, messages/s)
# and its ping-pong (the time it prints is T / n_iters, a full round trip).
#
# The public files are not part of this tree and this script downloads
# nothing: fetch test_ifunc.cpp, b.c and hello.c from
# https://github.com/openucx/ucx-two-chains (branch ifunc_put, contrib/ifunc/)
# into a directory and name it in PUBLIC_IFUNC_SRC.
#
#   PUBLIC_IFUNC_SRC=/tmp/pubclient contrib/bench/public_client.sh > out.jsonl
#
# Environment: PUBLIC_IFUNC_SRC (required), TC_BUILD (default <top>/build),
# UCX_TLS (default posix,self), TC_PUBLIC_TIMEOUT (seconds per side, default
# 900), TC_PUBLIC_LOGS (a directory to keep both sides' output in).
#
# Output, one JSON object per point of the client's output:
#   {"shape":"public_client_rate","bytes":N,"frame_bytes":F,"msg_rate":R}
#   {"shape":"public_client_pingpong","bytes":N,"frame_bytes":F,"rtt_us":T,"lat_us":T/2}
# Exits 77 without the sources, non-zero if either side fails (an assert
# abort, a non-zero exit or the timeout). The client's port is fixed (13337)
# in test_ifunc.cpp, so one run at a time.
#
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${TC_BUILD:-$top/build}
src=${PUBLIC_IFUNC_SRC:-}
tls=${UCX_TLS:-posix,self}
tmo=${TC_PUBLIC_TIMEOUT:-900}
port=13337

if [ -z "$src" ] || ! [ -f "$src/test_ifunc.cpp" ] || ! [ -f "$src/b.c" ] ||
        ! [ -f "$src/hello.c" ]; then
    cat >&2 <<EOF
$0: set PUBLIC_IFUNC_SRC to a directory holding test_ifunc.cpp, b.c and
hello.c from https://github.com/openucx/ucx-two-chains (branch ifunc_put,
contrib/ifunc/), e.g.
  git clone -b ifunc_put --depth 1 https://github.com/openucx/ucx-two-chains
  PUBLIC_IFUNC_SRC=ucx-two-chains/contrib/ifunc $0
EOF
    exit 77
fi

mk() { sed -n "s/^$1 = //p" "$build/test/Makefile"; }
cxx=$(mk CXX); cxx=${cxx:-c++}
read -r -a ucx <<<"$(mk UCX_CPPFLAGS) $(mk UCX_LDFLAGS) $(mk UCX_LIBS)"

work=$(mktemp -d /tmp/tc-public-client.XXXXXX)
server='' client=''
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
    [ -z "$server" ] || kill "$server" 2>/dev/null || true
    [ -z "$client" ] || kill "$client" 2>/dev/null || true
    if [ -n "${TC_PUBLIC_LOGS:-}" ]; then
        mkdir -p "$TC_PUBLIC_LOGS"
        cp "$work"/*.log "$TC_PUBLIC_LOGS"/ 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# the sources as published, copied so nothing is built in the source dir
cp "$src/test_ifunc.cpp" "$src/b.c" "$src/hello.c" "$work/"

# the documented commands: one package per ifunc source, the program with
# -include twochains/ucp_ifunc.h (no -DNDEBUG: its checks are assert()s)
nice -n 10 "$build/toolchain/twochains-pkg" ifunc "$work/b.c" "$work/hello.c" \
    --prefix "$work/lib" >"$work/pkg.log" 2>&1 ||
    { cat "$work/pkg.log" >&2; echo "FAIL: twochains-pkg ifunc" >&2; exit 1; }
nice -n 10 "$cxx" -std=c++17 -O3 -include twochains/ucp_ifunc.h \
    -I"$top/ucx_ext/api" -I"$build/ucx_ext/api" "$work/test_ifunc.cpp" \
    -o "$work/test_ifunc" -L"$build/ucx_ext/.libs" \
    -Wl,-rpath,"$build/ucx_ext/.libs" -ltwochains "${ucx[@]}" \
    >"$work/build.log" 2>&1 ||
    { cat "$work/build.log" >&2; echo "FAIL: building test_ifunc.cpp" >&2; exit 1; }

if [ -n "$(ss -Hltn "sport = :$port" 2>/dev/null)" ]; then
    echo "FAIL: port $port (fixed in test_ifunc.cpp) is in use" >&2; exit 1
fi

# the server binds in main() after mapping and clearing its 2 GiB heap; the
# client asserts on a refused connect, so wait for the listening socket
export UCX_TLS=$tls UCX_IFUNC_LIB_DIR=$work/lib
cd "$work"
timeout "$tmo" taskset -c 0 stdbuf -oL ./test_ifunc >server.log 2>&1 &
server=$!
for _ in $(seq 300); do
    [ -z "$(ss -Hltn "sport = :$port" 2>/dev/null)" ] || break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
done
timeout "$tmo" taskset -c 1 stdbuf -oL ./test_ifunc localhost >client.log 2>&1 &
client=$!

# a side that dies leaves the other spinning on a flag or a poll until its
# timeout: stop the survivor of a failure at once
while kill -0 "$client" 2>/dev/null && kill -0 "$server" 2>/dev/null; do
    sleep 0.5
done
crc=0 srv=0
if ! kill -0 "$client" 2>/dev/null; then
    wait "$client" || crc=$?
    [ "$crc" = 0 ] || kill "$server" 2>/dev/null || true
    wait "$server" || srv=$?
else
    wait "$server" || srv=$?
    [ "$srv" = 0 ] || kill "$client" 2>/dev/null || true
    wait "$client" || crc=$?
fi
client='' server=''

# the client's lines: "      N(      F): R messages/s" and "      N(      F): T us"
awk '
    /^ *[0-9]+\( *[0-9]+\): [0-9.e+-]+ messages\/s$/ {
        split($0, a, /[(): ]+/); n = 0
        for (i = 1; i in a; i++) if (a[i] != "") v[++n] = a[i]
        printf "{\"shape\":\"public_client_rate\",\"bytes\":%d,\"frame_bytes\":%d,\"msg_rate\":%.4g}\n", v[1], v[2], v[3]
    }
    /^ *[0-9]+\( *[0-9]+\): [0-9.e+-]+ us$/ {
        split($0, a, /[(): ]+/); n = 0
        for (i = 1; i in a; i++) if (a[i] != "") v[++n] = a[i]
        printf "{\"shape\":\"public_client_pingpong\",\"bytes\":%d,\"frame_bytes\":%d,\"rtt_us\":%.4g,\"lat_us\":%.4g}\n", v[1], v[2], v[3], v[3] / 2
    }' client.log

rejects=$(cat server.log client.log | grep -c 'rejected frame' || true)
status=0
if [ "$crc" != 0 ] || [ "$srv" != 0 ]; then
    status=1
    echo "FAIL: client exit $crc, server exit $srv over $tls (124: timeout, 134: abort)" >&2
    echo "--- server" >&2; tail -n 20 server.log >&2
    echo "--- client" >&2; tail -n 20 client.log >&2
fi
n=$(grep -Ec ' (messages/s|us)$' client.log || true)
[ "$n" = 42 ] || { status=1; echo "FAIL: $n of 42 client points over $tls" >&2; }
[ "$rejects" = 0 ] || echo "note: $rejects 'rejected frame' lines logged" >&2
grep -E 'UCX +(WARN|ERROR|FATAL)' server.log client.log >&2 || true
exit "$status"
