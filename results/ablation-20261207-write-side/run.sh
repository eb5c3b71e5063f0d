#!/usr/bin/env bash
# results/ablation-20261207-write-side/run.sh OUT [ROUNDS] [SECONDS] [THREADS]
#
# What the STM's write side costs interp `counters --switch-interval 100` when several
# threads run: the revision ABL_REV (default efdeec4, the one the patches apply to) built
# as it is ("stm") and with each patch of this folder applied ("stm+nowrite", ...),
# against `locks` of the same build, run one after the other in every round (the order
# reversed every other round), the line transfer measured before each round. The
# patches are ablations and trials that never ship (each says what it removes); a run
# under nowrite or nocopy fails its check (exit 1) by design, and its row is kept.
#
# Writes OUT/runs.csv (the harness's rows; the patch is in the `runtime` column as
# stm+PATCH), OUT/transfer.txt and OUT/summary.md. OUT must not hold a runs.csv.
# Exit 2: bad arguments; 3: the build failed.
set -euo pipefail
die() { echo "run.sh: $2" >&2; exit "$1"; }
[ $# -ge 1 ] || die 2 "usage: run.sh OUT [ROUNDS] [SECONDS] [THREADS]"
out=$1 rounds=${2:-11} secs=${3:-1} threads=${4:-"1 2 8"}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die 2 "ROUNDS: a positive integer, not '$rounds'"
[[ $secs =~ ^[0-9]+(\.[0-9]+)?$ ]] || die 2 "SECONDS: a number, not '$secs'"
[ ! -e "$out/runs.csv" ] || die 2 "$out/runs.csv exists: it is never overwritten"
here=$(cd "$(dirname "$0")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
patches=(nowrite nocopy lean)
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d)
cleanup() { git -C "$root" worktree remove --force "$tmp/wt" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
git -C "$root" worktree add -q --detach "$tmp/wt" "${ABL_REV:-efdeec4}"
build() {
    make -C "$tmp/wt" -s -j"$(nproc)" BUILD=build/release build/release/stmbench >/dev/null ||
        die 3 "build failed ($1)"
    cp "$tmp/wt/build/release/stmbench" "$tmp/$1"
}
build stm
for p in "${patches[@]}"; do
    git -C "$tmp/wt" apply "$here/$p.diff" || die 3 "$p.diff does not apply to ${ABL_REV:-efdeec4}"
    build "$p"
    git -C "$tmp/wt" checkout -q -- .
done
cfg=(--workload interp --program counters --switch-interval 100)
runs=("stm:stm" "stm:locks")
for p in "${patches[@]}"; do runs+=("$p:stm"); done
for ((r = 1; r <= rounds; r++)); do
    echo "round $r: $("$tmp/stm" --line-transfer)" >>"$out/transfer.txt"
    order=("${runs[@]}")
    if ((r % 2 == 0)); then
        order=()
        for ((i = ${#runs[@]} - 1; i >= 0; i--)); do order+=("${runs[i]}"); done
    fi
    for t in $threads; do
        for spec in "${order[@]}"; do
            bin=${spec%%:*} rt=${spec##*:}
            # an ablation's failed check is expected (exit 1); anything else stops
            rc=0
            "$tmp/$bin" --runtime "$rt" "${cfg[@]}" --threads "$t" --duration "$secs" \
                --seed "$r" --csv "$tmp/one.csv" >/dev/null 2>&1 || rc=$?
            case "$rc:$bin" in
                0:* | 1:nowrite | 1:nocopy) ;;
                *) die 3 "$bin --runtime $rt --threads $t failed (exit $rc)" ;;
            esac
            name=$rt
            [ "$bin" = stm ] || name="stm+$bin"
            if [ ! -e "$out/runs.csv" ]; then head -1 "$tmp/one.csv" >"$out/runs.csv"; fi
            tail -n +2 "$tmp/one.csv" | /usr/bin/python3 -c '
import csv, sys
name, rnd = sys.argv[1], sys.argv[2]
head = next(csv.reader(open(sys.argv[3])))
w = csv.writer(sys.stdout, lineterminator="\n")
for row in csv.reader(sys.stdin):
    d = dict(zip(head, row)); d["runtime"] = name
    w.writerow([d[h] for h in head])' "$name" "$r" "$out/runs.csv" >>"$out/runs.csv"
            rm -f "$tmp/one.csv"
        done
    done
done
/usr/bin/python3 - "$out" <<'EOF' | tee "$out/summary.md"
import csv, statistics as st, sys, collections
out = sys.argv[1]
rows = list(csv.DictReader(open(out + "/runs.csv")))
v = collections.defaultdict(list)
for r in rows:
    v[(r["runtime"], int(r["threads"]))].append(float(r["ops_per_s"]))
names = [n for n in ["stm", "stm+nowrite", "stm+nocopy", "stm+lean", "locks"]
         if any(k[0] == n for k in v)]
ts = sorted({k[1] for k in v})
print("interp counters --switch-interval 100: medians of the rounds (M bytecodes/s) and "
      "the median of the rounds' ratios to locks (min-max)\n")
print("| runtime | " + " | ".join(f"{t}T" for t in ts) + " | " +
      " | ".join(f"÷ locks at {t}T" for t in ts) + " |")
print("|---" * (1 + 2 * len(ts)) + "|")
for n in names:
    cells = [f"{st.median(v[(n, t)]) / 1e6:.0f}" for t in ts]
    for t in ts:
        rr = [a / b for a, b in zip(v[(n, t)], v[("locks", t)])]
        cells.append(f"{st.median(rr):.3f} ({min(rr):.2f}-{max(rr):.2f})")
    print(f"| {n} | " + " | ".join(cells) + " |")
if 1 in ts:
    print("\nT over 1 thread, median of the rounds' ratios (alone, the ablations run stm's "
          "1-thread path unchanged)\n")
    print("| runtime | " + " | ".join(f"{t}T/1T" for t in ts if t > 1) + " |")
    print("|---" * (1 + len([t for t in ts if t > 1])) + "|")
    for n in names:
        one = v[(n, 1)]
        print(f"| {n} | " + " | ".join(
            f"×{st.median([a / b for a, b in zip(v[(n, t)], one)]):.2f}"
            for t in ts if t > 1) + " |")
EOF
