#!/usr/bin/python3
"""scripts/stmbench_report.py - tables computed from stmbench results files.

    stmbench_report.py overhead DIR    DIR/runs.csv -> DIR/overhead.csv, DIR/overhead.md
                                       (+ DIR/sweep.csv -> the crossover table in overhead.md)
    stmbench_report.py conflicts DIR   DIR/conflicts.csv + DIR/runs.csv -> DIR/conflicts.md
    stmbench_report.py gnuplot DIR     DIR/runs.csv -> DIR/plots/throughput_<w>.dat
                                       (stdout: workload, file, columns, seq, and the
                                       hardware threads when a point is oversubscribed)
    stmbench_report.py all DIR         all three

Also the library the other scripts import (scripts/plot.py, scripts/regress): reading
runs.csv by header name (docs/contract.md "Results"; extra columns are allowed), the medians
per (workload, runtime, threads), the "n% slower than single-thread" figure, the
machine context JSON the harness writes beside the CSV, and which thread counts are
oversubscribed (more threads than the context's hardware threads, `pus`: marked so in
every table and figure, and never a scaling figure).

Only the Python standard library. Exit status: 0 ok, 2 bad input (missing file, missing
columns, unreadable numbers), with a message naming the file and the problem.
"""

import csv
import glob
import json
import math
import os
import statistics
import sys
from collections import Counter, defaultdict

RUN_COLUMNS = (
    "run_id,timestamp,git_rev,host,runtime,workload,params,threads,pin,seed,duration_s,"
    "ops,ops_per_s,commits,aborts,aborts_write_write,aborts_read_write,aborts_other,"
    "unshared_pages,commit_p50_ns,commit_p99_ns,block_p50_ns,block_p99_ns,check,cpus"
).split(",")
CONFLICT_COLUMNS = "run_id,t_ns,thread,other_thread,kind,object,page,site,wasted_ns".split(",")

BASELINE_RT = "seq"


def _listed_order():
    """Display order of runtimes and workloads: the list's (runtime/runtimes.h), as
    `stmbench --list` prints it (STMBENCH, else build/stmbench or build/release/stmbench).
    Without a binary, names sort alphabetically."""
    import os
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cands = [os.environ.get("STMBENCH", ""), os.path.join(root, "build", "stmbench"),
             os.path.join(root, "build", "release", "stmbench")]
    for b in cands:
        if b and os.access(b, os.X_OK):
            try:
                out = subprocess.run([b, "--list"], capture_output=True, text=True,
                                     timeout=30).stdout
            except (OSError, subprocess.SubprocessError):
                continue
            rts = [l.split()[1] for l in out.splitlines() if l.startswith("runtime ")]
            wls = [l.split()[1] for l in out.splitlines() if l.startswith("workload ")]
            if rts and wls:
                return rts, wls
    return [], []


RUNTIME_ORDER, WORKLOAD_ORDER = _listed_order()


class InputError(Exception):
    """Bad input: the scripts print it and exit 2."""


def order_key(order):
    return lambda name: (order.index(name) if name in order else len(order), name)


def runtime_key(name):
    return order_key(RUNTIME_ORDER)(name)


def workload_key(name):
    return order_key(WORKLOAD_ORDER)(name)


# The time breakdown's categories (runtime/timeacct.h, enum ta_cat order): the CSV
# column time_<name>_ns, a label and what it holds. "lost" categories are neither the
# blocks' work nor the code outside blocks: the runtime's overhead and its waits.
TIME_CATEGORIES = [
    ("outside", "outside blocks", "workload code outside atomic blocks, keys, the loop"),
    ("work", "work in blocks", "inside atomic blocks: committed STM attempts, the mutex, "
     "locks or GIL held"),
    ("wasted", "aborted attempts", "STM: attempts thrown away, their rollback included"),
    ("begin", "begin + import", "STM: starting a transaction, importing others' commits"),
    ("validate", "validation", "STM: a commit's import and read-set check"),
    ("wait_lock", "wait for lock", "waiting for the mutex, a fine-grained lock, the STM's "
     "commit lock"),
    ("publish", "commit copies", "STM: log entry, copies into the committed segment, link"),
    ("unshare", "page unsharing", "STM: copying and remapping pages"),
    ("wait_owner", "wait for owner", "STM: waiting for an object's write owner"),
    ("wait_inevitable", "wait for inevitable", "STM: waiting behind an inevitable "
     "transaction"),
    ("wait_gil", "wait for GIL", "GIL: waiting to take it"),
    ("handoff", "GIL hand-off", "GIL: from a drop until another thread holds it"),
]
TIME_COLUMNS = ["time_%s_ns" % c[0] for c in TIME_CATEGORIES]
OP_LATENCY = [("op_p50_ns", "p50"), ("op_p99_ns", "p99"), ("op_p99_9_ns", "p99.9"),
              ("op_p99_99_ns", "p99.99"), ("op_p99_999_ns", "p99.999"),
              ("op_max_ns", "max")]


def has_breakdown(row):
    return isinstance(row.get("thread_time_ns"), int) and row["thread_time_ns"] > 0 and \
        any(isinstance(row.get(c), int) and row[c] > 0 for c in TIME_COLUMNS)


# ---------------------------------------------------------------- reading files

def _num(path, lineno, col, text, conv=float):
    if text is None or text.strip() == "":
        return None
    try:
        v = conv(text)
    except ValueError:
        raise InputError("%s:%d: column %s: '%s' is not a number" % (path, lineno, col, text))
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    return v


NUMERIC = {
    "threads": int, "seed": int, "duration_s": float, "ops": float, "ops_per_s": float,
    "commits": float, "aborts": float, "aborts_write_write": float,
    "aborts_read_write": float, "aborts_other": float, "unshared_pages": float,
    "commit_p50_ns": float, "commit_p99_ns": float, "block_p50_ns": float,
    "block_p99_ns": float,
}


