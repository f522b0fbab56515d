#!/bin/bash
#
# Cut one host's link in the emulated cluster (contrib/cluster/cluster.sh):
# 4 hosts in network namespaces, UCX over tcp on their veths, every member
# sending through a replication group (test/helpers/group_fault_probe). Once all are
# running, host 2's eth0 goes down. The three others must install a view
# without it and report identical hash chains; host 2, cut off, is left in a
# minority and must stop with a clear error (the probe's exit status 3 is
# mapped to success so that the launcher does not stop the others).
# SKIPPED (exit 77, with the reason) where namespaces cannot be made.
set -u
: "${TC_SRCDIR:?}" "${TC_BUILDDIR:?}"
cluster="$TC_SRCDIR/contrib/cluster/cluster.sh"
"$cluster" -n 4 --check || exit $?

out=$(mktemp /tmp/tc-linkcut.XXXXXX)
trap 'rm -f "$out"' EXIT
export UCX_TC_SUSPECT_TIMEOUT=500ms UCX_TC_HEARTBEAT_INTERVAL=10ms \
       UCX_TC_BOOTSTRAP_TIMEOUT=5s
"$cluster" -n 4 -r 1gbit --timeout 60 --launcher "$TC_BUILDDIR/src/tools/twochains-run" -- \
    sh -c "\"$TC_BUILDDIR/test/helpers/group_fault_probe\" -c 6000 -r 4000; rc=\$?; [ \$rc -eq 3 ] && rc=0; exit \$rc" \
    > "$out" 2>&1 &
pid=$!

for _ in $(seq 1 500); do
    [ "$(grep -c '\] ready' "$out")" -ge 4 ] && break
    sleep 0.02
done
[ "$(grep -c '\] ready' "$out")" -ge 4 ] || { cat "$out"; echo "FAIL: hosts never got ready"; kill $pid; exit 1; }
sleep 0.3
# this run's cluster, not another test's: cluster.sh names its hosts after
# its own pid (tcc<pid>h<i>), and $pid is that process
ns=$(ip netns list | grep -o "tcc${pid}h2" | head -1)
[ -n "$ns" ] || { cat "$out"; echo "FAIL: host 2's namespace not found"; kill $pid; exit 1; }
ip -n "$ns" link set eth0 down
echo "cut: $ns eth0 down"
wait $pid
rc=$?
cat "$out"
[ $rc -eq 0 ] || { echo "FAIL: cluster run exited $rc"; exit 1; }

chains=$(grep -E '^\[[013]\] result chain' "$out" | grep -o 'chain [0-9a-f]* count [0-9]*' | sort -u | wc -l)
views=$(grep -E '^\[[013]\] view' "$out" | tail -3 | awk '{print $3, $4}' | sort -u)
survivors=$(grep -cE '^\[[013]\] result chain .* status Success' "$out")
[ "$survivors" -eq 3 ] || { echo "FAIL: $survivors of 3 survivors finished"; exit 1; }
[ "$chains" -eq 1 ] || { echo "FAIL: survivors delivered different sequences"; exit 1; }
grep -qE '^\[[013]\] view 2 0,1,3' "$out" || { echo "FAIL: no view 2 without host 2"; exit 1; }
grep -qE '^\[2\].*(minority|expelled)' "$out" || { echo "FAIL: host 2 did not report being cut off"; exit 1; }
echo "PASS: link cut, survivors agree on view 2 {0,1,3}; host 2 stopped with an error"
