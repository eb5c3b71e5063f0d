#!/usr/bin/env bash
# scripts/micro.sh [BUILD] - the `make micro` micro-benchmarks (google-benchmark, from
# Debian's libbenchmark-dev) of barriers, commits, aborts, page unsharing, the mutex
# and the GIL, through the C shim harness/micro/shim.c.
#
# Runs BUILD/micro/micro (built by `make micro`: the driver harness/micro/micro.cc and
# one copy of harness/micro/shim.c per runtime that has atomic blocks of its own, each
# compiled with that runtime's flags), prints google-benchmark's console table and
# writes
#   results/latest/micro.json   google-benchmark's JSON (context + one entry per row)
#   results/latest/micro.csv    the same rows as CSV, converted from the JSON
#
# Environment:
#   MICRO_ARGS     more google-benchmark flags, e.g. "--benchmark_filter=stm
#                  --benchmark_min_time=0.1" (default: none; the full run takes ~30 s)
#   MICRO_OUT      output directory (default results/latest)
#   STM_CHAOS      must be unset: chaos mode would inject aborts and sleeps
#
# Exit status: 0 ok; 1 the benchmark binary failed; 2 bad environment; 3 not built.
set -u
cd "$(dirname "$0")/.." || exit 3
build=${1:-build/release}
out=${MICRO_OUT:-results/latest}
bin="$build/micro/micro"

if [ -n "${STM_CHAOS:-}" ]; then
    echo "micro: STM_CHAOS is set ('$STM_CHAOS'); unset it: chaos mode distorts timings" >&2
    exit 2
fi
if [ ! -x "$bin" ]; then
    echo "micro: $bin not found; run 'make micro' (or 'make $bin') first" >&2
    exit 3
fi
mkdir -p "$out" || exit 3

json="$out/micro.json"
csv="$out/micro.csv"
tmp="$json.tmp.$$"
# shellcheck disable=SC2086
"$bin" --benchmark_out="$tmp" --benchmark_out_format=json ${MICRO_ARGS:-}
rc=$?
if [ $rc -ne 0 ]; then
    rm -f "$tmp"
    echo "micro: $bin exited with status $rc" >&2
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
