"""stmbench plot RESULTS_DIR - draws the figures of a stmbench results directory.

Reads RESULTS_DIR/runs.csv (and the context JSON beside it for the machine's name) and
writes PNG and SVG files into RESULTS_DIR/plots/:

  throughput_<w>   ops/s against threads, one line per runtime (median, min-max bars),
                   seq at 1 thread as a horizontal reference
  speedup_<w>      throughput over seq at 1 thread, against threads
  latency_<w>      commit and block latency, p50 and p99, against threads (log y)
  stm_aborts_unshared   STM aborts per commit and unshared pages against threads
  overhead_bars    the "n% slower than single-thread" figure, workloads x runtimes
  breakdown_<w>    where the time goes: one stacked bar per runtime x threads, 100% =
                   thread time, one colour per category of the time breakdown
  breakdown_<N>threads   the same for every workload at N threads in one figure (N = 2,
                   or the highest thread count run)
  oplatency_<w>    operation latency percentiles (p50 ... p99.99, max), one line per
                   runtime x threads (log y)
  throughput_all   the throughput plots of every workload in one figure
  txlen_<w>        ops/s against transaction length (log x) from sweep.csv, one line per
                   runtime x threads, `auto` as a star at the mean length it ran
  conflict_timeline_<w>  time lost per twentieth of the run by the top 3 conflict pairs
                   of each runtime (conflicts.csv with the pair columns)

Oversubscribed points (more threads than the context's hardware threads, `pus`) sit in a
shaded band of every threads axis and have open markers; the bars and lines of other
figures say "oversub." in their labels.

Run it with /usr/bin/python3 (Debian's python3-matplotlib). Exit status: 0 ok, 2 bad
input, 3 matplotlib missing.
"""

import argparse
import os
import sys

from . import report as rep

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator
except ImportError:
    sys.stderr.write("plot.py: matplotlib is missing: run with /usr/bin/python3 "
                     "(apt-get install python3-matplotlib)\n")
    sys.exit(3)

# One colour and marker per runtime, the same in every figure.
STYLE = {
    "seq": ("#444444", "o"),
    "mutex": ("#d62728", "s"),
    "gil": ("#ff7f0e", "^"),
    "locks": ("#2ca02c", "D"),
    "stm": ("#1f77b4", "o"),
}
EXTRA_COLOURS = ["#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"]


# The machine's hardware threads (the context's pus): above it a point is oversubscribed.
# Set by main(); None when the context does not say (nothing is marked then).
HW = None


def is_over(t):
    return rep.oversubscribed(t, HW)


def tlabel(rt, t):
    return "%s ×%d%s" % (rt, t, " oversub." if is_over(t) else "")


def mark_oversub(ax, xs, ys, colour, marker):
    """Open markers over the oversubscribed points of a line."""
    pts = [(x, y) for x, y in zip(xs, ys) if is_over(x)]
    if pts:
        ax.plot([x for x, _ in pts], [y for _, y in pts], linestyle="none", marker=marker,
                markersize=10, markerfacecolor="white", markeredgecolor=colour,
                markeredgewidth=1.5, zorder=5)


def style(rt, i=[0], cache={}):
    if rt in STYLE:
        return STYLE[rt]
    if rt not in cache:
        cache[rt] = (EXTRA_COLOURS[i[0] % len(EXTRA_COLOURS)], "v")
        i[0] += 1
    return cache[rt]


def rate_scale(values):
    top = max([v for v in values if v] or [1.0])
    for div, unit in ((1e9, "Gops/s"), (1e6, "Mops/s"), (1e3, "kops/s")):
        if top >= div:
            return div, unit
    return 1.0, "ops/s"


def save(fig, outdir, name, made):
    for ext in ("png", "svg"):
        path = os.path.join(outdir, "%s.%s" % (name, ext))
        fig.savefig(path, dpi=110 if ext == "png" else None, bbox_inches="tight")
        made.append(path)
    plt.close(fig)


