#!/usr/bin/env bash
# tests/test_scaling.sh [BUILD] - scripts/scaling.sh (make scaling): bad variables exit 2
# and touch nothing, an existing results file is never overwritten, a failed run is
# listed and exits 1, and the table's medians and ratios are those of the runs it wrote
# (recomputed here from runs.csv, independently of the script), with the line transfer
# measured before each round (transfer.csv, its median in the table's head); and
# the log floor (floor.csv, likewise); `stmbench --line-transfer` and `--log-floor`
# alone; and the same two measurements in make bench's bench-config.txt.
set -u
cd "$(dirname "$0")/.." || exit 1
build=${1:-build/release}
bin=$build/stmbench
. tests/checks.sh      # $tmp, check, checks_summary
# A machine with one PU (hwloc's count, as the harness binds by it) cannot measure a
# line transfer: the harness says so and exits 3, and the cases below expect that.
"$bin" --line-transfer >"$tmp/lt" 2>&1
lt_rc=$?
ONE_PU=0
[ $lt_rc -eq 3 ] && grep -q "needs two processing units" "$tmp/lt" && ONE_PU=1
export ONE_PU
run() { STMBENCH=$bin SCALE_DURATION=0.05 SCALE_REPEAT=1 SCALE_THREADS=2 "$@" scripts/scaling.sh >"$tmp/out" 2>&1; }

exits2() { # the variables, then the message expected
    local msg=$1; shift
    run env "$@" SCALE_OUT="$tmp/bad"
    local rc=$?
    [ $rc -eq 2 ] && grep -q "$msg" "$tmp/out" && [ ! -e "$tmp/bad/runs.csv" ] ||
        { echo "exit $rc, output:"; cat "$tmp/out"; return 1; }
}
check "SCALE_REPEAT=0 exits 2" exits2 "SCALE_REPEAT" SCALE_REPEAT=0
check "an unknown runtime exits 2" exits2 "not a runtime" SCALE_RUNTIMES="stm nosuch"
check "SCALE_THREADS=1 exits 2" exits2 "SCALE_THREADS" SCALE_THREADS=1
check "a bad workload flag exits 2 before any timed run" exits2 "SCALE_CONFIGS" \
    SCALE_CONFIGS="bank --no-such-flag 3"

existing() {
    mkdir -p "$tmp/keep" && echo "precious" >"$tmp/keep/runs.csv"
    run env SCALE_OUT="$tmp/keep" SCALE_CONFIGS="bank"
    local rc=$?
    [ $rc -eq 2 ] && [ "$(cat "$tmp/keep/runs.csv")" = precious ] ||
        { echo "exit $rc"; cat "$tmp/out"; return 1; }
}
check "an existing runs.csv is left alone (exit 2)" existing

# A harness whose 2-thread runs fail: listed in failures.txt, exit 1, the rest still run.
failing() {
    cat >"$tmp/fake" <<FAKE
#!/usr/bin/env bash
for a in "\$@"; do [ "\$a" = 2 ] && [ "\$prev" = --threads ] && { echo "injected failure" >&2; exit 1; }; prev=\$a; done
exec "$PWD/$bin" "\$@"
FAKE
    chmod +x "$tmp/fake"
    STMBENCH=$tmp/fake SCALE_DURATION=0.05 SCALE_REPEAT=2 SCALE_THREADS=2 SCALE_RUNTIMES=mutex \
        SCALE_CONFIGS="bank" SCALE_OUT="$tmp/fail" scripts/scaling.sh >"$tmp/out" 2>&1
    local rc=$?
    [ $rc -eq 1 ] && [ "$(grep -c "injected failure" "$tmp/fail/failures.txt")" -eq 2 ] &&
        [ "$(($(wc -l <"$tmp/fail/runs.csv") - 1))" -eq 2 ] ||
        { echo "exit $rc"; cat "$tmp/out" "$tmp/fail/failures.txt"; return 1; }
}
check "failed runs are listed and exit 1" failing

