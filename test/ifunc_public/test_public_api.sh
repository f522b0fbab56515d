#!/usr/bin/env bash
#
# The public Two-Chains ifunc API, from outside: ifunc sources in its style
# (tally.c: no external symbol; greet.c: a writable global, a helper and a
# libc call) built with one twochains-pkg command for x86_64 and aarch64; a
# compile-time check of our declarations against the public ones; and a
# program in its style (public_probe.c), built with -include
# twochains/ucp_ifunc.h as a user would, run over posix and tcp:
#  - default security (verify): garbage-filled heaps, registration on
#    arrival from UCX_IFUNC_LIB_DIR, writable globals in copy mode from the
#    code cache, the 1 B - 1 MiB back-to-back sweep in both directions with
#    every byte checked;
#  - trust mode at a receiver that has no package installed: tally (no
#    external symbols) links and runs;
#  - the sweep again over posix with every frame up to 64 KiB checked (one
#    put), the form the default uses over networks.
#
set -euo pipefail
: "${TC_SRCDIR:?}" "${TC_BUILDDIR:?}"

here=$TC_SRCDIR/test/ifunc_public
work=$(mktemp -d /tmp/tc-public-api.XXXXXX)
trap 'rm -rf "$work"' EXIT
pkg=$TC_BUILDDIR/toolchain/twochains-pkg
run=$TC_BUILDDIR/src/tools/twochains-run
mk() { sed -n "s/^$1 = //p" "$TC_BUILDDIR/test/Makefile"; }
cc=$(mk CC)
api=(-I"$TC_SRCDIR/ucx_ext/api" -I"$TC_BUILDDIR/ucx_ext/api")
read -r -a ucx <<<"$(mk UCX_CPPFLAGS) $(mk UCX_LDFLAGS) $(mk UCX_LIBS)"
read -r -a san <<<"${TC_SAN_FLAGS:-}"
fail() { echo "FAIL: $*"; exit 1; }

# the documented command, for both architectures
"$pkg" ifunc "$here/tally.c" "$here/greet.c" --prefix "$work/lib" \
    --portable x86_64-linux-gnu,aarch64-linux-gnu >"$work/pkg.log" 2>&1 ||
    { cat "$work/pkg.log"; fail "twochains-pkg ifunc (x86_64)"; }
"$pkg" ifunc "$here/tally.c" "$here/greet.c" --prefix "$work/lib-aarch64" --target aarch64 \
    >>"$work/pkg.log" 2>&1 || { cat "$work/pkg.log"; fail "twochains-pkg ifunc --target aarch64"; }
cat "$work/pkg.log"
for arch in lib lib-aarch64; do
    m=$work/$arch/share/twochains/tally/manifest
    grep -Eq '^element 0 tally [0-9]+ [0-9a-f]+ [0-9]+ [0-9]+ [0-9]+ [0-9]+ 0 ' "$m" ||
        fail "$arch: tally should have no external symbol: $(grep '^element' "$m")"
    g=$work/$arch/share/twochains/greet/manifest
    flags=$(awk '$1 == "element" { print $9 }' "$g")
    (( flags & 4 )) || fail "$arch: greet should have writable data (flags $flags)"
done

# our declarations against the public ones, at compile time
$cc -std=c11 -fsyntax-only "${api[@]}" -I"$TC_SRCDIR/toolchain/api" "${ucx[@]}" \
    "$here/public_decls.c" || fail "the public declarations do not match ours"

# the program, built as a user builds a public-API program
$cc -O2 -Wall -Wextra -Werror -include twochains/ucp_ifunc.h "${api[@]}" -I"$here" \
    "$here/public_probe.c" -I"$TC_SRCDIR/contrib/examples" "${san[@]}" \
    -o "$work/public_probe" -L"$TC_BUILDDIR/ucx_ext/.libs" \
    -Wl,-rpath,"$TC_BUILDDIR/ucx_ext/.libs" -ltwochains "${ucx[@]}" -lpthread ||
    fail "building public_probe.c with -include twochains/ucp_ifunc.h"

