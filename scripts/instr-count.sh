#!/usr/bin/env bash
# scripts/instr-count.sh OUT.csv - instructions per operation of every runtime x workload
# at 1 thread, counted by valgrind's callgrind (deterministic, unlike timings on a VM).
#
# Each configuration runs twice under callgrind, with --ops N and --ops 2N (same seed,
# --pin none); instr_per_op = (I(2N) - I(N)) / N, so the fixed cost of start-up, the
# workload's setup and its check cancels out (where a workload rounds --ops up to whole
# units, the divisor is the difference of the operations the harness reports; N must
# then span more than one unit: interp's default program is 17,007 bytecodes). Both runs of a pair go in parallel.
# The total is the `totals:` (or older `summary:`) line of the callgrind output.
#
# Writes OUT.csv: runtime,workload,instr_per_op,ops,instr_n,instr_2n
# and with INSTR_CACHE_SIM=1 (callgrind --cache-sim=yes: a simulated L1 and last-level
# cache, as large as this machine's) three more per-operation columns:
#   d1_miss_per_op      D1mr + D1mw (L1 data cache read and write misses)
#   ll_miss_per_op      ILmr + DLmr + DLmw (last-level misses, instruction and data)
#   est_cycles_per_op   Ir + 10 x (I1mr + D1mr + D1mw) + 100 x (ILmr + DLmr + DLmw):
#                       an L1 miss costs about 10 cycles, a last-level miss about 100
#                       (the weights CodSpeed's instrumentation mode uses in spirit: a
#                       deterministic figure that sees cache misses, not a real time)
# Environment: BUILD / STMBENCH (harness binary), INSTR_OPS (N, default 20000; interp
# 10 x N, INSTR_OPS_SCALE_<workload> sets the factor: see ops_for below),
# INSTR_RUNTIMES / INSTR_WORKLOADS (default: all that `stmbench --list` prints),
# INSTR_ARGS (more harness arguments, e.g. workload knobs), INSTR_CACHE_SIM (1: cache
# simulation), INSTR_CACHE_DIR (a folder where each configuration's result is kept,
# keyed by the sha256 of the binary's code and data, valgrind's version, this CPU's
# caches (what --cache-sim models) and the arguments: the counts are deterministic, so
# an unchanged binary is not counted twice; scripts/regress-run.sh), INSTR_CACHE_ALSO
# (a second folder that each configuration's result, counted or found, is copied to:
# how results/baseline/counts-cache is refreshed, docs/regress.md). The binary's hash
# leaves out its debug sections and build id, which name the folder it was built in:
# two clones of one revision built by one compiler give one key.
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
SIM=${INSTR_CACHE_SIM:-0}
CACHE=${INSTR_CACHE_DIR:-}
cgopts=(--dump-instr=no)
[ "$SIM" = 1 ] && cgopts+=(--cache-sim=yes)
ALSO=${INSTR_CACHE_ALSO:-}
binsum= machine=
if [ -n "$CACHE" ]; then
    mkdir -p "$CACHE" || die 3 "cannot create '$CACHE'"
    [ -z "$ALSO" ] || mkdir -p "$ALSO" || die 3 "cannot create '$ALSO'"
    # the code and data only: objcopy drops what differs between two builds of one
    # tree in two folders (DWARF paths, the build id); the whole file without objcopy
    code=$(mktemp) || die 3 "mktemp failed"
    if objcopy --strip-debug --remove-section=.note.gnu.build-id "$BIN" "$code" 2>/dev/null; then
        binsum=code:$(sha256sum "$code" | cut -c1-64)
    else
        binsum=$(sha256sum "$BIN" | cut -c1-64) || die 3 "cannot read '$BIN'"
    fi
    rm -f "$code"
    # what callgrind's cache simulation takes from this CPU
    machine=$(grep -m1 '^model name' /proc/cpuinfo 2>/dev/null; getconf -a 2>/dev/null | grep CACHE)
fi

tmp=$(mktemp -d) || die 3 "mktemp failed"
trap 'rm -rf "$tmp"' EXIT

# Instructions of one run (stdout), or nothing on failure (its log stays in $tmp).
count() { # rt wl ops tag
    local f=$tmp/cg.$4 log=$tmp/log.$4
    valgrind --tool=callgrind --callgrind-out-file="$f" "${cgopts[@]}" \
        "$BIN" --runtime "$1" --workload "$2" --threads 1 --ops "$3" --seed 1 --pin none \
        "${extra[@]}" >"$log" 2>&1 || return 1
    # All events of the totals line: Ir, or Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw.
    awk '$1 == "events:" {for (i = 2; i <= NF; i++) ev[i] = $i}
         $1 == "totals:" || $1 == "summary:" {
             for (i = 2; i <= NF; i++) printf "%s=%s ", ev[i], $i; print ""; exit}' "$f"
}
ev() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$2"; } # event counts-line