def thread_axis(ax, ts):
    ax.set_xlabel("threads")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if ts:
        lo, hi = min(ts), max(ts)
        pad = max(0.25, 0.05 * (hi - lo))
        ax.set_xlim(lo - pad, hi + pad)
        if is_over(hi):
            ax.axvspan(HW + 0.5, hi + pad, color="#000000", alpha=0.07, linewidth=0,
                       label="oversubscribed: more threads than the %d hardware threads" % HW)
    ax.grid(True, alpha=0.3)


def draw_throughput(ax, points, w, with_title=True, legend=True):
    ts = rep.threads_of(points, w)
    rts = rep.runtimes_of(points, w)
    allv = [p.ops_per_s for k, p in points.items() if k[0] == w]
    div, unit = rate_scale(allv)
    seq1 = rep.ops(points, w, rep.BASELINE_RT, 1)
    drew = False
    for rt in rts:
        if rt == rep.BASELINE_RT:
            continue
        xs, ys, lo, hi = [], [], [], []
        for t in rep.threads_of(points, w, rt):
            p = points[(w, rt, t)]
            v = p.ops_per_s
            if v is None:
                continue
            col = p.col("ops_per_s")
            xs.append(t)
            ys.append(v / div)
            lo.append((v - min(col)) / div)
            hi.append((max(col) - v) / div)
        if not xs:
            continue
        c, m = style(rt)
        ax.errorbar(xs, ys, yerr=[lo, hi], color=c, marker=m, capsize=3, label=rt)
        mark_oversub(ax, xs, ys, c, m)
        drew = True
    if seq1:
        ax.axhline(seq1 / div, color=style("seq")[0], linestyle="--",
                   label="seq (1 thread, no sync)")
        drew = True
    thread_axis(ax, ts)
    ax.set_ylabel("throughput (%s, median)" % unit)
    ax.set_ylim(bottom=0)
    if with_title:
        ax.set_title("%s: throughput" % w)
    if drew and legend:
        # Outside the axes: inside, it would sit on some line whatever the data.
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))


def fig_throughput(points, w, machine, outdir, made):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    draw_throughput(ax, points, w, with_title=False)
    ax.set_title("%s: throughput against threads\n%s" % (w, machine), fontsize="medium")
    save(fig, outdir, "throughput_%s" % rep.safe_name(w), made)


