#!/usr/bin/env bash
# scripts/dispatch-layout.sh OUT - how much interp's speed depends on where the link
# places its dispatch loop. For each dispatch (LAYOUT_MODES, default "threaded switch":
# one indirect jump per handler, or loop_raw.h's -DIV_SWITCH_DISPATCH) and each padding of
# LAYOUT_PADS bytes (default 0 8 16 24 32 40 48 56 1040 2088 3128) put before
# workloads/interp/loop_raw.h's functions (-DIV_LAYOUT_PAD), builds a harness in
# build/layout/<mode>-<pad>, then runs interp at 1 thread under each runtime of
# LAYOUT_RUNTIMES (default seq mutex gil stm locks) for LAYOUT_DURATION seconds
# (default 0.2), LAYOUT_ROUNDS times (default 5), every build and runtime in each round
# (interleaved, so a slow stretch of the machine falls on all of them).
# Writes OUT/dispatch_layout.csv (mode,pad,runtime,round,ops_per_s; never over an
# existing one) and OUT/dispatch_layout.md: per mode and runtime, the median over rounds
# for each padding, and their min, max and max/min. Exit 2 bad input, 3 a failed build.
set -u
out=${1:-}
[ -n "$out" ] || { echo "usage: scripts/dispatch-layout.sh OUT" >&2; exit 2; }
MODES=${LAYOUT_MODES:-threaded switch}
PADS=${LAYOUT_PADS:-0 8 16 24 32 40 48 56 1040 2088 3128}
RTS=${LAYOUT_RUNTIMES:-seq mutex gil stm locks}
ROUNDS=${LAYOUT_ROUNDS:-5}
DUR=${LAYOUT_DURATION:-0.2}
for m in $MODES; do
    case "$m" in threaded|switch) ;; *) echo "dispatch-layout: mode '$m' is not threaded or switch" >&2; exit 2;; esac
done
for v in $PADS $ROUNDS; do
    case "$v" in ''|*[!0-9]*) echo "dispatch-layout: paddings and rounds must be integers" >&2; exit 2;; esac
done
mkdir -p "$out" || exit 3
csv=$out/dispatch_layout.csv
[ -e "$csv" ] && { echo "dispatch-layout: $csv exists: not overwritten" >&2; exit 2; }
jobs=$(nproc 2>/dev/null || echo 2)
for m in $MODES; do
    for p in $PADS; do
        b=build/layout/$m-$p
        extra="-DIV_LAYOUT_PAD=$p"
        [ "$m" = switch ] && extra="$extra -DIV_SWITCH_DISPATCH"
        echo "dispatch-layout: building $b" >&2
        CFLAGS="$extra" make -s -j"$jobs" BUILD="$b" "$b/stmbench" >/dev/null ||
            { echo "dispatch-layout: the build of $b failed" >&2; exit 3; }
    done
done
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
echo "mode,pad,runtime,round,ops_per_s" >"$tmp"
for r in $(seq "$ROUNDS"); do
    for rt in $RTS; do
        for m in $MODES; do
            for p in $PADS; do
                v=$(build/layout/$m-$p/stmbench --runtime "$rt" --workload interp --threads 1 \
                        --duration "$DUR" 2>/dev/null | sed -n 's/.*ops\/s=\([0-9.e+]*\).*/\1/p')
                [ -n "$v" ] || { echo "dispatch-layout: $m-$p $rt gave no figure" >&2; exit 3; }
                echo "$m,$p,$rt,$r,$v" >>"$tmp"
            done
        done
    done
    echo "dispatch-layout: round $r of $ROUNDS done" >&2
done
mv "$tmp" "$csv"
trap - EXIT
/usr/bin/python3 - "$csv" "$out/dispatch_layout.md" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
modes = list(dict.fromkeys(r["mode"] for r in rows))
rts = list(dict.fromkeys(r["runtime"] for r in rows))
pads = list(dict.fromkeys(r["pad"] for r in rows))
med = {}
for m in modes:
    for rt in rts:
        for p in pads:
            v = [float(r["ops_per_s"]) for r in rows
                 if r["mode"] == m and r["runtime"] == rt and r["pad"] == p]
            med[m, rt, p] = statistics.median(v)
out = ["# interp at 1 thread, M bytecodes/s: median per padding (bytes before loop_raw.h's code)", ""]
out.append("| dispatch | runtime | " + " | ".join(pads) + " | min | max | max/min |")
out.append("|---|---|" + "---|" * (len(pads) + 3))
for m in modes:
    for rt in rts:
        v = [med[m, rt, p] for p in pads]
        out.append("| %s | %s | %s | %.0f | %.0f | %.2f |" % (
            m, rt, " | ".join("%.0f" % (x / 1e6) for x in v),
            min(v) / 1e6, max(v) / 1e6, max(v) / min(v)))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
print("\n".join(out))
EOF
