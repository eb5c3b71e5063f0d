"""stmbench machines (scripts/report_machines.py) - the results of several machines in
one report, and the two steps around it: stamping a bench's context, packing a results
folder to send.

    machines report [--out DIR] RESULTS_DIR...    (make report RESULTS="...")
    machines stamp RESULTS_DIR                    (scripts/bench.sh, at its end)
    machines pack RESULTS_DIR [TARBALL]           (make pack)

report: each RESULTS_DIR is one `make bench` folder (runs.csv, runs.context.json; the
folder of an older bench, results/baseline for one, works too). Writes into DIR
(default results/report; never one of the inputs, never a folder holding a runs.csv):
  machines.md     the machines' contexts side by side, the n% table with a column per
                  machine, and per workload the speedups over 1 thread of every machine
  machines.csv    one row per machine x workload x runtime x threads: the medians and
                  ratios of that machine's overhead table, and `oversubscribed`
  contexts.json   [{"machine", "folder", "context"}...]: each input's context JSON
  plots/speedup_<w>.png, .svg   per workload: every machine's speedup curves (threads on
                  a log2 axis; colour = runtime, line style = machine; oversubscribed
                  points open, right of a grey line at that machine's hardware threads)
Everything is checked before anything is written: a runs.csv cut short (its last line
without its end, a row with fewer fields than the header), a missing or unreadable
runs.context.json, a workload run with several parameter sets in a folder or with other
parameters on another machine are refused, naming the folder and the fault. What one
machine ran and another did not is a marked gap ("–" with the reason in the tables, a
line under the figure), never a curve drawn from something else.

stamp: adds a "bench" object to every *.context.json of a bench folder, from its
bench-config.txt: the machine's label, the folder, the date, its hardware threads, the
thread counts run and the oversubscribed ones, the run length and repeats, runtimes,
workloads, pin, arguments, seed and the sitting's line transfer. Written to a temporary
file and renamed.

pack: RESULTS_DIR (a link such as results/latest is followed), checked as report
checks it, into a gzipped tarball (default results/stmbench-<folder>.tar.gz) whose one
top folder is the results folder's own name; plots/ is left out (scripts/plots.sh
redraws them). An existing tarball is never replaced.

Exit status: 0 ok; 2 bad input (the message names the folder or file and the fault);
3 the figures cannot be drawn (matplotlib missing: the tables are written) or an output
cannot be written.
"""

import argparse
import csv
import glob
import io
import json
import os
import re
import sys
import tarfile

from . import report as rep
from .cli import command
from .lists import ROOT
InputError = rep.InputError
GAP = "–"


class OutputError(Exception):
    """An output could not be written: exit 3."""


# ---------------------------------------------------------------- reading a folder

def check_whole(path):
    """Refuses a runs CSV that was cut short: the harness writes each row whole, with
    its newline, in one write(), so a last line without its end or a row with fewer
    fields than the header is a file truncated after the run (a copy, an unpacking)."""
    if not os.path.isfile(path):
        raise InputError("%s: missing: not a results folder (make bench writes runs.csv)"
                         % path)
    with open(path, "rb") as f:
        data = f.read()
    if not data.strip():
        raise InputError("%s: empty: no header, no runs" % path)
    if not data.endswith(b"\n"):
        raise InputError("%s:%d: truncated: the last line has no end (the file was cut; "
                         "copy or unpack the folder again)" % (path, data.count(b"\n") + 1))
    reader = csv.reader(io.StringIO(data.decode("utf-8", "replace")))
    header = next(reader)
    for row in reader:
        if row and len(row) < len(header):
            raise InputError("%s:%d: truncated row: %d of the header's %d fields (the file "
                             "was cut; copy or unpack the folder again)"
                             % (path, reader.line_num, len(row), len(header)))


