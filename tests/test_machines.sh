#!/usr/bin/env bash
# tests/test_machines.sh [BUILD] - results from several machines: make bench's folder
# layout (results/bench/<machine>-<cores>c-<date>/, results/latest and results/previous
# links, an older bench's results/latest folder kept), its oversubscribed point (runs at
# 2 x the hardware threads, marked in runs' context, overhead.csv/.md and the plots;
# BENCH_OVERSUB=0 leaves it out), the report over several folders (scripts/
# report_machines.py: the merged table's cells recomputed here from the inputs' CSVs,
# independently of the script; gaps marked; each broken input refused with exit 2 and
# nothing written) and make pack (a tarball that unpacks into a folder the report reads).
# The second machine is results/baseline made over: its context says 16 cores, its rows
# go up to 16 threads and 32 oversubscribed.
set -u
cd "$(dirname "$0")/.." || exit 1
root=$PWD
build=${1:-build/release}
case $build in /*) bin=$build/stmbench ;; *) bin=$root/$build/stmbench ;; esac
PY=/usr/bin/python3
. tests/checks.sh      # $tmp, check, checks_summary
report() { "$PY" scripts/report_machines.py "$@"; }
# make bench in a copy of scripts/ (and of the lists they read: runtime/runtimes.h,
# harness/columns.h), so that results/ is the copy's, never this tree's.
tree=$tmp/tree
mkdir -p "$tree/runtime" "$tree/harness" && cp -r scripts "$tree/" &&
    cp runtime/runtimes.h "$tree/runtime/" && cp harness/columns.h "$tree/harness/" || exit 1
bench() {
    (cd "$tree" && env STMBENCH="$bin" BENCH_RUNTIMES="seq mutex" BENCH_WORKLOADS=bank \
        BENCH_DURATION=0.05 BENCH_REPEAT=1 BENCH_SWEEP=0 BENCH_PIN= BENCH_ARGS= \
        BENCH_THREADS= BENCH_OUT= BENCH_MACHINE=testbox "$@" scripts/bench.sh) \
        >"$tmp/out" 2>&1
}

layout() {
    bench BENCH_OVERSUB_DURATION=0.02 || { cat "$tmp/out"; return 1; }
    local link
    link=$(readlink "$tree/results/latest") || { echo "results/latest is no link"; return 1; }
    [[ $link =~ ^bench/testbox-[0-9]+c-[0-9]{8}-[0-9]{6}$ ]] || { echo "link $link"; return 1; }
    [ -s "$tree/results/$link/runs.csv" ] && [ -s "$tree/results/$link/plots/throughput_bank.png" ] &&
        [ -s "$tree/results/$link/plots/speedup_bank.svg" ] || { ls -R "$tree/results"; return 1; }
    "$PY" - "$tree/results/latest" <<'PY'
import csv, json, sys
d = sys.argv[1]
ctx = json.load(open(d + "/runs.context.json"))
b, pus = ctx["bench"], ctx["pus"]
assert b["machine"] == "testbox" and b["hardware_threads"] == pus, b
assert b["oversub_threads"] == [2 * pus] and b["oversub"] == 1, b
assert b["folder"].startswith("testbox-") and b["repeat"] == 1, b
rows = list(csv.DictReader(open(d + "/runs.csv")))
ts = {(r["runtime"], int(r["threads"])) for r in rows}
assert ("mutex", 2 * pus) in ts and ("seq", 1) in ts, ts
assert not any(rt == "seq" and t > 1 for rt, t in ts), ts
assert max(t for rt, t in ts if t <= pus) == ctx["cores"] or pus > ctx["cores"], ts
ov = list(csv.DictReader(open(d + "/overhead.csv")))
assert {(r["runtime"], int(r["threads"])) for r in ov} == ts, ov
for r in ov:
    assert r["oversubscribed"] == str(int(int(r["threads"]) > pus)), r
md = open(d + "/overhead.md").read()
assert "| mutex | %d (oversubscribed) |" % (2 * pus) in md, md
assert "| mutex | 1 |" in md and "oversubscribed" in md.split("### bank")[0], md
# the oversubscribed point runs BENCH_OVERSUB_DURATION, the others BENCH_DURATION
log = [l for l in open(d + "/bench.log") if l.startswith("=== [")]
over = [l for l in log if " --threads %d " % (2 * pus) in l]
assert over and all(" --duration 0.02 " in l for l in over), over
assert all(" --duration 0.05 " in l for l in log if l not in over), log
assert "BENCH_OVERSUB_DURATION=0.02" in open(d + "/bench-config.txt").read()
PY
}
check "make bench: a folder named after the machine and date, results/latest, the oversubscribed point" layout

again() {
    local first old
    first=$(readlink "$tree/results/latest")
    old=$(md5sum <"$tree/results/$first/runs.csv")
    bench BENCH_OVERSUB=0 BENCH_PLOTS=0 || { cat "$tmp/out"; return 1; }
    local second
    second=$(readlink "$tree/results/latest")
    [ "$second" != "$first" ] && [ "$(readlink "$tree/results/previous")" = "$first" ] &&
        [ "$(md5sum <"$tree/results/$first/runs.csv")" = "$old" ] ||
        { echo "first $first second $second"; ls -l "$tree/results"; return 1; }
    # no oversubscribed point, and the context says so
    "$PY" - "$tree/results/latest" <<'PY' || return 1
import csv, json, sys
d = sys.argv[1]
ctx = json.load(open(d + "/runs.context.json"))
assert ctx["bench"]["oversub"] == 0 and ctx["bench"]["oversub_threads"] == [], ctx["bench"]
assert all(int(r["threads"]) <= ctx["pus"] for r in csv.DictReader(open(d + "/runs.csv")))
PY
    # a results/latest folder of an older bench is moved to results/previous, whole
    rm "$tree/results/latest" && mkdir "$tree/results/latest" &&
        echo "old,results" >"$tree/results/latest/runs.csv" || return 1
    bench BENCH_PLOTS=0 || { cat "$tmp/out"; return 1; }
    [ -L "$tree/results/latest" ] && [ ! -L "$tree/results/previous" ] &&
        [ "$(cat "$tree/results/previous/runs.csv")" = "old,results" ] ||
        { ls -l "$tree/results"; return 1; }
}
check "a second make bench: a new folder, results/previous, the first untouched; old layout kept" again

bad_vars() {
    local n v
    n=$(ls "$tree/results/bench" | wc -l)
    for v in BENCH_OVERSUB=2 BENCH_OVERSUB=yes "BENCH_MACHINE=a b" BENCH_MACHINE=-x \
             BENCH_OVERSUB_DURATION=0 BENCH_OVERSUB_DURATION=x; do
        bench "$v"
        local rc=$?
        [ $rc -eq 2 ] && grep -q "${v%%=*}" "$tmp/out" || { echo "$v: exit $rc"; cat "$tmp/out"; return 1; }
    done
    [ "$(ls "$tree/results/bench" | wc -l)" -eq "$n" ] || { echo "a folder was made"; return 1; }
}
check "bad BENCH_OVERSUB, BENCH_OVERSUB_DURATION and BENCH_MACHINE exit 2 and make no folder" bad_vars

# The second machine: results/baseline, its context made a 16-core machine's, its rows
# (each 1-thread run) made runs at 1..16 threads and 32, with a failed check among them;
# itm left out of bank (a gap).
"$PY" - results/baseline "$tmp/big16" <<'PY' || exit 1
import csv, json, os, shutil, sys
src, d = sys.argv[1], sys.argv[2]
os.makedirs(d)
for f in ("runs.context.json", "bench-config.txt"):
    shutil.copy(os.path.join(src, f), d)
ctx = json.load(open(src + "/runs.context.json"))
ctx.update(cpu_model="Example Xeon", cores=16, pus=16, hostname="big16", threads_per_core=1)
ctx.pop("bench", None)
json.dump(ctx, open(d + "/runs.context.json", "w"), indent=2)
rows = list(csv.DictReader(open(src + "/runs.csv")))
out, nth = [], {}
for i, r in enumerate(r for r in rows if r["threads"] == "1"):
    nth[(r["workload"], r["runtime"])] = rep = nth.get((r["workload"], r["runtime"]), 0) + 1
    for t in (1, 2, 4, 8, 16, 32):
        if (r["runtime"] == "seq" and t > 1) or (r["runtime"] == "itm" and r["workload"] == "bank"):
            continue
        x = dict(r, threads=str(t), host="big16")
        k = {"stm": 0.9, "locks": 0.8, "gil": 0.05, "mutex": 0.3}.get(r["runtime"], 0.5)
        f = (1 + k * (min(t, 16) - 1)) * (0.6 if t > 16 else 1.0) * (1 + 0.013 * (i % 7))
        x["ops_per_s"] = "%.1f" % (float(r["ops_per_s"]) * f)
        if r["runtime"] == "stm" and t == 8 and rep == 1:
            x["check"], x["ops_per_s"] = "fail", "1.0"
        out.append(x)
with open(d + "/runs.csv", "w", newline="") as f:
    w = csv.DictWriter(f, list(rows[0].keys()), lineterminator="\n")
    w.writeheader()
    w.writerows(out)
PY

merged() {
    report report --out "$tmp/rep" results/baseline "$tmp/big16" >"$tmp/out" 2>&1 ||
        { cat "$tmp/out"; return 1; }
    local w
    for w in bank rbtree hashmap interp; do
        for x in png svg; do
            [ -s "$tmp/rep/plots/speedup_$w.$x" ] || { echo "no speedup_$w.$x"; return 1; }
        done
        [ "$(head -c 4 "$tmp/rep/plots/speedup_$w.png" | tail -c 3)" = PNG ] || return 1
    done
    "$PY" - "$tmp/rep" results/baseline "$tmp/big16" <<'PY'
import csv, json, statistics, sys
rep, dirs = sys.argv[1], sys.argv[2:]
names = {"results/baseline": "vm", dirs[1]: "big16"}
med, pus = {}, {}
for d in dirs:
    pus[d] = json.load(open(d + "/runs.context.json"))["pus"]
    acc = {}
    for r in csv.DictReader(open(d + "/runs.csv")):
        if r["check"] == "pass":
            acc.setdefault((r["workload"], r["runtime"], int(r["threads"])), []).append(
                float(r["ops_per_s"]))
    for k, v in acc.items():
        med[(names[d],) + k] = statistics.median(v)
# machines.csv: one row per machine x point, the medians, oversubscribed above pus
got = list(csv.DictReader(open(rep + "/machines.csv")))
assert len(got) == len(med), (len(got), len(med))
for r in got:
    k = (r["machine"], r["workload"], r["runtime"], int(r["threads"]))
    assert abs(float(r["ops_per_s_median"]) / med[k] - 1) < 1e-5, (r, med[k])
    d = [x for x in dirs if names[x] == r["machine"]][0]
    assert r["oversubscribed"] == str(int(k[3] > pus[d])), r
    own1 = med[k[:3] + (1,)]
    assert abs(float(r["speedup_self"]) / (med[k] / own1) - 1) < 1e-5, r
# big16's 32-thread rows: every workload x runtime but seq, less itm on bank
nw = len({k[1] for k in med})
assert sum(r["machine"] == "big16" and r["threads"] == "32" for r in got) == nw * 5 - 1, \
    "32-thread rows"
md = open(rep + "/machines.md").read()
def table(after):
    part = md.split(after, 1)[1]
    part = part.split("\n#", 1)[0]
    return [[c.strip() for c in l.strip().strip("|").split("|")]
            for l in part.splitlines() if l.startswith("| ") and not l.startswith("| ---")]
ctx_rows = {r[0]: r[1:] for r in table("## The machines")}
assert ctx_rows["cores / hardware threads"] == ["2 / 2", "16 / 16"], ctx_rows
assert ctx_rows["CPU"] == ["AMD EPYC", "Example Xeon"], ctx_rows
# n%: one column per machine, each (seq / runtime at 1 thread - 1) x 100 of that machine
npct = table("## n% slower than single-thread, by machine")
assert npct[0] == ["workload", "runtime", "vm", "big16"], npct[0]
seen = 0
for w, rt, *cells in npct[1:]:
    for m, c in zip(("vm", "big16"), cells):
        if (m, w, rt, 1) not in med:
            assert c == "– (not run)" and (w, rt, m) == ("bank", "itm", "big16"), (w, rt, m, c)
            continue
        assert c == "%+.0f%%" % ((med[(m, w, "seq", 1)] / med[(m, w, rt, 1)] - 1) * 100), (w, rt, m, c)
        seen += 1
assert seen == nw * 5 * 2 - 1, seen
# speedups: × own and the median, "oversubscribed" beyond the hardware threads, a dash
# where the machine did not run the thread count
for w in ("bank", "rbtree", "hashmap", "interp"):
    rows = table("### %s\n" % w)
    assert rows[0] == ["runtime", "threads", "vm", "big16"], rows[0]
    n = 0
    for rt, t, *cells in rows[1:]:
        for m, c in zip(("vm", "big16"), cells):
            k = (m, w, rt, int(t))
            if k not in med:
                assert c == "–", (k, c)
                continue
            assert c.startswith("×%.2f (" % (med[k] / med[k[:3] + (1,)])), (k, c)
            assert c.endswith(", oversubscribed") == (int(t) > (2 if m == "vm" else 16)), (k, c)
            n += 1
    assert n == sum(1 for k in med if k[1] == w and k[2] != "seq"), (w, n)
assert "Gaps: itm: not run on big16." in md, md
PY
}
check "two machines merged: every cell of the merged tables is the inputs' own figure" merged

# Each broken input: exit 2, a message naming the fault, nothing written, inputs intact.
refused() { # message, then the folders
    local msg=$1; shift
    rm -rf "$tmp/err"
    report report --out "$tmp/err" "$@" >"$tmp/out" 2>&1
    local rc=$?
    [ $rc -eq 2 ] && grep -q "$msg" "$tmp/out" && [ ! -e "$tmp/err" ] ||
        { echo "exit $rc:"; cat "$tmp/out"; return 1; }
}
variant() { rm -rf "$tmp/$1" && cp -r "$tmp/big16" "$tmp/$1"; }
errors() {
    local sum
    sum=$(cat results/baseline/runs.csv results/baseline/runs.context.json | md5sum)
    variant params && sed -i 's/accounts=1024/accounts=4096/' "$tmp/params/runs.csv"
    refused "different parameters.*bank: results/baseline has .accounts=1024.*accounts=4096" \
        results/baseline "$tmp/params" || return 1
    variant twosets && sed -i '0,/accounts=1024/s//accounts=64/' "$tmp/twosets/runs.csv"
    refused "workload bank ran with 2 parameter sets" results/baseline "$tmp/twosets" || return 1
    variant noctx && rm "$tmp/noctx/runs.context.json"
    refused "noctx/runs.context.json: missing" results/baseline "$tmp/noctx" || return 1
    variant badctx && echo '{"cores": 16, ' >"$tmp/badctx/runs.context.json"
    refused "badctx/runs.context.json: unreadable context JSON" results/baseline "$tmp/badctx" || return 1
    variant cut && truncate -s -100 "$tmp/cut/runs.csv"
    refused "cut/runs.csv:[0-9]*: truncated: the last line has no end" results/baseline "$tmp/cut" || return 1
    variant cutrow && truncate -s -100 "$tmp/cutrow/runs.csv" && echo >>"$tmp/cutrow/runs.csv"
    refused "cutrow/runs.csv:[0-9]*: truncated row: [0-9]* of the header's [0-9]* fields" \
        results/baseline "$tmp/cutrow" || return 1
    refused "no such results folder" results/baseline "$tmp/nowhere" || return 1
    refused "given twice" "$tmp/big16" "$tmp/big16/" || return 1
    report report --out "$tmp/big16" results/baseline "$tmp/big16" >"$tmp/out" 2>&1
    [ $? -eq 2 ] && grep -q "never writes into a results folder" "$tmp/out" || { cat "$tmp/out"; return 1; }
    [ "$(cat results/baseline/runs.csv results/baseline/runs.context.json | md5sum)" = "$sum" ]
}
check "mismatched parameters, a missing or broken context, a cut CSV: exit 2, nothing written" errors

packed() {
    # the first bench's folder (it has plots/, which the tarball leaves out)
    local d=$tree/results/bench/$(ls "$tree/results/bench" | head -n 1) t=$tmp/pack.tar.gz name
    name=$(basename "$d")
    report pack "$d" "$t" >"$tmp/out" 2>&1 || { cat "$tmp/out"; return 1; }
    tar tzf "$t" >"$tmp/list" || return 1
    grep -qx "$name/runs.csv" "$tmp/list" && grep -qx "$name/runs.context.json" "$tmp/list" &&
        grep -qx "$name/bench-config.txt" "$tmp/list" && ! grep -q "/plots" "$tmp/list" &&
        [ "$(grep -vc "^$name/" "$tmp/list")" -eq 0 ] || { cat "$tmp/list"; return 1; }
    # it unpacks into a folder the report reads, beside the other machine
    mkdir "$tmp/unpacked" && tar xzf "$t" -C "$tmp/unpacked" || return 1
    report report --out "$tmp/rep2" "$tmp/unpacked/$name" "$tmp/big16" >"$tmp/out" 2>&1 &&
        grep -q "| bank | mutex | " "$tmp/rep2/machines.md" || { cat "$tmp/out"; return 1; }
    # an existing tarball is never replaced; a folder without its context is not packed
    local sum
    sum=$(md5sum <"$t")
    report pack "$d" "$t" >"$tmp/out" 2>&1
    [ $? -eq 2 ] && grep -q "exists: not replaced" "$tmp/out" && [ "$(md5sum <"$t")" = "$sum" ] ||
        { cat "$tmp/out"; return 1; }
    report pack "$tmp/noctx" "$tmp/noctx.tar.gz" >"$tmp/out" 2>&1
    [ $? -eq 2 ] && [ ! -e "$tmp/noctx.tar.gz" ] || { cat "$tmp/out"; return 1; }
}
check "make pack: a tarball of the folder that the report reads once unpacked" packed

checks_summary
