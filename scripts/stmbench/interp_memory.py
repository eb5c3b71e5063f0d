"""stmbench interp-memory CSV [--config FILE] [--plot PREFIX] - the table "the
interpreter as CPython and PyPy run it" from scripts/interp-memory.sh's rows (the
harness's CSV, read by header name): medians per program, memory mode, runtime and
thread count; n% slower than seq at 1 thread in the same mode, 2 threads over 1,
aborts per commit, objects per bytecode and where the 2-thread time goes; then the
three roads compared. Markdown on stdout; --plot writes PREFIX.png and PREFIX.svg.
Exit 2 on a missing or unreadable CSV or one without the columns it needs."""
import argparse
import csv
import statistics
import sys

from .lists import runtime_key
from .results import config_lines

NEED = ["runtime", "workload", "params", "threads", "ops", "ops_per_s", "commits", "aborts",
        "check", "thread_time_ns", "time_work_ns", "time_wasted_ns", "objects_allocated"]
MODE_ORDER = ["tracing", "refcount", "biased", "buffered", "raw"]
# the roads docs/figures.md compares: (label, (runtime, mode)), against gil with plain counts
ROADS = [("CPython's road: locks with PEP 703's counts", ("locks", "biased")),
         ("PyPy's road: stm with a tracing collector", ("stm", "tracing")),
         ("stm with naive counts", ("stm", "refcount")),
         ("stm with buffered counts", ("stm", "buffered"))]
BASE = ("gil", "refcount")


def params_of(s):
    return dict(kv.split("=", 1) for kv in s.split(";") if "=" in kv)


def load(path):
    try:
        with open(path, newline="") as f:
            rd = csv.DictReader(f)
            missing = [c for c in NEED if c not in (rd.fieldnames or [])]
            if missing:
                print("interp_memory: %s lacks column(s) %s (an older CSV: the object model "
                      "counts came later)" % (path, ", ".join(missing)), file=sys.stderr)
                sys.exit(2)
            rows = list(rd)
    except OSError as e:
        print("interp_memory: %s" % e, file=sys.stderr)
        sys.exit(2)
    groups = {}
    for r in rows:
        if r["workload"] != "interp" or r["check"] != "pass":
            continue
        p = params_of(r["params"])
        key = (p.get("program", "?"), p.get("memory", "raw"), r["runtime"], int(r["threads"]))
        groups.setdefault(key, []).append(r)
    return groups


def med(rows, f):
    return statistics.median(f(r) for r in rows)


def summary(groups):
    s = {}
    for k, rows in groups.items():
        def share(col):
            return med(rows, lambda r: int(r[col]) / max(1, int(r["thread_time_ns"])))
        s[k] = {
            "ops": med(rows, lambda r: float(r["ops_per_s"])),
            "apc": med(rows, lambda r: int(r["aborts"]) / max(1, int(r["commits"]))),
            "opb": med(rows, lambda r: int(r["objects_allocated"]) / max(1, int(r["ops"]))),
            "work": share("time_work_ns"), "wasted": share("time_wasted_ns"),
            "n": len(rows),
        }
    return s


def fmt(x, spec):
    return "–" if x is None else format(x, spec)


