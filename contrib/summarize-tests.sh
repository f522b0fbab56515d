#!/usr/bin/env bash
#
# Sum test cases over every suite's log in a build tree: GoogleTest suites
# report their own counts; other Automake tests count as one case each.
# Prints "N passed, N failed, N skipped"; exits 1 if anything failed.
#
set -uo pipefail
build=${1:-build}
passed=0 failed=0 skipped=0

while IFS= read -r trs; do
    log=${trs%.trs}.log
    result=$(sed -n 's/^:test-result: //p' "$trs" | head -1)
    if grep -q '^\[==========\] .* ran\.' "$log" 2>/dev/null; then
        p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
        s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
        f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
        passed=$((passed + ${p:-0}))
        skipped=$((skipped + ${s:-0}))
        failed=$((failed + ${f:-0}))
        # name each failed case, with the assertion that failed, so the
        # record of a run says what broke and not only how many
        if [ "${f:-0}" -gt 0 ]; then
            sed -n 's/^\[  FAILED  \] \([^ ]*\) (.*/failed: \1/p' "$log"
            grep -B2 -A6 -m5 'Failure$' "$log" | sed 's/^/    /'
        fi
        # a crash after the summary, or a non-zero exit, is a failure too
        if [ "$result" = FAIL ] || [ "$result" = ERROR ]; then
            if [ "${f:-0}" -eq 0 ]; then
                failed=$((failed + 1))
                echo "failed: ${trs%.trs} (exit status after its summary)"
                tail -n 5 "$log" | sed 's/^/    /'
            fi
        fi
    else
        case "$result" in
            PASS|XFAIL) passed=$((passed + 1)) ;;
            SKIP) skipped=$((skipped + 1)) ;;
            *) failed=$((failed + 1)); echo "failed: ${trs%.trs}"
               tail -n 8 "$log" | sed 's/^/    /' ;;
        esac
    fi
done < <(find "$build" -name '*.trs' | sort)

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
