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
