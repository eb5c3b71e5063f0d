"""stmbench regress CURRENT.csv [BASELINE_DIR] - compares a stmbench results file with the
committed baseline (default results/baseline/) and exits 1 on a regression.

On a shared VM absolute timings move 30-50% between runs, so only figures that are
stable there are compared, each computed *within one file* and then set against the
same figure computed within the baseline's file:

  rel1  runtime R's single-thread throughput relative to seq's (ops/s R,1 / ops/s seq,1;
        the inverse of 1 + n/100, docs/contract.md). Regression if current < baseline x (1 - 0.40).
  sp2   R's speedup at 2 threads over itself at 1 thread (ops/s R,2 / ops/s R,1).
        Regression if current < baseline x (1 - 0.50): wider, since two threads on a
        VM see the neighbours' load.
  instr instructions per operation of the single-thread runs under callgrind
        (deterministic): BASELINE_DIR/instructions.csv against instructions.csv beside
        CURRENT.csv (or --instructions FILE); columns runtime,workload,instr_per_op.
        Regression if current > baseline x (1 + 0.10).
  check a run of CURRENT.csv whose invariant check failed is always a regression.

Each ratio is the median over repeats of the ratio of runs with the same seed (the
sweep runs every configuration of one repeat with one seed, close in time), which
cancels slow drift of the machine; "cur range" shows the spread of those ratios.
Only runs whose check passed count. Improvements beyond the tolerance are
reported ("better": consider refreshing the baseline) but pass. A figure that only one
side has is listed and not judged. Tolerances can be changed with --tol-rel1, --tol-sp2,
--tol-instr (fractions, e.g. 0.4).

Exit status: 0 no regression, 1 a regression, 2 bad input (missing file, wrong columns,
no comparable figure).
"""

import argparse
import csv
import os
import sys

from . import results as rep

TOL = {"rel1": 0.40, "sp2": 0.50, "instr": 0.10}
INSTR_COLUMNS = ("runtime", "workload", "instr_per_op")


def paired_ratio(num, den):
    """Median ratio num/den of two points' throughputs. The sweep gives every runtime
    the same seed in the same repeat and runs the repeats one after the other, so runs
    with equal seeds ran close in time: their ratios cancel slow drift of the machine.
    Returns (median, min, max) of the per-seed ratios when the seeds pair up one to
    one, else the ratio of the medians (min = max = None)."""
    if num is None or den is None or not num.rows or not den.rows:
        return None
    a = {r["seed"]: r["ops_per_s"] for r in num.rows if r.get("ops_per_s")}
    b = {r["seed"]: r["ops_per_s"] for r in den.rows if r.get("ops_per_s")}
    unique = len(a) == len(num.rows) and len(b) == len(den.rows)
    common = sorted(set(a) & set(b), key=lambda x: (x is None, x))
    if unique and common and None not in common:
        rs = [a[k] / b[k] for k in common]
        return rep.median(rs), min(rs), max(rs)
    n, d = num.ops_per_s, den.ops_per_s
    return (n / d, None, None) if n and d else None


def ratio_figures(points):
    """{(kind, workload, runtime): (value, min, max)} for kind rel1 and sp2."""
    out = {}
    for w in rep.workloads_of(points):
        seq1 = points.get((w, rep.BASELINE_RT, 1))
        for rt in rep.runtimes_of(points, w):
            if rt == rep.BASELINE_RT:
                continue
            own1 = points.get((w, rt, 1))
            own2 = points.get((w, rt, 2))
            v = paired_ratio(own1, seq1)
            if v:
                out[("rel1", w, rt)] = v
            v = paired_ratio(own2, own1)
            if v:
                out[("sp2", w, rt)] = v
    return out


def read_instr(path):
    if not os.path.isfile(path):
        raise rep.InputError("%s: no such instruction-count file" % path)
    out = {}
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in INSTR_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise rep.InputError("%s: missing column(s) %s (want %s)"
                                 % (path, ", ".join(missing), ",".join(INSTR_COLUMNS)))
        for row in reader:
            v = row["instr_per_op"]
            try:
                x = float(v)
            except ValueError:
                raise rep.InputError("%s:%d: instr_per_op '%s' is not a number"
                                     % (path, reader.line_num, v))
            if x > 0:
                out[("instr", row["workload"], row["runtime"])] = (x, None, None)
    return out


LABEL = {
    "rel1": "ops/s ÷ seq, 1 thread",
    "sp2": "speedup 2 thr ÷ 1 thr",
    "instr": "instructions per op",
}


def judge(kind, base, cur, tol):
    """Verdict of one figure: higher is better for the ratios, lower for instructions."""
    if kind == "instr":
        if cur > base * (1 + tol):
            return "REGRESSION"
        if cur < base * (1 - tol):
            return "better"
        return "ok"
    if cur < base * (1 - tol):
        return "REGRESSION"
    if cur > base * (1 + tol):
        return "better"
    return "ok"


def fmt(kind, v):
    if v is None:
        return "-"
    return "%.0f" % v if kind == "instr" else "%.3f" % v


