"""stmbench ab (scripts/regress-ab) - the verdict of `make regress` (scripts/regress-run.sh): the
current tree (B) against the baseline revision (A), both measured in one sitting.

  regress-ab verdict --a A.csv... --b B.csv... [--counts-A F --counts-B F] [--meta META]
                     [--out DIR] [--history FILE] [--tol-1 X] [--tol-n X]
                     [--tol-count X] [--tol-miss X] [--level L]
      A.csv, B.csv: the harness's results files of the interleaved timed runs (read by
      header name: runtime, workload, threads, seed, ops_per_s, check), one per code
      layout (scripts/layout-link.sh), A's and B's in the same order. Counts: the
      files of scripts/instr-count.sh with INSTR_CACHE_SIM=1. Writes DIR/verdict.md
      (also printed), DIR/verdict.csv, DIR/layouts.csv (with several layouts: each
      side's median per layout) and DIR/plots/<figure>.png; appends the rows to the
      history file if given. Exit 1 when a figure regressed.
  regress-ab judge [--tol X] [--level L] A1,A2,... B1,B2,...
      the verdict of one throughput figure from paired samples (for tests and trials).
  regress-ab judge-count KIND A B A_CYCLES [--tol-count X] [--tol-miss X]
      the verdict of one count figure (KIND instr, cycles, d1 or ll; for tests).
  regress-ab noise DIR...
      A/A noise: from the timed runs (DIR/A.csv, DIR/B.csv) of comparisons of a binary
      with itself, per thread class and number of repeats, the spread of the ratios,
      the intervals' half-widths and the tolerance an unchanged binary would need.
  regress-ab baseline-rev RUNS.csv
      the git revision a results file was made at (its git_rev column).
  regress-ab history-plot HISTORY.csv OUT.png
      the ratio of every throughput figure over the comparisons of a history file.

Throughput figures (higher is better): ops/s at 1 thread and at N threads. The repeats
are paired (A and B ran back to back with the same seed), d_i = ln(B_i / A_i); the
ratio B/A is exp(median d), its interval the bootstrap percentile interval of that
median (4000 resamples, fixed random seed, --level two-sided, default 0.90). p is the
one-sided Wilcoxon signed-rank test of the paired d_i (exact): a rank test as
google-benchmark's compare.py uses, but on the pairs, which the unpaired Mann-Whitney
U test (shown as p_U) ignores, so that load shared by A and B within a pair cancels.
REGRESSION when the whole interval lies below 1 - tolerance and p < 0.05; "better"
when it lies above 1 + tolerance and p < 0.05 the other way. The interval and both tests
are scipy.stats's (stmbench.stats).

With several code layouts (the same code linked with 0, 32, 64... bytes in front of
it; the pairs of one layout ran A and B at that padding, back to back), where the code
lands moves a figure by itself, A's as much as B's, and A and B at one padding are two
unrelated placements. The ratio B/A is the median paired ratio over all pairs, and
its interval the wider of (a) the bootstrap interval of that median, as above, and (b)
a two-stage (cluster) bootstrap interval of it: layouts drawn with replacement, then
pairs within each, so that the interval is as wide as the layouts' ratios disagree,
which is what placement does to both sides. A slowdown must stand out from what
placement alone does to the figure to be flagged; the pairing still cancels load
shared within a pair, and a median is not carried by one stalled run (a t interval
over the layouts' mean ratios was, in this sitting). p is the signed-rank test over
all pairs. The
verdict shows each side's layout spread (the largest of its medians per layout over
the smallest, minus 1; unpaired, so load in the sitting adds to it) and, as A and B,
each side's geometric mean of those medians.

Count figures (lower is better; per operation at 1 thread under callgrind with cache
simulation, deterministic, so no interval): instructions and estimated cycles regress
above 1 + --tol-count; D1 and LL misses above 1 + --tol-miss when the added misses
also weigh at least --tol-count of A's estimated cycles (10 per D1 miss, 100 per LL
miss), so that a rise from 0.01 to 0.02 misses per operation is not a regression.

A run of B whose check failed is a regression. Exit status: 0 no regression, 1 a
regression, 2 bad input.
"""