def fig_throughput_all(points, machine, outdir, made):
    wls = rep.workloads_of(points)
    if not wls:
        return
    cols = 2 if len(wls) > 1 else 1
    rows = (len(wls) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6.5 * cols, 4.2 * rows), squeeze=False)
    seen = {}
    for i, w in enumerate(wls):
        ax = axes[i // cols][i % cols]
        draw_throughput(ax, points, w, legend=False)
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    for j in range(len(wls), rows * cols):
        axes[j // cols][j % cols].set_visible(False)
    fig.suptitle("stmbench: throughput against threads — %s" % machine)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.legend(list(seen.values()), list(seen.keys()), loc="lower center",
               ncol=min(6, len(seen)), fontsize="small")
    save(fig, outdir, "throughput_all", made)


def fig_speedup(points, w, machine, outdir, made):
    seq1 = rep.ops(points, w, rep.BASELINE_RT, 1)
    if not seq1:
        return
    ts = rep.threads_of(points, w)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for rt in rep.runtimes_of(points, w):
        if rt == rep.BASELINE_RT:
            continue
        xs, ys = [], []
        for t in rep.threads_of(points, w, rt):
            v = points[(w, rt, t)].ops_per_s
            if v is not None:
                xs.append(t)
                ys.append(v / seq1)
        if xs:
            c, m = style(rt)
            ax.plot(xs, ys, color=c, marker=m, label=rt)
            mark_oversub(ax, xs, ys, c, m)
    ax.axhline(1.0, color=style("seq")[0], linestyle="--", label="seq (1 thread) = 1")
    top = max([t for t in ts if not is_over(t)], default=1)
    if top > 1:     # no ideal beyond the hardware threads
        ax.plot([1, top], [1, top], color="#999999", linestyle=":",
                label="ideal (threads × seq)")
    thread_axis(ax, ts)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("speedup over seq at 1 thread (×)")
    ax.set_title("%s: speedup over sequential code\n%s" % (w, machine), fontsize="medium")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    save(fig, outdir, "speedup_%s" % rep.safe_name(w), made)


def fig_latency(points, w, machine, outdir, made):
    ts = rep.threads_of(points, w)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    any_data = False
    for ax, what, title in ((axes[0], "commit", "commit step alone"),
                            (axes[1], "block", "whole atomic block, retries and waits included")):
        drew = False
        for rt in rep.runtimes_of(points, w):
            c, m = style(rt)
            for q, ls in (("p50", "-"), ("p99", "--")):
                xs, ys = [], []
                for t in rep.threads_of(points, w, rt):
                    v = points[(w, rt, t)].med("%s_%s_ns" % (what, q))
                    if v is not None and v > 0:     # log axis: zero means "not measured"
                        xs.append(t)
                        ys.append(v)
                if xs:
                    ax.plot(xs, ys, color=c, marker=m, linestyle=ls, label="%s %s" % (rt, q))
                    drew = True
        thread_axis(ax, ts)
        ax.set_ylabel("%s latency (ns, log scale)" % what)
        ax.set_title(title, fontsize="medium")
        if drew:
            ax.set_yscale("log")
            any_data = True
        else:
            ax.text(0.5, 0.5, "no %s latencies recorded" % what, transform=ax.transAxes,
                    ha="center", va="center")
    if not any_data:
        plt.close(fig)
        return
    # One legend for both panels, outside them, so it never hides a line.
    seen = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    fig.suptitle("%s: latency p50 (solid) and p99 (dashed) against threads — %s" % (w, machine),
                 fontsize="medium")
    labels = sorted(seen, key=lambda lab: (rep.runtime_key(lab.rsplit(" ", 1)[0]), lab))
    fig.tight_layout(rect=(0, 0, 0.88, 1))
    fig.legend([seen[lab] for lab in labels], labels, loc="center left",
               bbox_to_anchor=(0.88, 0.5), fontsize="small")
    save(fig, outdir, "latency_%s" % rep.safe_name(w), made)


def fig_stm(points, machine, outdir, made, rt="stm"):
    wls = [w for w in rep.workloads_of(points) if (w, rt, 1) in points or
           any(k[0] == w and k[1] == rt for k in points)]
    if not wls:
        return
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    ts_all = set()
    markers = "osD^v<>"
    for i, w in enumerate(wls):
        ts = rep.threads_of(points, w, rt)
        ts_all.update(ts)
        apc = [points[(w, rt, t)].aborts_per_commit for t in ts]
        unsh = [points[(w, rt, t)].med("unshared_pages") for t in ts]
        m = markers[i % len(markers)]
        x1 = [t for t, v in zip(ts, apc) if v is not None]
        axes[0].plot(x1, [v for v in apc if v is not None], marker=m, label=w)
        x2 = [t for t, v in zip(ts, unsh) if v is not None]
        axes[1].plot(x2, [v for v in unsh if v is not None], marker=m, label=w)
    for ax in axes:
        thread_axis(ax, sorted(ts_all))
        ax.set_ylim(bottom=0)
        ax.legend(fontsize="small")
    axes[0].set_ylabel("aborts per commit (median of runs)")
    axes[0].set_title("attempts thrown away per committed block", fontsize="medium")
    axes[1].set_ylabel("unshared pages per run (pages privatised, median)")
    axes[1].set_title("pages unshared (copy-on-write)", fontsize="medium")
    fig.suptitle("STM: aborts and page unsharing against threads — %s" % machine,
                 fontsize="medium")
    fig.tight_layout()
    save(fig, outdir, "stm_aborts_unshared", made)


def fig_overhead_bars(points, machine, outdir, made):
    wls = rep.workloads_of(points)
    rts = [rt for rt in rep.runtimes_of(points) if rt != rep.BASELINE_RT]
    data = {(w, rt): rep.n_pct(points, w, rt) for w in wls for rt in rts}
    if not any(v is not None for v in data.values()):
        return
    fig, ax = plt.subplots(figsize=(max(7, 1.6 * len(wls) + 3), 4.8))
    width = 0.8 / max(1, len(rts))
    for j, rt in enumerate(rts):
        xs, ys = [], []
        for i, w in enumerate(wls):
            v = data[(w, rt)]
            if v is not None:
                xs.append(i + (j - (len(rts) - 1) / 2) * width)
                ys.append(v)
        bars = ax.bar(xs, ys, width=width * 0.95, color=style(rt)[0], label=rt)
        for b, v in zip(bars, ys):
            ax.annotate("%+.0f%%" % v, (b.get_x() + b.get_width() / 2, v),
                        xytext=(0, 2 if v >= 0 else -10), textcoords="offset points",
                        ha="center", fontsize="x-small")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(wls)))
    ax.set_xticklabels(wls)
    ax.set_xlabel("workload")
    ax.set_ylabel("n: % slower than seq at 1 thread (lower is better)")
    ax.set_title("Single-thread cost of each runtime: n = (seq ops/s ÷ runtime ops/s − 1) × 100\n%s"
                 % machine, fontsize="medium")
    ax.legend(fontsize="small")
    ax.grid(True, axis="y", alpha=0.3)
    ymin, ymax = ax.get_ylim()
    ax.set_ylim(min(ymin, 0), ymax * 1.1 if ymax > 0 else ymax)
    save(fig, outdir, "overhead_bars", made)


