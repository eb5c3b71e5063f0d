#!/usr/bin/env bash
# scripts/run-tests.sh BUILD - runs every cmocka test program in BUILD/tests and ends
# with one summary line "N passed, M failed" (test cases, from cmocka's own counts).
# Exits non-zero if any test case or program failed.
# Then every tests/test_*.sh script (it prints cmocka's summary lines), and the Python
# tests (tests/python/test_*.py: the results scripts, scripts/stmbench) with the standard
# runner, `python3 -m unittest discover`, its counts turned into cmocka's summary words.
# The STM protocol tests also run once under valgrind's memcheck, where wrgsbase is
# unavailable (the runtime falls back to arch_prctl), pages are eager, and memory errors
# fail the run; and once natively with STM_PAGES=eager (every granule a segment's own).
# With STM_DEBUG_BUILD=dir (make test sets it) the STM's protocol and stress tests also
# run from that MODE=debug build, where the STM asserts its invariants (STM_ASSERT).
# Each program's wall time follows its output ("--- name: S s"), and the ten slowest are
# listed before the summary: where make test's (and CI's) minutes go.
set -u
build=${1:-build/release}
passed=0 failed=0 bad_progs=()
runs=() times=()
now() { date +%s.%N; }
for t in "$build"/tests/test_*; do
    # only programs whose source is still there (not one left over from a removed test)
    [ -x "$t" ] && [ -f "tests/$(basename "$t").c" ] && runs+=("$t")
done
for t in tests/test_*.sh; do
    [ -x "$t" ] && runs+=("script:$t")
done
runs+=("python:tests/python")
runs+=("eager:$build/tests/test_stm" "valgrind:$build/tests/test_stm")
dbg=${STM_DEBUG_BUILD:-}
if [ -n "$dbg" ] && [ "$dbg" != "$build" ]; then
    runs+=("debug:$dbg/tests/test_stm" "debug:$dbg/tests/test_stm_stress")
fi
for t in "${runs[@]}"; do
    log=$(mktemp)
    t0=$(now)
    case "$t" in
    eager:*)
        t=${t#eager:}
        name="$(basename "$t") with STM_PAGES=eager"
        echo "=== $name"
        STM_PAGES=eager timeout 600 "$t" >"$log" 2>&1
        ;;
    valgrind:*)
        t=${t#valgrind:}
        name="$(basename "$t") under valgrind memcheck"
        echo "=== $name"
        timeout 600 valgrind -q --error-exitcode=99 "$t" >"$log" 2>&1
        ;;
    debug:*)
        t=${t#debug:}
        name="$(basename "$t") from MODE=debug (invariant asserts on)"
        echo "=== $name"
        timeout 600 "$t" >"$log" 2>&1
        ;;
    python:*)
        t=${t#python:}
        name="python unittest ($t)"
        echo "=== $name"
        STMBENCH=$build/stmbench timeout 900 /usr/bin/python3 -m unittest discover -s "$t" \
            -t "$t" >"$log" 2>&1
        py_rc=$?
        n=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' "$log")
        bad=$(grep -E '^FAILED \(' "$log" | grep -oE '(failures|errors)=[0-9]+' |
              awk -F= '{s+=$2} END {print s+0}')
        echo "[  PASSED  ] $(( ${n:-0} - bad )) test(s)." >>"$log"
        [ "$bad" -gt 0 ] && echo "[  FAILED  ] $bad test(s), listed above." >>"$log"
        (exit $py_rc)
        ;;
    script:*)
        t=${t#script:}
        name=$(basename "$t")
        echo "=== $name"
        timeout 600 "$t" "$build" >"$log" 2>&1
        ;;
    *)
        name=$(basename "$t")
        echo "=== $name"
        timeout 600 "$t" >"$log" 2>&1
        ;;
    esac
    rc=$?
    secs=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
    cat "$log"
    echo "--- $name: $secs s"
    times+=("$secs	$name")
    p=$(grep -E '^\[  PASSED  \] [0-9]+ test' "$log" | awk '{s+=$4} END {print s+0}')
    f=$(grep -E '^\[  FAILED  \] [0-9]+ test' "$log" | awk '{s+=$4} END {print s+0}')
    passed=$((passed + p)); failed=$((failed + f))
    if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
        failed=$((failed + 1)); bad_progs+=("$name (exit $rc)")
    fi
    rm -f "$log"
done
echo "slowest:"
printf '%s\n' "${times[@]}" | sort -t '	' -k1,1 -rn | head -10 | awk -F '\t' '{ printf "  %7s s  %s\n", $1, $2 }'
for b in "${bad_progs[@]+"${bad_progs[@]}"}"; do echo "program failed: $b"; done
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
