"""stmbench anchors COMMAND - make anchors (scripts/anchors.sh, docs/anchors.md): the
interpreter model's gil rows beside the real interpreters running the same programs
(scripts/anchors/programs.py).

  vm-row HARNESS_CSV --repeat R
      the last row of the harness's CSV (one run of an object-model program of interp)
      as one anchors.csv row on stdout: program, interpreter (stmbench-RUNTIME-MEMORY),
      threads, repeat, seconds (duration_s), runs and runs_per_s. The harness counts
      bytecodes (ops), not runs: runs = (ops - once) / per_run (vm_runs below).
  table ANCHORS_CSV [--config FILE]
      the Markdown table of anchors.csv on stdout: per program and interpreter, the
      median runs/s at each thread count, 2T/1T, and each real interpreter's 2T/1T
      less the model's.

Exit status: 0; 1 when vm-row's run failed its check or its ops are no whole number of
runs (programs.c changed since the counts below); 2 bad input (a missing file or
column, a row that is not interp's, no rows).
"""
import argparse
import csv
import statistics
import sys

from .cli import command
from .results import config_lines, md_table

COLUMNS = ["program", "interpreter", "threads", "repeat", "seconds", "runs", "runs_per_s"]
MODEL = "stmbench-gil-refcount"

# Bytecodes of one run of each program as a function of ITER, counted from the listings
# of workloads/interp/programs.c: (a, b) for a * ITER + b. The harness's ops include
# the HALT and the run a thread finishes after the stop, so a run's ops are a whole
# number of runs (tests/test_anchors.sh checks each count against the binary).
#   arith, memo-cache: 4 to start, 4 per loop test (ITER + 1), 21 per iteration, 5 at
#       the end (memo-cache when its key is in the cache)
#   parallel-map: 4 + 4 (ITER + 1) + 10 ITER, then 3 + 5 (ITER + 1) + 11 ITER + 7
#   work-queue: 2 + 4 (ITER + 1) + 9 ITER, 4, then per pop 4 (ITER tasks and the empty
#       pop, over all threads' runs) and 21 per task, 11 at the end
PER_RUN = {"arith": (25, 13), "memo-cache": (25, 13), "parallel-map": (30, 23),
           "work-queue": (38, 25)}


def slow_miss(k):
    """memo-cache's bytecodes for a key not in the cache: 5 in the loop (the call and
    the store) and slow(k): 4 + 6 (k * k + 1) + 9 k * k + 4."""
    return 15 * k * k + 19


def once(program, iters):
    """Bytecodes a sitting runs once, on top of its runs: memo-cache fills its cache
    (keys 0..min(ITER, 64) - 1) in the first runs."""
    if program != "memo-cache":
        return 0
    return sum(slow_miss(k) for k in range(min(iters, 64)))


def vm_runs(program, iters, threads, ops):
    """The complete runs a harness row's ops hold. ValueError when they are no whole
    number of runs. At 2 threads or more a memo-cache key can be computed by two threads
    at once (both saw it missing): each such key adds slow_miss(k) <= 59,554 bytecodes,
    at most 2 runs, and the remainder is dropped (the count is then rounded down from
    at most that much too high)."""
    if program not in PER_RUN:
        raise ValueError("no bytecode count for program %r (one of %s)"
                         % (program, ", ".join(PER_RUN)))
    a, b = PER_RUN[program]
    per_run = a * iters + b
    if ops == 0:
        return 0
    runs, extra = divmod(ops - once(program, iters), per_run)
    if runs < 1 or (extra and not (program == "memo-cache" and threads > 1)):
        raise ValueError("%s: %d bytecodes are no whole number of runs of %d (+ %d once): "
                         "workloads/interp/programs.c changed? (stmbench.anchors.PER_RUN)"
                         % (program, ops, per_run, once(program, iters)))
    return runs


def fail(msg):
    sys.stderr.write("anchors: %s\n" % msg)
    sys.exit(2)


def read_csv(path, need):
    try:
        with open(path, newline="") as f:
            rd = csv.DictReader(f)
            missing = [c for c in need if c not in (rd.fieldnames or [])]
            if missing:
                fail("%s lacks column(s) %s" % (path, ", ".join(missing)))
            return list(rd)
    except OSError as e:
        fail(str(e))


