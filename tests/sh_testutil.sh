# tests/sh_testutil.sh - sourced by the shell tests (test_build.sh, test_sync_cost.sh,
# test_mutants.sh): one case's verdict in cmocka's words, and the summary lines that
# scripts/run-tests.sh counts.
passed=0 failed=0
check() { # NAME CONDITION-RESULT(0 ok) MESSAGE
    if [ "$2" -eq 0 ]; then
        echo "[       OK ] $1"; passed=$((passed + 1))
    else
        echo "[  FAILED  ] $1: $3"; failed=$((failed + 1))
    fi
}
summary() { # prints the totals; returns 0 when every case passed
    echo "[==========] $((passed + failed)) test(s) run."
    echo "[  PASSED  ] $passed test(s)."
    [ $failed -eq 0 ] || echo "[  FAILED  ] $failed test(s), listed above."
    [ $failed -eq 0 ]
}