import argparse
import csv
import io
import math
import os
import sys
from collections import defaultdict

from .lists import runtime_key, workload_key
from .cli import command
from .results import InputError
from .stats import (LEVEL, bootstrap_median_ci, cluster_bootstrap_median_ci, mann_whitney_less,
                    median, signed_rank_less)

# Tolerances: from A/A noise measured on the quiet 2-core development VM
# (docs/regress.md, "Tolerances, from measured noise"): the largest A/A excursion of
# an interval plus a margin.
TOL = {"1": 0.05, "n": 0.15, "count": 0.03, "miss": 0.10}
ALPHA = 0.05

COUNT_FIGS = [("instr", "instr_per_op", "instructions/op"),
              ("d1", "d1_miss_per_op", "D1 misses/op"),
              ("ll", "ll_miss_per_op", "LL misses/op"),
              ("cycles", "est_cycles_per_op", "est. cycles/op")]
HISTORY_COLS = ["date", "a_rev", "b_rev", "host_cores", "figure", "workload", "runtime",
                "threads", "a", "b", "ratio", "lo", "hi", "p", "tolerance", "verdict"]


# ---------------------------------------------------------------- verdicts

def judge_throughput(a, b, tol, level=LEVEL):
    """a, b: paired samples (same length, positive). Returns a dict with ratio, lo, hi,
    p (B smaller), p_more (B larger) and the verdict."""
    if len(a) != len(b) or len(a) < 2:
        raise ValueError("need at least 2 paired samples")
    d = [math.log(y / x) for x, y in zip(a, b)]
    lo, hi = bootstrap_median_ci(d, level)
    r = {"ratio": math.exp(median(d)), "lo": math.exp(lo), "hi": math.exp(hi),
         "p": signed_rank_less(d), "p_more": signed_rank_less([-x for x in d]),
         "p_u": mann_whitney_less(a, b)}
    if r["hi"] < 1 - tol and r["p"] < ALPHA:
        r["verdict"] = "REGRESSION"
    elif r["lo"] > 1 + tol and r["p_more"] < ALPHA:
        r["verdict"] = "better"
    else:
        r["verdict"] = "ok"
    return r


def judge_layouts(pairs, tol, level=LEVEL):
    """pairs: one (a, b) per code layout, each two lists of paired samples. One layout:
    judge_throughput. Several: the median paired ratio over all pairs, its interval the
    wider of the pooled pairs' bootstrap interval and the two-stage bootstrap over
    layouts and pairs (module docstring), p over all pairs; adds spread_a, spread_b
    (largest median per layout over smallest, minus 1) and the medians."""
    pairs = [(a, b) for a, b in pairs if len(a) == len(b) and len(a) >= 1]
    if len(pairs) <= 1:
        if not pairs:
            raise ValueError("need at least 2 paired samples")
        r = judge_throughput(pairs[0][0], pairs[0][1], tol, level)
        r.update(spread_a=None, spread_b=None, layouts=1)
        return r
    xa = [x for a, _ in pairs for x in a]
    xb = [x for _, b in pairs for x in b]
    r = judge_throughput(xa, xb, tol, level)       # the pooled pairs: lo, hi, p, p_u
    ma = [median(a) for a, _ in pairs]
    mb = [median(b) for _, b in pairs]
    lo, hi = cluster_bootstrap_median_ci([[math.log(y / x) for x, y in zip(a, b)]
                                          for a, b in pairs], level)
    r.update(lo=min(r["lo"], math.exp(lo)), hi=max(r["hi"], math.exp(hi)),
             spread_a=max(ma) / min(ma) - 1, spread_b=max(mb) / min(mb) - 1,
             medians_a=ma, medians_b=mb, layouts=len(pairs))
    if r["hi"] < 1 - tol and r["p"] < ALPHA:
        r["verdict"] = "REGRESSION"
    elif r["lo"] > 1 + tol and r["p_more"] < ALPHA:
        r["verdict"] = "better"
    else:
        r["verdict"] = "ok"
    return r


