#!/usr/bin/env bash
# tests/test_instr_cache.sh [BUILD] - scripts/instr-count.sh's cache of counts
# (INSTR_CACHE_DIR), which make regress seeds from results/baseline/counts-cache: a
# binary that differs from the counted one only in its debug sections (what two clones
# built in two folders differ in) finds its counts; one whose other sections differ is
# counted again; INSTR_CACHE_ALSO receives each result, counted or found.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/checks.sh      # $tmp, check, checks_summary
build=${1:-build/release}
[ -x "$build/stmbench" ] || { echo "[  FAILED  ] no $build/stmbench: build first"; exit 1; }
command -v valgrind >/dev/null || { echo "[  FAILED  ] valgrind missing"; exit 1; }

count() { # BIN OUT.csv LOG
    STMBENCH=$1 INSTR_RUNTIMES=seq INSTR_WORKLOADS=bank INSTR_CACHE_SIM=1 INSTR_OPS=1000 \
        INSTR_CACHE_DIR=$tmp/cache INSTR_CACHE_ALSO=$tmp/also scripts/instr-count.sh "$2" >"$3" 2>&1
}
first() {
    count "$build/stmbench" "$tmp/a.csv" "$tmp/a.log" || return 1
    ! grep -q '(cached)' "$tmp/a.log" && [ "$(ls "$tmp/cache" | wc -l)" -eq 1 ] &&
        [ "$(ls "$tmp/also" | wc -l)" -eq 1 ] && [ "$(wc -l <"$tmp/a.csv")" -eq 2 ]
}
check "a first count is counted, kept in the cache and in INSTR_CACHE_ALSO" first
nodebug() {
    objcopy --strip-debug "$build/stmbench" "$tmp/nodebug" || return 1
    rm -rf "$tmp/also"
    count "$tmp/nodebug" "$tmp/b.csv" "$tmp/b.log" || return 1
    grep -q '(cached)' "$tmp/b.log" && cmp -s "$tmp/a.csv" "$tmp/b.csv" &&
        [ "$(ls "$tmp/also" | wc -l)" -eq 1 ]
}
check "the same binary without its debug sections finds the count (and copies it)" nodebug
other() {
    echo "another build" >"$tmp/note"
    objcopy --add-section .stmbench_test="$tmp/note" "$build/stmbench" "$tmp/other" || return 1
    count "$tmp/other" "$tmp/c.csv" "$tmp/c.log" || return 1
    ! grep -q '(cached)' "$tmp/c.log" && [ "$(ls "$tmp/cache" | wc -l)" -eq 2 ]
}
check "a binary with another section is counted again" other
checks_summary
