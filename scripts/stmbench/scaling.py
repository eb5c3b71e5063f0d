"""stmbench scaling DIR --threads T --cores N --runtimes "RT..." --configs "C;C..." - the
table of `make scaling` (scripts/scaling.sh, which runs the sitting and then this) from
the files it wrote into DIR:

  runs.csv      every run (the harness's CSV); round r ran with --seed r
  index.txt     "<line of runs.csv> <configuration index>" per row
  transfer.csv  the line transfer measured before each round
  floor.csv     the log floor measured before each round

Prints scaling.md: per configuration and runtime the medians of the rounds at 1 and at
T threads and their ratio, then each round's ratios under its line transfer and log
floor. Exit status: 0 ok, 2 bad input.
"""
import argparse
import csv
import statistics
import sys


def read_runs(path, index):
    """{(runtime, configuration, threads): [ops/s...]} and {... + (round,): ops/s} of
    the passing rows that index.txt places."""
    conf_of = {}  # line number in runs.csv (the header is line 1) -> configuration index
    with open(index) as f:
        for line in f:
            n, i = line.split()
            conf_of[int(n)] = int(i)
    by, per_round = {}, {}
    with open(path, newline="") as f:
        for n, r in enumerate(csv.DictReader(f), start=2):
            if r.get("check") == "pass" and n in conf_of:
                k = (r["runtime"], conf_of[n], int(r["threads"]))
                by.setdefault(k, []).append(float(r["ops_per_s"]))
                per_round[k + (int(r["seed"]),)] = float(r["ops_per_s"])
    return by, per_round


def read_rounds(path, col, also=None):
    """[(value of col, value of also)...] over the rounds that measured it, and
    {round: value}."""
    vals, of = [], {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r[col]:
                vals.append((float(r[col]), float(r[also]) if also else None))
                of[int(r["round"])] = float(r[col])
    return vals, of


def fmt(x):
    return "%.2f M" % (x / 1e6)


def row(cells):
    return "| " + " | ".join(cells) + " |"


def head_lines(T, ncores, xfer, fl):
    out = ["# %d threads over 1 thread, side by side" % T, "",
           "Medians of the rounds (ops/s; interp: bytecodes/s). %d cores seen by hwloc%s." % (
               ncores, "" if T <= ncores else
               "; **%d threads is more than the cores: these timings mean nothing**" % T), ""]
    if xfer:
        x = [v for v, _ in xfer]
        out.append("Cross-core line transfer, one way (`stmbench --line-transfer`, before "
                   "each round): median %.0f ns; rounds: %s ns." % (
                       statistics.median(x), ", ".join("%.0f" % v for v in x)))
    else:
        out.append("Cross-core line transfer: not measured (see transfer.csv).")
    out.append("")
    if fl:
        out.append("Floor of one shared log (`stmbench --log-floor --threads %d`: every op "
                   "appends a record that every thread reads, %.0f ns per op at 1 thread): "
                   "×%.2f at %d threads (median of the rounds; rounds: %s). No commit that "
                   "appends to one log scales past it in this sitting." % (
                       T, statistics.median(v[1] for v in fl),
                       statistics.median(v[0] for v in fl), T,
                       ", ".join("×%.2f" % v[0] for v in fl)))
    else:
        out.append("Floor of one shared log: not measured (see floor.csv).")
    out.append("")
    return out


def median_lines(T, runtimes, confs, by):
    first = runtimes[0]
    many_rt = len(runtimes) > 1
    cols = ["configuration", "runtime", "1 thread", "%d threads" % T, "%dT/1T" % T,
            "%dT runs (min-max)" % T] + (["%s ÷ runtime at %dT" % (first, T)] if many_rt else [])
    out = [row(cols), "|" + "---|" * len(cols)]
    for ci, conf in enumerate(confs):
        base = by.get((first, ci, T))
        for rt in runtimes:
            one, many = by.get((rt, ci, 1)), by.get((rt, ci, T))
            if not one or not many:
                cells = [conf, rt, "-", "-", "-", "-"] + (["-"] if many_rt else [])
            else:
                m1, mT = statistics.median(one), statistics.median(many)
                cells = [conf, rt, fmt(m1), fmt(mT), "×%.2f" % (mT / m1),
                         "%s-%s" % (fmt(min(many)), fmt(max(many)))]
                if many_rt:
                    cells.append("%.2f" % (statistics.median(base) / mT) if base else "-")
            out.append(row(cells))
    return out


def round_lines(T, runtimes, confs, per_round, xfer_of, floor_of):
    """Round by round: a round's 1-thread and T-thread runs of a configuration ran one
    after the other, so their ratio belongs to one stretch of the sitting, and the
    round's line transfer and log floor (measured just before it) say what that stretch
    allowed."""
    rounds = sorted({k[3] for k in per_round} | set(xfer_of) | set(floor_of))
    out = ["", "## Round by round", "",
           "%dT/1T of each round (its two runs ran one after the other), under the round's "
           "line transfer and log floor (measured before it): on a VM whose transfer time "
           "changes between stretches of a sitting, the ratios follow it." % T, "",
           "| | " + " | ".join("round %d" % x for x in rounds) + " |",
           "|---|" + "---|" * len(rounds),
           "| line transfer | " + " | ".join(
               "%.0f ns" % xfer_of[x] if x in xfer_of else "-" for x in rounds) + " |",
           "| log floor %dT/1T | " % T + " | ".join(
               "×%.2f" % floor_of[x] if x in floor_of else "-" for x in rounds) + " |"]
    for ci, conf in enumerate(confs):
        for rt in runtimes:
            cells = []
            for x in rounds:
                one, many = per_round.get((rt, ci, 1, x)), per_round.get((rt, ci, T, x))
                cells.append("×%.2f" % (many / one) if one and many else "-")
            out.append("| %s, %s | " % (conf, rt) + " | ".join(cells) + " |")
    return out


def main(argv):
    ap = argparse.ArgumentParser(prog=argv[0], description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", metavar="DIR")
    ap.add_argument("--threads", type=int, required=True, metavar="T")
    ap.add_argument("--cores", type=int, required=True, metavar="N")
    ap.add_argument("--runtimes", required=True, help="space-separated, as SCALE_RUNTIMES")
    ap.add_argument("--configs", required=True, help="';'-separated, as SCALE_CONFIGS")
    a = ap.parse_args(argv[1:])
    runtimes = a.runtimes.split()
    confs = [c.strip() for c in a.configs.split(";") if c.strip()]
    if not runtimes or not confs:
        ap.error("no runtime or no configuration")
    d = a.dir.rstrip("/")
    try:
        by, per_round = read_runs(d + "/runs.csv", d + "/index.txt")
        xfer, xfer_of = read_rounds(d + "/transfer.csv", "line_transfer_ns")
        fl, floor_of = read_rounds(d + "/floor.csv", "ratio", "ns_per_op_1")
    except (OSError, KeyError, ValueError) as e:
        sys.stderr.write("stmbench scaling: %s: %s\n" % (d, e))
        return 2
    T = a.threads
    lines = (head_lines(T, a.cores, xfer, fl) + median_lines(T, runtimes, confs, by)
             + round_lines(T, runtimes, confs, per_round, xfer_of, floor_of))
    sys.stdout.write("\n".join(lines) + "\n")
    return 0