hdr="runtime,workload,instr_per_op,ops,instr_n,instr_2n"
[ "$SIM" = 1 ] && hdr+=",d1_miss_per_op,ll_miss_per_op,est_cycles_per_op"
echo "$hdr" >"$out.tmp" || die 3 "cannot write '$out'"
fails=0
# Operations per workload: N, but 10 x N for interp, whose operation (a bytecode) is
# about 20 instructions: two runs of one binary differ by up to a few hundred cache
# misses (paths the harness takes on a timer, the pair running side by side), which
# over N bytecodes read as 0.016 LL misses per operation and tripped make regress's
# miss rule on an unchanged loop. INSTR_OPS_SCALE_<workload>=K sets a workload's
# factor.
ops_for() {
    local v="INSTR_OPS_SCALE_$1" k=1
    [ "$1" = interp ] && k=10
    k=${!v:-$k}
    [[ $k =~ ^[0-9]+$ ]] && [ "$k" -ge 1 ] || die 2 "$v='$k' is not a positive integer"
    echo $((N * k))
}
for wl in $WORKLOADS; do
    NW=$(ops_for "$wl") || exit 2
    for rt in $RUNTIMES; do
        t0=$(date +%s)
        key=
        if [ -n "$CACHE" ]; then
            key=$(printf '%s\n' "$binsum" "$(valgrind --version)" "$SIM" "$NW" "$rt" "$wl" "${extra[*]}" \
                  "$machine" | sha256sum | cut -c1-32)
            if [ -s "$CACHE/$key" ]; then
                cat "$CACHE/$key" >>"$out.tmp"
                [ -z "$ALSO" ] || cp "$CACHE/$key" "$ALSO/$key"
                echo "instr-count: $rt $wl: the same binary was counted before (cached)"
                continue
            fi
        fi
        count "$rt" "$wl" "$NW" a >"$tmp/a" &
        pa=$!
        count "$rt" "$wl" "$((2 * NW))" b >"$tmp/b" &
        pb=$!
        wait $pa; ra=$?
        wait $pb; rb=$?
        ea=$(cat "$tmp/a") eb=$(cat "$tmp/b")
        ia=$(ev Ir "$ea") ib=$(ev Ir "$eb")
        if [ $ra -ne 0 ] || [ $rb -ne 0 ] || ! [[ $ia =~ ^[0-9]+$ && $ib =~ ^[0-9]+$ ]]; then
            echo "instr-count: $rt $wl FAILED under callgrind:" >&2
            tail -n 5 "$tmp/log.a" "$tmp/log.b" >&2
            fails=$((fails + 1))
            continue
        fi
        # The operations the two runs did differ by N, unless the workload rounds --ops
        # up to whole units (interp: whole program runs): then by what the harness's
        # summary line ("ops=K") says.
        oa=$(grep -o -m1 '\bops=[0-9]*' "$tmp/log.a" | cut -d= -f2)
        ob=$(grep -o -m1 '\bops=[0-9]*' "$tmp/log.b" | cut -d= -f2)
        dn=$NW
        [[ $oa =~ ^[0-9]+$ && $ob =~ ^[0-9]+$ ]] && [ "$ob" -gt "$oa" ] && dn=$((ob - oa))
        per=$(awk -v a="$ia" -v b="$ib" -v n="$dn" 'BEGIN{printf "%.1f", (b - a) / n}')
        line="$rt,$wl,$per,$NW,$ia,$ib"
        if [ "$SIM" = 1 ]; then
            for e in I1mr D1mr D1mw ILmr DLmr DLmw; do
                [[ $(ev $e "$ea") =~ ^[0-9]+$ && $(ev $e "$eb") =~ ^[0-9]+$ ]] ||
                    die 3 "callgrind printed no $e count (--cache-sim=yes not honoured?)"
            done
            line+=$(awk -v n="$dn" -v a="$ea" -v b="$eb" 'BEGIN {
                split(a, x, /[ =]/); split(b, y, /[ =]/)
                for (i = 1; i in x; i += 2) d[x[i]] = y[i + 1] - x[i + 1]
                l1 = d["I1mr"] + d["D1mr"] + d["D1mw"]; ll = d["ILmr"] + d["DLmr"] + d["DLmw"]
                printf ",%.4f,%.4f,%.1f", (d["D1mr"] + d["D1mw"]) / n, ll / n,
                       (d["Ir"] + 10 * l1 + 100 * ll) / n }')
        fi
        echo "$line" >>"$out.tmp"
        if [ -n "$key" ]; then
            echo "$line" >"$CACHE/$key"
            [ -z "$ALSO" ] || echo "$line" >"$ALSO/$key"
        fi
        printf 'instr-count: %-6s %-8s %10s instructions/op  (%ds)\n' "$rt" "$wl" "$per" $(( $(date +%s) - t0 ))
    done
done
mv "$out.tmp" "$out" || die 3 "cannot write '$out'"
[ $fails -eq 0 ] || { echo "instr-count: $fails configuration(s) failed; the rest are in $out" >&2; exit 1; }
exit 0
