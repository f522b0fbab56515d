#!/usr/bin/env bash
#
# "Build it into a UCX install": make a scratch prefix holding a UCX install
# (a copy of the UCX this tree was configured with), configure twochains with
# --with-ucx=PREFIX --prefix=PREFIX, install, then compile and run a C and a
# C++ consumer using nothing but `pkg-config twochains` from that prefix.
#
set -euo pipefail
top_srcdir=${TC_SRCDIR:?}
ucx_prefix=$(pkg-config --variable=prefix ucx)
ucx_libdir=$(pkg-config --variable=libdir ucx)
work=$(mktemp -d /tmp/tc-install.XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

mkdir -p "$prefix/include" "$prefix/lib/pkgconfig" "$prefix/bin"
cp -r "$ucx_prefix/include/ucp" "$ucx_prefix/include/uct" "$ucx_prefix/include/ucs" \
      "$ucx_prefix/include/ucm" "$prefix/include/"
cp -a "$ucx_libdir"/libuc[ptsm]*.so* "$prefix/lib/"
[ -d "$ucx_libdir/ucx" ] && cp -a "$ucx_libdir/ucx" "$prefix/lib/"
for pc in "$ucx_libdir"/pkgconfig/ucx*.pc; do
    sed -e "s|^prefix=.*|prefix=$prefix|" -e "s|^libdir=.*|libdir=\${prefix}/lib|" \
        -e "s|^includedir=.*|includedir=\${prefix}/include|" -e "s|^exec_prefix=.*|exec_prefix=\${prefix}|" \
        "$pc" > "$prefix/lib/pkgconfig/$(basename "$pc")"
done

full=${TC_INSTALL_FULL:-0}
# make check compiles the libraries here without optimization or debug
# information: what this checks is the path from --with-ucx to a consumer
# (flags, headers, libraries, rpath); the code itself is make check's own
# tree, built as configured. check-long builds it as a user does.
opt=()
[ "$full" = 1 ] || opt=(CFLAGS=-O0 CXXFLAGS=-O0)
mkdir "$work/build"
cd "$work/build"
"$top_srcdir/configure" --with-ucx="$prefix" --prefix="$prefix" --enable-werror "${opt[@]}" -q \
    > configure.out 2>&1 || { cat configure.out; exit 1; }
grep -q "UCX_CPPFLAGS = -isystem $prefix/include" Makefile || { echo "configure did not use --with-ucx"; exit 1; }
# TC_INSTALL_FULL=1 (make check-long): the whole tree, built and installed.
# make check: what a consumer compiles and links against (the two libraries,
# their headers, twochains.pc), built and installed by the same rules; the
# tools, the toolchain and the test packages are built by make check's own
# tree, configured the same way but for --with-ucx.
installed="lib/libtwochains.so lib/libtwochains_group.so include/twochains/twochains.h
           include/twochains/version.h include/twochains/group.h include/twochains/bootstrap_mpi.h
           lib/pkgconfig/twochains.pc"
if [ "$full" = 1 ]; then
    make -j"$(nproc)" -s > make.out 2>&1 || { tail -50 make.out; exit 1; }
    make -s install > install.out 2>&1 || { tail -50 install.out; exit 1; }
    installed="$installed bin/twochains-run bin/twochains-info"
else
    { make -j"$(nproc)" -s -C ucx_ext && make -j"$(nproc)" -s -C src libtwochains_group.la; } \
        > make.out 2>&1 || { tail -50 make.out; exit 1; }
    { make -s -C ucx_ext install && make -s -C src install-libLTLIBRARIES install-twochainsincHEADERS &&
      make -s install-pkgconfigDATA; } > install.out 2>&1 || { tail -50 install.out; exit 1; }
fi

for f in $installed; do
    [ -e "$prefix/$f" ] || { echo "missing after install: $prefix/$f"; exit 1; }
done

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
flags=$(pkg-config --cflags --libs twochains)
echo "pkg-config twochains: $flags"
case "$flags" in *"-I$prefix/include"*) ;; *) echo "pkg-config flags do not point into the prefix"; exit 1;; esac

cc -std=c11 -Wall -Werror "$top_srcdir/test/install/consumer.c" -o consumer_c $flags \
   -Wl,-rpath,"$prefix/lib"
c++ -std=c++20 -Wall -Werror -x c++ "$top_srcdir/test/install/consumer.c" -o consumer_cxx $flags \
   -Wl,-rpath,"$prefix/lib"
# the consumers must resolve UCX and twochains from the prefix
# (no "| grep -q" under pipefail: grep leaving early makes the writer die of SIGPIPE)
linked=$(ldd ./consumer_c)
grep -q "$prefix/lib/libtwochains.so" <<<"$linked" || { echo "$linked"; exit 1; }
env -u UCX_TC_SIZE -u UCX_TC_RANK ./consumer_c
env -u UCX_TC_SIZE -u UCX_TC_RANK ./consumer_cxx
if [ "$full" = 1 ]; then
    info=$("$prefix/bin/twochains-info" -v)
    grep -q "Built with UCX" <<<"$info" || { echo "$info"; exit 1; }
fi
echo "install into a UCX prefix: ok"
