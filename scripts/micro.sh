#!/usr/bin/env bash
# scripts/micro.sh [BUILD] - the `make micro` micro-benchmarks (google-benchmark, from
# Debian's libbenchmark-dev) of barriers, commits, aborts, page unsharing, the mutex
# and the GIL, through the C shim harness/micro/shim.c.
#
# Builds BUILD/micro/micro (needs BUILD/libstmbench.a: `make` first; the Makefile's
# `make micro` does), runs it, prints google-benchmark's console table and writes
#   results/latest/micro.json   google-benchmark's JSON (context + one entry per row)
#   results/latest/micro.csv    the same rows as CSV, converted from the JSON
#
# Environment:
#   MICRO_ARGS     more google-benchmark flags, e.g. "--benchmark_filter=stm
#                  --benchmark_min_time=0.1" (default: none; the full run takes ~30 s)
#   MICRO_OUT      output directory (default results/latest)
#   CC, CXX        compilers (default clang / clang++ when present, else gcc / g++)
#   STM_CHAOS      must be unset: chaos mode would inject aborts and sleeps
#
# Exit status: 0 ok; 1 the benchmark binary failed; 2 bad environment; 3 build failed.
set -u
cd "$(dirname "$0")/.." || exit 3
build=${1:-build}
out=${MICRO_OUT:-results/latest}
lib="$build/libstmbench.a"

if [ -n "${STM_CHAOS:-}" ]; then
    echo "micro: STM_CHAOS is set ('$STM_CHAOS'); unset it: chaos mode distorts timings" >&2
    exit 2
fi
if [ ! -f "$lib" ]; then
    echo "micro: $lib not found; run 'make BUILD=$build' first" >&2
    exit 3
fi
if [ -z "${CC:-}" ] || [ "$CC" = cc ]; then
    if command -v clang >/dev/null; then CC=clang; else CC=gcc; fi
fi
if [ -z "${CXX:-}" ]; then
    case "$CC" in *clang*) CXX=clang++ ;; *) CXX=g++ ;; esac
fi

obj="$build/micro"
mkdir -p "$obj" "$out" || exit 3
CPPFLAGS="-I. -D_GNU_SOURCE"
CFLAGS="-std=gnu11 -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter -pthread"
# as in the Makefile: gcc's -Wclobbered flags locals assigned inside stm blocks
case "$(basename "$CC")" in *gcc*) CFLAGS="$CFLAGS -Wno-clobbered" ;; esac
CXXFLAGS="-std=c++17 -O2 -g -Wall -Wextra -Werror -pthread"

objs=()
for rt in seq mutex gil stm; do
    RT=$(echo "$rt" | tr a-z A-Z)
    o="$obj/shim_$rt.o"
    $CC $CPPFLAGS -DSYNC_RT_$RT -DMICRO_PREFIX=$rt $CFLAGS -c harness/micro/shim.c -o "$o" ||
        { echo "micro: compiling the $rt shim failed" >&2; exit 3; }
    objs+=("$o")
done
$CXX $CPPFLAGS $CXXFLAGS -c harness/micro/micro.cc -o "$obj/micro.o" ||
    { echo "micro: compiling micro.cc failed" >&2; exit 3; }
$CXX -pthread "$obj/micro.o" "${objs[@]}" "$lib" -lbenchmark -lhwloc -lm -lpthread \
    -o "$obj/micro" || { echo "micro: linking failed" >&2; exit 3; }

json="$out/micro.json"
csv="$out/micro.csv"
tmp="$json.tmp.$$"
# shellcheck disable=SC2086
"$obj/micro" --benchmark_out="$tmp" --benchmark_out_format=json ${MICRO_ARGS:-}
rc=$?
if [ $rc -ne 0 ]; then
    rm -f "$tmp"
    echo "micro: $obj/micro exited with status $rc" >&2
    exit 1
fi
mv "$tmp" "$json"

# CSV from the JSON (one row per benchmark; skipped ones keep their reason).
/usr/bin/python3 - "$json" "$csv" <<'EOF' || { echo "micro: writing $csv failed" >&2; exit 1; }
import csv, json, sys
src, dst = sys.argv[1], sys.argv[2]
with open(src) as f:
    doc = json.load(f)
cols = ["name", "op", "runtime", "iterations", "real_time", "cpu_time", "time_unit",
        "label", "error_message"]
with open(dst + ".tmp", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(cols)
    for b in doc.get("benchmarks", []):
        name = b.get("run_name", b.get("name", ""))
        base = name.split("/manual_time")[0]
        op, _, rt = base.partition("/")
        w.writerow([name, op, rt, b.get("iterations", ""), b.get("real_time", ""),
                    b.get("cpu_time", ""), b.get("time_unit", ""), b.get("label", ""),
                    b.get("error_message", "")])
import os
os.replace(dst + ".tmp", dst)
EOF
echo "micro: wrote $json and $csv"
