#!/usr/bin/env bash
# scripts/plots.sh [RESULTS_DIR] - redraws everything derived from the CSV files of a
# results directory (default results/latest): the overhead table (overhead.csv/.md) and
# the conflict report (conflicts.md) by `scripts/stmbench report`, the figures
# (plots/*.png, *.svg) by `scripts/stmbench plot` (matplotlib). `make plots` runs it.
#
# Environment: PYTHON (default /usr/bin/python3, which has Debian's matplotlib).
# Exit status: 0 ok; 2 bad input (no such directory, no runs.csv, wrong columns);
# 1 a drawing step failed.
set -u
cd "$(dirname "$0")/.." || exit 3
dir=${1:-results/latest}
PY=${PYTHON:-/usr/bin/python3}

if [ ! -d "$dir" ]; then
    echo "plots.sh: no results directory '$dir' (run make bench first)" >&2
    exit 2
fi
if [ ! -f "$dir/runs.csv" ]; then
    echo "plots.sh: '$dir/runs.csv' does not exist: nothing to draw (run make bench first)" >&2
    exit 2
fi
if [ ! -x "$PY" ]; then
    echo "plots.sh: '$PY' not found; set PYTHON to a python3 with matplotlib" >&2
    exit 3
fi

"$PY" scripts/stmbench report all "$dir"
rc=$?
if [ $rc -ne 0 ]; then
    echo "plots.sh: the tables could not be made from '$dir' (exit $rc)" >&2
    exit $rc
fi
echo "plots.sh: wrote $dir/overhead.csv, $dir/overhead.md, $dir/conflicts.md"
"$PY" scripts/stmbench plot "$dir" || { echo "plots.sh: matplotlib figures failed" >&2; exit 1; }