def fraction(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("'%s' is not a number" % text)
    if not 0 <= v < 1:
        raise argparse.ArgumentTypeError("'%s' must be in [0, 1)" % text)
    return v


def main(argv):
    ap = argparse.ArgumentParser(prog=argv[0], description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("current", metavar="CURRENT.csv")
    ap.add_argument("base_dir", metavar="BASELINE_DIR", nargs="?", default="results/baseline")
    ap.add_argument("--instructions", metavar="FILE")
    for k in TOL:
        ap.add_argument("--tol-" + k, type=fraction, default=TOL[k], metavar="F")
    a = ap.parse_args(argv[1:])
    opts = {"--instructions": a.instructions} if a.instructions else {}
    tol = {"rel1": a.tol_rel1, "sp2": a.tol_sp2, "instr": a.tol_instr}
    cur_path, base_dir = a.current, a.base_dir

    try:
        if not os.path.isdir(base_dir):
            raise rep.InputError("%s: no such baseline directory (make one with "
                                 "scripts/make-baseline.sh after make bench)" % base_dir)
        cur_rows = rep.read_runs(cur_path)
        base_rows = rep.read_runs(os.path.join(base_dir, "runs.csv"))
        cur_pts, cur_params = rep.aggregate(cur_rows)
        base_pts, base_params = rep.aggregate(base_rows)
        cur = ratio_figures(cur_pts)
        base = ratio_figures(base_pts)
        base_instr_path = os.path.join(base_dir, "instructions.csv")
        cur_instr_path = opts.get("--instructions") or os.path.join(
            os.path.dirname(cur_path) or ".", "instructions.csv")
        instr_note = None
        if os.path.isfile(base_instr_path):
            base.update(read_instr(base_instr_path))
            if os.path.isfile(cur_instr_path):
                cur.update(read_instr(cur_instr_path))
            elif "--instructions" in opts:
                raise rep.InputError("%s: no such instruction-count file" % cur_instr_path)
            else:
                instr_note = ("no current instruction counts (%s): instructions not compared"
                              % cur_instr_path)
        elif "--instructions" in opts:
            cur.update(read_instr(cur_instr_path))
            instr_note = "the baseline has no instructions.csv: instructions not compared"
    except rep.InputError as e:
        sys.stderr.write("regress: %s\n" % e)
        return 2

    kind_order = {"instr": 0, "rel1": 1, "sp2": 2}
    keys = sorted(set(cur) | set(base),
                  key=lambda k: (rep.workload_key(k[1]), rep.runtime_key(k[2]), kind_order[k[0]]))
    table = []
    counts = {"REGRESSION": 0, "ok": 0, "better": 0}
    unpaired = 0
    for k in keys:
        kind, w, rt = k
        b, c = base.get(k), cur.get(k)
        crange = "-"
        if c is not None and c[1] is not None:
            crange = "%s-%s" % (fmt(kind, c[1]), fmt(kind, c[2]))
        b = b[0] if b is not None else None
        c = c[0] if c is not None else None
        if b is None or c is None:
            if kind == "instr" and instr_note:
                continue
            verdict = "new (no baseline)" if b is None else "missing in current"
            unpaired += 1
        else:
            verdict = judge(kind, b, c, tol[kind])
            counts[verdict] += 1
        tolstr = ("+%d%%" if kind == "instr" else "-%d%%") % round(tol[kind] * 100)
        table.append([w, rt, LABEL[kind], fmt(kind, b), fmt(kind, c), crange,
                      "-" if b is None or c is None else "%.2f" % (c / b), tolstr, verdict])

    # Failed checks in the current file.
    fails = sorted((p for p in cur_pts.values() if p.failed),
                   key=lambda p: (rep.workload_key(p.workload), rep.runtime_key(p.runtime), p.threads))
    for p in fails:
        table.append([p.workload, p.runtime, "check (%d threads)" % p.threads, "pass",
                      "%d failed" % p.failed, "-", "-", "none", "REGRESSION"])
        counts["REGRESSION"] += 1

    hdr = ["workload", "runtime", "figure", "baseline", "current", "cur range", "cur/base",
           "tolerance", "verdict"]
    widths = [max(len(str(r[i])) for r in table + [hdr]) for i in range(len(hdr))]
    print("regress: %s against %s/runs.csv" % (cur_path, base_dir))
    print("  ".join(h.ljust(widths[i]) for i, h in enumerate(hdr)).rstrip())
    for r in table:
        print("  ".join(str(x).ljust(widths[i]) for i, x in enumerate(r)).rstrip())
    for w in sorted(set(cur_params) & set(base_params), key=rep.workload_key):
        if cur_params[w] != base_params[w]:
            print("note: %s ran with other parameters than the baseline (%s vs %s): its "
                  "ratios may differ for that reason" % (w, "/".join(sorted(cur_params[w])),
                                                         "/".join(sorted(base_params[w]))))
    if instr_note:
        print("note: " + instr_note)
    judged = counts["REGRESSION"] + counts["ok"] + counts["better"]
    print("regress: %d figures compared: %d ok, %d better, %d REGRESSION; %d without a counterpart"
          % (judged, counts["ok"], counts["better"], counts["REGRESSION"], unpaired))
    if counts["better"]:
        print("regress: some figures improved beyond the tolerance: consider refreshing "
              "the baseline (scripts/make-baseline.sh)")
    if judged == 0:
        sys.stderr.write("regress: no figure could be compared (need seq and another runtime "
                         "at 1 thread in both files)\n")
        return 2
    return 1 if counts["REGRESSION"] else 0