# A real sitting, small: 2 configurations x 2 runtimes x 2 thread counts x 3 rounds.
table() {
    STMBENCH=$bin SCALE_DURATION=0.05 SCALE_REPEAT=3 SCALE_THREADS=2 SCALE_RUNTIMES="stm mutex" \
        SCALE_CONFIGS="bank --transfer-pct 100; rbtree --update 20 --size 256" \
        SCALE_OUT="$tmp/ok" scripts/scaling.sh >"$tmp/out" 2>&1 || { cat "$tmp/out"; return 1; }
    /usr/bin/python3 - "$tmp/ok" <<'PY'
import csv, statistics, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(d + "/runs.csv")))
assert len(rows) == 24, len(rows)
assert all(r["check"] == "pass" for r in rows)
# rows ran in the order: round, configuration, runtime, threads
confs = ["bank --transfer-pct 100", "rbtree --update 20 --size 256"]
want = {}
for n, r in enumerate(rows):
    conf = confs[(n // 4) % 2]
    assert r["workload"] == conf.split()[0], (n, r["workload"])
    assert r["runtime"] == ["stm", "mutex"][(n // 2) % 2]
    assert int(r["threads"]) == [1, 2][n % 2]
    want.setdefault((conf, r["runtime"], int(r["threads"])), []).append(float(r["ops_per_s"]))
md = open(d + "/scaling.md").read()
main_part, _, by_round = md.partition("## Round by round")
lines = [l for l in main_part.splitlines() if l.startswith("| ") and not l.startswith("| configuration")]
assert len(lines) == 4, lines
for l in lines:
    c = [x.strip() for x in l.strip().strip("|").split("|")]
    conf, rt = c[0], c[1]
    m1, m2 = statistics.median(want[(conf, rt, 1)]), statistics.median(want[(conf, rt, 2)])
    assert c[2] == "%.2f M" % (m1 / 1e6) and c[3] == "%.2f M" % (m2 / 1e6), (c, m1, m2)
    assert c[4] == "×%.2f" % (m2 / m1), (c, m2 / m1)
    stm2 = statistics.median(want[(conf, "stm", 2)])
    assert c[6] == "%.2f" % (stm2 / m2), (c, stm2 / m2)
# the line transfer: one measurement per round, its median in the table's head (with one
# PU it cannot be made: empty rows, and the head says so)
import os
xf = list(csv.DictReader(open(d + "/transfer.csv")))
assert [int(r["round"]) for r in xf] == [1, 2, 3], xf
head = [l for l in open(d + "/scaling.md") if l.startswith("Cross-core line transfer")]
if os.environ.get("ONE_PU") == "1":
    assert all(not r["line_transfer_ns"] for r in xf), xf
    assert len(head) == 1 and "not measured" in head[0], head
else:
    ns = [float(r["line_transfer_ns"]) for r in xf]
    assert all(0 < x < 1e6 for x in ns), ns
    assert all(float(r["min_ns"]) <= float(r["line_transfer_ns"]) <= float(r["max_ns"])
               for r in xf)
    assert len(head) == 1 and "median %.0f ns" % statistics.median(ns) in head[0], (head, ns)
# the log floor: one row per round at T = 2, its median ratio in the table's head
fl = list(csv.DictReader(open(d + "/floor.csv")))
assert [int(r["round"]) for r in fl] == [1, 2, 3] and all(r["threads"] == "2" for r in fl), fl
ratios = [float(r["ratio"]) for r in fl]
for r in fl:
    o1, oT, q = float(r["ops_per_s_1"]), float(r["ops_per_s_T"]), float(r["ratio"])
    assert o1 > 0 and oT > 0 and abs(oT / o1 - q) < 0.006, r
head = [l for l in open(d + "/scaling.md") if l.startswith("Floor of one shared log")]
assert len(head) == 1 and "×%.2f at 2 threads" % statistics.median(ratios) in head[0], (head, ratios)
# round by round: each round's own 2T/1T (its two adjacent runs, seed = round) under the
# round's transfer and floor, one column per round
rt_rows = {l.split("|")[1].strip(): [c.strip() for c in l.strip().strip("|").split("|")[1:]]
           for l in by_round.splitlines() if l.startswith("| ") and not l.startswith("| |")}
assert len(rt_rows) == 2 + 4, rt_rows.keys()
assert rt_rows["log floor 2T/1T"] == ["×%.2f" % q for q in ratios], rt_rows
if os.environ.get("ONE_PU") == "1":
    assert rt_rows["line transfer"] == ["-"] * 3, rt_rows
else:
    assert rt_rows["line transfer"] == ["%.0f ns" % x for x in ns], rt_rows
for conf in confs:
    for rt in ["stm", "mutex"]:
        got = rt_rows["%s, %s" % (conf, rt)]
        want_r = []
        for rnd in (1, 2, 3):
            ops = {int(r["threads"]): float(r["ops_per_s"]) for r in rows
                   if r["workload"] == conf.split()[0] and r["runtime"] == rt
                   and int(r["seed"]) == rnd}
            want_r.append("×%.2f" % (ops[2] / ops[1]))
        assert got == want_r, (conf, rt, got, want_r)
PY
}
check "the table is the medians and ratios of runs.csv" table

# A measuring mode (its flag), then bad flag sets: each exits 2, prints nothing on
# stdout and says why on stderr.
bad_flags_exit2() {
    local mode=$1 bad out rc
    shift
    for bad in "$@"; do
        # shellcheck disable=SC2086 # the flags are words
        out=$("$bin" "$mode" $bad 2>"$tmp/err")
        rc=$?
        [ $rc -eq 2 ] && [ -z "$out" ] && [ -s "$tmp/err" ] ||
            { echo "$mode '$bad': exit $rc, stdout '$out'"; return 1; }
    done
}

# stmbench --line-transfer itself: one line, a positive time within its own min..max,
# the two PUs of threads 0 and 1; bad flags exit 2 and print nothing on stdout.
line_transfer() {
    local out rc
    if [ "$ONE_PU" = 1 ]; then # the measurement cannot be made (exit 3, above)
        bad_flags_exit2 --line-transfer "--pin nosuch" "--threads 2" "--pin"
        return
    fi
    [ $lt_rc -eq 0 ] || { echo "exit $lt_rc: $(cat "$tmp/lt")"; return 1; }
    out=$("$bin" --line-transfer) || { echo "exit $?: $out"; return 1; }
    [[ $out =~ ^line_transfer_ns=([0-9.]+)\ min_ns=([0-9.]+)\ max_ns=([0-9.]+)\ trials=7\ round_trips=[0-9]+\ pus=([0-9]+),([0-9]+)\ pin=compact$ ]] ||
        { echo "output: $out"; return 1; }
    awk -v m="${BASH_REMATCH[1]}" -v lo="${BASH_REMATCH[2]}" -v hi="${BASH_REMATCH[3]}" \
        'BEGIN { exit !(m > 0 && lo <= m && m <= hi) }' || { echo "output: $out"; return 1; }
    [ "${BASH_REMATCH[4]}" != "${BASH_REMATCH[5]}" ] || { echo "one PU: $out"; return 1; }
    out=$("$bin" --line-transfer --pin none) && [[ $out == *"pus=unbound pin=none" ]] ||
        { echo "--pin none: $out"; return 1; }
    bad_flags_exit2 --line-transfer "--pin nosuch" "--threads 2" "--pin"
}
check "stmbench --line-transfer: one line, a time within its range; bad flags exit 2" line_transfer

# stmbench --log-floor: one line whose ratio is its two rates', the thread count asked
# for; more work per op makes the 1-thread op slower; bad values exit 2.
log_floor() {
    local out rc a b
    out=$("$bin" --log-floor --threads 3 --work 0) || { echo "exit $?: $out"; return 1; }
    [[ $out =~ ^log_floor\ threads=3\ work=0\ ops_per_s_1=([0-9]+)\ ops_per_s_3=([0-9]+)\ ratio=([0-9.]+)\ ns_per_op_1=([0-9.]+)\ pin=compact$ ]] ||
        { echo "output: $out"; return 1; }
    awk -v o1="${BASH_REMATCH[1]}" -v o3="${BASH_REMATCH[2]}" -v q="${BASH_REMATCH[3]}" \
        -v ns="${BASH_REMATCH[4]}" \
        'BEGIN { d = o3 / o1 - q; exit !(o1 > 0 && o3 > 0 && d < 0.006 && d > -0.006 &&
                                          ns > 0 && (1e9 / o1 - ns) < 0.06 && (1e9 / o1 - ns) > -0.06) }' ||
        { echo "output: $out"; return 1; }
    a=$(sed 's/.*ns_per_op_1=\([0-9.]*\).*/\1/' <<<"$out")
    out=$("$bin" --log-floor --threads 1 --work 400) || { echo "exit $?: $out"; return 1; }
    b=$(sed 's/.*ns_per_op_1=\([0-9.]*\).*/\1/' <<<"$out")
    awk -v a="$a" -v b="$b" 'BEGIN { exit !(b > 4 * a) }' ||
        { echo "400 multiplies per op took $b ns, none $a ns"; return 1; }
    bad_flags_exit2 --log-floor "--work -1" "--threads 0" "--work 1x" "--pin nosuch" "--duration 1"
}
check "stmbench --log-floor: one line, its ratio its rates', work costs time; bad values exit 2" log_floor

# make bench records the sitting: both measurements before the first run and after the
# last in bench-config.txt; a harness without the modes gives "unmeasured: <reason>" and
# the bench goes on.
bench_sitting() {
    local cfg=$tmp/bench/bench-config.txt tag
    env STMBENCH="$bin" BENCH_OUT="$tmp/bench" BENCH_RUNTIMES=mutex BENCH_WORKLOADS=bank \
        BENCH_THREADS="1 2" BENCH_DURATION=0.05 BENCH_REPEAT=1 BENCH_PLOTS=0 BENCH_PIN= \
        BENCH_ARGS= scripts/bench.sh >"$tmp/out" 2>&1 || { cat "$tmp/out"; return 1; }
    local measured="line_transfer_ns=[0-9.]+ .*pin=compact"
    [ "$ONE_PU" = 1 ] && measured="unmeasured: .*two processing units.*"
    for tag in start end; do
        grep -Eq "^line_transfer_$tag=$measured$" "$cfg" &&
            grep -Eq "^log_floor_$tag=log_floor threads=2 work=40 .* ratio=[0-9.]+ " "$cfg" ||
            { cat "$cfg"; return 1; }
    done
    cat >"$tmp/old" <<FAKE
#!/usr/bin/env bash
case "\$1" in --line-transfer|--log-floor) echo "stmbench: unknown flag \$1" >&2; exit 2;; esac
exec "$PWD/$bin" "\$@"
FAKE
    chmod +x "$tmp/old"
    env STMBENCH="$tmp/old" BENCH_OUT="$tmp/bench2" BENCH_RUNTIMES=mutex BENCH_WORKLOADS=bank \
        BENCH_THREADS=1 BENCH_DURATION=0.05 BENCH_REPEAT=1 BENCH_PLOTS=0 BENCH_PIN= \
        BENCH_ARGS= scripts/bench.sh >"$tmp/out" 2>&1 || { cat "$tmp/out"; return 1; }
    [ "$(grep -c "=unmeasured: stmbench: unknown flag" "$tmp/bench2/bench-config.txt")" -eq 4 ] ||
        { cat "$tmp/bench2/bench-config.txt"; return 1; }
}
check "make bench records the line transfer and the log floor at its start and end" bench_sitting

checks_summary
