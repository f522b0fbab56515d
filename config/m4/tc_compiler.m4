# TC_CHECK_LANG_STD: C11 for ucx_ext/, C++20 for src/ and toolchain/.
AC_DEFUN([TC_CHECK_LANG_STD], [
    AC_LANG_PUSH([C])
    tc_save_CFLAGS="$CFLAGS"
    CFLAGS="$CFLAGS -std=gnu11"
    AC_MSG_CHECKING([whether $CC accepts -std=gnu11])
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[_Static_assert(1, "c11");]], [])],
                      [AC_MSG_RESULT([yes])],
                      [AC_MSG_ERROR([a C11 compiler is required: apt-get install gcc])])
    CFLAGS="$tc_save_CFLAGS"
    AC_LANG_POP([C])

    AC_LANG_PUSH([C++])
    tc_save_CXXFLAGS="$CXXFLAGS"
    CXXFLAGS="$CXXFLAGS -std=c++20"
    AC_MSG_CHECKING([whether $CXX accepts -std=c++20])
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <span>
                                        #include <concepts>]], [[std::span<int> s;]])],
                      [AC_MSG_RESULT([yes])],
                      [AC_MSG_ERROR([a C++20 compiler is required: apt-get install g++])])
    CXXFLAGS="$tc_save_CXXFLAGS"
    AC_LANG_POP([C++])

    AC_SUBST([TC_CFLAGS_STD], ["-std=gnu11"])
    AC_SUBST([TC_CXXFLAGS_STD], ["-std=c++20"])
    AC_SUBST([PTHREAD_LIBS], ["-pthread"])
])

# TC_CHECK_WARNINGS: warnings on and fatal with --enable-werror (the
# default for development trees, see contrib/configure-devel).
AC_DEFUN([TC_CHECK_WARNINGS], [
    AC_ARG_ENABLE([werror],
        [AS_HELP_STRING([--enable-werror], [treat compiler warnings as errors])],
        [], [enable_werror=no])
    tc_warn="-Wall -Wextra -Wno-unused-parameter -Wshadow -Wpointer-arith -Wundef -Wformat=2"
    AS_IF([test "x$enable_werror" = xyes], [tc_warn="$tc_warn -Werror"])
    # UCX's config tables end with {NULL}: the same idiom, the same exemption
    AC_SUBST([TC_WARN_CFLAGS], ["$tc_warn -Wstrict-prototypes -Wmissing-prototypes -Wno-missing-field-initializers"])
    AC_SUBST([TC_WARN_CXXFLAGS], ["$tc_warn -Wnon-virtual-dtor"])
])

# TC_CHECK_SANITIZERS: --enable-asan (ASan+UBSan) and --enable-tsan.
AC_DEFUN([TC_CHECK_SANITIZERS], [
    AC_ARG_ENABLE([asan],
        [AS_HELP_STRING([--enable-asan], [build with AddressSanitizer and UBSan])],
        [], [enable_asan=no])
    AC_ARG_ENABLE([tsan],
        [AS_HELP_STRING([--enable-tsan], [build with ThreadSanitizer])],
        [], [enable_tsan=no])
    tc_sanitizers=""
    tc_san_flags=""
    AS_IF([test "x$enable_asan" = xyes],
          [tc_sanitizers="asan,ubsan"
           tc_san_flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"])
    AS_IF([test "x$enable_tsan" = xyes],
          [tc_sanitizers="$tc_sanitizers tsan"
           tc_san_flags="$tc_san_flags -fsanitize=thread"])
    AC_SUBST([TC_SAN_FLAGS], ["$tc_san_flags"])
    AM_CONDITIONAL([HAVE_SANITIZERS], [test -n "$tc_sanitizers"])
    # gcc's -Wmaybe-uninitialized gives false positives under the
    # sanitizers (its manual says so; libstdc++'s <regex> trips it), which
    # --enable-werror made fatal. After TC_CHECK_WARNINGS: the
    # compiler's flags only, not TC_SAN_FLAGS, which clang's fuzz builds take
    AS_IF([test -n "$tc_sanitizers" && test "x$GCC" = xyes],
          [TC_WARN_CFLAGS="$TC_WARN_CFLAGS -Wno-maybe-uninitialized"
           TC_WARN_CXXFLAGS="$TC_WARN_CXXFLAGS -Wno-maybe-uninitialized"])
])

# TC_CHECK_TEST_FLAGS: the C++ test programs (test/) are compiled with the
# user's CXXFLAGS at -O1 and -g1: they are harnesses around the libraries,
# which keep the user's flags, and the suite's C++ builds in about half the
# time. -g1 keeps line tables and function names (a failing test's
# backtrace, perf), not the types and locals that cost a third of each
# compile. Not -O0: the probes that run as group members fill and check
# megabytes on the progress thread, and at -O0 that starves their
# heartbeats. --enable-optimized-tests keeps CXXFLAGS as they are.
AC_DEFUN([TC_CHECK_TEST_FLAGS], [
    AC_ARG_ENABLE([optimized-tests],
        [AS_HELP_STRING([--enable-optimized-tests],
                        [compile the C++ test programs with CXXFLAGS as given (default: -O1 -g1)])],
        [], [enable_optimized_tests=no])
    tc_test_cxxflags="$CXXFLAGS"
    AS_IF([test "x$enable_optimized_tests" != xyes],
          [tc_test_cxxflags="`echo " $CXXFLAGS " | sed -e 's/ -O[[0-9sgz]]* / /g' -e 's/ -O[[0-9sgz]]* / /g' -e 's/ -g / -g1 /g'` -O1"])
    AC_SUBST([TC_TEST_CXXFLAGS], ["$tc_test_cxxflags"])
])
