#!/usr/bin/env bash
#
# Build contrib/examples/ifunc_demo.c (Two-Chains API) and ifunc_compat.c
# (public Two-Chains API, built unchanged with -include twochains/ucp_ifunc.h)
# against this build tree, the way a user would, and run each with 2
# processes over shared memory and over TCP: indirect_put and
# server_side_sum in Local, Injected and Cached mode with every effect
# checked, and the public calls end to end.
#
set -euo pipefail
: "${TC_SRCDIR:?}" "${TC_BUILDDIR:?}"
work=$(mktemp -d /tmp/tc-ifunc-examples.XXXXXX)
trap 'rm -rf "$work"' EXIT

mk() { sed -n "s/^$1 = //p" "$TC_BUILDDIR/test/Makefile"; }
cc=$(mk CC)
read -r -a ucx_cppflags <<<"$(mk UCX_CPPFLAGS)"
read -r -a ucx_ldflags <<<"$(mk UCX_LDFLAGS) $(mk UCX_LIBS)"
read -r -a san <<<"${TC_SAN_FLAGS:-}"
flags=(-Wall -Wextra -Werror -I"$TC_SRCDIR/ucx_ext/api" -I"$TC_BUILDDIR/ucx_ext/api"
       "${ucx_cppflags[@]}" "${san[@]}"
       -L"$TC_BUILDDIR/ucx_ext/.libs" -Wl,-rpath,"$TC_BUILDDIR/ucx_ext/.libs"
       -ltwochains "${ucx_ldflags[@]}" -pthread)
$cc "$TC_SRCDIR/contrib/examples/ifunc_demo.c" -o "$work/ifunc_demo" "${flags[@]}"
$cc -include twochains/ucp_ifunc.h "$TC_SRCDIR/contrib/examples/ifunc_compat.c" \
    -o "$work/ifunc_compat" "${flags[@]}"

pkgs="$TC_BUILDDIR/test/twochains-pkgs"
run="$TC_BUILDDIR/src/tools/twochains-run"
for tls in posix,self tcp,self; do
    out=$(UCX_TLS=$tls "$run" -n 2 --timeout 60 -- "$work/ifunc_demo" -P "$pkgs" -n 50 2>&1) ||
        { echo "$out"; exit 1; }
    echo "$out"
    for mode in local injected cached portable portable-cached; do
        grep -Eq "ifunc_demo: $mode +indirect_put: 100 frames, array verified; server_side_sum: 100 frames, sum -?[0-9]+ verified" <<<"$out"
        grep -Eq "ifunc_demo: $mode +latency over ${tls%%,*}" <<<"$out"
    done
    grep -q "ifunc_demo: all effects verified" <<<"$out"
    if grep -q "UCX  \(WARN\|ERROR\)" <<<"$out"; then exit 1; fi

    out=$(UCX_TC_IFUNC_PKG_PATH=$pkgs UCX_TLS=$tls "$run" -n 2 --timeout 60 -- \
          "$work/ifunc_compat" 2>&1) || { echo "$out"; exit 1; }
    echo "$out"
    grep -q "\[0\] ifunc_compat: 200 server_side_sum frames ran, sum 314000 verified" <<<"$out"
    grep -q "\[1\] ifunc_compat: 200 ping frames ran" <<<"$out"
    if grep -q "UCX  \(WARN\|ERROR\)" <<<"$out"; then exit 1; fi
done