# One colour per category of the time breakdown: greys for the useful time, warm colours
# for waits, blues for the STM's own bookkeeping, red for aborted work.
CAT_COLOURS = {
    "outside": "#c7c7c7", "work": "#7f7f7f", "wasted": "#d62728", "begin": "#aec7e8",
    "validate": "#6baed6", "wait_lock": "#ff7f0e", "publish": "#1f77b4",
    "unshare": "#9467bd", "wait_owner": "#e377c2", "wait_inevitable": "#8c564b",
    "wait_gil": "#ffbb78", "handoff": "#bcbd22",
}


def draw_breakdown(ax, points, keys, labels):
    """Stacked bars, one per key (w, rt, t), shares of thread time in %."""
    shares = [points[k].shares() for k in keys]
    bottom = [0.0] * len(keys)
    for cat, label, _ in rep.TIME_CATEGORIES:
        vals = [100.0 * (sh[cat] or 0) for sh in shares]
        if not any(vals):
            continue
        ax.bar(range(len(keys)), vals, bottom=bottom, color=CAT_COLOURS.get(cat, "#17becf"),
               label=label, width=0.75, edgecolor="white", linewidth=0.3)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels(labels, rotation=45, ha="right", fontsize="small")
    ax.set_ylim(0, 100)
    ax.set_ylabel("% of thread time (threads × duration)")
    ax.grid(True, axis="y", alpha=0.3)


def breakdown_keys(points, w, threads=None):
    return [k for k in sorted((k for k in points if k[0] == w and points[k].shares()),
                              key=lambda k: (rep.runtime_key(k[1]), k[2]))
            if threads is None or k[2] == threads]


def fig_breakdown(points, w, machine, outdir, made):
    keys = breakdown_keys(points, w)
    if not keys:
        return
    fig, ax = plt.subplots(figsize=(max(6, 0.55 * len(keys) + 3), 4.8))
    draw_breakdown(ax, points, keys, [tlabel(k[1], k[2]) for k in keys])
    ax.set_title("%s: where the time goes (runtime × threads)\n%s" % (w, machine),
                 fontsize="medium")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    save(fig, outdir, "breakdown_%s" % rep.safe_name(w), made)