def load_context(d):
    path = os.path.join(d, "runs.context.json")
    if not os.path.isfile(path):
        raise InputError("%s: missing: the machine's context (CPU, cores, hardware threads) "
                         "that the harness writes beside runs.csv; without it the runs "
                         "cannot be placed (send the whole folder: make pack)" % path)
    try:
        with open(path) as f:
            ctx = json.load(f)
    except (OSError, ValueError) as e:
        raise InputError("%s: unreadable context JSON (%s)" % (path, e))
    if not isinstance(ctx, dict) or not rep.hardware_threads(ctx):
        raise InputError("%s: the context names no core or hardware-thread count "
                         "('pus', 'cores')" % path)
    return ctx


def read_config(d):
    """bench-config.txt as {key: value} ({} when the folder has none)."""
    path = os.path.join(d, "bench-config.txt")
    cfg = {}
    if os.path.isfile(path):
        with open(path) as f:
            for line in f:
                k, eq, v = line.rstrip("\n").partition("=")
                if eq:
                    cfg[k] = v
    return cfg


def line_transfer_ns(text):
    m = re.search(r"line_transfer_ns=([0-9.]+)", text or "")
    return float(m.group(1)) if m else None


class Machine:
    """One results folder: its rows, context, medians and workload parameters."""

    def __init__(self, d):
        if not os.path.isdir(d):
            raise InputError("%s: no such results folder" % d)
        self.dir = d
        self.real = os.path.realpath(d)
        self.folder = os.path.basename(self.real)
        csv_path = os.path.join(d, "runs.csv")
        check_whole(csv_path)
        self.rows = rep.read_runs(csv_path)
        self.ctx = load_context(d)
        self.hw = rep.hardware_threads(self.ctx)
        self.bench = self.ctx.get("bench") if isinstance(self.ctx.get("bench"), dict) else {}
        self.config = read_config(d)
        self.points, params = rep.aggregate(self.rows)
        self.params = {}
        for w, ps in params.items():
            if len(ps) > 1:
                raise InputError("%s: workload %s ran with %d parameter sets (%s): one set "
                                 "per results folder" % (csv_path, w, len(ps),
                                                         "; ".join(sorted(ps))))
            self.params[w] = next(iter(ps))
        host = self.ctx.get("hostname") or self.rows[0].get("host") or self.folder
        self.name = str(self.bench.get("machine") or host)
        self.orows = rep.overhead_rows(self.points, self.hw)

    @property
    def cores(self):
        c = self.ctx.get("cores")
        return c if isinstance(c, int) else self.hw

    def title(self):
        return "%s (%d cores)" % (self.name, self.cores)


def load_machines(dirs):
    if not dirs:
        raise InputError("no results folders: name one or more (make report "
                         "RESULTS=\"results/bench/a results/bench/b\")")
    ms, seen = [], {}
    for d in dirs:
        m = Machine(d)
        if m.real in seen:
            raise InputError("%s: the same folder as %s, given twice" % (d, seen[m.real]))
        seen[m.real] = d
        ms.append(m)
    # Unique names: a second folder of one machine gets its folder's name after it.
    for m in ms:
        if sum(x.name == m.name for x in ms) > 1:
            m.name = "%s [%s]" % (m.name, m.folder)
    for i, m in enumerate(ms):
        if sum(x.name == m.name for x in ms) > 1:
            m.name = "%s #%d" % (m.name, i + 1)
    wrong = []
    for w in sorted({w for m in ms for w in m.params}, key=rep.workload_key):
        have = [m for m in ms if w in m.params]
        if len({m.params[w] for m in have}) > 1:
            wrong.append("%s: %s" % (w, ", ".join("%s has `%s`" % (m.dir, m.params[w])
                                                  for m in have)))
    if wrong:
        raise InputError("the machines ran workloads with different parameters, so their "
                         "figures do not compare (run make bench with the same BENCH_ARGS "
                         "everywhere, or report them apart): " + "; ".join(wrong))
    return ms


