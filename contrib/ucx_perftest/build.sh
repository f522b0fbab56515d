#!/usr/bin/env bash
#
# Build UCX's ucx_perftest with the Two-Chains shapes ucp_ifunc_lat,
# ucp_ifunc_bw, ucp_smc_lat and ucp_smc_bw: take the UCX source that matches the installed UCX, apply
# contrib/ucx_perftest/*.patch to its src/tools/perf, configure it the way
# the installed UCX was configured, and compile only libperf and
# ucx_perftest, linked against the installed UCX and this build tree's
# libtwochains and libtwochains_group. Output: BUILD_DIR/contrib/ucx_perftest/ucx_perftest (a
# libtool wrapper; `make install-perftest` installs the real program).
#
#   contrib/ucx_perftest/build.sh [--with-ucx-src=DIR] [--builddir=DIR]
#                                 [--cache=DIR] [--fetch-only] [--force]
#
#   --with-ucx-src=DIR  a UCX source tree of the installed version (a git
#                       checkout or release tarball; ./autogen.sh is run in
#                       it if it has no configure). Default: the Debian
#                       source package, fetched once with `apt-get source
#                       ucx` into the cache (as root this adds a deb-src
#                       copy of /etc/apt/sources.list.d/debian.sources).
#   --builddir=DIR      the configured Two-Chains build tree (default:
#                       $TC_BUILD, else <top>/build); libtwochains must be
#                       built (make) first.
#   --cache=DIR         where the fetched, configured source is kept
#                       (default: $TC_UCX_SRC_CACHE, else
#                       ${XDG_CACHE_HOME:-~/.cache}/twochains/ucx-src).
#   --fetch-only        get and configure the source, build nothing.
#   --force             rebuild even if ucx_perftest is up to date.
#
# Exit status: 0 built (or up to date); 77 the matching UCX source cannot be
# had here (the reason is printed); 1 any other error.
#
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
builddir=${TC_BUILD:-$top/build}
cache=${TC_UCX_SRC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/twochains/ucx-src}
ucx_src=
fetch_only=0
force=0

for arg in "$@"; do
    case "$arg" in
    --with-ucx-src=*) ucx_src=${arg#*=} ;;
    --builddir=*)     builddir=${arg#*=} ;;
    --cache=*)        cache=${arg#*=} ;;
    --fetch-only)     fetch_only=1 ;;
    --force)          force=1 ;;
    -h|--help)        sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument '$arg' (see --help)" >&2; exit 1 ;;
    esac
done

say()  { echo "ucx_perftest: $*" >&2; }
die()  { say "$*"; exit 1; }
skip() { say "cannot get the UCX source: $*"; say "pass --with-ucx-src=DIR (UCX $ucx_version)"; exit 77; }

[ -f "$builddir/Makefile" ] || die "no configured build tree in $builddir (run configure, or --builddir)"
builddir=$(cd "$builddir" && pwd)
mk() { sed -n "s/^$1 = //p" "$builddir/Makefile" | head -1; }
ucx_version=$(mk UCX_VERSION)
ucx_prefix=$(mk UCX_PREFIX)
read -r -a ucx_cppflags <<<"$(mk UCX_CPPFLAGS)"
read -r -a ucx_libs <<<"$(mk UCX_LDFLAGS) $(mk UCX_LIBS)"
read -r -a san_flags <<<"$(mk TC_SAN_FLAGS)"
[ -n "$ucx_version" ] || die "$builddir/Makefile names no UCX_VERSION"
ucx_info=$(mk UCX_INFO)
[ -x "$ucx_info" ] || ucx_info=$(command -v ucx_info || true)
[ -x "$ucx_info" ] || die "ucx_info not found (Debian: ucx-utils)"

out=$builddir/contrib/ucx_perftest
mkdir -p "$out"

# --- the source -----------------------------------------------------------

tree_version() {   # version of the UCX source tree $1, from configure.ac
    local ac=$1/configure.ac
    [ -f "$ac" ] || return 1
    printf '%s.%s.%s\n' \
        "$(sed -n 's/^define(\[ucx_ver_major\], \([0-9]*\)).*/\1/p' "$ac")" \
        "$(sed -n 's/^define(\[ucx_ver_minor\], \([0-9]*\)).*/\1/p' "$ac")" \
        "$(sed -n 's/^define(\[ucx_ver_patch\], \([0-9]*\)).*/\1/p' "$ac")"
}