def fig_breakdown_threads(points, machine, outdir, made):
    """Every workload at one thread count (2, else the highest run that is not
    oversubscribed) in one figure."""
    ts = sorted({k[2] for k in points if points[k].shares() and not is_over(k[2])})
    if not ts:
        return
    t = 2 if 2 in ts else ts[-1]
    wls = [w for w in rep.workloads_of(points) if breakdown_keys(points, w, t)]
    fig, axes = plt.subplots(1, len(wls), figsize=(3.2 * len(wls) + 2.5, 4.6), squeeze=False)
    seen = {}
    for ax, w in zip(axes[0], wls):
        keys = breakdown_keys(points, w, t)
        draw_breakdown(ax, points, keys, [k[1] for k in keys])
        ax.set_title(w, fontsize="medium")
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    for ax in axes[0][1:]:
        ax.set_ylabel("")
    order = [c[1] for c in rep.TIME_CATEGORIES if c[1] in seen]
    fig.suptitle("Where the time goes at %d thread%s — %s" % (t, "" if t == 1 else "s", machine),
                 fontsize="medium")
    fig.tight_layout(rect=(0, 0, 0.85, 1))
    fig.legend([seen[lab] for lab in reversed(order)], list(reversed(order)),
               loc="center left", bbox_to_anchor=(0.85, 0.5), fontsize="small")
    save(fig, outdir, "breakdown_%dthreads" % t, made)


def fig_op_latency(points, w, machine, outdir, made):
    qs = rep.OP_LATENCY
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    drew = False
    styles = ["-", "--", ":", "-."]
    for rt in rep.runtimes_of(points, w):
        c, m = style(rt)
        for i, t in enumerate(rep.threads_of(points, w, rt)):
            p = points[(w, rt, t)]
            ys = [p.med(col) for col, _ in qs]
            xs = [j for j, y in enumerate(ys) if y]
            if not xs:
                continue
            ax.plot(xs, [ys[j] for j in xs], color=c, marker=m, linestyle=styles[i % len(styles)],
                    label=tlabel(rt, t))
            drew = True
    if not drew:
        plt.close(fig)
        return
    ax.set_yscale("log")
    ax.set_xticks(range(len(qs)))
    ax.set_xticklabels([q for _, q in qs])
    ax.set_xlabel("percentile of operation latency (every wait and retry included)")
    ax.set_ylabel("ns (log scale)")
    ax.grid(True, alpha=0.3)
    ax.set_title("%s: operation latency by runtime × threads\n%s" % (w, machine),
                 fontsize="medium")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    save(fig, outdir, "oplatency_%s" % rep.safe_name(w), made)


def fig_txlen_sweep(d, machine, outdir, made):
    """txlen_<w>: ops/s against the transaction length (log x) from DIR/sweep.csv, one
    line per runtime x threads, `auto` as a marker at the mean length it ran."""
    path = os.path.join(d, "sweep.csv")
    if not os.path.isfile(path):
        return
    sp = rep.sweep_points(rep.read_runs(path, allow_empty=True))
    for w in sorted({k[0] for k in sp}, key=rep.workload_key):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        series = sorted({(k[1], k[2]) for k in sp if k[0] == w},
                        key=lambda x: (rep.runtime_key(x[0]), x[1]))
        allv = [v["ops"] for k, v in sp.items() if k[0] == w]
        scale, unit = rate_scale(allv)
        for rt, t in series:
            colour, marker = style(rt)
            ls = "-" if t == 1 else "--"
            xs = sorted(k[3] for k in sp if k[:3] == (w, rt, t) and k[3] != "auto")
            if xs:
                ax.plot(xs, [sp[(w, rt, t, x)]["ops"] / scale for x in xs], ls, color=colour,
                        marker=marker, label="%s, %d thread%s" % (rt, t, "" if t == 1 else "s"))
            a = sp.get((w, rt, t, "auto"))
            if a and a["len_mean"]:
                ax.plot([max(a["len_mean"], 1)], [a["ops"] / scale], marker="*", markersize=14,
                        color=colour, markeredgecolor="black", linestyle="none")
        ax.set_xscale("log")
        ax.set_xlabel("bytecodes per slice (--switch-interval)" if w == "interp"
                      else "operations per transaction (--ops-per-tx)")
        ax.set_ylabel("throughput (%s)" % unit)
        ax.set_title("%s: throughput against transaction length (★ = auto, at its mean "
                     "length)\n%s" % (w, machine), fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="best")
        save(fig, outdir, "txlen_%s" % rep.safe_name(w), made)


