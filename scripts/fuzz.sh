#!/usr/bin/env bash
# scripts/fuzz.sh [BUILD] - `make fuzz`: runs every libFuzzer target of the interp
# workload, one after the other, each on its own copy of the seed corpus.
#
#   fuzz_asm  (tests/fuzz/fuzz_asm.c) the loader alone: every input is rejected with a
#             message or loads into a program that keeps the VM's promises; fast
#   fuzz_run  (tests/fuzz/fuzz_run.c) each input that loads is also set up, run under
#             seq for a bounded number of bytecodes (two threads taking turns) and its
#             `.expect` lines evaluated by the workload's check
#
# Both are built by the Makefile (`make fuzz-build`: BUILD/fuzz/, clang with
# -fsanitize=fuzzer,address,undefined, linked against the library's sources compiled
# so); run directly, this script builds them first. Seeds: tests/fuzz/corpus plus
# tests/programs/*.stm, copied to BUILD/fuzz/corpus-<target>/ (new inputs stay there);
# dictionary tests/fuzz/interp.dict. Logs: BUILD/fuzz/<target>.log.
#
# Environment:
#   FUZZ_SECONDS  run time of the whole, split evenly between the targets (default 60)
#   FUZZ_RUNS     inputs per target instead (libFuzzer -runs; FUZZ_SECONDS then unused)
#   FUZZ_JOBS     parallel libFuzzer jobs per target (-fork; default 1)
#   FUZZ_CC       the compiler (default clang; libFuzzer needs clang)
#
# A crash, a sanitizer report, a leak or a timeout is written to
# BUILD/fuzz/artifacts/<target>-crash-* (-leak-*, -timeout-*, -oom-*); the previous
# run's artifacts are moved to BUILD/fuzz/artifacts.previous/ first. Exit status: 0
# every target ran and found nothing; 1 a target failed or left an artifact; 2 bad
# variables; 3 the targets could not be built.
set -u
cd "$(dirname "$0")/.." || exit 3
die() { echo "fuzz: $2" >&2; exit "$1"; }

build=${1:-build/release}
secs=${FUZZ_SECONDS:-60}
runs=${FUZZ_RUNS:-}
jobs=${FUZZ_JOBS:-1}
cc=${FUZZ_CC:-clang}
out="$build/fuzz"

[[ $secs =~ ^[0-9]+$ ]] && [ "$secs" -ge 1 ] ||
    die 2 "FUZZ_SECONDS='$secs' is not a positive integer number of seconds"
[ -z "$runs" ] || { [[ $runs =~ ^[0-9]+$ ]] && [ "$runs" -ge 1 ]; } ||
    die 2 "FUZZ_RUNS='$runs' is not a positive integer"
[[ $jobs =~ ^[0-9]+$ ]] && [ "$jobs" -ge 1 ] ||
    die 2 "FUZZ_JOBS='$jobs' is not a positive integer"
command -v "$cc" >/dev/null || die 3 "FUZZ_CC='$cc' not found (libFuzzer needs clang)"

targets=()
for src in tests/fuzz/fuzz_*.c; do
    [ -e "$src" ] && targets+=("$(basename "$src" .c)")
done
[ ${#targets[@]} -gt 0 ] || die 3 "no tests/fuzz/fuzz_*.c"
# Under make (make fuzz) the targets are prerequisites, built already.
if [ -z "${MAKELEVEL:-}" ]; then
    make --no-print-directory BUILD="$build" FUZZ_CC="$cc" fuzz-build ||
        die 3 "building the fuzz targets failed"
fi
for t in "${targets[@]}"; do
    [ -x "$out/$t" ] || die 3 "$out/$t was not built (make BUILD=$build fuzz-build)"
done

arts="$out/artifacts"
rm -rf "$arts.previous"
[ -d "$arts" ] && mv "$arts" "$arts.previous"
mkdir -p "$arts" || die 3 "cannot create $arts"

limit=(-max_total_time=$(( secs / ${#targets[@]} > 0 ? secs / ${#targets[@]} : 1 )))
[ -n "$runs" ] && limit=(-runs="$runs")
par=()
[ "$jobs" -gt 1 ] && par=(-fork="$jobs")
status=0 total=0
for t in "${targets[@]}"; do
    corpus="$out/corpus-$t"
    rm -rf "$corpus" && mkdir -p "$corpus" || die 3 "cannot create $corpus"
    cp tests/fuzz/corpus/* "$corpus"/ 2>/dev/null
    for f in tests/programs/*.stm; do
        [ -e "$f" ] && cp "$f" "$corpus/prog-$(basename "$f")"
    done
    log="$out/$t.log"
    echo "fuzz: $t: ${limit[0]#-} on $(ls "$corpus" | wc -l) seed inputs (log: $log)"
    "$out/$t" "${limit[@]}" -max_len=8192 -timeout=10 -dict=tests/fuzz/interp.dict \
        "${par[@]+"${par[@]}"}" -artifact_prefix="$arts/$t-" -print_final_stats=1 \
        "$corpus" >"$log" 2>&1
    rc=$?
    grep -E '^#[0-9]+ *(INITED|DONE)|^(==[0-9]+==)?ERROR|SUMMARY:|^artifact_prefix|Test unit written' "$log"
    n=$(awk '/stat::number_of_executed_units/ {print $2}' "$log" | tail -n 1)
    total=$((total + ${n:-0}))
    echo "fuzz: $t: exit $rc, ${n:-?} inputs run"
    [ "$rc" -eq 0 ] || status=1
done
found=$(find "$arts" -type f | wc -l)
[ "$found" -eq 0 ] || status=1
echo "fuzz: ${#targets[@]} targets, $total inputs run, $found crash/leak/timeout file(s) in $arts"
exit $status