fetch_debian_source() {   # into $cache/ucx-$ucx_version
    local dest=$1 debver tmp sources=/etc/apt/sources.list.d/debian.sources
    local srclist=/etc/apt/sources.list.d/twochains-deb-src.sources
    command -v apt-get >/dev/null || skip "no apt-get on this system"
    command -v dpkg-source >/dev/null || skip "dpkg-source missing (Debian: dpkg-dev)"
    # one version per installed architecture, unseparated, unless named:
    # setup-deps.sh installs the arm64 UCX beside the native one
    debver=$(dpkg-query -W -f='${source:Version}' "libucx0:$(dpkg --print-architecture)" \
             2>/dev/null || true)
    [ -n "$debver" ] || skip "UCX is not installed from a Debian package (libucx0)"
    case "$debver" in
    "$ucx_version"-*|"$ucx_version") ;;
    *) skip "the installed UCX is $ucx_version, Debian's libucx0 is $debver" ;;
    esac

    tmp=$(mktemp -d "$cache/fetch.XXXXXX")
    # shellcheck disable=SC2064
    trap "rm -rf '$tmp'" EXIT
    if ! (cd "$tmp" && apt-get source --download-only "ucx=$debver") >"$tmp/apt.log" 2>&1; then
        if grep -q "deb-src" "$tmp/apt.log" && [ ! -f "$srclist" ]; then
            [ "$(id -u)" = 0 ] || skip "apt has no deb-src entry; as root: sed 's/^Types: deb\$/Types: deb-src/' $sources > $srclist && apt-get update"
            [ -f "$sources" ] || skip "apt has no deb-src entry and there is no $sources to copy"
            say "adding $srclist (a deb-src copy of $sources) and updating apt"
            sed 's/^Types: deb$/Types: deb-src/' "$sources" >"$srclist"
            apt-get update -qq >>"$tmp/apt.log" 2>&1 || true
        fi
        (cd "$tmp" && apt-get source --download-only "ucx=$debver") >>"$tmp/apt.log" 2>&1 ||
            skip "apt-get source ucx=$debver failed: $(grep -E '^(E|W):' "$tmp/apt.log" | tail -2 | tr '\n' ' ')"
    fi
    (cd "$tmp" && dpkg-source --no-check -x ./*.dsc src) >>"$tmp/apt.log" 2>&1 ||
        die "dpkg-source -x failed: $(tail -3 "$tmp/apt.log")"
    mv "$tmp/src" "$dest"
    rm -rf "$tmp"
    trap - EXIT
    say "UCX $debver source in $dest"
}

if [ -n "$ucx_src" ]; then
    [ -d "$ucx_src/src/tools/perf/lib" ] || die "$ucx_src is not a UCX source tree"
    ucx_src=$(cd "$ucx_src" && pwd)
    v=$(tree_version "$ucx_src" || true)
    [ "$v" = "$ucx_version" ] || die "$ucx_src is UCX '$v', the installed UCX is $ucx_version"
    confdir=$out/ucx-config
else
    mkdir -p "$cache" || skip "cannot create the cache $cache"
    ucx_src=$cache/ucx-$ucx_version
    exec 9>"$cache/.lock"
    flock 9     # make perftest and make check may fetch at the same time
    [ -d "$ucx_src/src/tools/perf/lib" ] || fetch_debian_source "$ucx_src"
    confdir=$ucx_src/build-twochains
fi

# --- configure it like the installed UCX ----------------------------------

if [ ! -f "$confdir/config.h" ] || [ ! -f "$confdir/src/tools/perf/lib/Makefile" ]; then
    if [ ! -x "$ucx_src/configure" ]; then
        say "running autogen.sh in $ucx_src"
        (cd "$ucx_src" && ./autogen.sh) >"$out/autogen.log" 2>&1 ||
            die "autogen.sh failed, see $out/autogen.log"
    fi
    say "configuring UCX $ucx_version in $confdir (about a minute)"
    rm -rf "$confdir"
    mkdir -p "$confdir"
    # Debian's flags (debian/rules), without Java (Maven cannot fetch here)
    (cd "$confdir" && "$ucx_src/configure" --prefix="$ucx_prefix" --without-java \
        --without-go --enable-mt --disable-logging --enable-devel-headers \
        --enable-cma --disable-doxygen-doc) >"$out/configure.log" 2>&1 ||
        { rm -f "$confdir/config.h"; die "UCX configure failed, see $out/configure.log"; }
fi

# The defines that change UCX's structures or inline code must be the
# installed library's (ucx_info -b prints its config.h).
mismatch=
for d in ENABLE_MT ENABLE_DEBUG_DATA ENABLE_STATS ENABLE_ASSERT ENABLE_PARAMS_CHECK \
         UCS_MAX_LOG_LEVEL HAVE_PROFILING ENABLE_BUILTIN_MEMCPY; do
    want=$("$ucx_info" -b | sed -n "s/^#define $d  *//p" | sed 's/ *$//')
    have=$(sed -n "s/^#define $d  *//p" "$confdir/config.h" | sed 's/ *$//')
    [ "$want" = "$have" ] || mismatch="$mismatch $d(installed '$want', configured '$have')"
done
[ -z "$mismatch" ] || die "configured UCX differs from the installed one:$mismatch"
[ "$fetch_only" = 0 ] || { say "source ready: $ucx_src (configured in $confdir)"; exit 0; }

# --- patch and build ------------------------------------------------------

[ -f "$builddir/ucx_ext/libtwochains.la" ] && [ -f "$builddir/src/libtwochains_group.la" ] ||
    die "build libtwochains and libtwochains_group first (make in $builddir)"
mapfile -t patches < <(ls "$here"/*.patch | sort)
[ "${#patches[@]}" -gt 0 ] || die "no patches in $here"

if [ "$force" = 0 ] && [ -e "$out/ucx_perftest" ] &&
   [ -z "$(find "${patches[@]}" "$0" "$builddir/ucx_ext/libtwochains.la" \
           "$builddir/src/libtwochains_group.la" \
           "$confdir/config.h" -newer "$out/ucx_perftest" 2>/dev/null)" ]; then
    say "up to date: $out/ucx_perftest"
    exit 0
fi

rm -rf "$out/src" "$out/obj"
mkdir -p "$out/src/tools" "$out/obj"
cp -a "$ucx_src/src/tools/perf" "$out/src/tools/"
for p in "${patches[@]}"; do
    patch -p1 --forward --batch --quiet -d "$out" <"$p" >"$out/patch.log" 2>&1 ||
        die "$(basename "$p") does not apply to UCX $ucx_version: $(cat "$out/patch.log")"
done
say "applied ${#patches[@]} patches to UCX $ucx_version src/tools/perf"

cmk() { sed -n "s/^$1 = //p" "$confdir/Makefile" | head -1; }
read -r -a cflags <<<"$(cmk BASE_CFLAGS) $(cmk OPENMP_CFLAGS)"
read -r -a cxxflags <<<"$(cmk BASE_CXXFLAGS) $(cmk OPENMP_CFLAGS) $(cmk PERF_LIB_CXXFLAGS) -std=c++11"
cc=$(cmk CC)
cxx=$(cmk CXX)
cppflags=(-DHAVE_CONFIG_H -DCPU_FLAGS="" -DHAVE_TWOCHAINS=1
          -DUCX_PERF_IFUNC_PKG_PATH="\"$builddir/test/twochains-pkgs\""
          -I"$out/src" -I"$confdir" -I"$confdir/src" -I"$ucx_src/src"
          -I"$top/ucx_ext/api" -I"$builddir/ucx_ext/api" -I"$top/src/api" "${ucx_cppflags[@]}")

perf=$out/src/tools/perf
sources=("$perf"/lib/libperf.c "$perf"/lib/libperf_ifunc.c "$perf"/lib/libperf_smc.c
         "$perf"/lib/libperf_memory.c
         "$perf"/lib/libperf_thread.c "$perf"/lib/uct_tests.cc "$perf"/lib/ucp_tests.cc
         "$perf"/perftest.c "$perf"/perftest_params.c "$perf"/perftest_run.c)
pids=()
objs=()
for s in "${sources[@]}"; do
    o=$out/obj/$(basename "${s%.*}").o
    objs+=("$o")
    case "$s" in
    *.cc) "$cxx" "${cppflags[@]}" "${cxxflags[@]}" "${san_flags[@]}" -c "$s" -o "$o" \
              2>"$o.log" & ;;
    *)    "$cc" "${cppflags[@]}" "${cflags[@]}" "${san_flags[@]}" -c "$s" -o "$o" \
              2>"$o.log" & ;;
    esac
    pids+=($!)
    # two at a time: the machines here have two cores and are shared
    if [ "${#pids[@]}" -ge 2 ]; then wait "${pids[0]}" || true; pids=("${pids[@]:1}"); fi
done
wait || true
for o in "${objs[@]}"; do
    [ -s "$o" ] || { cat "$o.log" >&2; die "compiling $(basename "${o%.o}") failed"; }
done

# libtool: links against the uninstalled libtwochains.la here, relinks
# against the installed one on `libtool --mode=install` (make install-perftest)
"$builddir/libtool" --quiet --mode=link --tag=CXX "$cxx" "$(cmk OPENMP_CFLAGS)" \
    "${san_flags[@]}" "$(cmk LDFLAGS_DYNAMIC_LIST_DATA)" -o "$out/ucx_perftest" \
    "${objs[@]}" "$builddir/src/libtwochains_group.la" "$builddir/ucx_ext/libtwochains.la" \
    "${ucx_libs[@]}" -lm \
    >"$out/link.log" 2>&1 || { cat "$out/link.log" >&2; die "linking ucx_perftest failed"; }

usage=$("$out/ucx_perftest" -h 2>&1 || true)
for shape in ucp_ifunc_lat ucp_smc_lat; do
    grep -q "$shape" <<<"$usage" || die "the built ucx_perftest does not list $shape"
done
say "built $out/ucx_perftest (UCX $ucx_version, shapes ucp_ifunc_lat/bw, ucp_smc_lat/bw)"