# ---------------------------------------------------------------- the tables

MERGED_COLUMNS = ["machine", "folder", "cores", "hardware_threads", "workload", "runtime",
                  "threads", "oversubscribed", "ops_per_s_median", "ops_per_s_min",
                  "ops_per_s_max", "runs", "checks_failed", "n_pct", "speedup_self",
                  "speedup_seq"]


def merged_rows(ms):
    out = []
    for m in ms:
        for r in m.orows:
            row = dict(r, machine=m.name, folder=m.dir, cores=m.cores, hardware_threads=m.hw)
            out.append(row)
    return out


def cell(v):
    return str(v).replace("|", "\\|").replace("\n", " ")


def size(b):
    if not isinstance(b, int) or b <= 0:
        return None
    for div, unit in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if b >= div:
            return "%g %s" % (round(b / div, 1), unit)
    return "%d B" % b


def context_rows(ms):
    """The contexts table: (label, one value per machine)."""
    def c(m, key, fmt=str):
        v = m.ctx.get(key)
        return GAP if v is None or v == "" else fmt(v)

    def caches(m):
        parts = []
        for lvl in ("l1d", "l2", "l3"):
            s = size(m.ctx.get(lvl + "_bytes"))
            if s:
                n = m.ctx.get(lvl + "_count")
                parts.append("%s %s%s" % (lvl.upper(), s, " ×%d" % n if isinstance(n, int) else ""))
        return ", ".join(parts) or GAP

    def hyper(m):
        h = m.ctx.get("hypervisor")
        if h is None:
            return GAP
        return "yes (%s)" % " ".join(str(m.ctx.get("hypervisor_vendor") or "?").split()) \
            if h else "no"

    def rtm(m):
        v = m.ctx.get("rtm_works")
        return GAP if v is None else ("works" if v else "no")

    def threads_run(m):
        ts = sorted({r["threads"] for r in m.rows})
        over = [t for t in ts if rep.oversubscribed(t, m.hw)]
        s = " ".join(str(t) for t in ts)
        return s + (" (%s oversubscribed)" % " ".join(map(str, over)) if over else "")

    def length(m):
        dur = m.bench.get("duration_s", m.config.get("BENCH_DURATION"))
        reps = sorted({len(p.rows) + p.failed for p in m.points.values()})
        return "%s × %s s" % ("/".join(map(str, reps)), dur if dur is not None else "?")

    def transfer(m):
        a = m.bench.get("line_transfer_start_ns", line_transfer_ns(m.config.get("line_transfer_start")))
        b = m.bench.get("line_transfer_end_ns", line_transfer_ns(m.config.get("line_transfer_end")))
        if a is None and b is None:
            return GAP
        f = lambda v: GAP if v is None else "%.0f ns" % v
        return "%s / %s" % (f(a), f(b))

    def passed(m):
        ok = sum(len(p.rows) for p in m.points.values())
        return "%d of %d" % (ok, ok + sum(p.failed for p in m.points.values()))

    spec = [
        ("folder", lambda m: "`%s`" % m.dir),
        ("CPU", lambda m: c(m, "cpu_model")),
        ("cores / hardware threads", lambda m: "%s / %s" % (c(m, "cores"), c(m, "pus"))),
        ("threads per core", lambda m: c(m, "threads_per_core")),
        ("packages, NUMA nodes", lambda m: "%s, %s" % (c(m, "packages"), c(m, "numa_nodes"))),
        ("caches", caches),
        ("kernel", lambda m: c(m, "kernel")),
        ("compiler", lambda m: c(m, "compiler")),
        ("build", lambda m: c(m, "build_config")),
        ("revision", lambda m: c(m, "git_rev")),
        ("hypervisor", hyper),
        ("frequency governor", lambda m: c(m, "cpufreq_governor")),
        ("RTM", rtm),
        ("allocator of seq, mutex, gil, locks", lambda m: c(m, "plain_allocator")),
        ("bench date", lambda m: m.bench.get("date") or m.config.get("date") or GAP),
        ("threads run", threads_run),
        ("runs per point × seconds", length),
        ("pin", lambda m: ", ".join(sorted({r.get("pin") or "?" for r in m.rows}))),
        ("line transfer, start / end", transfer),
        ("runs passed", passed),
    ]
    return [[label] + [cell(f(m)) for m in ms] for label, f in spec]