def fig_conflict_timeline(d, rows, machine, outdir, made):
    """conflict_timeline_<w>: time lost per twentieth of the run (summed over the runs,
    divided by their number) for the top 3 pairs of each runtime of the workload, from
    conflicts.csv's pair columns (nothing for an older file)."""
    allpairs = rep.read_pairs(d, rows)
    if not allpairs:
        return
    for w in sorted({k[0] for k in allpairs}, key=rep.workload_key):
        fig, ax = plt.subplots(figsize=(8, 4.5))
        drawn = 0
        for rt in sorted({k[1] for k in allpairs if k[0] == w}, key=rep.runtime_key):
            colour = style(rt)[0]
            for i, (key, e) in enumerate(rep.top_pairs(allpairs[(w, rt)], 3)):
                kind, obj = key[0], key[1] or "(none)"
                n = max(1, len(e["runs"]))
                xs = [(b + 0.5) / rep.TIMELINE_BINS for b in range(rep.TIMELINE_BINS)]
                ys = [v / n / 1e6 for v in e["bins"]]
                ax.plot(xs, ys, color=colour, linestyle=("-", "--", ":")[i], marker=".",
                        label="%s #%d %s %s" % (rt, i + 1, kind, obj[:32]))
                drawn += 1
        if not drawn:
            plt.close(fig)
            continue
        ax.set_xlabel("fraction of the run")
        ax.set_ylabel("time lost per interval, ms (mean over runs)")
        ax.set_title("%s: top conflict pairs over the run\n%s" % (w, machine), fontsize=9)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
        save(fig, outdir, "conflict_timeline_%s" % rep.safe_name(w), made)


def main(argv):
    ap = argparse.ArgumentParser(prog=argv[0], description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", metavar="RESULTS_DIR")
    d = ap.parse_args(argv[1:]).dir
    try:
        rows, ctx = rep.load_dir(d)
    except rep.InputError as e:
        sys.stderr.write("plot.py: %s\n" % e)
        return 2
    if not rows:
        sys.stderr.write("plot.py: %s/runs.csv has no rows: nothing to draw\n" % d)
        return 0
    points, _ = rep.aggregate(rows)
    machine = rep.machine_description(ctx, rows)
    global HW
    HW = rep.hardware_threads(ctx)
    outdir = os.path.join(d, "plots")
    os.makedirs(outdir, exist_ok=True)
    made = []
    plt.rcParams.update({"figure.max_open_warning": 0, "svg.hashsalt": "stmbench"})
    for w in rep.workloads_of(points):
        fig_throughput(points, w, machine, outdir, made)
        fig_speedup(points, w, machine, outdir, made)
        fig_latency(points, w, machine, outdir, made)
        fig_breakdown(points, w, machine, outdir, made)
        fig_op_latency(points, w, machine, outdir, made)
    fig_breakdown_threads(points, machine, outdir, made)
    fig_stm(points, machine, outdir, made)
    fig_overhead_bars(points, machine, outdir, made)
    fig_throughput_all(points, machine, outdir, made)
    fig_txlen_sweep(d, machine, outdir, made)
    fig_conflict_timeline(d, rows, machine, outdir, made)
    print("plot.py: %d files in %s" % (len(made), outdir))
    return 0

