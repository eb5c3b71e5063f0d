#!/usr/bin/env bash
# tests/test_rmw_count.sh [BUILD] - scripts/rmw-count.sh, the atomic read-modify-writes
# per bytecode of interp's object model under callgrind: locks refcount's arith does at
# least one per bytecode (each count change is atomic), seq biased's none, and locks
# biased's arith stays under 0.05 (the owner's counts are plain, its death needs no
# read-modify-write, LOAD_GLOBAL takes no lock: issue 46's bound); an existing output
# and a bad RMW_OPS are refused with exit 2.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/checks.sh      # $tmp, check, checks_summary
build=${1:-build/release}
[ -x "$build/stmbench" ] || { echo "[  FAILED  ] no $build/stmbench: build first"; exit 1; }

field() { awk -F, -v rt="$2" -v m="$3" '$1 == rt && $2 == m {print $4}' "$1"; }
counted() {
    STMBENCH=$build/stmbench RMW_OPS=20000 RMW_RUNTIMES="seq locks" RMW_MODES="refcount biased" \
        RMW_PROGRAMS=arith scripts/rmw-count.sh "$tmp/r.csv" >/dev/null || return 1
    [ "$(wc -l <"$tmp/r.csv")" -eq 5 ] || return 1
    awk -v a="$(field "$tmp/r.csv" locks refcount)" -v b="$(field "$tmp/r.csv" seq biased)" \
        -v c="$(field "$tmp/r.csv" locks biased)" \
        'BEGIN { exit !(a >= 0.9 && b <= 0.01 && b >= -0.01 && c <= 0.05) }'
}
check "locks refcount >= 0.9, seq biased 0, locks biased <= 0.05 per bytecode on arith" counted
refused() {
    echo keep >"$tmp/exists.csv"
    STMBENCH=$build/stmbench scripts/rmw-count.sh "$tmp/exists.csv" 2>/dev/null
    [ $? -eq 2 ] && [ "$(cat "$tmp/exists.csv")" = keep ] || return 1
    STMBENCH=$build/stmbench RMW_OPS=x scripts/rmw-count.sh "$tmp/new.csv" 2>/dev/null
    [ $? -eq 2 ] && [ ! -e "$tmp/new.csv" ]
}
check "an existing output and a bad RMW_OPS are refused (exit 2)" refused
short() {   # one whole run of arith (25,013 bytecodes) at both lengths: no figure
    STMBENCH=$build/stmbench RMW_OPS=10000 RMW_RUNTIMES=seq RMW_MODES=biased RMW_PROGRAMS=arith \
        scripts/rmw-count.sh "$tmp/short.csv" >/dev/null 2>&1
    [ $? -eq 1 ] && [ "$(wc -l <"$tmp/short.csv")" -eq 1 ]
}
check "an RMW_OPS within one run of the program fails (exit 1), with no row" short
checks_summary