def point_of(m, w, rt, t):
    return m.points.get((w, rt, t))


def npct_cell(m, w, rt):
    if not any(k[0] == w and k[1] == rt for k in m.points):
        return GAP + " (not run)"
    p = point_of(m, w, rt, 1)
    if p is None:
        return GAP + " (no 1-thread run)"
    if p.ops_per_s is None:
        return GAP + " (no passing run)"
    if not rep.ops(m.points, w, rep.BASELINE_RT, 1):
        return GAP + " (no seq run)"
    return rep.fmt_pct(rep.n_pct(m.points, w, rt))


def speedup_cell(m, w, rt, t):
    p = point_of(m, w, rt, t)
    if p is None:
        return GAP
    if p.ops_per_s is None:
        return GAP + " (no passing run)"
    own1 = rep.ops(m.points, w, rt, 1)
    s = "%s (%s)" % (rep.fmt_x(rep.ratio(p.ops_per_s, own1)), rep.fmt_rate(p.ops_per_s))
    return s + (", oversubscribed" if rep.oversubscribed(t, m.hw) else "")


def gaps(ms, w):
    """What one machine ran of workload w and another did not, as lines."""
    out = []
    rts = sorted({k[1] for m in ms for k in m.points if k[0] == w}, key=rep.runtime_key)
    for rt in rts:
        missing = [m.name for m in ms if not any(k[:2] == (w, rt) for k in m.points)]
        if missing:
            out.append("%s: not run on %s" % (rt, ", ".join(missing)))
        no1 = [m.name for m in ms if any(k[:2] == (w, rt) for k in m.points)
               and not rep.ops(m.points, w, rt, 1)]
        if no1 and rt != rep.BASELINE_RT:
            out.append("%s: no passing 1-thread run on %s (no speedup curve)"
                       % (rt, ", ".join(no1)))
    return out


def workloads(ms):
    return sorted({w for m in ms for w in m.params}, key=rep.workload_key)