def read_runs(path, allow_empty=False):
    """The rows of a runs CSV as dicts, numeric columns converted (None when empty).
    Raises InputError for a missing file, a missing required column or a bad number."""
    if not os.path.isfile(path):
        raise InputError("%s: no such results file" % path)
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        missing = [c for c in RUN_COLUMNS if c not in header]
        if missing:
            raise InputError("%s: not a stmbench runs CSV: missing column(s) %s"
                             % (path, ", ".join(missing)))
        rows = []
        for row in reader:
            lineno = reader.line_num
            if row.get("runtime") in (None, "") or row.get("workload") in (None, ""):
                raise InputError("%s:%d: row without runtime or workload" % (path, lineno))
            for col, conv in NUMERIC.items():
                row[col] = _num(path, lineno, col, row.get(col), conv)
            for col in header:          # extra numeric columns, e.g. ops_per_tx
                if col not in RUN_COLUMNS and col not in NUMERIC:
                    v = row.get(col)
                    try:
                        row[col] = int(v) if v not in (None, "") and v.lstrip("-").isdigit() else v
                    except ValueError:
                        pass
            if row["threads"] is None:
                raise InputError("%s:%d: empty threads column" % (path, lineno))
            rows.append(row)
    if not rows and not allow_empty:
        raise InputError("%s: no result rows" % path)
    return rows


def find_context(path):
    """The machine-context JSON beside a CSV (or in a directory): <base>.context.json,
    else any *.context.json, else None."""
    if os.path.isdir(path):
        d, base = path, "runs"
    else:
        d, base = os.path.dirname(path) or ".", os.path.splitext(os.path.basename(path))[0]
    cands = [os.path.join(d, base + ".context.json")] + sorted(glob.glob(os.path.join(d, "*.context.json")))
    for c in cands:
        if os.path.isfile(c):
            try:
                with open(c) as f:
                    return json.load(f)
            except (OSError, ValueError):
                continue
    return None


