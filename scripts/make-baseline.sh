#!/usr/bin/env bash
# scripts/make-baseline.sh [RESULTS_DIR [BASELINE_DIR]] - makes results/baseline/ (what make regress
# compares with) from a finished `make bench` (default results/latest/): copies its
# runs.csv, context JSON, tables, conflict report and plots, and adds instructions.csv
# (callgrind instruction counts per operation, scripts/instr-count.sh). Review it, then
# commit results/baseline/ yourself.
#
# The bench log is not copied; a conflicts.csv over 5 MB is stored gzipped
# (conflicts.csv.gz) to keep the repository small.
# Exit status: 0 ok; 1 instruction counting failed for some configuration; 2 bad input.
set -u
cd "$(dirname "$0")/.." || exit 3
src=${1:-results/latest}
dst=${2:-results/baseline}
if [ ! -s "$src/runs.csv" ]; then
    echo "make-baseline: '$src/runs.csv' does not exist or is empty: run make bench first" >&2
    exit 2
fi
if [ -s "$src/failures.txt" ]; then
    echo "make-baseline: warning: some runs of that bench failed ($src/failures.txt):" >&2
    head -n 5 "$src/failures.txt" >&2
fi
tmp=$dst.new
rm -rf "$tmp" && mkdir -p "$tmp" || exit 3
for f in "$src"/*; do
    case $(basename "$f") in
        bench.log) ;;
        conflicts.csv)
            if [ "$(stat -c %s "$f")" -gt 5000000 ]; then gzip -c "$f" >"$tmp/conflicts.csv.gz"
            else cp "$f" "$tmp/"; fi ;;
        *) cp -r "$f" "$tmp/" ;;
    esac
done
echo "make-baseline: counting instructions per operation (callgrind, a few minutes)"
scripts/instr-count.sh "$tmp/instructions.csv"
rc=$?
[ $rc -le 1 ] || { rm -rf "$tmp"; exit $rc; }
rm -rf "$dst" && mv "$tmp" "$dst" || exit 3
echo "make-baseline: $dst/ made from $src/; check it with: scripts/stmbench regress $dst/runs.csv"
echo "make-baseline: then commit it: git add $dst && git commit -m 'results/baseline: ...' -- $dst"
exit $rc