def judge_count(kind, a, b, a_cycles, tol_count, tol_miss):
    """A deterministic per-operation count, lower is better."""
    if a <= 0:
        return "ok" if b <= 0 else "new"
    ratio = b / a
    if kind in ("instr", "cycles"):
        if ratio > 1 + tol_count:
            return "REGRESSION"
        return "better" if ratio < 1 - tol_count else "ok"
    weight = 10.0 if kind == "d1" else 100.0
    big = a_cycles and abs(b - a) * weight >= tol_count * a_cycles
    if ratio > 1 + tol_miss and big:
        return "REGRESSION"
    if ratio < 1 - tol_miss and big:
        return "better"
    return "ok"


# ---------------------------------------------------------------- input

def read_csv(path, need):
    if not os.path.isfile(path):
        raise InputError("%s: no such file" % path)
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in need if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError("%s: missing column(s) %s" % (path, ", ".join(missing)))
        return list(reader)


RUN_NEED = ("runtime", "workload", "threads", "seed", "ops_per_s", "check")


def read_runs(path):
    """{(runtime, workload, threads): {seed: ops_per_s}} of the passing runs, and the
    list of failed ones."""
    out = defaultdict(dict)
    failed = []
    for i, row in enumerate(read_csv(path, RUN_NEED)):
        try:
            key = (row["runtime"], row["workload"], int(row["threads"]))
            v = float(row["ops_per_s"])
        except ValueError:
            raise InputError("%s: row %d: threads or ops_per_s is not a number" % (path, i + 2))
        if row["check"] != "pass":
            failed.append(key + (row["seed"], row["check"]))
            continue
        if v > 0:
            out[key][row["seed"]] = v
    return out, failed


def read_counts(path):
    need = ["runtime", "workload"] + [c for _, c, _ in COUNT_FIGS]
    out = {}
    for i, row in enumerate(read_csv(path, need)):
        try:
            out[(row["runtime"], row["workload"])] = {k: float(row[c]) for k, c, _ in COUNT_FIGS}
        except ValueError:
            raise InputError("%s: row %d: a count is not a number" % (path, i + 2))
    return out


def read_meta(path):
    meta = {}
    if path and os.path.isfile(path):
        with open(path) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    meta[k] = v
    return meta


# ---------------------------------------------------------------- output

def fmt_num(x):
    if x is None:
        return "-"
    if x >= 100:
        return "{:,.0f}".format(x)
    if x >= 1:
        return "%.2f" % x
    return "%.3f" % x


