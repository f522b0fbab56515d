# Sourced by the aarch64 tests: the project cross-built for aarch64 with
# Debian's cross compilers, against Debian's arm64 UCX, libcrypto and
# libLLVM-14 (multiarch), to run under qemu-aarch64. Every function skips
# the calling test (exit 77) with the reason when a piece is not installed,
# and builds into $a64 (set it first). The sources are the libraries' own
# lists (make print-sources), so a file added to a library is cross-built
# too; the flags are the project's own (same gcc release), no sanitizers,
# and -g1 (line tables: a backtrace under qemu; a quarter of the build less).
#
#   a64_require [c++]     the cross compilers, qemu-aarch64, the arm64 libraries
#   a64_build_runtime     $a64/libtwochains.a: ucx_ext (less PMIx: no arm64 PMIx)
#   a64_build_group       $a64/libtwochains_group.a: src/ (the replication layer)
#   a64_build_jit         $a64/libtwochains_jit.so: the Portable receiver's JIT,
#                         found beside the executable that links the archives
#   a64_build_pkg NAME    $a64/pkgs: test/packages/NAME for aarch64, with the
#                         x86_64 and aarch64 Portable modules
#   a64_link OUT SRC...   an executable of the C sources SRC (flags in
#                         $a64_cflags) and the archives built so far

a64_skip() { echo "SKIP: $*"; exit 77; }

a64_require() {
    command -v aarch64-linux-gnu-gcc >/dev/null || a64_skip "no aarch64-linux-gnu-gcc (gcc-aarch64-linux-gnu)"
    if [ "${1:-}" = c++ ]; then
        command -v aarch64-linux-gnu-g++ >/dev/null || a64_skip "no aarch64-linux-gnu-g++ (g++-aarch64-linux-gnu)"
    fi
    command -v qemu-aarch64 >/dev/null || a64_skip "no qemu-aarch64 (qemu-user)"
    [ -e /usr/lib/aarch64-linux-gnu/libucp.so ] ||
        a64_skip "no arm64 UCX (dpkg --add-architecture arm64; apt-get install libucx-dev:arm64)"
    [ -e /usr/lib/aarch64-linux-gnu/libcrypto.so ] ||
        a64_skip "no arm64 libcrypto (dpkg --add-architecture arm64; apt-get install libssl-dev:arm64)"
    [ -e /usr/lib/aarch64-linux-gnu/libLLVM-14.so.1 ] ||
        a64_skip "no arm64 libLLVM-14 (dpkg --add-architecture arm64; apt-get install libllvm14:arm64)"
    mkdir -p "$a64/obj"
    a64_archives=()
}

a64_make_var() { sed -n "s/^$1 = //p" "$TC_BUILDDIR/test/Makefile"; }

# the sources a library's Makefile lists (outside the calling make's
# MAKEFLAGS, which would add directory chatter)
a64_sources() {
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
        make -s --no-print-directory -C "$TC_BUILDDIR/$1" print-sources
}

a64_includes() {
    echo "-I$TC_SRCDIR/ucx_ext/api -I$TC_BUILDDIR/ucx_ext/api -I$TC_SRCDIR/ucx_ext" \
         "-I$TC_SRCDIR/toolchain/api -I$TC_SRCDIR/src -I$TC_SRCDIR/src/api -I$TC_BUILDDIR/src/api"
}

