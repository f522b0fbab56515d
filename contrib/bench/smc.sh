#!/usr/bin/env bash
#
# SMC benchmark: twochains-perf smc_bw / smc_lat for N = 2, 3, 5 members at
# 100 bytes, next to UCX's ucp_put_lat / ucp_put_bw from the same run.
# One JSON object per point on stdout, then a summary of ratios.
#
#   contrib/bench/smc.sh [--quick] [--tls posix,self]
#
# The group processes are not pinned: 5 processes share this machine's cores
# and wait with UCX_TC_WAIT_POLICY (default sleep here: spinning ranks on 2
# cores would measure the scheduler). ucx_perftest runs pinned, one core each.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${TC_BUILD:-$here/../../build}/src/tools
source "$here/perftest_lib.sh"

tls=posix,self iters=20000 lat_iters=2000
while [ $# -gt 0 ]; do
    case $1 in
        --quick) iters=5000 lat_iters=500 ;;
        --tls) tls=$2; shift ;;
        *) echo "usage: $0 [--quick] [--tls TLS]" >&2; exit 2 ;;
    esac
    shift
done
export UCX_TC_WAIT_POLICY=${UCX_TC_WAIT_POLICY:-sleep}
echo "# cores: $(nproc), wait policy: $UCX_TC_WAIT_POLICY, transport: $tls" >&2

put_lat=$(perftest_json ucp_put_lat "$tls" 100 10000)
put_bw=$(perftest_json ucp_put_bw "$tls" 100 100000)
echo "$put_lat"
echo "$put_bw"

declare -A bw lat
for n in 2 3 5; do
    for senders in one all; do
        out=$(UCX_TLS=$tls "$bin/twochains-run" -n "$n" --timeout 300 -- \
              "$bin/twochains-perf" -t smc_bw -s 100 -n "$iters" -w 500 --senders "$senders" --json)
        line=$(sed -n 's/^\[0\] //p' <<<"$out")
        echo "$line"
        bw[$n,$senders]=$line
    done
    out=$(UCX_TLS=$tls "$bin/twochains-run" -n "$n" --timeout 300 -- \
          "$bin/twochains-perf" -t smc_lat -s 100 -n "$lat_iters" -w 50 --json)
    line=$(sed -n 's/^\[0\] //p' <<<"$out")
    echo "$line"
    lat[$n]=$line
done

pl=$(json_field "$put_lat" lat_avg_us)
pr=$(json_field "$put_bw" msg_rate)
echo "# summary (100 B, $tls): ucp_put_lat ${pl} us, ucp_put_bw ${pr} msg/s"
for n in 2 3 5; do
    l=$(json_field "${lat[$n]}" lat_avg_us)
    r1=$(json_field "${bw[$n,one]}" msg_rate)
    ra=$(json_field "${bw[$n,all]}" msg_rate)
    p1=$(json_field "${bw[$n,one]}" puts_per_msg)
    awk -v n="$n" -v l="$l" -v pl="$pl" -v r1="$r1" -v ra="$ra" -v pr="$pr" -v p1="$p1" 'BEGIN {
        printf "# N=%d: smc_lat %.2f us (%.0fx ucp_put_lat); smc_bw one sender %.0f msg/s (%.4fx ucp_put_bw), all senders %.0f msg/s; %.2f puts/msg (one sender; N^2+N-2 = %d)\n",
               n, l, l / pl, r1, r1 / pr, ra, p1, n * n + n - 2 }'
done