def write_tables(ms, out):
    rows = merged_rows(ms)
    with open(os.path.join(out, "machines.csv"), "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(MERGED_COLUMNS)
        for r in rows:
            wr.writerow([rep._csvval(r[c]) for c in MERGED_COLUMNS])
    with open(os.path.join(out, "contexts.json"), "w") as f:
        json.dump([{"machine": m.name, "folder": m.dir, "context": m.ctx} for m in ms], f,
                  indent=2)
        f.write("\n")

    names = [cell(m.name) for m in ms]
    md = ["# stmbench on %d machine%s" % (len(ms), "" if len(ms) == 1 else "s"), "",
          "From each folder's `runs.csv` and `runs.context.json` (scripts/report_machines.py). "
          "Every figure is that machine's own: medians of its passing runs, ratios within "
          "the machine; a dash is a gap (not run there), with its reason where it is not "
          "just a thread count that machine did not run.", "",
          "## The machines", "",
          rep.md_table([""] + names, context_rows(ms), "l" * (len(ms) + 1)), "",
          "## n% slower than single-thread, by machine", "",
          "`n = (ops/s of seq at 1 thread / ops/s of the runtime at 1 thread - 1) × 100` on "
          "each machine (docs/contract.md): the cost of the runtime on one core there.", ""]
    body = []
    for w in workloads(ms):
        rts = sorted({k[1] for m in ms for k in m.points if k[0] == w and
                      k[1] != rep.BASELINE_RT}, key=rep.runtime_key)
        body += [[w, rt] + [npct_cell(m, w, rt) for m in ms] for rt in rts]
    md += [rep.md_table(["workload", "runtime"] + names, body, "ll" + "r" * len(ms)), ""]

    md += ["## Speedup over 1 thread, by machine", "",
           "Each cell: ops/s at that thread count over the same runtime's at 1 thread on the "
           "same machine (× own), then the median ops/s. *oversubscribed*: more threads than "
           "that machine's hardware threads (its context's `pus`): threads queue for a "
           "PU, as a thread pool sized for I/O makes them; it shows how a runtime copes "
           "with waiting threads and is no scaling figure. Figures: plots/speedup_<workload>.", ""]
    for w in workloads(ms):
        md += ["### %s" % w, ""]
        ps = {m.params[w] for m in ms if w in m.params} - {""}
        if ps:
            md += ["Parameters: `%s`" % next(iter(ps)), ""]
        keys = sorted({k[1:] for m in ms for k in m.points
                       if k[0] == w and k[1] != rep.BASELINE_RT},
                      key=lambda k: (rep.runtime_key(k[0]), k[1]))
        body = [[rt, t] + [speedup_cell(m, w, rt, t) for m in ms] for rt, t in keys]
        md += [rep.md_table(["runtime", "threads"] + names, body, "lr" + "r" * len(ms)), ""]
        g = gaps(ms, w)
        if g:
            md += ["Gaps: " + "; ".join(g) + ".", ""]
    with open(os.path.join(out, "machines.md"), "w") as f:
        f.write("\n".join(md))


# ---------------------------------------------------------------- the figures

LINESTYLES = ["-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1))]


def speedup_series(m, w, rt):
    """[(threads, × own)] of machine m, runtime rt, workload w; [] without a 1-thread
    figure (no curve rather than one over another baseline)."""
    own1 = rep.ops(m.points, w, rt, 1)
    if not own1:
        return []
    out = []
    for t in rep.threads_of(m.points, w, rt):
        v = m.points[(w, rt, t)].ops_per_s
        if v is not None:
            out.append((t, v / own1))
    return out


def draw_speedup(pl, plt, ms, w, outdir, made):
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FixedLocator, NullLocator
    fig, ax = plt.subplots(figsize=(8.5, 5.2))
    rts = sorted({k[1] for m in ms for k in m.points if k[0] == w and
                  k[1] != rep.BASELINE_RT}, key=rep.runtime_key)
    xs_all, top = set(), 1
    any_over = False
    for i, m in enumerate(ms):
        ls = LINESTYLES[i % len(LINESTYLES)]
        over_here = False
        for rt in rts:
            s = speedup_series(m, w, rt)
            if not s:
                continue
            colour, marker = pl.style(rt)
            core = [(t, y) for t, y in s if not rep.oversubscribed(t, m.hw)]
            over = [(t, y) for t, y in s if rep.oversubscribed(t, m.hw)]
            xs_all.update(t for t, _ in s)
            top = max([top] + [t for t, _ in core])
            if core:
                ax.plot([t for t, _ in core], [y for _, y in core], color=colour,
                        marker=marker, linestyle=ls, linewidth=1.6)
            if over:
                over_here = any_over = True
                link = core[-1:] + over
                ax.plot([t for t, _ in link], [y for _, y in link], color=colour,
                        linestyle=ls, linewidth=0.9, alpha=0.7)
                ax.plot([t for t, _ in over], [y for _, y in over], linestyle="none",
                        marker=marker, markersize=9, markerfacecolor="white",
                        markeredgecolor=colour, markeredgewidth=1.5)
        if over_here:
            ax.axvline(m.hw, color="#888888", linestyle=ls, linewidth=1)
            ax.annotate("%s: %d hardware threads" % (m.name, m.hw), xy=(m.hw, 1.0),
                        xycoords=("data", "axes fraction"), xytext=(-3, -4),
                        textcoords="offset points", rotation=90, rotation_mode="anchor",
                        va="bottom", ha="right",
                        fontsize="x-small", color="#555555")
    if top > 1:
        ax.plot([1, top], [1, top], color="#bbbbbb", linestyle=":", linewidth=1)
    ax.set_xscale("log", base=2)
    ticks = sorted(xs_all) or [1]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([str(t) for t in ticks])
    ax.set_xlabel("threads (log scale; up to each machine's cores, then oversubscribed)")
    ax.set_ylabel("speedup over the same runtime at 1 thread (×)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.set_title("%s: speedup against threads on %d machine%s" % (w, len(ms), "" if len(ms) == 1 else "s"),
                 fontsize="medium")
    handles = [Line2D([], [], color=pl.style(rt)[0], marker=pl.style(rt)[1], label=rt)
               for rt in rts]
    handles += [Line2D([], [], color="black", linestyle=LINESTYLES[i % len(LINESTYLES)],
                       label=m.title()) for i, m in enumerate(ms)]
    if top > 1:
        handles.append(Line2D([], [], color="#bbbbbb", linestyle=":", label="ideal (× threads)"))
    if any_over:
        handles.append(Line2D([], [], color="#888888", marker="o", markerfacecolor="white",
                              linestyle="none", label="oversubscribed: right of the grey "
                              "line\n(the machine's hardware threads)"))
    ax.legend(handles=handles, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    g = gaps(ms, w)
    if g:
        fig.text(0.01, -0.02, "Not drawn: " + "; ".join(g), fontsize="small", va="top",
                 wrap=True)
    pl.save(fig, outdir, "speedup_%s" % rep.safe_name(w), made)


def write_figures(ms, out):
    try:
        from . import plot as pl   # matplotlib and the runtimes' colours
    except SystemExit:
        raise OutputError("matplotlib is missing (apt-get install python3-matplotlib): the "
                          "tables are written, the figures are not")
    plt = pl.plt
    outdir = os.path.join(out, "plots")
    os.makedirs(outdir, exist_ok=True)
    made = []
    plt.rcParams.update({"figure.max_open_warning": 0, "svg.hashsalt": "stmbench"})
    for w in workloads(ms):
        draw_speedup(pl, plt, ms, w, outdir, made)
    return made


def report(a):
    out, dirs = a.out, a.dirs
    ms = load_machines(dirs)
    real_out = os.path.realpath(out)
    for m in ms:
        if real_out == m.real:
            raise InputError("--out %s is the input folder %s: the report never writes into "
                             "a results folder" % (out, m.dir))
    if os.path.exists(os.path.join(out, "runs.csv")):
        raise InputError("--out %s holds a runs.csv: a results folder, not overwritten" % out)
    try:
        os.makedirs(out, exist_ok=True)
        write_tables(ms, out)
    except OSError as e:
        raise OutputError("cannot write the report into %s: %s" % (out, e))
    made = write_figures(ms, out)
    print("report_machines: %d machine(s) (%s) into %s: machines.md, machines.csv, "
          "contexts.json and %d figure files in plots/"
          % (len(ms), ", ".join(m.name for m in ms), out, len(made)))


# ---------------------------------------------------------------- stamp and pack

def bench_block(d, cfg):
    def ints(key):
        return [int(x) for x in cfg.get(key, "").split() if x.isdigit()]

    def num(key, conv):
        try:
            return conv(cfg[key])
        except (KeyError, ValueError):
            return None

    b = {
        "format": 1,
        "machine": cfg.get("machine"),
        "folder": os.path.basename(os.path.realpath(d)),
        "date": cfg.get("date"),
        "hardware_threads": num("pus", int),
        "threads": ints("BENCH_THREADS"),
        "oversub": num("BENCH_OVERSUB", int),
        "oversub_threads": ints("oversub_threads"),
        "duration_s": num("BENCH_DURATION", float),
        "repeat": num("BENCH_REPEAT", int),
        "seed": num("BENCH_SEED", int),
        "runtimes": cfg.get("BENCH_RUNTIMES", "").split(),
        "workloads": cfg.get("BENCH_WORKLOADS", "").split(),
        "pin": cfg.get("BENCH_PIN"),
        "args": cfg.get("BENCH_ARGS"),
        "line_transfer_start_ns": line_transfer_ns(cfg.get("line_transfer_start")),
        "line_transfer_end_ns": line_transfer_ns(cfg.get("line_transfer_end")),
    }
    return {k: v for k, v in b.items() if v is not None}


def stamp(a):
    d = a.dir
    cfg = read_config(d)
    if not cfg:
        raise InputError("%s: no bench-config.txt: not a make bench folder" % d)
    block = bench_block(d, cfg)
    paths = sorted(glob.glob(os.path.join(d, "*.context.json")))
    for path in paths:
        try:
            with open(path) as f:
                ctx = json.load(f)
        except (OSError, ValueError) as e:
            raise InputError("%s: unreadable context JSON (%s)" % (path, e))
        if not isinstance(ctx, dict):
            raise InputError("%s: not a JSON object" % path)
        ctx["bench"] = block
        tmp = "%s.tmp-%d" % (path, os.getpid())
        try:
            with open(tmp, "w") as f:
                json.dump(ctx, f, indent=2)
                f.write("\n")
            os.replace(tmp, path)
        except OSError as e:
            raise OutputError("cannot rewrite %s: %s" % (path, e))
    return len(paths)


def pack(a):
    m = Machine(a.dir)
    tarball = a.tarball or os.path.join(ROOT, "results", "stmbench-%s.tar.gz" % m.folder)
    if os.path.lexists(tarball):
        raise InputError("%s exists: not replaced (name another: make pack PACK=FILE)" % tarball)
    tmp = "%s.partial-%d" % (tarball, os.getpid())
    n = 0
    try:
        with tarfile.open(tmp, "w:gz") as tf:
            for entry in sorted(os.listdir(m.real)):
                if entry == "plots":
                    continue
                tf.add(os.path.join(m.real, entry), arcname=os.path.join(m.folder, entry))
                n += 1
        os.link(tmp, tarball)           # fails, rather than replaces, if it appeared
    except FileExistsError:
        raise InputError("%s exists: not replaced" % tarball)
    except OSError as e:
        raise OutputError("cannot write %s: %s" % (tarball, e))
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
    print("pack: wrote %s (%d KiB): %d entries of %s/ (plots/ left out), the results of "
          "%s with their context" % (tarball, (os.path.getsize(tarball) + 1023) // 1024, n,
                                     m.real, m.title()))
    print("pack: send it back as docs/results.md says; it unpacks "
          "into %s/, which make report reads" % m.folder)


def main(argv):
    ap = argparse.ArgumentParser(prog=argv[0], description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    p = command(sub, "report", report, "several machines' results in one report")
    p.add_argument("--out", metavar="DIR", default=os.path.join(ROOT, "results", "report"))
    p.add_argument("dirs", nargs="*", metavar="RESULTS_DIR")
    p = command(sub, "stamp", stamp, "a bench's context stamped from bench-config.txt")
    p.add_argument("dir", metavar="RESULTS_DIR")
    p = command(sub, "pack", pack, "a results folder as a tarball to send back")
    p.add_argument("dir", metavar="RESULTS_DIR")
    p.add_argument("tarball", nargs="?", metavar="TARBALL")
    a = ap.parse_args(argv[1:])
    try:
        a.run(a)
    except (InputError, OutputError) as e:
        sys.stderr.write("report_machines: %s\n" % e)
        return 2 if isinstance(e, InputError) else 3
    return 0