def _walk(obj, prefix=""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _walk(v, (prefix + "." if prefix else "") + str(k).lower())
    elif isinstance(obj, list):
        return
    else:
        yield prefix, obj


def machine_description(ctx, rows=None):
    """'<CPU model>, <N> cores' from the context JSON (keys found by name, so the
    harness's layout may change), falling back on the host column."""
    model = cores = host = None
    if ctx:
        items = list(_walk(ctx))
        for key, v in items:
            leaf = key.rsplit(".", 1)[-1]
            if model is None and isinstance(v, str) and v.strip() and (
                    leaf in ("cpu_model", "model_name", "model", "cpu_name", "cpu", "processor")):
                model = " ".join(v.split())
            if cores is None and isinstance(v, (int, float)) and not isinstance(v, bool) and (
                    leaf in ("cores", "ncores", "n_cores", "num_cores", "core_count", "cores_total")):
                cores = int(v)
            if host is None and isinstance(v, str) and leaf in ("host", "hostname"):
                host = v
    if host is None and rows:
        host = rows[0].get("host") or None
    parts = []
    if model:
        parts.append(model)
    if cores:
        parts.append("%d core%s" % (cores, "" if cores == 1 else "s"))
    if not parts:
        parts.append("host %s" % host if host else "unknown machine")
    return ", ".join(parts)


def hardware_threads(ctx):
    """The hardware threads (PUs) of the machine a results file was made on, from its
    context JSON: `pus` (what the harness binds to), else the bench block's
    `hardware_threads`, else `cores`; None when the context does not say. A run with
    more threads than this is oversubscribed: threads wait for a PU, not for each
    other, so its figures are no scaling figures."""
    if not isinstance(ctx, dict):
        return None
    bench = ctx.get("bench") if isinstance(ctx.get("bench"), dict) else {}
    for v in (ctx.get("pus"), bench.get("hardware_threads"), ctx.get("cores")):
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v
    return None


def oversubscribed(threads, hw):
    return bool(hw) and isinstance(threads, int) and threads > hw


def fmt_threads(threads, hw):
    """A thread count for a table: "4 (oversubscribed)" above the hardware threads."""
    return "%d (oversubscribed)" % threads if oversubscribed(threads, hw) else str(threads)


def oversub_note(hw):
    return ("Rows marked *oversubscribed* ran more threads than the machine's %d hardware "
            "threads (a thread pool sized for I/O): threads queue for a PU there, so they "
            "show how a runtime copes with waiting threads, not how it scales; no scaling "
            "figure uses them." % hw)


# ---------------------------------------------------------------- aggregation

def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


class Point:
    """The runs of one (workload, runtime, threads): medians of the passing runs."""

    def __init__(self, workload, runtime, threads):
        self.workload, self.runtime, self.threads = workload, runtime, threads
        self.rows = []
        self.failed = 0

    def add(self, row):
        if (row.get("check") or "").strip() == "pass":
            self.rows.append(row)
        else:
            self.failed += 1

    def col(self, name):
        return [r.get(name) for r in self.rows if isinstance(r.get(name), (int, float))]

    def med(self, name):
        return median(self.col(name))

    @property
    def ops_per_s(self):
        return self.med("ops_per_s")

    def shares(self):
        """{category: median share of thread time}, from the runs with a breakdown;
        None when no run has one (an old CSV, or a TIMEACCT=0 build)."""
        rows = [r for r in self.rows if has_breakdown(r)]
        if not rows:
            return None
        return {c[0]: median([r["time_%s_ns" % c[0]] / r["thread_time_ns"] for r in rows])
                for c in TIME_CATEGORIES}

    @property
    def aborts_per_commit(self):
        ratios = [r["aborts"] / r["commits"] for r in self.rows
                  if r.get("aborts") is not None and r.get("commits")]
        return median(ratios)


# Settings a runtime appends to params (libitm's method, htm's retries): not the
# workload's parameters, so they do not make one workload's runs look different.
RUNTIME_PARAM_PREFIXES = ("itm_", "htm_")


def workload_params(params):
    return ";".join(kv for kv in (params or "").split(";")
                    if kv and not kv.startswith(RUNTIME_PARAM_PREFIXES))


def aggregate(rows):
    """{(workload, runtime, threads): Point}, plus {workload: set(params)} (the
    workload's parameters, without the runtimes' own settings)."""
    points = {}
    params = defaultdict(set)
    for r in rows:
        key = (r["workload"], r["runtime"], r["threads"])
        p = points.get(key)
        if p is None:
            p = points[key] = Point(*key)
        p.add(r)
        params[r["workload"]].add(workload_params(r.get("params")))
    return points, params


def workloads_of(points):
    return sorted({k[0] for k in points}, key=workload_key)


def runtimes_of(points, workload=None):
    return sorted({k[1] for k in points if workload is None or k[0] == workload}, key=runtime_key)


def threads_of(points, workload=None, runtime=None):
    return sorted({k[2] for k in points
                   if (workload is None or k[0] == workload) and (runtime is None or k[1] == runtime)})


def ops(points, w, rt, t):
    p = points.get((w, rt, t))
    return p.ops_per_s if p else None


def n_pct(points, w, rt):
    """n = (ops_per_s(seq, 1) / ops_per_s(R, 1) - 1) x 100; None if unknown."""
    s, r = ops(points, w, BASELINE_RT, 1), ops(points, w, rt, 1)
    if not s or not r:
        return None
    return (s / r - 1.0) * 100.0


def ratio(a, b):
    return a / b if a is not None and b else None


def overhead_rows(points, hw=None):
    out = []
    for w in workloads_of(points):
        seq1 = ops(points, w, BASELINE_RT, 1)
        for rt in runtimes_of(points, w):
            own1 = ops(points, w, rt, 1)
            n = n_pct(points, w, rt)
            for t in threads_of(points, w, rt):
                p = points[(w, rt, t)]
                v = p.ops_per_s
                xs = p.col("ops_per_s")
                out.append({
                    "workload": w, "runtime": rt, "threads": t,
                    "ops_per_s_median": v,
                    "n_pct": n,
                    "speedup_self": ratio(v, own1),
                    "speedup_seq": ratio(v, seq1),
                    "aborts_per_commit": p.aborts_per_commit,
                    "runs": len(p.rows),
                    "checks_failed": p.failed,
                    "ops_per_s_min": min(xs) if xs else None,
                    "ops_per_s_max": max(xs) if xs else None,
                    "unshared_pages_median": p.med("unshared_pages"),
                    "commit_p50_ns": p.med("commit_p50_ns"),
                    "commit_p99_ns": p.med("commit_p99_ns"),
                    "block_p50_ns": p.med("block_p50_ns"),
                    "block_p99_ns": p.med("block_p99_ns"),
                    "oversubscribed": int(oversubscribed(t, hw)),
                })
    return out


OVERHEAD_COLUMNS = ["workload", "runtime", "threads", "ops_per_s_median", "n_pct",
                    "speedup_self", "speedup_seq", "aborts_per_commit", "runs",
                    "checks_failed", "ops_per_s_min", "ops_per_s_max",
                    "unshared_pages_median", "commit_p50_ns", "commit_p99_ns",
                    "block_p50_ns", "block_p99_ns", "oversubscribed"]


def _csvval(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return "%.6g" % v
    return str(v)


# ---------------------------------------------------------------- formatting

def fmt_rate(v):
    if v is None:
        return "n/a"
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            return "%.3g %s" % (v / div, unit)
    return "%.3g" % v


def fmt_ns(v):
    if v is None:
        return "n/a"
    for div, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if v >= div:
            return "%.3g %s" % (v / div, unit)
    return "%.0f ns" % v


def fmt_pct(v):
    return "n/a" if v is None else "%+.0f%%" % v


def fmt_x(v):
    return "n/a" if v is None else "×%.2f" % v


def fmt_g(v, digits=3):
    return "n/a" if v is None else "%.*g" % (digits, v)


def md_table(header, rows, align=None):
    """A Markdown table; align: one letter per column, l or r (default: first column
    left, the others right)."""
    align = align or "l" + "r" * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------- overhead table

def programmer_md(d):
    """The sections beside the n% table that make bench adds from the sources: what each
    runtime asks of the programmer (DIR/programmer-cost.md, scripts/sync_cost.py) and
    how fragile each variant is (DIR/mutants.md, the last make mutants summary: its
    first table and where it came from). Nothing when the files are absent."""
    out = []
    path = os.path.join(d, "programmer-cost.md")
    if os.path.exists(path):
        out += ["## What each runtime asks of the programmer", "",
                "Counted from the workloads' sources by `scripts/sync_cost.py` (what each "
                "column counts: the top of that script). Sync lines: the synchronisation code "
                "each runtime needs written (in brackets, in the workload's own files, "
                "without the structures it reuses); the runtimes with atomic blocks take "
                "their locks and retry themselves.", "",
                open(path).read().rstrip("\n"), ""]
    path = os.path.join(d, "mutants.md")
    if os.path.exists(path):
        text = open(path).read().split("\n")
        head = [l for l in text if l.startswith("Command:")]
        table = []
        for l in text:
            if l.startswith("|"):
                table.append(l)
            elif table:
                break
        out += ["## How fragile each variant is", "",
                "From the last `make mutants` (results/mutants/summary.md). " +
                (head[0] if head else ""), "", "\n".join(table), ""]
    return out


def write_overhead(d, rows, ctx):
    points, params = aggregate(rows)
    hw = hardware_threads(ctx)
    orows = overhead_rows(points, hw)
    with open(os.path.join(d, "overhead.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(OVERHEAD_COLUMNS)
        for r in orows:
            w.writerow([_csvval(r[c]) for c in OVERHEAD_COLUMNS])

    wls = workloads_of(points)
    rts = runtimes_of(points)
    revs = sorted({r.get("git_rev") or "" for r in rows} - {""})
    reps = sorted({len(p.rows) for p in points.values()})
    out = ["# stmbench: the cost of each runtime against plain sequential code", "",
           "Machine: %s. Revision: %s. Runs per point: %s (medians). Source: `runs.csv`."
           % (machine_description(ctx, rows), ", ".join(revs) or "unknown",
              "/".join(str(x) for x in reps) or "0"), "",
           "## n% slower than single-thread", "",
           "`n = (ops/s of seq at 1 thread / ops/s of the runtime at 1 thread - 1) × 100`, "
           "both from this run: how much slower a program gets on one core by using the "
           "runtime instead of no synchronisation at all. Lower is better; around 0 the "
           "difference is within noise.", ""]
    hdr = ["workload"] + [rt for rt in rts if rt != BASELINE_RT]
    body = []
    for w in wls:
        body.append([w] + [fmt_pct(n_pct(points, w, rt)) if (w, rt, 1) in points else "–"
                           for rt in rts if rt != BASELINE_RT])
    out += [md_table(hdr, body), ""]
    out += programmer_md(d)

    out += ["## Throughput and speedup by thread count", "",
            "ops/s: median of the passing runs (min–max in brackets). *× own*: speedup over "
            "the same runtime at 1 thread; *× seq*: over seq at 1 thread (above 1 means the "
            "runtime beats the sequential program). Aborts per commit: attempts thrown away "
            "per committed atomic block.", ""]
    if any(r["oversubscribed"] for r in orows):
        out += [oversub_note(hw), ""]
    for w in wls:
        ps = sorted(params.get(w, {""}))
        out += ["### %s" % w, ""]
        if any(ps):
            out += ["Parameters: %s" % "; ".join("`%s`" % p for p in ps if p), ""]
        body = []
        for r in orows:
            if r["workload"] != w:
                continue
            rng = ("%s–%s" % (fmt_rate(r["ops_per_s_min"]), fmt_rate(r["ops_per_s_max"]))
                   if r["runs"] > 1 else "")
            body.append([r["runtime"], fmt_threads(r["threads"], hw),
                         fmt_rate(r["ops_per_s_median"]) + (" (%s)" % rng if rng else ""),
                         fmt_pct(r["n_pct"]) if r["threads"] == 1 else "",
                         fmt_x(r["speedup_self"]), fmt_x(r["speedup_seq"]),
                         fmt_g(r["aborts_per_commit"]), fmt_ns(r["block_p99_ns"]),
                         "%d/%d" % (r["runs"], r["runs"] + r["checks_failed"])])
        out += [md_table(["runtime", "threads", "ops/s", "n%", "× own", "× seq",
                          "aborts/commit", "block p99", "runs passed"], body), ""]
    out += where_time_goes_md(points, hw)
    bad = [p for p in points.values() if p.failed]
    if bad:
        out += ["## Failed checks", "",
                "These runs failed their invariant check and are left out of the medians:", ""]
        for p in sorted(bad, key=lambda p: (workload_key(p.workload), runtime_key(p.runtime), p.threads)):
            out.append("- %s %s threads=%d: %d run(s)" % (p.workload, p.runtime, p.threads, p.failed))
        out.append("")
    with open(os.path.join(d, "overhead.md"), "w") as f:
        f.write("\n".join(out))
    return orows


# ---------------------------------------------------------------- time breakdown

def fmt_share(v):
    if v is None:
        return "n/a"
    if v == 0:
        return "–"
    return "%.1f%%" % (100.0 * v) if v >= 0.001 else "<0.1%"


def where_time_goes_md(points, hw=None):
    """The "where the time goes" and operation-latency sections of overhead.md."""
    keys = sorted((k for k, p in points.items() if p.shares()),
                  key=lambda k: (workload_key(k[0]), runtime_key(k[1]), k[2]))
    if not keys:
        return []
    used = [c for c in TIME_CATEGORIES
            if any(points[k].shares()[c[0]] for k in keys)]
    out = ["## Where the time goes", "",
           "Each run's thread time (threads × duration, from the start gate to the stop) "
           "split into categories; median share over the runs of a point, so a row adds "
           "up to about 100%. Waits, aborted attempts and page unsharing are timed every "
           "time; the other categories share the rest in the proportions measured on one "
           "loop iteration in 128 (runtime/timeacct.h; docs/breakdown.md says what "
           "each category holds). A dash: no time at all.", ""]
    out += ["Categories: " + "; ".join("*%s*: %s" % (c[1], c[2]) for c in used) + ".", ""]
    hdr = ["workload", "runtime", "threads"] + [c[1] for c in used]
    body = [[k[0], k[1], fmt_threads(k[2], hw)] + [fmt_share(points[k].shares()[c[0]])
                                                   for c in used]
            for k in keys]
    out += [md_table(hdr, body, "llr" + "r" * len(used)), ""]
    out += ["## Operation latency", "",
            "One loop iteration (an operation with --ops-per-tx 1) as the program sees it: "
            "its atomic block with every retry and wait, and the tick after it (where a GIL "
            "thread waits for the GIL). Percentiles of one iteration in 128 (median over "
            "runs); max: the longest sampled iteration or the longest single stall (a wait "
            "or an aborted attempt, each timed), whichever is longer: a lower bound of the "
            "true max that misses at most the wait-free rest of that iteration.", ""]
    body = []
    for k in keys:
        p = points[k]
        body.append([k[0], k[1], fmt_threads(k[2], hw)] + [fmt_ns(p.med(col))
                                                           for col, _ in OP_LATENCY])
    out += [md_table(["workload", "runtime", "threads"] + [q for _, q in OP_LATENCY], body,
                     "llr" + "r" * len(OP_LATENCY)), ""]
    return out


LOST = [c[0] for c in TIME_CATEGORIES if c[0] not in ("outside", "work")]


def lost_time_lines(points, hw=None):
    """One line per (workload, runtime) at its highest thread count that is not
    oversubscribed: how much of the thread time went neither to the blocks' work nor
    outside them, what share of that the aborts explain, and what the rest is."""
    lines = []
    for w in workloads_of(points):
        for rt in runtimes_of(points, w):
            ts = [t for t in threads_of(points, w, rt)
                  if points[(w, rt, t)].shares() and not oversubscribed(t, hw)]
            if not ts:
                continue
            t = max(ts)
            sh = points[(w, rt, t)].shares()
            lost = sum(sh[c] or 0 for c in LOST)
            label = dict((c[0], c[1]) for c in TIME_CATEGORIES)
            if lost <= 0:
                lines.append("- **%s / %s, %d thread%s**: no time in waits or runtime "
                             "phases: %s in blocks, %s outside%s." % (
                                 w, rt, t, "" if t == 1 else "s", fmt_share(sh["work"]),
                                 fmt_share(sh["outside"]),
                                 "" if rt == BASELINE_RT else
                                 " (this runtime's own cost, if any, is inside the blocks)"))
                continue
            rest = sorted(((sh[c] or 0, c) for c in LOST if c != "wasted" and sh[c]),
                          reverse=True)
            rest_s = ", ".join("%s %s (%.0f%% of it)" % (label[c], fmt_share(v), 100 * v / lost)
                               for v, c in rest[:4]) or "nothing else"
            lines.append("- **%s / %s, %d thread%s**: %s of thread time lost (not work, "
                         "not outside blocks); aborts explain %.0f%% of it (%s of thread "
                         "time); the rest: %s." % (
                             w, rt, t, "" if t == 1 else "s", fmt_share(lost),
                             100 * (sh["wasted"] or 0) / lost, fmt_share(sh["wasted"]), rest_s))
    return lines


# ---------------------------------------------------------------- conflict report

TOP = 10


def write_conflicts(d, rows, ctx):
    path = os.path.join(d, "conflicts.csv")
    runs = {r["run_id"]: r for r in rows}
    out = ["# stmbench conflict report", "",
           "Machine: %s. Source: `conflicts.csv` (one row per abort) joined with `runs.csv` "
           "on run_id." % machine_description(ctx, rows), "",
           "How to read it: every abort threw away the work of one atomic block, which then "
           "ran again. *site* is the workload's label of the atomic block that aborted; "
           "*object* and *page* are where the conflict was detected (the object another "
           "transaction wrote, and its page). *kind*: write-write (two transactions wrote the "
           "same object), read-write (this one read what another committed), inevitable (it "
           "gave way to an inevitable transaction), other. *wasted* is the time spent in the "
           "attempts thrown away; *% of thread time* divides it by the threads' total run "
           "time. To make a program scale, start with the top site and the top object: that "
           "is the shared datum to split, pad, or stop writing on every transaction "
           "(counters, sizes, a root pointer). Many conflicts on one page but spread over "
           "objects point at unrelated objects that only share a page. Waits for a lock "
           "(kind lock-wait: gil, mutex, locks) are rows of the same file but no aborts: "
           "they are left out of these tables, ranked by lock in the section "
           "*Contention* below and shown with the aborts as pairs.", ""]
    lost = lost_time_lines(aggregate(rows)[0], hardware_threads(ctx))
    if lost:
        out += ["## What the aborts explain", "",
                "Per runtime and workload, at the highest thread count run (not an "
                "oversubscribed one): the share of thread time lost to the runtime (its "
                "waits, aborted attempts and "
                "bookkeeping: everything but the blocks' work and the code outside them, "
                "from the time breakdown), and how much of that the aborts explain.", ""]
        out += lost + [""]
    if not os.path.isfile(path) or os.path.getsize(path) == 0:
        out += ["No `conflicts.csv` (or an empty one) in this directory: no aborts recorded.", ""]
        with open(os.path.join(d, "conflicts.md"), "w") as f:
            f.write("\n".join(out))
        return
    groups = defaultdict(lambda: {"n": 0, "wasted": 0.0, "kinds": Counter(), "threads": Counter(),
                                  "site": defaultdict(lambda: [0, 0.0, Counter()]),
                                  "object": defaultdict(lambda: [0, 0.0, Counter()]),
                                  "page": defaultdict(lambda: [0, 0.0, Counter()]),
                                  "runs": set()})
    # Waits (kind lock-wait), per (workload, runtime): per lock [waits, ns, pairs], the
    # pairs {(site, where, other_site, other_where): [waits, ns]}. Older files have
    # neither the kind lock-wait nor the columns after wasted_ns.
    waits = defaultdict(lambda: defaultdict(lambda: [0, 0.0, defaultdict(lambda: [0, 0.0])]))
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in CONFLICT_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError("%s: not a stmbench conflicts CSV: missing column(s) %s"
                             % (path, ", ".join(missing)))
        for c in reader:
            run = runs.get(c["run_id"])
            key = (run["workload"], run["runtime"]) if run else ("(run not in runs.csv)", "?")
            wasted = _num(path, reader.line_num, "wasted_ns", c["wasted_ns"]) or 0.0
            kind = c["kind"] or "other"
            if kind == "lock-wait":
                weight = int(_num(path, reader.line_num, "weight", c.get("weight") or "1") or 1)
                lk = waits[key][c.get("object_name") or c["object"] or "(none)"]
                lk[0] += weight
                lk[1] += wasted
                p = lk[2][tuple(c.get(col) or "" for col in
                                ("site", "where", "other_site", "other_where"))]
                p[0] += weight
                p[1] += wasted
                continue
            g = groups[key]
            g["n"] += 1
            g["wasted"] += wasted
            g["kinds"][kind] += 1
            g["runs"].add(c["run_id"])
            if run:
                g["threads"][run["threads"]] += 1
            for col in ("site", "object", "page"):
                e = g[col][c[col] or "(none)"]
                e[0] += 1
                e[1] += wasted
                e[2][kind] += 1
    if not groups:
        out += ["No aborts were recorded: no runtime threw work away in these runs.", ""]
    # Thread time of the runs of each (workload, runtime), for the wasted share.
    thread_time = defaultdict(float)
    runs_count = defaultdict(int)
    for r in rows:
        if r.get("duration_s") and r.get("threads"):
            thread_time[(r["workload"], r["runtime"])] += r["duration_s"] * r["threads"] * 1e9
            runs_count[(r["workload"], r["runtime"])] += 1

    def kinds_str(cnt):
        return ", ".join("%s %d" % (k, n) for k, n in cnt.most_common())

    for key in sorted(groups, key=lambda k: (workload_key(k[0]), runtime_key(k[1]))):
        g = groups[key]
        w, rt = key
        tt = thread_time.get(key)
        out += ["## %s — %s" % (w, rt), "",
                "%d aborts in %d of %d runs; wasted %s in all%s. By kind: %s. By thread count: %s."
                % (g["n"], len(g["runs"]), runs_count.get(key, 0), fmt_ns(g["wasted"]),
                   " (%.2g%% of thread time)" % (100.0 * g["wasted"] / tt) if tt else "",
                   kinds_str(g["kinds"]),
                   ", ".join("%s threads: %d" % (t, n) for t, n in sorted(g["threads"].items())) or "n/a"),
                ""]
        for col, title in (("site", "Top atomic blocks (sites)"), ("object", "Top objects"),
                           ("page", "Top pages")):
            items = sorted(g[col].items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0]))
            body = [["`%s`" % name, n, "%.1f%%" % (100.0 * n / g["n"]), fmt_ns(ws),
                     kinds_str(kc)] for name, (n, ws, kc) in items[:TOP]]
            more = len(items) - TOP
            out += ["**%s**%s" % (title, " (%d more not shown)" % more if more > 0 else ""), "",
                    md_table([col, "aborts", "share", "wasted", "kinds"], body, "lrrrl"), ""]
    if waits:
        out += contention_lines(waits)
    out += pairs_md(read_pairs(d, rows))
    with open(os.path.join(d, "conflicts.md"), "w") as f:
        f.write("\n".join(out))


def contention_lines(waits):
    """The *Contention* section of conflicts.md: per (workload, runtime) the locks
    threads waited for, by time waited, each with its most waited pair of places (the
    waiter's, the holder's), as `--report` ranks them."""
    def place(site, where):
        return " at ".join(x for x in (site, where) if x) or "unknown"

    out = ["## Contention", "",
           "Waits for a lock another thread held (gil, mutex, locks), one row each in "
           "`conflicts.csv` (kind lock-wait; counts are sums of `weight`). *lock*: the GIL, "
           "the mutex, or the workload's object whose lock it was; *waiter* and *holder*: "
           "the lock's most waited pair of places, the waiter's and the holder's where it "
           "took the lock.", ""]
    for key in sorted(waits, key=lambda k: (workload_key(k[0]), runtime_key(k[1]))):
        locks = waits[key]
        total_n = sum(v[0] for v in locks.values())
        total_ns = sum(v[1] for v in locks.values())
        w, rt = key
        out += ["### %s — %s" % (w, rt), "",
                "%d waits on %d lock%s; waited %s in all." % (
                    total_n, len(locks), "" if len(locks) == 1 else "s", fmt_ns(total_ns)),
                ""]
        items = sorted(locks.items(), key=lambda kv: (-kv[1][1], -kv[1][0], kv[0]))
        body = []
        for name, (n, ns, pairs) in items[:TOP]:
            pk, (pn, pns) = min(pairs.items(), key=lambda kv: (-kv[1][1], -kv[1][0], kv[0]))
            body.append(["`%s`" % name, n, "%.1f%%" % (100.0 * ns / total_ns if total_ns else 0),
                         fmt_ns(ns), place(pk[0], pk[1]), place(pk[2], pk[3]),
                         "%d, %s" % (pn, fmt_ns(pns))])
        more = len(items) - TOP
        out += ["**Top locks**%s" % (" (%d more not shown)" % more if more > 0 else ""), "",
                md_table(["lock", "waits", "share", "waited", "waiter", "holder", "pair"],
                         body, "lrrrlll"), ""]
    return out


# ------------------------------------------------------------- conflict pairs

# The columns the conflict analysis added (docs/contract.md, "Conflict log"): a file
# with them gets the pairs below; an older file only the tables above.
PAIR_COLUMNS = ("where", "other_site", "other_where", "object_name", "weight")
PAIR_TOP = 5
TIMELINE_BINS = 20


def pair_advice(kind, obj, where, other_where):
    """One line of advice from the pair's kind and shape (as `--report` prints it)."""
    same = bool(where) and where == other_where
    if kind == "write-write":
        if same:
            return ("every transaction writes this one object here (a shared counter?): "
                    "keep one per thread and merge them at the end")
        return ("two places write this one object: give each writer its own object (or "
                "pad objects that only share it), or write it in a shorter transaction")
    if kind == "read-write":
        if not obj:
            return ("the transaction began alone and marked no reads, so any commit "
                    "meanwhile aborts it: harmless once the threads run together")
        if same:
            return ("read, then written by another transaction at the same place: a shared "
                    "counter? keep one per thread and merge them at the end")
        return ("this object is read here and written there on every transaction: if it "
                "is read-mostly, write it only when its value changes")
    if kind == "inevitable":
        if same:
            return ("a transaction that kept aborting on this object became inevitable and "
                    "took it: every transaction writes it here (a shared counter?): keep one "
                    "per thread and merge them at the end")
        if obj:
            return ("a transaction that kept aborting on this object became inevitable and "
                    "took it: give each writer its own object, or write it in a shorter "
                    "transaction")
        return ("an inevitable transaction needed what this one held: keep I/O and "
                "sync_inevitable out of hot transactions")
    if "wait" in kind:
        if same:
            return ("every thread takes this lock here: split what it guards (one per "
                    "thread, merged at the end) or hold it for less")
        return ("waiters queue behind the holder's section: hold the lock for less, or "
                "split what it guards")
    return ("not a conflict between transactions (chaos mode, a retry, a hardware abort): "
            "nothing to change in the program")


def read_pairs(d, rows):
    """The conflict pairs of DIR/conflicts.csv by (workload, runtime): for each, a dict
    of pair key (kind, object, site, where, other_site, other_where) -> {"n": count (sum
    of weight), "ns": time lost (sum of wasted_ns), "bins": time lost per twentieth of
    the run (TIMELINE_BINS, summed over runs), "runs": run ids}. None for a file
    without the analysis's columns (an older bench) or no file."""
    path = os.path.join(d, "conflicts.csv")
    if not os.path.isfile(path) or os.path.getsize(path) == 0:
        return None
    runs = {r["run_id"]: r for r in rows}
    out = defaultdict(lambda: defaultdict(lambda: {"n": 0, "ns": 0.0,
                                                   "bins": [0.0] * TIMELINE_BINS,
                                                   "runs": set()}))
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if any(c not in (reader.fieldnames or []) for c in PAIR_COLUMNS):
            return None
        for c in reader:
            run = runs.get(c["run_id"])
            if not run:
                continue
            obj = c["object_name"]
            if not obj and c["object"]:
                try:
                    obj = c["object"] if int(c["object"], 0) else ""
                except ValueError:
                    raise InputError("%s:%d: object: '%s' is not a number"
                                     % (path, reader.line_num, c["object"]))
            key = (c["kind"] or "other", obj, c["site"], c["where"], c["other_site"],
                   c["other_where"])
            e = out[(run["workload"], run["runtime"])][key]
            ns = _num(path, reader.line_num, "wasted_ns", c["wasted_ns"]) or 0.0
            e["n"] += _num(path, reader.line_num, "weight", c["weight"] or "1", int)
            e["ns"] += ns
            e["runs"].add(c["run_id"])
            dur = float(run.get("duration_s") or 0) * 1e9
            t = _num(path, reader.line_num, "t_ns", c["t_ns"]) or 0.0
            b = int(TIMELINE_BINS * t / dur) if dur > 0 else 0
            e["bins"][min(TIMELINE_BINS - 1, max(0, b))] += ns
    return out


def top_pairs(pairs, top=PAIR_TOP):
    """The pairs ranked as `--report` ranks them: time lost, then count, then the strings."""
    return sorted(pairs.items(), key=lambda kv: (-kv[1]["ns"], -kv[1]["n"], kv[0]))[:top]


def pair_side(site, where):
    if not site and not where:
        return "unknown"
    if site and where:
        return "`%s` at %s" % (site, where)
    return "`%s`" % (site or where)


def pairs_md(allpairs):
    """conflicts.md's sections on pairs: per workload and runtime the top pairs with both
    sides and advice, then per workload the runtimes side by side."""
    if allpairs is None:
        return []
    out = ["## Conflict pairs: both sides", "",
           "A pair is the aborts (or lock waits) with the same kind, object and both sides' "
           "block and location; *count* sums the rows' `weight`, *lost* their `wasted_ns`, "
           "ranked by time lost as `stmbench --report` ranks them. The timelines of each "
           "workload's top pairs are in plots/conflict_timeline_<workload>.png.", ""]
    keys = sorted(allpairs, key=lambda k: (workload_key(k[0]), runtime_key(k[1])))
    for key in keys:
        w, rt = key
        total = sum(e["ns"] for e in allpairs[key].values())
        body = []
        for i, ((kind, obj, site, where, osite, owhere), e) in enumerate(top_pairs(allpairs[key])):
            body.append([i + 1, kind, obj or "(none)", pair_side(site, where),
                         pair_side(osite, owhere), e["n"], fmt_ns(e["ns"]),
                         "%.1f%%" % (100.0 * e["ns"] / total) if total else "-",
                         pair_advice(kind, obj, where, owhere)])
        out += ["### %s — %s" % (w, rt), "",
                md_table(["#", "kind", "object", "this side", "other side", "count", "lost",
                          "share", "advice"], body, "rllllrrrl"), ""]
    byw = defaultdict(list)
    for w, rt in keys:
        byw[w].append(rt)
    multi = [w for w in byw if len(byw[w]) > 1]
    if multi:
        out += ["## One program, every runtime", "",
                "The top three entries of each runtime on the same workload: what the STM "
                "loses to aborts beside what the runtimes that wait lose to waiting.", ""]
        for w in sorted(multi, key=workload_key):
            body = []
            for rt in byw[w]:
                for i, ((kind, obj, site, where, osite, owhere), e) in enumerate(
                        top_pairs(allpairs[(w, rt)], 3)):
                    body.append([rt if i == 0 else "", kind, obj or "(none)",
                                 pair_side(site, where), pair_side(osite, owhere), e["n"],
                                 fmt_ns(e["ns"])])
            out += ["### %s" % w, "",
                    md_table(["runtime", "kind", "object", "this side", "other side", "count",
                              "lost"], body, "llllllr"), ""]
    return out


# ---------------------------------------------------------------- gnuplot data

def safe_name(s):
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in s)


def write_gnuplot_data(d, rows, hw=None):
    """DIR/plots/throughput_<w>.dat: 'threads <rt>...' columns in Mops/s, NaN where no
    point; seq's 1-thread figure repeated on every line (drawn as a horizontal line).
    Returns (workload, file, columns, has seq, hardware threads when some point is
    oversubscribed else 0) per workload."""
    points, _ = aggregate(rows)
    pd = os.path.join(d, "plots")
    os.makedirs(pd, exist_ok=True)
    made = []
    for w in workloads_of(points):
        rts = runtimes_of(points, w)
        ts = threads_of(points, w)
        seq1 = ops(points, w, BASELINE_RT, 1)
        cols = [rt for rt in rts if rt != BASELINE_RT]
        name = os.path.join(pd, "throughput_%s.dat" % safe_name(w))
        with open(name, "w") as f:
            hdr = ["threads"] + cols + (["seq(1-thread)"] if seq1 else [])
            f.write(" ".join('"%s"' % h for h in hdr) + "\n")
            for t in ts:
                vals = [ops(points, w, rt, t) for rt in cols] + ([seq1] if seq1 else [])
                f.write("%d %s\n" % (t, " ".join("NaN" if v is None else "%.6g" % (v / 1e6) for v in vals)))
        over = hw if any(oversubscribed(t, hw) for t in ts) else 0
        made.append((w, name, len(hdr), 1 if seq1 else 0, over))
    return made


# ---------------------------------------------------------------- main

# ---------------------------------------------------------------- transaction length sweep
# (sweep.csv, written by scripts/bench.sh's length sweep: fixed lengths and `auto`)

SWEEP_RUNTIMES = ("stm", "locks", "htm", "itm")   # each compared with gil


def txlen_of(row):
    """The transaction length a sweep row asked for: an int, or "auto"."""
    kv = dict(x.split("=", 1) for x in (row.get("params") or "").split(";") if "=" in x)
    v = kv.get("switch-interval") if row["workload"] == "interp" else kv.get("ops_per_tx")
    if v is None:
        return None
    return "auto" if v == "auto" else int(v)


def sweep_points(rows):
    """{(workload, runtime, threads, length): {"ops": median ops/s, "len_mean": median
    tx_len_mean, "runs": n}} over the passing rows."""
    acc = defaultdict(list)
    for r in rows:
        L = txlen_of(r)
        if L is None or r.get("check") != "pass":
            continue
        acc[(r["workload"], r["runtime"], r["threads"], L)].append(r)
    out = {}
    for k, rs in acc.items():
        lm = [float(r["tx_len_mean"]) for r in rs if r.get("tx_len_mean") not in (None, "")]
        out[k] = {"ops": median([r["ops_per_s"] for r in rs]),
                  "len_mean": median(lm) if lm else None, "runs": len(rs)}
    return out


def crossover_rows(sp):
    """Per workload and competitor: the shortest fixed length at which it beats gil at
    the sweep's highest thread count, and where auto landed."""
    out = []
    for w in sorted({k[0] for k in sp}, key=workload_key):
        n = max(k[2] for k in sp if k[0] == w)
        fixed = sorted({k[3] for k in sp if k[0] == w and k[3] != "auto"})
        for rt in SWEEP_RUNTIMES:
            if not any(k[0] == w and k[1] == rt and k[2] == n for k in sp):
                continue
            cross = None
            for L in fixed:
                a, g = sp.get((w, rt, n, L)), sp.get((w, "gil", n, L))
                if a and g and a["ops"] > g["ops"]:
                    cross = L
                    break
            best = max(((sp[(w, rt, n, L)]["ops"], L) for L in fixed if (w, rt, n, L) in sp),
                       default=(None, None))
            au, gau = sp.get((w, rt, n, "auto")), sp.get((w, "gil", n, "auto"))
            out.append({"workload": w, "runtime": rt, "threads": n, "crossover": cross,
                        "best_ops": best[0], "best_len": best[1],
                        "auto_ops": au["ops"] if au else None,
                        "auto_len": au["len_mean"] if au else None,
                        "gil_auto_ops": gau["ops"] if gau else None})
    return out


def write_sweep_section(d):
    """Appends the length sweep's crossover table to DIR/overhead.md (nothing when
    DIR/sweep.csv does not exist)."""
    path = os.path.join(d, "sweep.csv")
    if not os.path.isfile(path):
        return None
    rows = read_runs(path, allow_empty=True)
    sp = sweep_points(rows)
    cr = crossover_rows(sp)
    unit = lambda w: "bytecodes per slice" if w == "interp" else "ops per transaction"
    out = ["", "## Transaction length: crossover with the GIL", "",
           "From `sweep.csv` (the length sweep of `make bench`; interp: `--switch-interval`, "
           "the others: `--ops-per-tx`, and `auto`). *Crossover*: the shortest fixed length at "
           "which the runtime at N threads (the sweep's highest count, the machine's cores) "
           "has more ops/s than gil at N threads with the same length; \"not within the "
           "sweep\" when none does. *Best fixed*: its best fixed length and ops/s. *auto*: "
           "ops/s with the adaptive length and the mean length it ran (tx_len_mean), and "
           "that figure over the best fixed one and over gil at N threads with its default.",
           ""]
    body = []
    for c in cr:
        body.append([c["workload"], c["runtime"], c["threads"],
                     "%s %s" % (c["crossover"], unit(c["workload"]))
                     if c["crossover"] is not None else "not within the sweep",
                     "%s (%s)" % (fmt_rate(c["best_ops"]), c["best_len"])
                     if c["best_ops"] else "–",
                     "%s (mean %s)" % (fmt_rate(c["auto_ops"]), fmt_g(c["auto_len"]))
                     if c["auto_ops"] else "–",
                     fmt_x(ratio(c["auto_ops"], c["best_ops"])),
                     fmt_x(ratio(c["auto_ops"], c["gil_auto_ops"]))])
    out += [md_table(["workload", "runtime", "N", "crossover", "best fixed (length)",
                      "auto (length)", "auto / best", "auto / gil"], body), ""]
    with open(os.path.join(d, "overhead.md"), "a") as f:
        f.write("\n".join(out))
    return cr


def load_dir(d):
    if not os.path.isdir(d):
        raise InputError("%s: no such results directory" % d)
    rows = read_runs(os.path.join(d, "runs.csv"), allow_empty=True)
    return rows, find_context(d)


def main(argv):
    cmds = ("overhead", "conflicts", "gnuplot", "all")
    if len(argv) != 3 or argv[1] not in cmds:
        sys.stderr.write("usage: %s {%s} RESULTS_DIR\n" % (argv[0], "|".join(cmds)))
        return 2
    cmd, d = argv[1], argv[2]
    try:
        rows, ctx = load_dir(d)
        if cmd in ("overhead", "all"):
            write_overhead(d, rows, ctx)
            write_sweep_section(d)
        if cmd in ("conflicts", "all"):
            write_conflicts(d, rows, ctx)
        if cmd in ("gnuplot", "all"):
            for made in write_gnuplot_data(d, rows, hardware_threads(ctx)):
                print("%s\t%s\t%d\t%d\t%d" % made)
    except InputError as e:
        sys.stderr.write("stmbench_report: %s\n" % e)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
