#!/usr/bin/env bash
#
# Install the Debian packages this project needs, then build it.
# Idempotent: a second run installs nothing and rebuilds only what changed.
# Sourced by quickstart.sh and check.sh; usable alone:
#   contrib/setup-deps.sh [--no-build] [BUILD_DIR]
#
set -euo pipefail

TC_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TC_BUILD=${TC_BUILD:-$TC_TOP/build}

# One line per package, with why we need it.
TC_PACKAGES=(
    build-essential       # gcc, g++, make
    autoconf automake libtool pkgconf
    libucx-dev ucx-utils  # UCX 1.13 headers/libs, ucx_perftest, ucx_info
    libelf-dev            # toolchain: verify GOT-patched jams
    libssl-dev            # the job key's HMAC-SHA256 (bootstrap and joins)
    libgtest-dev          # make check
    clang                 # warning-clean check with a second compiler, libFuzzer
    llvm-14-dev llvm-14   # LLVM 14 = Debian 12's default clang: bitcode for portable jams (clang-14, llvm-nm-14) and the receiver's ORC JIT (libLLVM-14); a bitcode reader reads only its own or older releases
    gcc-aarch64-linux-gnu # toolchain: cross-build jams for the paper's platform
    g++-aarch64-linux-gnu # the replication layer (C++) for an aarch64 group member
    libc6-dev-arm64-cross # its C library headers (stdint.h) for the cross build
    qemu-user             # run the aarch64 jam execution tests
    openmpi-bin libopenmpi-dev  # MPI + OpenSHMEM examples beside the library, one UCX
    libpmix-dev           # PMIx bootstrap under srun/prterun
    gnuplot-nox           # benchmark plots (contrib/bench)
    stress-ng             # memory-stress neighbour for tail-latency benchmarks
    dpkg-dev              # dpkg-source: unpack `apt-get source ucx` for the patched ucx_perftest
    linux-perf            # perf record/stat in contrib/bench/ifunc.sh (profile, cycles where counted)
    iproute2              # network namespaces for the emulated cluster
    procps                # pgrep/pkill used by the tests' cleanup
    doxygen               # make docs: the API reference of the public headers
    python3               # the benchmark drivers' summaries and plot data (contrib/bench)
)

# Installed for this machine's architecture (or for all): dpkg-query lists
# every installed architecture of a package, and the arm64 UCX is one.
tc_installed() {
    local status
    status=$(dpkg-query -W -f='${Status} ${Architecture}\n' "$1" 2>/dev/null || true)
    grep -Eqx "install ok installed ($(dpkg --print-architecture)|all)" <<<"$status"
}

tc_missing_packages() {
    local missing=() p
    for p in "${TC_PACKAGES[@]}"; do
        tc_installed "$p" || missing+=("$p")
    done
    echo "${missing[@]:-}"
}

# The arm64 UCX, libcrypto and libLLVM-14 (Debian multiarch) for the aarch64
# runtime test under qemu-user (libLLVM: its Portable receiver's JIT). Best effort: without them that one test reports
# itself skipped.
TC_ARM64_PACKAGES=(libucx-dev:arm64 libssl-dev:arm64 libllvm14:arm64)

tc_install_arm64() {
    [ "$(dpkg-query -W -f='${Status}\n' "${TC_ARM64_PACKAGES[@]}" 2>/dev/null |
         grep -c "install ok installed")" -eq "${#TC_ARM64_PACKAGES[@]}" ] && return 0
    [ "$(id -u)" = 0 ] || { echo "setup: no arm64 UCX (not root): the aarch64 test will skip"; return 0; }
    echo "setup: installing ${TC_ARM64_PACKAGES[*]} (multiarch)"
    { dpkg --add-architecture arm64 && apt-get update -qq &&
      apt-get install -y --no-install-recommends "${TC_ARM64_PACKAGES[@]}" >/dev/null; } ||
        echo "setup: could not install the arm64 UCX: the aarch64 test will skip"
}

tc_install_packages() {
    local missing
    missing=$(tc_missing_packages)
    if [ -z "$missing" ]; then
        echo "setup: all ${#TC_PACKAGES[@]} Debian packages present"
        tc_install_arm64
        return 0
    fi
    if [ "$(id -u)" != 0 ]; then
        echo "setup: missing packages: $missing (run as root, or: sudo apt-get install $missing)" >&2
        return 1
    fi
    echo "setup: installing $missing"
    export DEBIAN_FRONTEND=noninteractive
    # refresh the index only if the first attempt cannot find a package
    # shellcheck disable=SC2086
    apt-get install -y --no-install-recommends $missing >/dev/null 2>&1 || {
        apt-get update -qq
        apt-get install -y --no-install-recommends $missing
    }
    tc_install_arm64
}

tc_build() {
    cd "$TC_TOP"
    if [ ! -x configure ] || [ configure.ac -nt configure ] ||
       [ -n "$(find . -name Makefile.am -newer configure -not -path './build*' 2>/dev/null | head -1)" ]; then
        autoreconf -fi
    fi
    mkdir -p "$TC_BUILD"
    cd "$TC_BUILD"
    if [ ! -f Makefile ] || [ "$TC_TOP/configure" -nt config.status ]; then
        "$TC_TOP/configure" --enable-werror ${TC_CONFIGURE_FLAGS:-}
    fi
    make -j"$(nproc)"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    tc_install_packages
    [ "${1:-}" = "--no-build" ] || tc_build
fi