# a64_compile_archive NAME DIR FILE...: every .c and .cpp of DIR's FILEs,
# both cores at once, into $a64/NAME.a
a64_compile_archive() {
    local name=$1 dir=$2 f out
    shift 2
    local cflags cxxflags includes
    cflags="$(a64_make_var TC_CFLAGS_STD) $(a64_make_var TC_WARN_CFLAGS) -O2 -g1 -pthread"
    cxxflags="$(a64_make_var TC_CXXFLAGS_STD) $(a64_make_var TC_WARN_CXXFLAGS) -O2 -g1 -pthread"
    includes=$(a64_includes)
    mkdir -p "$a64/obj/$name"
    for f in "$@"; do
        out="$a64/obj/$name/$(echo "$f" | tr / _).o"
        case "$f" in
        *.c)   echo "aarch64-linux-gnu-gcc $cflags $includes -c $TC_SRCDIR/$dir/$f -o $out" ;;
        *.cpp) echo "aarch64-linux-gnu-g++ $cxxflags $includes -I$TC_SRCDIR/$dir -c $TC_SRCDIR/$dir/$f -o $out" ;;
        esac
    done >"$a64/obj/$name.cmds"
    xargs -P "$(nproc)" -I{} sh -c '{}' <"$a64/obj/$name.cmds" ||
        { echo "FAIL: cannot cross-build $name for aarch64"; exit 1; }
    rm -f "$a64/$name.a"
    aarch64-linux-gnu-ar rcs "$a64/$name.a" "$a64/obj/$name"/*.o
    a64_archives=("$a64/$name.a" "${a64_archives[@]}")
}

a64_build_runtime() {
    local f files=()
    for f in $(a64_sources ucx_ext); do
        case "$f" in
            bootstrap/pmix/boot_pmix.c) ;;
            *.c) files+=("$f") ;;
        esac
    done
    a64_compile_archive libtwochains ucx_ext "${files[@]}"
}

a64_build_group() {
    local f files=()
    for f in $(a64_sources src); do
        case "$f" in
            *.c|*.cpp) files+=("$f") ;;
        esac
    done
    a64_compile_archive libtwochains_group src "${files[@]}"
}

a64_build_jit() {
    local cflags
    cflags="$(a64_make_var TC_CFLAGS_STD) $(a64_make_var TC_WARN_CFLAGS)"
    # shellcheck disable=SC2046,SC2086
    aarch64-linux-gnu-gcc $cflags -O2 -g1 -fPIC -shared $(a64_includes) \
        -I"$(llvm-config-14 --includedir)" "$TC_SRCDIR/ucx_ext/ifunc/jit/jit_orc.c" \
        "$TC_SRCDIR/ucx_ext/ifunc/jit/jit_confine.c" \
        -o "$a64/libtwochains_jit.so" /usr/lib/aarch64-linux-gnu/libLLVM-14.so.1
}

a64_build_pkg() {
    "$TC_BUILDDIR/toolchain/twochains-pkg" build --name "$1" --src "$TC_SRCDIR/test/packages/$1" \
        --prefix "$a64/pkgs" --target aarch64 --portable x86_64-linux-gnu,aarch64-linux-gnu >/dev/null
}

# a64_link OUT SRC.c... [-- LINKFLAGS...]: the C sources (built with the
# project's C flags and $a64_cflags) linked with the archives built so far,
# by g++ when the group archive is in (its C++ runtime), by gcc otherwise
a64_link() {
    local out=$1 linker=aarch64-linux-gnu-gcc a f objs=() cflags
    shift
    cflags="$(a64_make_var TC_CFLAGS_STD) $(a64_make_var TC_WARN_CFLAGS) -O2 -g1 -pthread"
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        f=$a64/obj/$(basename "$out")_$(basename "$1").o
        # shellcheck disable=SC2046,SC2086
        aarch64-linux-gnu-gcc $cflags $(a64_includes) ${a64_cflags:-} -c "$1" -o "$f" ||
            { echo "FAIL: cannot cross-build $1 for aarch64"; exit 1; }
        objs+=("$f")
        shift
    done
    [ $# -gt 0 ] && shift
    for a in "${a64_archives[@]}"; do
        case "$a" in *libtwochains_group.a) linker=aarch64-linux-gnu-g++ ;; esac
    done
    $linker -pthread "${objs[@]}" "${a64_archives[@]}" "$@" \
        -o "$out" -lucp -luct -lucs -lcrypto -ldl -lm ||
        { echo "FAIL: cannot link $out for aarch64"; exit 1; }
}
