"""stmbench report - tables computed from a stmbench results directory.

    report overhead DIR    DIR/runs.csv -> DIR/overhead.csv, DIR/overhead.md
                           (+ DIR/sweep.csv -> the crossover table in overhead.md)
    report conflicts DIR   DIR/conflicts.csv (or conflicts.csv.gz) + DIR/runs.csv
                           -> DIR/conflicts.md
    report all DIR         both

Exit status: 0 ok, 2 bad input (missing file, missing columns, unreadable numbers),
with a message naming the file and the problem.
"""

import argparse
import csv
import os
import sys
from collections import Counter, defaultdict

from .results import *  # noqa: F401,F403
from .results import InputError, _num


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
    path = conflicts_file(d)
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
    if path is None:
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
    with open_text(path) as f:
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

# A conflict log with the conflict analysis's columns (PAIR_COLUMNS, harness/columns.h)
# gets the pairs below; an older file only the tables above.
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
    path = conflicts_file(d)
    if path is None:
        return None
    runs = {r["run_id"]: r for r in rows}
    out = defaultdict(lambda: defaultdict(lambda: {"n": 0, "ns": 0.0,
                                                   "bins": [0.0] * TIMELINE_BINS,
                                                   "runs": set()}))
    with open_text(path) as f:
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




def main(argv):
    ap = argparse.ArgumentParser(prog=argv[0], description=__doc__.split("\n\n")[0])
    ap.add_argument("table", choices=("overhead", "conflicts", "all"))
    ap.add_argument("dir", metavar="RESULTS_DIR")
    a = ap.parse_args(argv[1:])
    try:
        rows, ctx = load_dir(a.dir)
        if a.table in ("overhead", "all"):
            write_overhead(a.dir, rows, ctx)
            write_sweep_section(a.dir)
        if a.table in ("conflicts", "all"):
            write_conflicts(a.dir, rows, ctx)
    except InputError as e:
        sys.stderr.write("stmbench report: %s\n" % e)
        return 2
    return 0
