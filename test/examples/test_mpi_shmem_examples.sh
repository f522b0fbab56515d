#!/usr/bin/env bash
#
# Build contrib/examples/{mpi,shmem}_multicast.c with Open MPI's mpicc and
# oshcc against this build tree, and run each with 3 ranks: a twochains group
# living beside MPI / OpenSHMEM in one process, over the same UCX. Then the
# OpenSHMEM bootstrap with one PE out of memory (test/examples/
# shmem_alloc_fail.c): every PE fails that collective together.
# Exit 77 (Automake: SKIP) with the reason when Open MPI is not installed.
#
set -euo pipefail
: "${TC_SRCDIR:?}" "${TC_BUILDDIR:?}"
command -v mpicc >/dev/null && command -v oshcc >/dev/null && command -v mpirun >/dev/null || {
    echo "SKIP: Open MPI (mpicc, oshcc, mpirun) not installed: apt-get install openmpi-bin libopenmpi-dev"
    exit 77
}
if [ -n "${TC_SAN_FLAGS:-}" ]; then
    echo "SKIP: sanitizer build ($TC_SAN_FLAGS): mpicc/oshcc wrap gcc, which cannot link libraries instrumented with this build's sanitizer runtime"
    exit 77
fi
work=$(mktemp -d /tmp/tc-examples.XXXXXX)
trap 'rm -rf "$work"' EXIT

flags=(-I"$TC_SRCDIR/ucx_ext/api" -I"$TC_BUILDDIR/ucx_ext/api" -I"$TC_SRCDIR/src/api"
       -I"$TC_SRCDIR/contrib/examples"
       -L"$TC_BUILDDIR/src/.libs" -L"$TC_BUILDDIR/ucx_ext/.libs"
       -Wl,-rpath,"$TC_BUILDDIR/src/.libs" -Wl,-rpath,"$TC_BUILDDIR/ucx_ext/.libs"
       -ltwochains_group -ltwochains -lucp -lucs)
mpicc -Wall -Werror "$TC_SRCDIR/contrib/examples/mpi_multicast.c" -o "$work/mpi_multicast" "${flags[@]}"
oshcc -Wall -Werror "$TC_SRCDIR/contrib/examples/shmem_multicast.c" -o "$work/shmem_multicast" "${flags[@]}"
oshcc -Wall -Werror "$TC_SRCDIR/test/examples/shmem_alloc_fail.c" -o "$work/shmem_alloc_fail" "${flags[@]}"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI 4.1's UCX components only pick devices they know (mlx*) unless
# told otherwise; "osc ucx" avoids a crash in Debian's osc/rdma at finalize.
ompi=(--oversubscribe -np 3 --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any
      --mca osc ucx -x UCX_TLS=posix,self)

out=$(timeout 120 mpirun "${ompi[@]}" "$work/mpi_multicast" 2>&1) || { echo "$out"; exit 1; }
echo "$out"
grep -q "mpi_multicast: 3 ranks delivered 3000 messages each, identical order" <<<"$out"

out=$(timeout 120 oshrun "${ompi[@]}" "$work/shmem_multicast" 2>&1) || { echo "$out"; exit 1; }
echo "$out"
grep -q "shmem_multicast: 3 PEs delivered 3000 messages each, identical order" <<<"$out"

# one PE out of memory in an allgatherv: all fail it together, none hangs
out=$(timeout 60 oshrun "${ompi[@]}" "$work/shmem_alloc_fail" 2>&1) || { echo "$out"; exit 1; }
echo "$out"
[ "$(grep -c "shmem_alloc_fail: PE [0-9] ok" <<<"$out")" = 3 ]
