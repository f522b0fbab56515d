#!/usr/bin/env bash
#
# The documentation against the tree: every command quoted in a ```sh block
# of README.md and docs/*.md must name a script, program or tool that
# exists; every repository path quoted in `code` and every relative link
# must exist; and
# docs/configuration.md must be what contrib/gen-config-doc.sh generates
# from the UCX_TC_* tables. One line per problem, then FAIL or PASS.
set -uo pipefail
src=${TC_SRCDIR:?TC_SRCDIR: the source tree}
build=${TC_BUILDDIR:?TC_BUILDDIR: the build tree}
cd "$src" || exit 1
docs=(README.md docs/*.md)
problems=0
problem() { echo "  $*"; problems=$((problems + 1)); }

# programs the docs may run that the project does not build (Debian's)
external="autoreconf make cc gcc mpirun oshrun pkg-config stress-ng perf gdb ip tc
          apt-get sudo env cd export for do done git ucx_info ucx_perftest gnuplot head base64 chmod openssl"
# programs make builds only on request (make -C build perftest)
on_request="contrib/ucx_perftest/ucx_perftest"

check_command() {   # $1: doc, $2: the command line
    local doc=$1 line=$2 word
    set -f
    # shellcheck disable=SC2086
    set -- $line
    set +f
    while [ $# -gt 0 ] && [[ $1 == [A-Z_]*=* ]]; do shift; done   # VAR=value
    [ $# -gt 0 ] || return 0
    word=$1
    case $word in
        '#'*|'['*|'|'*|'('*|')'*|'{'*|'}'*|'-'*|'>'*|'<'*|'&'*) return 0 ;;
        ./configure) [ -f configure.ac ] || problem "$doc: $word: no configure.ac" ;;
        ./*) return 0 ;;   # the reader's own program
        build/*)
            local rel=${word#build/}
            [ -e "$build/$rel" ] || [[ " $on_request " == *" $rel "* ]] ||
                problem "$doc: '$word' is not built"
            ;;
        contrib/*|test/*|toolchain/*|src/*|ucx_ext/*)
            [ -e "$word" ] || problem "$doc: '$word' does not exist" ;;
        twochains-*)
            [ -x "$build/src/tools/$word" ] || [ -x "$build/toolchain/$word" ] ||
                problem "$doc: tool '$word' is not built"
            ;;
        *)
            [[ " $(echo $external) " == *" $word "* ]] ||
                problem "$doc: '$word' is neither built here nor a known external program"
            ;;
    esac
}

for doc in "${docs[@]}"; do
    # ```sh blocks, continuation lines joined, comments cut
    awk '/^ *```sh/ { on = 1; next } /^ *```/ { on = 0; next }
         on { sub(/^ +/, ""); if (sub(/\\$/, "")) { acc = acc $0 " "; next }
              print acc $0; acc = "" }' "$doc" |
    sed -e 's/ #.*$//' -e 's/^#.*$//' |
    while IFS= read -r cmd; do
        [ -n "$cmd" ] || continue
        # each part of a pipeline or a list is a command
        IFS=$'\n' read -r -d '' -a parts < <(printf '%s' "$cmd" | sed -e 's/ \(&&\|||\||\) /\n/g' -e 's/; /\n/g' && printf '\0')
        for part in "${parts[@]}"; do
            check_command "$doc" "$part"
        done
    done
    # repository paths quoted in `code`
    grep -o '`[^`]*`' "$doc" | tr -d '`' | tr ' ' '\n' |
    grep -E '^(contrib|test|toolchain|src|ucx_ext|docs)/[A-Za-z0-9_./-]+$' |
    sed -e 's/[.,:;)]*$//' | sort -u |
    while IFS= read -r path; do
        [ -e "$path" ] || problem "$doc: path '$path' does not exist"
    done
    # relative links, from the document's folder
    awk '/^ *```/ { on = !on; next } !on' "$doc" | grep -o '](\([^)#]*\)[)#]' | sed -e 's/^](//' -e 's/[)#]$//' |
    grep -v '^[a-z]*:' | grep . | sort -u |
    while IFS= read -r link; do
        [ -e "$(dirname "$doc")/$link" ] || problem "$doc: link '$link' does not exist"
    done
done 2>&1 | tee "${TMPDIR:-/tmp}/doc_commands.$$"
problems=$(grep -c . "${TMPDIR:-/tmp}/doc_commands.$$")
rm -f "${TMPDIR:-/tmp}/doc_commands.$$"

generated=$(contrib/gen-config-doc.sh "$build") || { echo "FAIL: contrib/gen-config-doc.sh failed"; exit 1; }
if ! diff -u docs/configuration.md <(printf '%s\n' "$generated") >/dev/null; then
    echo "  docs/configuration.md differs from the tables; regenerate it:"
    echo "    contrib/gen-config-doc.sh > docs/configuration.md"
    problems=$((problems + 1))
fi

if [ "$problems" -ne 0 ]; then
    echo "FAIL: $problems problems in the documentation"
    exit 1
fi
echo "PASS: every quoted command and path exists; the configuration reference is current"
