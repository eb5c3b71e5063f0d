#!/usr/bin/env bash
# scripts/instr-count.sh OUT.csv - instructions per operation of every runtime x workload
# at 1 thread, counted by valgrind's callgrind (deterministic, unlike timings on a VM).
#
# Each configuration runs twice under callgrind, with --ops N and --ops 2N (same seed,
# --pin none); instr_per_op = (I(2N) - I(N)) / N, so the fixed cost of start-up, the
# workload's setup and its check cancels out. Both runs of a pair go in parallel.
# The total is the `totals:` (or older `summary:`) line of the callgrind output.
#
# Writes OUT.csv: runtime,workload,instr_per_op,ops,instr_n,instr_2n
# Environment: BUILD / STMBENCH (harness binary), INSTR_OPS (N, default 20000),
# INSTR_RUNTIMES / INSTR_WORKLOADS (default: all that `stmbench --list` prints),
# INSTR_ARGS (more harness arguments, e.g. workload knobs).
# Exit status: 0 ok; 1 a configuration failed under valgrind (the others are written);
# 2 bad usage; 3 valgrind or the harness missing.
set -u
cd "$(dirname "$0")/.." || exit 3
die() { echo "instr-count: $2" >&2; exit "$1"; }

[ $# -eq 1 ] || die 2 "usage: scripts/instr-count.sh OUT.csv"
out=$1
BIN=${STMBENCH:-${BUILD:-build/release}/stmbench}
N=${INSTR_OPS:-20000}
[[ $N =~ ^[0-9]+$ ]] && [ "$N" -ge 1 ] || die 2 "INSTR_OPS='$N' is not a positive integer"
command -v valgrind >/dev/null || die 3 "valgrind is not installed (apt-get install valgrind)"
[ -x "$BIN" ] || die 3 "no harness binary '$BIN': run make first"
listing=$("$BIN" --list 2>&1) || die 3 "'$BIN --list' failed: $listing"
RUNTIMES=${INSTR_RUNTIMES:-$(awk '$1 == "runtime" {print $2}' <<<"$listing")}
WORKLOADS=${INSTR_WORKLOADS:-$(awk '$1 == "workload" {print $2}' <<<"$listing")}
read -r -a extra <<<"${INSTR_ARGS:-}"

tmp=$(mktemp -d) || die 3 "mktemp failed"
trap 'rm -rf "$tmp"' EXIT

# Instructions of one run (stdout), or nothing on failure (its log stays in $tmp).
count() { # rt wl ops tag
    local f=$tmp/cg.$4 log=$tmp/log.$4
    valgrind --tool=callgrind --callgrind-out-file="$f" --dump-instr=no \
        "$BIN" --runtime "$1" --workload "$2" --threads 1 --ops "$3" --seed 1 --pin none \
        "${extra[@]}" >"$log" 2>&1 || return 1
    awk '$1 == "totals:" || $1 == "summary:" {print $2; exit}' "$f"
}

echo "runtime,workload,instr_per_op,ops,instr_n,instr_2n" >"$out.tmp" || die 3 "cannot write '$out'"
fails=0
for wl in $WORKLOADS; do
    for rt in $RUNTIMES; do
        t0=$(date +%s)
        count "$rt" "$wl" "$N" a >"$tmp/a" &
        pa=$!
        count "$rt" "$wl" "$((2 * N))" b >"$tmp/b" &
        pb=$!
        wait $pa; ra=$?
        wait $pb; rb=$?
        ia=$(cat "$tmp/a") ib=$(cat "$tmp/b")
        if [ $ra -ne 0 ] || [ $rb -ne 0 ] || ! [[ $ia =~ ^[0-9]+$ && $ib =~ ^[0-9]+$ ]]; then
            echo "instr-count: $rt $wl FAILED under callgrind:" >&2
            tail -n 5 "$tmp/log.a" "$tmp/log.b" >&2
            fails=$((fails + 1))
            continue
        fi
        per=$(awk -v a="$ia" -v b="$ib" -v n="$N" 'BEGIN{printf "%.1f", (b - a) / n}')
        echo "$rt,$wl,$per,$N,$ia,$ib" >>"$out.tmp"
        printf 'instr-count: %-6s %-8s %10s instructions/op  (%ds)\n' "$rt" "$wl" "$per" $(( $(date +%s) - t0 ))
    done
done
mv "$out.tmp" "$out" || die 3 "cannot write '$out'"
[ $fails -eq 0 ] || { echo "instr-count: $fails configuration(s) failed; the rest are in $out" >&2; exit 1; }
exit 0
