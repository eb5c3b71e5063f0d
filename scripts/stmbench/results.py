"""stmbench.results - reading stmbench results files and the figures every report shares.

Reading runs.csv by header name (docs/contract.md "Results"; extra columns are allowed,
old files with fewer columns still load), the medians per (workload, runtime, threads),
the "n% slower than single-thread" figure, the machine context JSON the harness writes
beside the CSV, which thread counts are oversubscribed (more threads than the context's
hardware threads, `pus`: marked so in every table and figure, and never a scaling
figure), and the formatting of numbers and Markdown tables.
"""

import csv
import glob
import gzip
import json
import math
import os
import statistics
from collections import defaultdict

from .lists import columns, runtime_key, workload_key  # noqa: F401 (re-exported)

# The columns a file must have to load (harness/columns.h's "req" ones: every version
# of the harness wrote them; later columns are read when present).
RUN_COLUMNS = [n for n, kind in columns("RESULTS_COLUMNS") if kind == "req"]
CONFLICT_COLUMNS = [n for n, kind in columns("CONFLICT_COLUMNS") if kind == "req"]
# The conflict analysis's columns: a conflict log with them gets the pairs' sections.
PAIR_COLUMNS = [n for n, kind in columns("CONFLICT_COLUMNS") if kind == "opt"]

BASELINE_RT = "seq"


class InputError(Exception):
    """Bad input: the scripts print it and exit 2."""


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


def fmt_share(v):
    if v is None:
        return "n/a"
    if v == 0:
        return "–"
    return "%.1f%%" % (100.0 * v) if v >= 0.001 else "<0.1%"


def load_dir(d):
    if not os.path.isdir(d):
        raise InputError("%s: no such results directory" % d)
    rows = read_runs(os.path.join(d, "runs.csv"), allow_empty=True)
    return rows, find_context(d)



def conflicts_file(d):
    """DIR's conflict log: conflicts.csv, else conflicts.csv.gz (results/baseline keeps
    a large one gzipped, scripts/make-baseline.sh); None when neither holds anything."""
    for name in ("conflicts.csv", "conflicts.csv.gz"):
        path = os.path.join(d, name)
        if os.path.isfile(path) and os.path.getsize(path) > 0:
            return path
    return None


def open_text(path):
    """A CSV file for reading, gunzipped on the fly when its name ends in .gz."""
    if path.endswith(".gz"):
        return gzip.open(path, "rt", newline="")
    return open(path, newline="")


def config_lines(path):
    """The non-blank lines of a sitting's config file (scripts/interp-memory.sh's,
    scripts/anchors.sh's), stripped; [] without a path. OSError when unreadable."""
    if not path:
        return []
    with open(path) as f:
        return [line.strip() for line in f if line.strip()]


def safe_name(s):
    """s as a file name's part: letters, digits, - and _ kept, anything else _."""
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in s)
