#!/usr/bin/env bash
#
# The README's first command: install the Debian packages the project needs,
# build it, and run the main job.
#
# Main job (grows with each capability):
#   1. a ring of 3 local processes over UCX: each hop is a one-sided put
#      (data, fence, signal) into the next process's ucp_mem_map'ed buffer;
#      every byte is checked; per-hop put latency and the transport are
#      reported, over shared memory (posix,self) and over TCP (tcp,self).
#   2. Two-Chains: indirect_put and server_side_sum shipped and run on
#      arrival, Local / Injected / Cached.
#   3. A replicated key-value store whose put, increment and
#      compare-and-swap are jams in a group's total order: 3 processes
#      write, one is killed mid-stream, a new one joins with the state, and
#      every live member prints the same state digest, equal to a
#      reference replayed from the delivered sequence.
#
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=contrib/setup-deps.sh
source "$here/setup-deps.sh"

tc_install_packages
tc_build

bin="$TC_BUILD/src/tools"
# the defaults, as a user runs them (the adaptive wait policy gives the
# core away when 3 ranks share 2 cores)

echo
echo "== Put ring: 3 processes, 64-byte messages, data checked at every hop =="
for tls in posix,self tcp,self; do
    UCX_TLS=$tls "$bin/twochains-run" -n 3 --timeout 120 -- \
        "$bin/twochains-ring" -s 64 -n 2000 -w 200
done

# 2. Two-Chains: a C function shipped in a one-sided put and run on arrival.
echo
echo "== Two-Chains: indirect_put and server_side_sum, Local / Injected / Cached / Portable / Portable-Cached, 2 processes =="
demo_dir="$TC_BUILD/contrib-examples"
mkdir -p "$demo_dir"
# built as a user would build it against an install (here: the build tree)
cc -O2 "$TC_TOP/contrib/examples/ifunc_demo.c" -o "$demo_dir/ifunc_demo" \
    -I"$TC_TOP/ucx_ext/api" -I"$TC_BUILD/ucx_ext/api" \
    -L"$TC_BUILD/ucx_ext/.libs" -Wl,-rpath,"$TC_BUILD/ucx_ext/.libs" -ltwochains \
    $(pkg-config --cflags --libs ucx)
# The per-mode latency is a ping-pong of server_side_sum frames (one way =
# round trip / 2, jam run included), both sides waiting with the default
# policy, as users run it.
for tls in posix,self tcp,self; do
    UCX_TLS=$tls "$bin/twochains-run" -n 2 --timeout 120 -- \
        "$demo_dir/ifunc_demo" -P "$TC_BUILD/test/twochains-pkgs" -n 2000
done

# 3. Replicated active messages: the key-value store through a failure and a join.
echo
echo "== Replicated jams: a key-value store of put/increment/CAS jams, 3 writers, one killed, one joiner =="
cc -O2 "$TC_TOP/contrib/examples/replicated_kv.c" -o "$demo_dir/replicated_kv" \
    -I"$TC_TOP/ucx_ext/api" -I"$TC_BUILD/ucx_ext/api" -I"$TC_TOP/src/api" \
    -I"$TC_TOP/test/packages/tckv" \
    -L"$TC_BUILD/src/.libs" -L"$TC_BUILD/ucx_ext/.libs" \
    -Wl,-rpath,"$TC_BUILD/src/.libs" -Wl,-rpath,"$TC_BUILD/ucx_ext/.libs" \
    -ltwochains_group -ltwochains $(pkg-config --cflags --libs ucx)
for tls in posix,self tcp,self; do
    UCX_TLS=$tls "$TC_TOP/contrib/examples/replicated_kv_demo.sh" \
        "$demo_dir/replicated_kv" "$TC_BUILD/test/twochains-pkgs"
done