def table(s, config):
    progs = sorted({k[0] for k in s})
    out = ["# The interpreter as CPython and PyPy run it", ""]
    if config:
        out += ["Sitting: " + "; ".join(config), ""]
    out += ["n%: slower than seq at 1 thread in the same mode and program (medians of the "
            "repeats). 2T/1T: ops/s at 2 threads over 1. aborts/commit and the time shares at "
            "2 threads. objects/bytecode: objects allocated per bytecode.", ""]
    for p in progs:
        out += ["## %s" % p, "",
                "| runtime | memory | n% | 2T/1T | aborts/commit | objects/bytecode | work | aborted |",
                "|---|---|---:|---:|---:|---:|---:|---:|"]
        keys = sorted({(k[2], k[1]) for k in s if k[0] == p},
                      key=lambda x: (runtime_key(x[0]),
                                     MODE_ORDER.index(x[1]) if x[1] in MODE_ORDER else 99))
        for rt, m in keys:
            one, two = s.get((p, m, rt, 1)), s.get((p, m, rt, 2))
            seq = s.get((p, m, "seq", 1))
            npct = (seq["ops"] / one["ops"] - 1) * 100 if one and seq and one["ops"] else None
            ratio = two["ops"] / one["ops"] if one and two and one["ops"] else None
            at = two or one
            out.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                rt, m, fmt(npct, "+.0f"), fmt(ratio, ".2f"), fmt(at and at["apc"], ".3f"),
                fmt(at and at["opb"], ".3f"), fmt(at and at["work"] * 100, ".0f") + "%",
                fmt(at and at["wasted"] * 100, ".0f") + "%"))
        out.append("")
    out += ["## The roads compared", "",
            "At 2 threads, against the GIL with plain counts (gil, refcount) in the same "
            "program; the last two columns hold the buffered scheme to its targets: aborts per "
            "commit at most 1.2x the tracing mode's, 2T/1T at least 80% of the tracing mode's.",
            "", "| program | road | ops/s vs gil refcount | 2T/1T | aborts/commit | "
            "aborts vs stm tracing | 2T/1T vs stm tracing |", "|---|---|---:|---:|---:|---:|---:|"]
    for p in progs:
        base = s.get((p, BASE[1], BASE[0], 2))
        tr1, tr2 = s.get((p, "tracing", "stm", 1)), s.get((p, "tracing", "stm", 2))
        for label, (rt, m) in ROADS:
            one, two = s.get((p, m, rt, 1)), s.get((p, m, rt, 2))
            if not two:
                continue
            ratio = two["ops"] / one["ops"] if one and one["ops"] else None
            vs = two["ops"] / base["ops"] if base and base["ops"] else None
            a_vs = r_vs = None
            if rt == "stm" and tr2 and tr1 and tr1["ops"] and ratio is not None:
                a_vs = two["apc"] / tr2["apc"] if tr2["apc"] > 0 else None
                r_vs = ratio / (tr2["ops"] / tr1["ops"])
            out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                p, label, fmt(vs, ".2f"), fmt(ratio, ".2f"), fmt(two["apc"], ".3f"),
                fmt(a_vs, ".2f") if a_vs is not None else
                ("(tracing 0)" if rt == "stm" and tr2 and tr2["apc"] == 0 else "–"),
                fmt(r_vs, ".0%")))
    out.append("")
    return "\n".join(out)


def plot(s, prefix):
    import os
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    progs = sorted({k[0] for k in s})
    combos = [BASE] + [c for _, c in ROADS]
    labels = ["gil refcount", "locks biased", "stm tracing", "stm refcount", "stm buffered"]
    fig, ax = plt.subplots(figsize=(9, 4.2))
    w = 0.8 / len(combos)
    for i, (rt, m) in enumerate(combos):
        ys = []
        for p in progs:
            one, two = s.get((p, m, rt, 1)), s.get((p, m, rt, 2))
            ys.append(two["ops"] / one["ops"] if one and two and one["ops"] else 0)
        ax.bar([x + i * w for x in range(len(progs))], ys, w, label=labels[i])
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xticks([x + 0.4 - w / 2 for x in range(len(progs))])
    ax.set_xticklabels(progs)
    ax.set_ylabel("ops/s at 2 threads over 1")
    ax.set_title("The interpreter as CPython and PyPy run it")
    ax.legend(fontsize=8, ncol=3)
    fig.tight_layout()
    os.makedirs(os.path.dirname(prefix) or ".", exist_ok=True)
    fig.savefig(prefix + ".png", dpi=110)
    fig.savefig(prefix + ".svg")


def main(argv):
    ap = argparse.ArgumentParser(prog=argv[0], description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--config")
    ap.add_argument("--plot")
    a = ap.parse_args(argv[1:])
    s = summary(load(a.csv))
    if not s:
        print("interp_memory: no passing interp row in %s" % a.csv, file=sys.stderr)
        sys.exit(2)
    try:
        config = config_lines(a.config)
    except OSError as e:
        print("interp_memory: %s" % e, file=sys.stderr)
        sys.exit(2)
    print(table(s, config))
    if a.plot:
        plot(s, a.plot)
