# TC_CHECK_UCX: --with-ucx=DIR, else pkg-config ucx. One clear line on failure.
AC_DEFUN([TC_CHECK_UCX], [
    AC_ARG_WITH([ucx],
        [AS_HELP_STRING([--with-ucx=DIR], [UCX install prefix (default: pkg-config ucx)])],
        [], [with_ucx=pkgconfig])

    AS_IF([test "x$with_ucx" = xno],
          [AC_MSG_ERROR([UCX is required and cannot be disabled])])

    AS_IF([test "x$with_ucx" = xpkgconfig -o "x$with_ucx" = xyes],
          [PKG_CHECK_MODULES([UCX], [ucx >= 1.13],
               [UCX_VERSION=`$PKG_CONFIG --modversion ucx`
                UCX_CPPFLAGS="$UCX_CFLAGS"
                UCX_LDFLAGS=""
                UCX_PREFIX=`$PKG_CONFIG --variable=prefix ucx`],
               [AC_MSG_ERROR([UCX >= 1.13 not found by pkg-config: apt-get install libucx-dev ucx-utils, or pass --with-ucx=DIR])])],
          [AS_IF([test ! -f "$with_ucx/include/ucp/api/ucp.h"],
                 [AC_MSG_ERROR([--with-ucx=$with_ucx: $with_ucx/include/ucp/api/ucp.h not found (is it a UCX install prefix?)])])
           UCX_PREFIX="$with_ucx"
           # -isystem: warnings in UCX's own headers are not ours to fix
           UCX_CPPFLAGS="-isystem $with_ucx/include"
           tc_ucx_libdir="$with_ucx/lib"
           AS_IF([test -d "$with_ucx/lib64" -a ! -e "$with_ucx/lib/libucp.so"], [tc_ucx_libdir="$with_ucx/lib64"])
           UCX_LDFLAGS="-L$tc_ucx_libdir -Wl,-rpath,$tc_ucx_libdir"
           UCX_LIBS="-lucp -luct -lucs -lucm"
           UCX_VERSION=`sed -n 's/^#define UCP_VERSION_STRING *"\(.*\)"/\1/p' $with_ucx/include/ucp/api/ucp_version.h 2>/dev/null`
           AS_IF([test -z "$UCX_VERSION"],
                 [UCX_VERSION=`sed -n 's/.*define UCP_API_MAJOR *\([[0-9]]*\).*/\1/p' $with_ucx/include/ucp/api/ucp_version.h`.`sed -n 's/.*define UCP_API_MINOR *\([[0-9]]*\).*/\1/p' $with_ucx/include/ucp/api/ucp_version.h`])])

    tc_save_CPPFLAGS="$CPPFLAGS"
    tc_save_LDFLAGS="$LDFLAGS"
    tc_save_LIBS="$LIBS"
    CPPFLAGS="$CPPFLAGS $UCX_CPPFLAGS"
    LDFLAGS="$LDFLAGS $UCX_LDFLAGS"
    AC_CHECK_HEADER([ucp/api/ucp.h], [],
        [AC_MSG_ERROR([ucp/api/ucp.h not usable: apt-get install libucx-dev])])
    AC_CHECK_HEADER([ucs/config/parser.h], [],
        [AC_MSG_ERROR([UCX devel headers (ucs/config/parser.h) missing: use a UCX built with --enable-devel-headers (Debian: libucx-dev)])],
        [#include <ucs/sys/preprocessor.h>])
    AC_CHECK_LIB([ucp], [ucp_put_nbx], [],
        [AC_MSG_ERROR([libucp with ucp_put_nbx (UCX >= 1.10) not found: apt-get install libucx-dev])],
        [-luct -lucs -lucm])
    CPPFLAGS="$tc_save_CPPFLAGS"
    LDFLAGS="$tc_save_LDFLAGS"
    LIBS="$tc_save_LIBS"

    AC_PATH_PROG([UCX_PERFTEST], [ucx_perftest], [], [$UCX_PREFIX/bin:$PATH])
    AC_PATH_PROG([UCX_INFO], [ucx_info], [], [$UCX_PREFIX/bin:$PATH])
    AC_SUBST([UCX_CPPFLAGS])
    AC_SUBST([UCX_LDFLAGS])
    AC_SUBST([UCX_LIBS])
    AC_SUBST([UCX_VERSION])
    AC_SUBST([UCX_PREFIX])
    AC_DEFINE_UNQUOTED([TC_UCX_VERSION_BUILT], ["$UCX_VERSION"], [UCX version built against])
    AC_DEFINE_UNQUOTED([TC_UCX_PREFIX_BUILT], ["$UCX_PREFIX"], [UCX prefix built against])
])

# TC_CHECK_LIBELF: the toolchain verifies GOT-patched jams with libelf.
AC_DEFUN([TC_CHECK_LIBELF], [
    PKG_CHECK_MODULES([LIBELF], [libelf], [],
        [AC_MSG_ERROR([libelf not found: apt-get install libelf-dev])])
])

# TC_CHECK_CRYPTO: OpenSSL's libcrypto, for the job key's HMAC-SHA256
# challenge and response (the TCP bootstrap and the join service).
AC_DEFUN([TC_CHECK_CRYPTO], [
    PKG_CHECK_MODULES([CRYPTO], [libcrypto >= 3.0], [],
        [AC_MSG_ERROR([OpenSSL's libcrypto not found: apt-get install libssl-dev])])
])

# TC_CHECK_LLVM: LLVM 14, the one LLVM of the project (Debian 12's default
# clang is 14): clang-14 writes the bitcode of portable jams, libLLVM-14's
# ORC JIT compiles it at the receiver, and a bitcode reader reads only its
# own or older releases' bitcode. The JIT module links it; nothing else does.
AC_DEFUN([TC_CHECK_LLVM], [
    AC_PATH_PROG([TC_LLVM_CONFIG], [llvm-config-14], [])
    AS_IF([test -z "$TC_LLVM_CONFIG"],
        [AC_MSG_ERROR([llvm-config-14 not found: apt-get install llvm-14-dev])])
    AC_PATH_PROG([TC_CLANG], [clang-14], [])
    AS_IF([test -z "$TC_CLANG"],
        [AC_MSG_ERROR([clang-14 not found: apt-get install clang-14])])
    LLVM_CPPFLAGS="-I`$TC_LLVM_CONFIG --includedir`"
    LLVM_LDFLAGS="`$TC_LLVM_CONFIG --ldflags`"
    LLVM_LIBS="-lLLVM-14"
    tc_save_CPPFLAGS=$CPPFLAGS
    CPPFLAGS="$CPPFLAGS $LLVM_CPPFLAGS"
    AC_CHECK_HEADER([llvm-c/LLJIT.h], [],
        [AC_MSG_ERROR([llvm-c/LLJIT.h not found: apt-get install llvm-14-dev])])
    CPPFLAGS=$tc_save_CPPFLAGS
    AC_SUBST([LLVM_CPPFLAGS])
    AC_SUBST([LLVM_LDFLAGS])
    AC_SUBST([LLVM_LIBS])
])

# TC_CHECK_GTEST: GoogleTest for make check.
AC_DEFUN([TC_CHECK_GTEST], [
    PKG_CHECK_MODULES([GTEST], [gtest], [],
        [AC_MSG_ERROR([GoogleTest not found: apt-get install libgtest-dev])])
])

# TC_CHECK_CROSS: the aarch64 cross compiler and qemu-user run the jam
# execution tests for the paper's platform; absent tools make those tests skip.
AC_DEFUN([TC_CHECK_CROSS], [
    AC_PATH_PROG([TC_AARCH64_CC], [aarch64-linux-gnu-gcc], [])
    AC_PATH_PROG([TC_QEMU_AARCH64], [qemu-aarch64], [])
    AS_IF([test -z "$TC_QEMU_AARCH64"], [AC_PATH_PROG([TC_QEMU_AARCH64], [qemu-aarch64-static], [])])
])

# TC_CHECK_PMIX: the PMIx bootstrap backend, built when PMIx >= 4 is found
# (libpmix-dev). --with-pmix=auto (default: pkg-config pmix), yes (the same,
# absence is an error), no, or DIR (an install prefix with include/pmix.h).
AC_DEFUN([TC_CHECK_PMIX], [
    AC_ARG_WITH([pmix],
        [AS_HELP_STRING([--with-pmix@<:@=DIR@:>@], [PMIx bootstrap backend (default: auto, when pkg-config finds pmix >= 4)])],
        [], [with_pmix=auto])

    tc_have_pmix=no
    PMIX_CPPFLAGS=""
    PMIX_LDFLAGS=""
    PMIX_LIBS=""
    PMIX_VERSION=""
    AS_CASE(["x$with_pmix"],
        [xno], [],
        [xyes|xauto],
        [PKG_CHECK_MODULES([PMIX], [pmix >= 4], [tc_have_pmix=yes], [tc_have_pmix=no])
         AS_IF([test "x$tc_have_pmix" = xyes],
               [PMIX_VERSION=`$PKG_CONFIG --modversion pmix`
                # -isystem: warnings in PMIx's headers are not ours to fix;
                # never -isystem /usr/include (it breaks #include_next)
                for tc_flag in $PMIX_CFLAGS; do
                    AS_CASE(["$tc_flag"],
                        [-I/usr/include], [],
                        [-I*], [PMIX_CPPFLAGS="$PMIX_CPPFLAGS -isystem `echo "$tc_flag" | sed 's/^-I//'`"],
                        [PMIX_CPPFLAGS="$PMIX_CPPFLAGS $tc_flag"])
                done
                # pmix.pc asks for --enable-new-dtags too: keep -L, rpath, -l
                for tc_flag in `$PKG_CONFIG --libs-only-L pmix`; do
                    PMIX_LDFLAGS="$PMIX_LDFLAGS $tc_flag -Wl,-rpath,`echo "$tc_flag" | sed 's/^-L//'`"
                done
                PMIX_LIBS=`$PKG_CONFIG --libs-only-l pmix`])],
        [tc_have_pmix=yes
         tc_pmix_libdir="$with_pmix/lib"
         AS_IF([test -d "$with_pmix/lib64" -a ! -e "$with_pmix/lib/libpmix.so"],
               [tc_pmix_libdir="$with_pmix/lib64"])
         PMIX_CPPFLAGS="-isystem $with_pmix/include"
         PMIX_LDFLAGS="-L$tc_pmix_libdir -Wl,-rpath,$tc_pmix_libdir"
         PMIX_LIBS="-lpmix"
         PMIX_VERSION=`sed -n 's/^#define PMIX_VERSION_MAJOR *\([[0-9]]*\)L*$/\1/p' "$with_pmix/include/pmix_version.h" 2>/dev/null`
         AS_IF([test -z "$PMIX_VERSION" || test "$PMIX_VERSION" -lt 4], [tc_have_pmix=no])])

    AS_IF([test "x$tc_have_pmix" = xyes],
          [tc_save_CPPFLAGS="$CPPFLAGS"
           tc_save_LDFLAGS="$LDFLAGS"
           tc_save_LIBS="$LIBS"
           CPPFLAGS="$CPPFLAGS $PMIX_CPPFLAGS"
           LDFLAGS="$LDFLAGS $PMIX_LDFLAGS"
           AC_CHECK_HEADER([pmix.h], [], [tc_have_pmix=no])
           AS_IF([test "x$tc_have_pmix" = xyes],
                 [AC_CHECK_LIB([pmix], [PMIx_Fence_nb], [:], [tc_have_pmix=no])])
           CPPFLAGS="$tc_save_CPPFLAGS"
           LDFLAGS="$tc_save_LDFLAGS"
           LIBS="$tc_save_LIBS"])

    AS_IF([test "x$tc_have_pmix" = xyes],
          [AC_DEFINE([TC_HAVE_PMIX], [1], [Define to 1 to build the PMIx bootstrap backend])
           AC_MSG_NOTICE([PMIx $PMIX_VERSION: building the pmix bootstrap backend])],
          [test "x$with_pmix" != xno -a "x$with_pmix" != xauto],
          [AC_MSG_ERROR([--with-pmix=$with_pmix: PMIx >= 4 not usable (pkg-config pmix, or DIR/include/pmix.h and DIR/lib/libpmix): apt-get install libpmix-dev])],
          [test "x$with_pmix" = xauto],
          [AC_MSG_NOTICE([PMIx not found: the pmix bootstrap backend is not built (apt-get install libpmix-dev)])],
          [AC_MSG_NOTICE([--without-pmix: the pmix bootstrap backend is not built])])
    AM_CONDITIONAL([HAVE_PMIX], [test "x$tc_have_pmix" = xyes])
    AC_SUBST([PMIX_CPPFLAGS])
    AC_SUBST([PMIX_LDFLAGS])
    AC_SUBST([PMIX_LIBS])
])
