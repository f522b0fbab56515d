#!/bin/bash
#
# Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
#
# RDMC on the emulated cluster (contrib/cluster/cluster.sh): 4 hosts, each a
# network namespace with a 1 Gbit/s egress, UCX over tcp on the veths; an
# 8 MiB message from every host in turn, binomial pipeline, 1 MiB blocks,
# every byte checked and the same hash chain at every host. Reported as
# SKIPPED (exit 77, with the reason) where namespaces cannot be made.

set -u
: "${TC_SRCDIR:?}" "${TC_BUILDDIR:?}"
cluster="$TC_SRCDIR/contrib/cluster/cluster.sh"

"$cluster" -n 4 --check
rc=$?
[ $rc -eq 0 ] || exit $rc   # 77: skipped, the reason is printed

out=$("$cluster" -n 4 --timeout 120 --launcher "$TC_BUILDDIR/src/tools/twochains-run" -- \
      "$TC_BUILDDIR/test/helpers/rdmc_probe" -k binomial -b 1m -s 8m,8m,8m,8m 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: cluster run exited $rc"; exit 1; }

clean=$(echo "$out" | grep -c 'rdmc binomial rank [0-3] received 3 bad 0 order 0 chain')
chains=$(echo "$out" | grep -o 'chain [0-9a-f]*' | sort -u | wc -l)
overtcp=$(echo "$out" | grep -c 'tcp/eth0')
[ "$clean" -eq 4 ] || { echo "FAIL: $clean of 4 hosts report a clean receive"; exit 1; }
[ "$chains" -eq 1 ] || { echo "FAIL: hosts saw different data ($chains chains)"; exit 1; }
[ "$overtcp" -eq 4 ] || { echo "FAIL: not every host ran over tcp on eth0"; exit 1; }
echo "PASS: 4 hosts, 4 x 8 MiB, identical everywhere, over tcp/eth0"