def plots(rows, outdir, tols):
    """One PNG per figure: the ratio B/A of each runtime x workload with its interval;
    regressions red, improvements green. Returns the files written, or a note."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is missing: no plots"
    os.makedirs(os.path.join(outdir, "plots"), exist_ok=True)
    written = []
    figs = []
    for r in rows:
        if r["figure"] not in figs:
            figs.append(r["figure"])
    for fig in figs:
        sel = [r for r in rows if r["figure"] == fig and r["ratio"] is not None]
        if not sel:
            continue
        h = max(2.5, 0.28 * len(sel) + 1.2)
        f, ax = plt.subplots(figsize=(7, h))
        for i, r in enumerate(sel):
            col = {"REGRESSION": "#d62728", "better": "#2ca02c"}.get(r["verdict"], "#555555")
            lo, hi = r["lo"], r["hi"]
            ax.errorbar([r["ratio"]], [i], xerr=[[r["ratio"] - lo], [hi - r["ratio"]]],
                        fmt="o", color=col, ecolor=col, capsize=3, ms=5)
        ax.set_yticks(range(len(sel)))
        ax.set_yticklabels(["%s %s" % (r["workload"], r["runtime"]) for r in sel], fontsize=8)
        ax.invert_yaxis()
        tol = sel[0]["tol"]
        ax.axvline(1.0, color="black", lw=0.8)
        lower_better = sel[0]["kind"] in ("instr", "d1", "ll", "cycles")
        ax.axvline(1 + tol if lower_better else 1 - tol, color="#d62728", lw=0.8, ls="--")
        ax.set_xlabel("B / A (current / baseline revision)%s; dashed: tolerance"
                      % ("" if lower_better else ", with %d%% interval" % round(100 * sel[0]["level"])))
        ax.set_title(fig)
        f.tight_layout()
        name = "".join(c if c.isalnum() else "_" for c in fig).strip("_") + ".png"
        path = os.path.join(outdir, "plots", name)
        f.savefig(path, dpi=90)
        plt.close(f)
        written.append(path)
    return written


def cmd_verdict(opt):
    tols = {"1": opt.tol_1, "n": opt.tol_n, "count": opt.tol_count, "miss": opt.tol_miss}
    level = opt.level
    if len(opt.a) != len(opt.b):
        raise InputError("--a and --b name %d and %d files: one per layout each"
                         % (len(opt.a), len(opt.b)))
    out = opt.out or os.path.dirname(opt.b[0]) or "."
    meta = read_meta(opt.meta)
    pads = meta.get("layouts", "").split()
    if len(pads) != len(opt.a):
        pads = [str(i) for i in range(len(opt.a))]
    LA = [read_runs(f)[0] for f in opt.a]       # per layout: {key: {seed: ops/s}}
    LB, b_failed = [], []
    for f in opt.b:
        runs, failed = read_runs(f)
        LB.append(runs)
        b_failed += failed
    cA = read_counts(opt.counts_A) if opt.counts_A else {}
    cB = read_counts(opt.counts_B) if opt.counts_B else {}

    rows = []
    notes = []
    rk, wk = runtime_key, workload_key
    allkeys = set().union(*LA, *LB)
    keys = sorted(allkeys, key=lambda k: (k[2] > 1, wk(k[1]), rk(k[0])))
    layout_rows = []
    for key in keys:
        rt, wl, th = key
        pairs = []
        for A, B in zip(LA, LB):
            a, b = A.get(key, {}), B.get(key, {})
            seeds = sorted(set(a) & set(b))
            if seeds:
                pairs.append(([a[s] for s in seeds], [b[s] for s in seeds]))
            else:
                pairs.append(None)
        fig = "ops/s, %d thread%s" % (th, "" if th == 1 else "s")
        tol = tols["1"] if th == 1 else tols["n"]
        row = {"figure": fig, "kind": "ops1" if th == 1 else "opsN", "workload": wl,
               "runtime": rt, "threads": th, "tol": tol, "level": level}
        have = [p for p in pairs if p]
        if sum(len(p[0]) for p in have) < 2:
            notes.append("%s %s threads=%d: fewer than 2 paired repeats, not judged" % (wl, rt, th))
            continue
        if len(have) < len(pairs):
            notes.append("%s %s threads=%d: a layout without paired repeats, not judged"
                         % (wl, rt, th))
            continue
        r = judge_layouts(have, tol, level)
        row.update(r)
        if r["layouts"] > 1:
            row["a"] = math.exp(sum(math.log(x) for x in r["medians_a"]) / r["layouts"])
            row["b"] = math.exp(sum(math.log(x) for x in r["medians_b"]) / r["layouts"])
            for side, ms in (("A", r["medians_a"]), ("B", r["medians_b"])):
                for pad, m, (a, _) in zip(pads, ms, have):
                    layout_rows.append([wl, rt, th, side, pad, "%.6g" % m, len(a)])
        else:
            row["a"], row["b"] = median(have[0][0]), median(have[0][1])
        rows.append(row)
    for (rt, wl) in sorted(set(cA) & set(cB), key=lambda k: (wk(k[1]), rk(k[0]))):
        ca, cb = cA[(rt, wl)], cB[(rt, wl)]
        for kind, _, label in COUNT_FIGS:
            tol = tols["count"] if kind in ("instr", "cycles") else tols["miss"]
            v = judge_count(kind, ca[kind], cb[kind], ca["cycles"], tols["count"], tols["miss"])
            ratio = cb[kind] / ca[kind] if ca[kind] > 0 else None
            rows.append({"figure": label, "kind": kind, "workload": wl, "runtime": rt,
                         "threads": 1, "tol": tol, "level": level, "a": ca[kind],
                         "b": cb[kind], "ratio": ratio, "lo": ratio, "hi": ratio,
                         "p": None, "verdict": v})
    for (rt, wl, th, seed, check) in b_failed:
        rows.append({"figure": "check, %d thread(s)" % th, "kind": "check", "workload": wl,
                     "runtime": rt, "threads": th, "tol": 0, "level": level, "a": None,
                     "b": None, "ratio": None, "lo": None, "hi": None, "p": None,
                     "verdict": "REGRESSION", "detail": "seed %s: check %s" % (seed, check)})
    if not rows:
        raise InputError("no figure could be compared (no configuration with 2 paired repeats)")

    # ---- the table
    regs = [r for r in rows if r["verdict"] == "REGRESSION"]
    md = []
    md.append("## stmbench regression gate: B = %s against A = %s (baseline revision)"
              % (meta.get("b_rev", "?"), meta.get("a_rev", "?")))
    md.append("")
    nl = len(opt.a)
    md.append("%s; timed runs of %s s interleaved A/B, %s repeats at 1 thread, %s at %s "
              "threads (%s cores)%s. Tolerances: ops/s %d%% (1 thread), %d%% (N threads); "
              "instructions and est. cycles +%d%%; misses +%d%%. Interval: %d%% bootstrap "
              "of the median paired ratio%s; p: Wilcoxon signed-rank on the pairs, one-sided; "
              "p_U: Mann-Whitney U, unpaired (shown only).%s"
              % (meta.get("date", "?"), meta.get("duration", "?"), meta.get("repeat_1", "?"),
                 meta.get("repeat_n", "?"), (meta.get("threads", "?").split() or ["?"])[-1],
                 meta.get("cores", "?"),
                 "" if nl == 1 else ", each at %d code layouts (paddings %s bytes)"
                 % (nl, " ".join(pads)),
                 round(100 * tols["1"]), round(100 * tols["n"]),
                 round(100 * tols["count"]), round(100 * tols["miss"]), round(100 * level),
                 "" if nl == 1 else ", over all layouts, widened to a two-stage bootstrap "
                 "(layouts, then pairs)",
                 "" if nl == 1 else " A, B: geometric means of each side's medians per layout; "
                 "layouts A, B: each side's spread over the layouts (largest median over "
                 "smallest, minus 1): what code placement did, with the sitting's load."))
    md.append("")
    md.append("**%d figures: %d REGRESSION, %d better, %d ok.**%s"
              % (len(rows), len(regs), sum(r["verdict"] == "better" for r in rows),
                 sum(r["verdict"] == "ok" for r in rows),
                 (" Regressed: " + "; ".join("%s %s %s" % (r["workload"], r["runtime"], r["figure"])
                                            for r in regs)) if regs else ""))
    md.append("")
    lay = nl > 1
    md.append("| workload | runtime | figure | A | B | B/A | interval | p | p_U |%s tolerance | verdict |"
              % (" layouts A | layouts B |" if lay else ""))
    md.append("|---|---|---|---:|---:|---:|---|---:|---:|%s---:|---|" % ("---:|---:|" if lay else ""))
    for r in rows:
        if r["ratio"] is None:
            inter, ratio = "-", "-"
        else:
            ratio = "%.3f" % r["ratio"]
            inter = "%.3f-%.3f" % (r["lo"], r["hi"]) if r["kind"] in ("ops1", "opsN") else "(exact)"
        tolstr = "-" if r["kind"] == "check" else (
            ("-%d%%" if r["kind"] in ("ops1", "opsN") else "+%d%%") % round(100 * r["tol"]))
        verdict = r["verdict"] if r["verdict"] != "REGRESSION" else "**REGRESSION**"
        if r.get("detail"):
            verdict += " (%s)" % r["detail"]
        spreads = ""
        if lay:
            spreads = " %s | %s |" % tuple(
                "-" if r.get(k) is None else "%.1f%%" % (100 * r[k]) for k in ("spread_a", "spread_b"))
        md.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |%s %s | %s |"
                  % (r["workload"], r["runtime"], r["figure"], fmt_num(r["a"]), fmt_num(r["b"]),
                     ratio, inter, "-" if r["p"] is None else "%.3f" % r["p"],
                     "%.3f" % r["p_u"] if r.get("p_u") is not None else "-", spreads, tolstr,
                     verdict))
    for n in notes:
        md.append("")
        md.append("note: " + n)
    text = "\n".join(md) + "\n"
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "verdict.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)

    # ---- verdict.csv and history
    lines = []
    for r in rows:
        lines.append([meta.get("date", ""), meta.get("a_rev", ""), meta.get("b_rev", ""),
                      meta.get("cores", ""), r["figure"], r["workload"], r["runtime"],
                      r["threads"], "" if r["a"] is None else "%.6g" % r["a"],
                      "" if r["b"] is None else "%.6g" % r["b"],
                      "" if r["ratio"] is None else "%.5f" % r["ratio"],
                      "" if r["lo"] is None else "%.5f" % r["lo"],
                      "" if r["hi"] is None else "%.5f" % r["hi"],
                      "" if r["p"] is None else "%.4f" % r["p"], "%.3f" % r["tol"], r["verdict"]])
    with open(os.path.join(out, "verdict.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(HISTORY_COLS)
        w.writerows(lines)
    if layout_rows:
        with open(os.path.join(out, "layouts.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["workload", "runtime", "threads", "side", "padding", "median_ops_per_s",
                        "runs"])
            w.writerows(layout_rows)
    if opt.history:
        append_history(opt.history, lines)
        print("regress: %d rows appended to %s" % (len(lines), opt.history))
    p = plots(rows, out, tols)
    if isinstance(p, str):
        print("regress: " + p)
    else:
        print("regress: plots: %s" % " ".join(p))
    return 1 if regs else 0


def append_history(path, lines):
    """Appends in one write; a file with other columns is refused, never rewritten."""
    new = not os.path.isfile(path) or os.path.getsize(path) == 0
    if not new:
        with open(path, newline="") as f:
            hdr = next(csv.reader(f), [])
        if hdr != HISTORY_COLS:
            raise InputError("%s: not a history file of this format (header %s)" % (path, ",".join(hdr)))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    if new:
        w.writerow(HISTORY_COLS)
    w.writerows(lines)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, buf.getvalue().encode())
    finally:
        os.close(fd)


def samples(text):
    try:
        xs = [float(x) for x in text.split(",")]
    except ValueError:
        raise InputError("judge: samples must be comma-separated numbers")
    if min(xs) <= 0:
        raise InputError("judge: samples must be positive numbers")
    return xs


def cmd_judge(a):
    xa, xb = samples(a.A), samples(a.B)
    if len(xa) != len(xb) or len(xa) < 2:
        raise InputError("judge: want two lists of the same length >= 2 of positive numbers")
    r = judge_throughput(xa, xb, a.tol, a.level)
    print("ratio=%.4f lo=%.4f hi=%.4f p=%.4f p_u=%.4f verdict=%s"
          % (r["ratio"], r["lo"], r["hi"], r["p"], r["p_u"], r["verdict"]))
    return 0


def cmd_judge_count(a):
    print("verdict=%s" % judge_count(a.kind, a.A, a.B, a.A_cycles, a.tol_count, a.tol_miss))
    return 0


def cmd_noise(a):
    """A/A noise (DIRs of runs that compared a binary with itself, REGRESS_A_BIN =
    REGRESS_B_BIN): for the first R repeats (R = 3, 5, 7, ... up to what was run), per
    thread class: the spread of the paired log-ratios, the half-width of the intervals,
    and how far below 1 the highest interval bound fell (the tolerance under which an
    unchanged binary would have been flagged)."""
    data = defaultdict(dict)          # cls -> {(dir, key): (a by seed, b by seed)}
    for d in a.dirs:
        # one layout (DIR/A.csv) or several (DIR/layout-<pad>/A.csv, make regress's):
        # each layout's pairs count as a figure of their own
        subs = [d] if os.path.isfile(os.path.join(d, "A.csv")) else sorted(
            os.path.join(d, x) for x in os.listdir(d) if x.startswith("layout-"))
        for sd in subs:
            A, _ = read_runs(os.path.join(sd, "A.csv"))
            B, _ = read_runs(os.path.join(sd, "B.csv"))
            for key in set(A) & set(B):
                cls = "1 thread" if key[2] == 1 else "N threads"
                data[cls][(sd, key)] = (A[key], B[key])
    for cls in sorted(data):
        figs = data[cls]
        nmax = min(len(set(a) & set(b)) for a, b in figs.values())
        print("%s: %d figures, up to %d paired repeats" % (cls, len(figs), nmax))
        for R in [r for r in (3, 5, 7, 10, 15, 20) if r <= nmax]:
            sds, halfs, worst = [], [], (0.0, "")
            for (d, key), (a, b) in sorted(figs.items()):
                seeds = sorted(set(a) & set(b), key=lambda x: int(x) if x.isdigit() else x)[:R]
                dl = [math.log(b[s] / a[s]) for s in seeds]
                m = sum(dl) / len(dl)
                sds.append(math.sqrt(sum((x - m) ** 2 for x in dl) / (len(dl) - 1)))
                lo, hi = bootstrap_median_ci(dl)
                halfs.append((math.exp(hi) - math.exp(lo)) / 2)
                below = 1 - math.exp(hi)
                if below > worst[0]:
                    worst = (below, "%s %s" % (key[1], key[0]))
            sds.sort()
            halfs.sort()
            print("  R=%2d: sd of ln(B/A) per run pair: median %.3f, 90th pct %.3f, max %.3f;"
                  " interval half-width median %.3f, 90th pct %.3f; highest bound below 1"
                  " by at most %.3f%s"
                  % (R, median(sds), sds[int(0.9 * (len(sds) - 1))], sds[-1], median(halfs),
                     halfs[int(0.9 * (len(halfs) - 1))], worst[0],
                     " (%s)" % worst[1] if worst[1] else ""))
    return 0


def cmd_baseline_rev(a):
    path = a.runs
    revs = defaultdict(int)
    for r in read_csv(path, ("git_rev",)):
        revs[r["git_rev"]] += 1
    if not revs:
        raise InputError("%s: no rows" % path)
    rev = max(revs, key=lambda k: revs[k])
    if len(revs) > 1:
        sys.stderr.write("regress: %s holds several revisions (%s): taking %s\n"
                         % (path, ", ".join(sorted(revs)), rev))
    if rev.endswith("-dirty"):
        sys.stderr.write("regress: the baseline was made from a modified tree (%s): "
                         "comparing with its commit\n" % rev)
        rev = rev[:-len("-dirty")]
    if not rev or rev == "unknown":
        raise InputError("%s: no git revision recorded" % path)
    print(rev)
    return 0


def cmd_history_plot(a):
    path, png = a.history, a.png
    rows = read_csv(path, HISTORY_COLS)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("matplotlib is missing")
    series = defaultdict(list)
    order = []
    for r in rows:
        if r["figure"].startswith("ops/s") and r["ratio"]:
            c = (r["date"], r["b_rev"])
            if c not in order:
                order.append(c)
            series["%s %s %st" % (r["workload"], r["runtime"], r["threads"])].append(
                (order.index(c), float(r["ratio"]), r["verdict"]))
    f, ax = plt.subplots(figsize=(9, 5))
    for name, pts in sorted(series.items()):
        ax.plot([p[0] for p in pts], [p[1] for p in pts], lw=0.8, alpha=0.7)
        bad = [p for p in pts if p[2] == "REGRESSION"]
        ax.scatter([p[0] for p in bad], [p[1] for p in bad], color="#d62728", zorder=3, s=14)
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_xticks(range(len(order)))
    ax.set_xticklabels([b for _, b in order], rotation=60, fontsize=7, ha="right")
    ax.set_ylabel("ops/s B / A (each comparison against its baseline revision)")
    ax.set_title("stmbench regression history (red: REGRESSION)")
    f.tight_layout()
    f.savefig(png, dpi=90)
    print("regress: %s" % png)
    return 0


def fraction(lo, hi):
    """An argparse type: a number in [lo, hi)."""
    def conv(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError("'%s' is not a number" % text)
        if not lo <= v < hi:
            raise argparse.ArgumentTypeError("'%s' must be in [%g, %g)" % (text, lo, hi))
        return v
    return conv


def parser(prog):
    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    tol, level = fraction(0, 1), fraction(0.5, 1)
    p = command(sub, "verdict", cmd_verdict, "the verdict of make regress")
    p.add_argument("--a", required=True, nargs="+", metavar="A.csv")
    p.add_argument("--b", required=True, nargs="+", metavar="B.csv")
    p.add_argument("--counts-A", dest="counts_A", metavar="F")
    p.add_argument("--counts-B", dest="counts_B", metavar="F")
    p.add_argument("--meta", metavar="META")
    p.add_argument("--out", metavar="DIR")
    p.add_argument("--history", metavar="FILE")
    for k in TOL:
        p.add_argument("--tol-" + k, type=tol, default=TOL[k], metavar="X")
    p.add_argument("--level", type=level, default=LEVEL, metavar="L")
    p = command(sub, "judge", cmd_judge, "one throughput figure from paired samples")
    p.add_argument("--tol", type=float, default=TOL["1"], metavar="X")
    p.add_argument("--level", type=float, default=LEVEL, metavar="L")
    p.add_argument("A", metavar="A1,A2,...")
    p.add_argument("B", metavar="B1,B2,...")
    p = command(sub, "judge-count", cmd_judge_count, "one count figure")
    p.add_argument("kind", choices=("instr", "cycles", "d1", "ll"), metavar="KIND")
    p.add_argument("A", type=float)
    p.add_argument("B", type=float)
    p.add_argument("A_cycles", type=float, metavar="A_CYCLES")
    p.add_argument("--tol-count", type=float, default=TOL["count"], metavar="X")
    p.add_argument("--tol-miss", type=float, default=TOL["miss"], metavar="X")
    p = command(sub, "noise", cmd_noise, "A/A noise of comparisons of a binary with itself")
    p.add_argument("dirs", nargs="+", metavar="DIR")
    p = command(sub, "baseline-rev", cmd_baseline_rev, "the git revision of a results file")
    p.add_argument("runs", metavar="RUNS.csv")
    p = command(sub, "history-plot", cmd_history_plot, "the ratios of a history file over time")
    p.add_argument("history", metavar="HISTORY.csv")
    p.add_argument("png", metavar="OUT.png")
    return ap


def main(argv):
    a = parser(argv[0]).parse_args(argv[1:])
    try:
        return a.run(a)
    except InputError as e:
        sys.stderr.write("regress-ab: %s\n" % e)
        return 2