def cmd_vm_row(a):
    rows = read_csv(a.harness_csv, ["runtime", "workload", "params", "threads",
                                    "duration_s", "ops", "check"])
    if not rows:
        fail("%s has no rows" % a.harness_csv)
    r = rows[-1]
    params = dict(kv.split("=", 1) for kv in r["params"].split(";") if "=" in kv)
    if r["workload"] != "interp" or "program" not in params or "iterations" not in params:
        fail("%s: the last row is not a run of interp (workload %s, params %s)"
             % (a.harness_csv, r["workload"], r["params"]))
    if r["check"] != "pass":
        sys.stderr.write("anchors: %s: the last run failed its check\n" % a.harness_csv)
        return 1
    program, threads = params["program"], int(r["threads"])
    try:
        runs = vm_runs(program, int(params["iterations"]), threads, int(r["ops"]))
    except ValueError as e:
        sys.stderr.write("anchors: %s\n" % e)
        return 1
    secs = float(r["duration_s"])
    label = "stmbench-%s-%s" % (r["runtime"], params.get("memory", "raw"))
    csv.writer(sys.stdout, lineterminator="\n").writerow(
        [program, label, threads, a.repeat, "%.6f" % secs, runs,
         "%.3f" % (runs / secs if secs > 0 else 0.0)])
    return 0


# ---- the table

def medians(rows):
    """{(program, interpreter, threads): (median runs/s, repeats)}."""
    groups = {}
    for r in rows:
        try:
            key = (r["program"], r["interpreter"], int(r["threads"]))
            groups.setdefault(key, []).append(float(r["runs_per_s"]))
        except ValueError:
            fail("a row with a bad number: %s" % ",".join(r.get(c) or "" for c in COLUMNS))
    return {k: (statistics.median(v), len(v)) for k, v in groups.items()}


def interpreter_key(name):
    """The model first, then CPython, PyPy and anything else, by name."""
    for i, prefix in enumerate((MODEL, "cpython-", "pypy-")):
        if name.startswith(prefix):
            return (i, name)
    return (3, name)


def fmt(v, spec):
    return "–" if v is None else format(v, spec)


def scaling(med, program, interp, t):
    one, many = med.get((program, interp, 1)), med.get((program, interp, t))
    return many[0] / one[0] if one and many and one[0] else None


def program_table(med, program, threads):
    interps = sorted({k[1] for k in med if k[0] == program}, key=interpreter_key)
    multi = [t for t in threads if t > 1]
    header = ["interpreter"] + ["runs/s %dT" % t for t in threads]
    for t in multi:
        header += ["%dT/1T" % t, "%dT/1T − model's" % t]
    header += ["1T vs model", "repeats"]
    model_1 = med.get((program, MODEL, 1))
    out = []
    for it in interps:
        row = [it if it != MODEL else it + " (model)"]
        row += [fmt(med[(program, it, t)][0] if (program, it, t) in med else None, ".0f")
                for t in threads]
        for t in multi:
            mine, model = scaling(med, program, it, t), scaling(med, program, MODEL, t)
            row.append(fmt(mine, ".2f"))
            row.append("–" if it == MODEL or mine is None or model is None
                       else format(mine - model, "+.2f"))
        one = med.get((program, it, 1))
        row.append("–" if it == MODEL or not one or not model_1 or not model_1[0]
                   else format(one[0] / model_1[0], ".2f") + "×")
        row.append("/".join(str(med[(program, it, t)][1]) if (program, it, t) in med else "0"
                            for t in threads))
        out.append(row)
    return md_table(header, out)


def table(med, config):
    progs = sorted({k[0] for k in med}, key=lambda p: (list(PER_RUN).index(p)
                                                      if p in PER_RUN else 99, p))
    threads = sorted({k[2] for k in med})
    out = ["# Anchors: the interpreter model against CPython and PyPy", ""]
    if config:
        out += ["Sitting:", ""] + ["- " + c for c in config] + [""]
    out += ["runs/s: completed runs of the program per second, all threads together "
            "(the median over the repeats). nT/1T: runs/s at n threads over 1 thread. "
            "− model's: that interpreter's nT/1T less the model's (%s: the harness's "
            "`--runtime gil --memory refcount`), positive where the real interpreter keeps "
            "more of its 1-thread rate. 1T vs model: its runs/s at 1 thread over the "
            "model's. repeats: the runs behind each median, per thread count." % MODEL, ""]
    for p in progs:
        out += ["## %s" % p, "", program_table(med, p, threads), ""]
    return "\n".join(out)


def cmd_table(a):
    rows = read_csv(a.csv, COLUMNS)
    if not rows:
        fail("%s has no rows" % a.csv)
    try:
        config = config_lines(a.config)
    except OSError as e:
        fail(str(e))
    print(table(medians(rows), config))
    return 0


def main(argv):
    ap = argparse.ArgumentParser(prog=argv[0], description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    p = command(sub, "vm-row", cmd_vm_row, "a harness row as an anchors.csv row")
    p.add_argument("harness_csv", metavar="HARNESS_CSV")
    p.add_argument("--repeat", type=int, required=True)
    p = command(sub, "table", cmd_table, "the table of anchors.csv")
    p.add_argument("csv", metavar="ANCHORS_CSV")
    p.add_argument("--config", metavar="FILE")
    a = ap.parse_args(argv[1:])
    return a.run(a)
