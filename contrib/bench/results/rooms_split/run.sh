#!/bin/bash
# Before and after the group's split into rooms: the same drivers on the
# commit before it (base: `git worktree add /work/base 4470b12` and
# contrib/setup-deps.sh there, plus `make -C build/test group_fault_probe
# rdmc_probe`) and after it (main), interleaved round by round. Each tree's
# contrib/bench and contrib/cluster are copied to /tmp/ab/<tree>/contrib so
# that no run overwrites the committed results. Summary:
#   python3 summarize.py /tmp/ab/out > summary.txt
out=/tmp/ab/out; mkdir -p $out
for round in 1 2 3 4 5 6 7; do
  for tree in base main; do
    b=/work/$tree/build; d=/tmp/ab/$tree/contrib/bench
    echo "== round $round $tree smc $(date +%T)" >&2
    TC_BUILD=$b $d/smc.sh > $out/smc.$tree.$round.jsonl 2> $out/smc.$tree.$round.err
    [ $round -le 3 ] || continue
    echo "== round $round $tree views $(date +%T)" >&2
    TC_BUILD=$b $d/views.sh 2 > $out/views.$tree.$round.jsonl 2> $out/views.$tree.$round.err
    echo "== round $round $tree rdmc $(date +%T)" >&2
    rm -rf $d/results
    $d/rdmc.sh --build $b --members "4 8" --iters 1 > $out/rdmc.$tree.$round.out 2>&1
    find $d/results -name 'rdmc_cluster.jsonl' -exec cp {} $out/rdmc_cluster.$tree.$round.jsonl \;
    find $d/results -name 'rdmc_shm.jsonl' -exec cp {} $out/rdmc_shm.$tree.$round.jsonl \;
  done
done
echo "== done $(date +%T)" >&2
