#!/bin/bash
#
# Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
#
# An emulated cluster on one machine: N hosts, each a network namespace
# with one veth ("eth0", 10.77.0.<i+1>/24) into a bridge that lives in a
# namespace of its own, so no interface or address appears in the
# machine's own namespace. Each host's egress is rate-limited with
# `tc qdisc ... tbf` (netem is not available here). The command runs once
# per host through `twochains-run --netns`, over UCX_TLS=tcp,self on eth0.
# Everything is torn down on exit, also on failure or Ctrl-C.
#
#   contrib/cluster/cluster.sh [-n N] [-r RATE] [--launcher PATH] [--timeout S] \
#                              [--check] -- CMD [ARGS...]
#
#   -n N          hosts (default 4, 1..200)
#   -r RATE       egress rate per host, as tc writes it (default 1gbit)
#   --launcher P  twochains-run to use (default: next to this build, or $PATH)
#   --timeout S   passed to twochains-run (default 600)
#   --check       only check that namespaces, veth, bridges and tbf work here;
#                 exit 0 if so, 77 (skip) with the reason if not
#
# Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN for `ip netns`). Exit status:
# the command's, 77 when the machine cannot make namespaces, 2 on usage.

set -u

N=4
RATE=1gbit
TIMEOUT=600
LAUNCHER=""
CHECK_ONLY=0
PREFIX="tcc$$h"          # hosts: tcc<pid>h0 ..; the switch: tcc<pid>sw
SWITCH="tcc$$sw"
SUBNET=10.77.0

usage() {
    sed -n '/^#   contrib/,/^# the command/p' "$0" | sed 's/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
    case "$1" in
    -n) N="$2"; shift 2 ;;
    -r) RATE="$2"; shift 2 ;;
    --launcher) LAUNCHER="$2"; shift 2 ;;
    --timeout) TIMEOUT="$2"; shift 2 ;;
    --check) CHECK_ONLY=1; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    *) break ;;
    esac
done
if ! [[ "$N" =~ ^[0-9]+$ ]] || [ "$N" -lt 1 ] || [ "$N" -gt 200 ]; then
    echo "cluster: -n needs 1..200 hosts" >&2; exit 2
fi
if [ $CHECK_ONLY -eq 0 ] && [ $# -eq 0 ]; then
    echo "cluster: no command given" >&2; usage >&2; exit 2
fi

skip() { echo "cluster: SKIP: $*" >&2; exit 77; }

[ "$(id -u)" -eq 0 ] || skip "needs root for network namespaces"
command -v ip >/dev/null || skip "no 'ip' (iproute2)"
command -v tc >/dev/null || skip "no 'tc' (iproute2)"

CREATED=()
LAUNCHER_PID=""
cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    local ns pid
    if [ -n "$LAUNCHER_PID" ]; then
        kill -TERM "$LAUNCHER_PID" 2>/dev/null   # it stops its ranks
        sleep 0.5
        kill -KILL "$LAUNCHER_PID" 2>/dev/null
    fi
    for ns in "${CREATED[@]}"; do
        # processes still inside our namespaces are ours (started below)
        for pid in $(ip netns pids "$ns" 2>/dev/null); do
            kill -KILL "$pid" 2>/dev/null
        done
        ip netns del "$ns" 2>/dev/null
    done
    exit $rc
}
trap cleanup EXIT
trap 'echo "cluster: interrupted, tearing down" >&2; exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

mkns() {
    ip netns add "$1" 2>/dev/null || return 1
    CREATED+=("$1")
    ip -n "$1" link set lo up
}

mkns "$SWITCH" || skip "cannot create network namespaces here"
ip -n "$SWITCH" link add br0 type bridge 2>/dev/null || skip "no bridge support in this kernel"
ip -n "$SWITCH" link set br0 up
for ((i = 0; i < N; i++)); do
    host="$PREFIX$i"
    mkns "$host" || { echo "cluster: cannot create namespace $host" >&2; exit 1; }
    ip -n "$SWITCH" link add "p$i" type veth peer name eth0 netns "$host" 2>/dev/null ||
        skip "no veth support in this kernel"
    ip -n "$SWITCH" link set "p$i" master br0 up
    ip -n "$host" addr add "$SUBNET.$((i + 1))/24" dev eth0
    ip -n "$host" link set eth0 up
    # egress of the host: a token bucket at RATE (burst ~ 2 ms at 1 Gbit/s)
    ip netns exec "$host" tc qdisc add dev eth0 root tbf rate "$RATE" burst 256kb \
        latency 100ms 2>/dev/null || skip "tc tbf does not work here"
done

if [ $CHECK_ONLY -eq 1 ]; then
    echo "cluster: $N hosts (${PREFIX}0..), bridge in $SWITCH, egress $RATE each: ok"
    exit 0
fi

if [ -z "$LAUNCHER" ]; then
    here="$(cd "$(dirname "$0")/../.." && pwd)"
    for cand in "${TC_BUILDDIR:-}/src/tools/twochains-run" "$here/build/src/tools/twochains-run"; do
        [ -x "$cand" ] && LAUNCHER="$cand" && break
    done
    [ -z "$LAUNCHER" ] && LAUNCHER="$(command -v twochains-run || true)"
fi
[ -x "$LAUNCHER" ] || { echo "cluster: twochains-run not found (use --launcher)" >&2; exit 2; }

echo "cluster: $N hosts, egress $RATE each, $SUBNET.1-$N on eth0; running: $*" >&2
UCX_TLS=tcp,self UCX_NET_DEVICES=eth0 "$LAUNCHER" -n "$N" --netns "$PREFIX" \
    --timeout "$TIMEOUT" -- "$@" &
LAUNCHER_PID=$!
wait "$LAUNCHER_PID"
rc=$?
LAUNCHER_PID=""
exit $rc
