#!/usr/bin/env bash
# scripts/plots.sh [RESULTS_DIR] - redraws everything derived from the CSV files of a
# results directory (default results/latest): the overhead table (overhead.csv/.md),
# the conflict report (conflicts.md), the matplotlib figures (plots/*.png, *.svg) and
# the gnuplot throughput figures (plots/gnuplot_throughput_<w>.png), whose dumb-terminal
# versions are printed on stdout so that CI logs show them. `make plots` runs it.
#
# Environment: PYTHON (default /usr/bin/python3, which has Debian's matplotlib),
# PLOTS_DUMB=0 to skip the terminal plots.
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

status=0
# Tables first (and the gnuplot data files: one "workload<TAB>file<TAB>ncols<TAB>hasseq<TAB>hw"
# line each; hw: the hardware threads when a point is oversubscribed, else 0).
gpdata=$("$PY" scripts/stmbench_report.py all "$dir")
rc=$?
if [ $rc -ne 0 ]; then
    echo "plots.sh: the tables could not be made from '$dir' (exit $rc)" >&2
    exit $rc
fi
echo "plots.sh: wrote $dir/overhead.csv, $dir/overhead.md, $dir/conflicts.md"

"$PY" scripts/plot.py "$dir" || { echo "plots.sh: matplotlib figures failed" >&2; status=1; }

if ! command -v gnuplot >/dev/null 2>&1; then
    echo "plots.sh: gnuplot not installed (apt-get install gnuplot-nox): gnuplot figures skipped" >&2
    exit $status
fi
# pngcairo where this gnuplot has it (Debian's gnuplot-nox does), else libgd's png.
if gnuplot -e 'set terminal' 2>&1 | grep -qw pngcairo; then term=pngcairo; else term=png; fi
machine=$("$PY" -c 'import sys; sys.path.insert(0, "scripts"); import stmbench_report as r
rows, ctx = r.load_dir(sys.argv[1]); print(r.machine_description(ctx, rows))' "$dir" 2>/dev/null)
ngp=0
while IFS=$'\t' read -r wl dat ncols hasseq hw; do
    [ -n "$wl" ] || continue
    out="$dir/plots/gnuplot_throughput_$(basename "$dat" .dat | sed 's/^throughput_//').png"
    # gnuplot strings are single-quoted: drop quotes from the title.
    ttl="${wl}: throughput against threads - ${machine//\'/}"
    if gnuplot -e "datafile='$dat'; outfile='$out'; ttl='$ttl'; ncols=$ncols; hasseq=$hasseq; hw=${hw:-0}; term='$term'" \
        scripts/throughput.gp; then
        ngp=$((ngp + 1))
    else
        echo "plots.sh: gnuplot failed for $wl" >&2
        status=1
    fi
    if [ "${PLOTS_DUMB:-1}" != 0 ]; then
        gnuplot -e "datafile='$dat'; outfile=''; ttl='${wl}: throughput (Mops/s) against threads'; ncols=$ncols; hasseq=$hasseq; hw=${hw:-0}; term='dumb'" \
            scripts/throughput.gp || status=1
    fi
done <<<"$gpdata"
echo "plots.sh: $ngp gnuplot figure(s) in $dir/plots"
exit $status