status=0
expect() {   # expect LOG PATTERN COUNT
    local n
    n=$(grep -c -- "$2" "$1" || true)
    [ "$n" = "$3" ] || { echo "FAIL: expected $3 lines '$2', got $n"; status=1; }
}
for tls in posix,self tcp,self; do
    echo "== verify mode over $tls"
    log=$work/verify.$tls.log
    if ! UCX_TLS=$tls UCX_IFUNC_LIB_DIR=$work/lib "$run" -n 2 --timeout 240 -- \
            "$work/public_probe" -d both >"$log" 2>&1; then
        echo "FAIL: public_probe over $tls"; status=1
    fi
    cat "$log"
    expect "$log" "every byte verified" 2
    expect "$log" "writable global fresh each time: .* verified" 1
    if grep -Eq 'UCX +(WARN|ERROR|FATAL)' "$log"; then echo "FAIL: UCX warned"; status=1; fi

    echo "== trust mode over $tls, the receiver without the package"
    log=$work/trust.$tls.log
    # shellcheck disable=SC2016
    if ! UCX_TLS=$tls UCX_IFUNC_LIB_DIR=$work/lib "$run" -n 2 --timeout 240 -- sh -c '
            if [ "$UCX_TC_RANK" = 0 ]; then
                unset UCX_IFUNC_LIB_DIR; export UCX_TC_IFUNC_SECURITY=trust
            fi
            exec "$0" -d one -g' "$work/public_probe" >"$log" 2>&1; then
        echo "FAIL: public_probe in trust mode over $tls"; status=1
    fi
    cat "$log"
    expect "$log" "every byte verified" 1
    if grep -Eq 'UCX +(WARN|ERROR|FATAL)' "$log"; then echo "FAIL: UCX warned"; status=1; fi
done
# Portable frames (UCX_TC_IFUNC_PUBLIC_CODE=portable): the same program and
# its checks, the jams' LLVM modules compiled by each receiver once per hash
# (the greet jam's writable global fresh at every call all the same)
for tls in posix,self tcp,self; do
    echo "== Portable frames over $tls"
    log=$work/portable.$tls.log
    if ! UCX_TLS=$tls UCX_LOG_LEVEL=info UCX_TC_IFUNC_PUBLIC_CODE=portable \
            UCX_IFUNC_LIB_DIR=$work/lib "$run" -n 2 --timeout 240 -- \
            "$work/public_probe" -d both >"$log" 2>&1; then
        echo "FAIL: public_probe with Portable frames over $tls"; status=1
    fi
    grep -v ' INFO ' "$log"
    expect "$log" "every byte verified" 2
    expect "$log" "writable global fresh each time: .* verified" 1
    expect "$log" "compiled module [0-9a-f]* (tally_main)" 2
    expect "$log" "compiled module [0-9a-f]* (greet_main)" 1
    if grep -Eq 'UCX +(WARN|ERROR|FATAL)' "$log"; then echo "FAIL: UCX warned"; status=1; fi
done
# over shared memory the default sends fenced frames (the flush waits for
# nothing there), over tcp checked ones: the checked form over posix too
echo "== verify mode over posix,self, every frame up to 64 KiB checked"
log=$work/checked.posix.log
if ! UCX_TLS=posix,self UCX_TC_IFUNC_CHECKED_MAX=64k UCX_IFUNC_LIB_DIR=$work/lib "$run" -n 2 \
        --timeout 240 -- "$work/public_probe" -d both >"$log" 2>&1; then
    echo "FAIL: public_probe with checked frames over posix"; status=1
fi
cat "$log"
expect "$log" "every byte verified" 2
if grep -Eq 'UCX +(WARN|ERROR|FATAL)' "$log"; then echo "FAIL: UCX warned"; status=1; fi
[ "$status" = 0 ] && echo "PASS: public-API sources and program, posix and tcp"
exit "$status"
