"""stmbench mutants - how fragile each runtime variant's synchronisation is (issue 33):
remove or weaken one synchronisation point at a time, rebuild that one workload copy,
run the workload's checks at 2 and 8 threads, and count per variant how many mutants
the checks catch, how many crash, how many hang, and how many go unnoticed.

    make mutants [MUTANTS_...=...]        (the Makefile passes the build's commands)
    mutants.py --list [--root DIR]        (the mutation points, no build needed)

The points, found with scripts/sync_cost.py's parser in a variant's sources (the file
the runtime compiles and the workload headers it includes; code marked
"sync_cost: not counted" and workloads/lib/ are left alone):

  runtimes with atomic blocks (the generic file, workloads/W.c):
    drop-block    SYNC_ATOMIC(site) { ... } becomes a plain { ... }: the code runs
                  outside any atomic block. Run under each of mutex, gil, stm, itm and
                  htm that this build has and this machine runs.
    drop-barrier  one SYNC_READ(x) or SYNC_WRITE(x) becomes ((void)0). Run under stm
                  only: elsewhere the barriers compile to nothing.
  locks (workloads/W_locks.c):
    drop-lock     one lock acquisition (a lock primitive, or a call of a wrapper that
                  takes a lock) becomes ((void)0); its release still runs;
    drop-unlock   one release becomes ((void)0);
    early-unlock  a release statement moves one statement up (before the last thing
                  done under the lock, or before another release: the unlock order);
    drop-fence    one atomic_thread_fence(...) becomes ((void)0);
    relax         one memory_order_acquire/release/acq_rel/seq_cst of an atomic
                  operation becomes memory_order_relaxed.

Points that only setup, check and teardown reach (from the descriptor's .thread_run,
every unit it names, transitively, is reached by the threads; the rest runs while no
other thread runs) are counted as "alone" and mutated under stm only, whose heap needs
a transaction for any access at all: elsewhere removing them cannot break anything.

Each mutant: the mutated copy of the tree is compiled with the build's own command
(-Wno-error added, so a warning the mutation causes does not hide the mutant) into a
temporary folder, with the same command on the unmutated copy as its reference. A
mutant the compiler rejects is "not compiled"; one whose code (objdump -dr) equals
the reference's is "same code" (on this compiler and CPU the point changes nothing)
and is not run. The others are linked with the build's other objects and run:

    stmbench --runtime R --workload W --threads T --duration D --seed 1 --pin none \
             --gil-interval-us 100 KNOBS

first at T = 2, then (if that passed) at T = 8, with contention-heavy knobs (KNOBS,
below; the second run with --ops-per-tx 4, so that bank mixes audits and transfers in
a block; interp runs list-append, then tests/programs/atomicity.stm) and frequent
GIL hand-offs. A run is "caught" (exit 1: a check
failed), "crashed" (a signal, or an exit other than 0 and 1), "hung" (still running
after the timeout: a deadlock or a livelock) or "passed"; a mutant is the first of its
runs that did not pass, or "survived" when both passed: the point was not needed in
these runs, or the breakage went unnoticed.

Output (MUTANTS_OUT, default results/mutants/): mutants.csv (every mutant: n,
workload, runtime, the variant's points and alone points, kind, file, line, unit, what
was changed, status, each run's threads:exit), summary.md (per variant and per kind,
the survivors; with the command line, the revision and the machine), logs/ (the
output of the runs that did not pass, and compiler errors).

Variables (environment; `make mutants VAR=value`): MUTANTS_WORKLOADS (default: every
workload of the list), MUTANTS_RUNTIMES (default: every runtime but seq), MUTANTS_MAX
(most mutants per variant, default 16, 0 for all: the points in the workload's own
files first, then those of the structures it reuses, evenly across kinds,
reproducibly), MUTANTS_DURATION (seconds per run, 0.5), MUTANTS_TIMEOUT (seconds
before a run counts as hung, 8), MUTANTS_JOBS (mutants at a time, default 1: a run's
threads race only when they have the cores to themselves; with two mutants at a time on
2 cores, a lock dropped from interp's list appends survived a run it fails alone),
MUTANTS_OUT.
Exit status: 0 when the run completed (whatever the mutants did), 2 bad variables,
3 no build to work from.
"""

import csv
import argparse
import datetime
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from collections import OrderedDict, defaultdict

from . import sync_cost as sc
from .lists import ROOT

# A mutant's runs: (threads, knobs), contention-heavy (as make stress's), the second
# with blocks of 4 operations (a bank block then mixes audits and transfers, and takes
# every account's lock) or, for interp, another program that shares its objects. A
# workload not named here runs with its defaults.
KNOBS = {
    "bank": ["--accounts", "16", "--transfer-pct", "50"],
    "rbtree": ["--size", "64", "--range", "128", "--update", "50"],
    "hashmap": ["--size", "64", "--range", "128", "--update", "50", "--buckets", "4"],
    "compose": ["--keys", "16", "--accounts", "8", "--ledger", "16", "--move-pct", "50"],
}
# interp: appends to a shared list outside atomic sections (list-append), then a global
# written in sections and read outside them (atomicity.stm). No built-in program shares
# a dict, or gets or sets list items, outside a section.
RUNS = {
    "interp": [("2", ["--program", "list-append"]),
               ("8", ["--program", os.path.join(ROOT, "tests/programs/atomicity.stm")])],
}


def runs_of(w):
    k = KNOBS.get(w, [])
    return RUNS.get(w, [("2", k), ("8", k + ["--ops-per-tx", "4"])])
STRONG_ORDER = re.compile(r"^memory_order_(acquire|release|acq_rel|seq_cst|consume)$")
STATUSES = ["not compiled", "same code", "caught", "crashed", "hung", "survived"]


class Mutation:
    __slots__ = ("kind", "path", "start", "end", "new", "line", "unit", "desc")

    def __init__(self, kind, path, start, end, new, line, unit, desc):
        self.kind, self.path, self.start, self.end, self.new = kind, path, start, end, new
        self.line, self.unit, self.desc = line, unit, desc


def call_span(toks, i, j):
    """Offsets of the call toks[i] ( ... toks[j] )."""
    return toks[i].pos, toks[j].pos + 1


def text_of(toks, i, j, raw):
    return re.sub(r"\s+", " ", raw[toks[i].pos:toks[j].pos + 1])


def stmt_span(s):
    toks = sc.stmt_tokens(s)
    return toks[0].pos, toks[-1].pos + len(toks[-1].s)


def statement_lists(stmts):
    """Every list of sibling statements (a unit's top level and every block's)."""
    yield stmts
    for s in stmts:
        for sub in s.subs:
            if sub.kind == "block":
                yield from statement_lists(sub.subs)
            else:
                yield from statement_lists([sub])


def generic_points(v):
    out = []
    for u in v.units.values():
        raw = v.raw[u.path]
        for name, i, j in sc.calls(u.toks):
            t = u.toks[i]
            if name in sc.BLOCK:
                a, b = call_span(u.toks, i, j)
                out.append(Mutation("drop-block", u.path, a, b, "", t.line, u.name,
                                    "%s without its block" % text_of(u.toks, i, j, raw)))
            elif name in sc.BARRIER:
                a, b = call_span(u.toks, i, j)
                out.append(Mutation("drop-barrier", u.path, a, b, "((void)0)", t.line, u.name,
                                    "%s dropped" % text_of(u.toks, i, j, raw)))
    return out


def locks_points(v):
    lw = sc.LockWalk(v)
    out = []
    for u in v.units.values():
        raw = v.raw[u.path]
        kind = lw.kind.get(u.name, "")
        for name, i, j in sc.calls(u.toks):
            t = u.toks[i]
            a, b = call_span(u.toks, i, j)
            what = text_of(u.toks, i, j, raw)
            if (name in sc.ACQUIRE or lw.kind.get(name) == "acquire") and kind != "acquire":
                out.append(Mutation("drop-lock", u.path, a, b, "((void)0)", t.line, u.name,
                                    "%s dropped" % what))
            elif (name in sc.RELEASE or lw.kind.get(name) == "release") and kind != "release":
                out.append(Mutation("drop-unlock", u.path, a, b, "((void)0)", t.line, u.name,
                                    "%s dropped" % what))
            elif name == "atomic_thread_fence":
                out.append(Mutation("drop-fence", u.path, a, b, "((void)0)", t.line, u.name,
                                    "%s dropped" % what))
            elif sc.ATOMIC_CALL.match(name):
                for k in range(i + 2, j):
                    if STRONG_ORDER.match(u.toks[k].s):
                        tk = u.toks[k]
                        out.append(Mutation("relax", u.path, tk.pos, tk.pos + len(tk.s),
                                            "memory_order_relaxed", tk.line, u.name,
                                            "%s: %s relaxed" % (what[:60], tk.s)))
        # early-unlock: a release statement swapped with the statement before it
        if kind == "release":
            continue
        for lst in statement_lists(sc.unit_stmts(u)):
            for prev, cur in zip(lst, lst[1:]):
                cs = [c for c in sc.calls(cur.toks)] if cur.kind == "simple" else []
                if not cs or cs[0][1] != 0:
                    continue
                name = cs[0][0]
                if not (name in sc.RELEASE or lw.kind.get(name) == "release"):
                    continue
                pa, pb = stmt_span(prev)
                ca, cb = stmt_span(cur)
                new = raw[ca:cb] + raw[pb:ca] + raw[pa:pb]
                out.append(Mutation("early-unlock", u.path, pa, cb, new, cur.toks[0].line,
                                    u.name, "%s moved before: %s" % (
                                        re.sub(r"\s+", " ", raw[ca:cb]),
                                        re.sub(r"\s+", " ", raw[pa:pb])[:60])))
    return out


def thread_units(v):
    """The units the workload's threads may run: those its descriptor's .thread_run
    reaches by naming them (called, or passed as a function). The others run only in
    setup, check and teardown, while no other thread runs."""
    start = None
    for f in v.files:
        m = re.search(r"\.thread_run\s*=\s*(\w+)", v.stripped[f])
        if m:
            start = m.group(1)
            break
    if start is None:
        return set(v.units)          # no descriptor found: treat everything as concurrent
    seen, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name in seen or name not in v.units:
            continue
        seen.add(name)
        todo += [t.s for t in v.units[name].toks if t.s in v.units and t.s not in seen]
    return seen


def variants(root, workloads, runtimes):
    """[(workload, runtime, build, main file, [Mutation])] for every variant asked."""
    rts, wls = sc.read_lists(root)
    out = []
    for w in wls:
        if workloads and w not in workloads:
            continue
        for name, build in rts:
            if name == "seq" or (runtimes and name not in runtimes):
                continue
            main = "workloads/%s_%s.c" % (w, name) if build == "variant" else \
                "workloads/%s.c" % w
            if not os.path.exists(os.path.join(root, main)):
                continue
            v = sc.Variant(root, main)
            if build == "variant":
                pts = locks_points(v)
            else:
                pts = [m for m in generic_points(v)
                       if m.kind == "drop-block" or name == "stm"]
            # Points only setup, check and teardown reach run while no other thread
            # runs: left out, except under stm, whose heap needs a transaction for any
            # access at all.
            conc = thread_units(v)
            alone = [m for m in pts if m.unit not in conc]
            if name != "stm":
                pts = [m for m in pts if m.unit in conc]
            out.append((w, name, build, main, pts, len(alone)))
    return out


def choose(points, cap, seed, workload):
    """At most cap points, reproducibly: those in the workload's own files (named after
    it) first, then those of the structures it reuses; evenly across kinds in each."""
    if cap <= 0 or len(points) <= cap:
        return list(points)
    rng = random.Random(seed)
    out = []
    for own in (True, False):
        by = OrderedDict()
        for p in points:
            if os.path.basename(p.path).startswith(workload) == own:
                by.setdefault(p.kind, []).append(p)
        for k in by:
            rng.shuffle(by[k])
        while len(out) < cap and any(by.values()):
            for k in list(by):
                if by[k] and len(out) < cap:
                    out.append(by[k].pop())
    return sorted(out, key=lambda m: (m.path, m.start))


# ---------------------------------------------------------------- building and running

class Build:
    """The build's commands, from the Makefile (make mutants sets these)."""

    def __init__(self):
        env = os.environ
        self.build = env.get("MUT_BUILD", "build/release")
        self.cc = env.get("MUT_CC", "clang")
        self.itm_cc = env.get("MUT_ITM_CC", "gcc")
        self.cppflags = shlex.split(env.get("MUT_CPPFLAGS", ""))
        self.cflags = shlex.split(env.get("MUT_CFLAGS", ""))
        self.ldflags = shlex.split(env.get("MUT_LDFLAGS", ""))
        self.ldlibs = shlex.split(env.get("MUT_LDLIBS", ""))
        self.objs = [os.path.join(ROOT, o) for o in shlex.split(env.get("MUT_OBJS", ""))]
        self.main = os.path.join(ROOT, self.build, "obj", "common", "harness", "main.o")
        self.rt_cflags = {k[len("MUT_RT_CFLAGS_"):]: shlex.split(v)
                          for k, v in env.items() if k.startswith("MUT_RT_CFLAGS_")}

    def ready(self):
        return bool(self.objs) and os.path.exists(self.main) and \
            all(os.path.exists(o) for o in self.objs)

    def compile_cmd(self, rt, build, src, obj):
        defs = ["-DSYNC_RT=%s" % rt, "-DSYNC_RT_%s" % rt.upper()]
        if build == "gnutm":
            return [self.itm_cc] + self.cppflags + defs + self.cflags + \
                ["-fgnu-tm", "-Wno-clobbered", "-Wno-error", "-c", src, "-o", obj]
        return [self.cc] + self.cppflags + defs + self.cflags + self.rt_cflags.get(rt, []) + \
            ["-Wno-error", "-c", src, "-o", obj]

    def original(self, rt, main):
        return os.path.join(ROOT, self.build, "obj", rt, main[:-2] + ".o")

    def link_cmd(self, rt, main, obj, out):
        orig = self.original(rt, main)
        objs = [obj if o == orig else o for o in self.objs]
        return [self.cc] + self.ldflags + [self.main] + objs + self.ldlibs + ["-o", out]


def code_of(obj):
    r = subprocess.run(["objdump", "-dr", "--no-show-raw-insn", obj], capture_output=True,
                       text=True)
    return "\n".join(r.stdout.split("\n")[2:])     # without the file name line


def copy_tree(dst):
    for d in ("runtime", "workloads"):
        shutil.copytree(os.path.join(ROOT, d), os.path.join(dst, d))


class Runner:
    def __init__(self, bld, out, duration, timeout, jobs):
        self.bld, self.out, self.duration, self.timeout, self.jobs = bld, out, duration, \
            timeout, jobs
        self.lock = threading.Lock()
        self.refs = {}

    def reference(self, tree, rt, build, main):
        """The unmutated copy's code, compiled the mutants' way (once per variant)."""
        key = (tree, rt, main)
        if key not in self.refs:
            obj = os.path.join(tree, "ref-%s.o" % rt)
            r = subprocess.run(self.bld.compile_cmd(rt, build, main, obj), cwd=tree,
                               capture_output=True, text=True)
            self.refs[key] = code_of(obj) if r.returncode == 0 else None
        return self.refs[key]

    def run_one(self, tree, job):
        w, rt, build, main, m, n = job
        path = os.path.join(tree, m.path)
        orig = open(path).read()
        mutated = orig[:m.start] + m.new + orig[m.end:]
        ref = self.reference(tree, rt, build, main)
        obj, exe = os.path.join(tree, "mut.o"), os.path.join(tree, "stmbench")
        res = {"runs": [], "status": None}
        try:
            with open(path, "w") as f:
                f.write(mutated)
            r = subprocess.run(self.bld.compile_cmd(rt, build, main, obj), cwd=tree,
                               capture_output=True, text=True)
        finally:
            with open(path, "w") as f:
                f.write(orig)
        if r.returncode != 0:
            res["status"] = "not compiled"
            self.log(n, "compile", r.stderr)
            return res
        if ref is not None and code_of(obj) == ref:
            res["status"] = "same code"
            return res
        r = subprocess.run(self.bld.link_cmd(rt, main, obj, exe), capture_output=True,
                           text=True)
        if r.returncode != 0:
            res["status"] = "not compiled"
            self.log(n, "link", r.stderr)
            return res
        for threads, knobs in runs_of(w):
            cmd = [exe, "--runtime", rt, "--workload", w, "--threads", threads,
                   "--duration", str(self.duration), "--seed", "1", "--pin", "none",
                   "--gil-interval-us", "100"] + knobs
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=self.timeout)
                rc, text = p.returncode, p.stderr + p.stdout
            except subprocess.TimeoutExpired as e:
                rc, text = "timeout", (e.stderr or b"").decode(errors="replace") \
                    if isinstance(e.stderr, bytes) else (e.stderr or "")
            res["runs"].append((threads, rc))
            if rc == 0:
                continue
            res["status"] = "hung" if rc == "timeout" else "caught" if rc == 1 else "crashed"
            self.log(n, "run %s threads: %s" % (threads, rc), text)
            break
        if res["status"] is None:
            res["status"] = "survived"
        return res

    def log(self, n, what, text):
        with open(os.path.join(self.out, "logs", "mutant-%d.log" % n), "a") as f:
            f.write("== %s\n%s\n" % (what, text[-4000:]))

    def run_all(self, jobs, report):
        queue = list(jobs)
        results = {}

        def worker():
            tree = tempfile.mkdtemp(prefix="stmbench-mutants-")
            try:
                copy_tree(tree)
                while True:
                    with self.lock:
                        if not queue:
                            return
                        job = queue.pop(0)
                    res = self.run_one(tree, job)
                    with self.lock:
                        results[job[5]] = res
                        report(job, res, len(results))
            finally:
                shutil.rmtree(tree, ignore_errors=True)
        ths = [threading.Thread(target=worker) for _ in range(self.jobs)]
        for t in ths:
            t.start()
        for t in ths:
            t.join()
        return results


def runnable(exe, rt):
    """htm needs RTM (exit 3 without); the others need only to be in the build."""
    r = subprocess.run([exe, "--runtime", rt, "--workload", "bank", "--ops", "1", "--pin",
                        "none"], capture_output=True, text=True, timeout=120)
    return r.returncode != 3


# ---------------------------------------------------------------- the report

def summary_md(rows, argv, seconds):
    rev = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT,
                         capture_output=True, text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--"], cwd=ROOT).returncode
    per = OrderedDict()
    for r in rows:
        per.setdefault((r["workload"], r["runtime"]), []).append(r)
    out = ["# Mutation run: how many mutants each variant's checks catch", "",
           "Command: `%s`. Revision: %s%s. %s. %d mutants in %d s." % (
               " ".join(argv), rev, "-dirty" if dirty else "", machine(), len(rows), seconds),
           "", "Each mutant removes or weakens one synchronisation point (scripts/mutants.py: "
           "drop-block, drop-barrier, drop-lock, drop-unlock, early-unlock, drop-fence, "
           "relax), is rebuilt alone and run at 2, then 8 threads. *Points*: the variant's "
           "points that its threads reach (all of them under stm); *alone*: the points only "
           "setup, check and teardown reach, while no other thread runs (mutated under stm "
           "only, whose heap needs a transaction for any access); *mutants*: the points run, "
           "at most MUTANTS_MAX, the workload's own files first. *Broke*: the checks failed "
           "or the run crashed; *caught*: the checks failed (exit 1); *hung*: a deadlock or "
           "livelock (timeout); *survived*: both runs passed; *same code*: the compiler made "
           "the same code of it (not run).", "",
           "| workload | runtime | points | alone | mutants | not compiled | same code | broke | "
           "caught | crashed | hung | survived |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    tot = defaultdict(int)
    for (w, rt), rs in per.items():
        c = defaultdict(int)
        for r in rs:
            c[r["status"]] += 1
        out.append("| %s | %s | %s | %s | %d | %d | %d | %d | %d | %d | %d | %d |" % (
            w, rt, rs[0]["points"], rs[0]["alone"], len(rs), c["not compiled"], c["same code"],
            c["caught"] + c["crashed"], c["caught"], c["crashed"], c["hung"], c["survived"]))
    kinds = OrderedDict()
    for r in rows:
        kinds.setdefault((r["runtime"] if r["runtime"] == "locks" else "blocks",
                          r["kind"]), []).append(r["status"])
    out += ["", "By kind of mutation (all workloads):", "",
            "| variant | kind | mutants | same code | caught | crashed | hung | survived |",
            "|---|---|---:|---:|---:|---:|---:|---:|"]
    for (var, k), st in kinds.items():
        out.append("| %s | %s | %d | %d | %d | %d | %d | %d |" % (
            var, k, len(st), st.count("same code"), st.count("caught"), st.count("crashed"),
            st.count("hung"), st.count("survived")))
    surv = [r for r in rows if r["status"] == "survived"]
    if surv:
        out += ["", "Survivors (the point was not needed in these runs, or its breakage "
                "went unnoticed):", ""]
        for r in surv:
            out.append("- %s/%s %s:%s (%s) %s: %s" % (r["workload"], r["runtime"], r["file"],
                                                      r["line"], r["unit"], r["kind"],
                                                      r["desc"]))
    return "\n".join(out) + "\n"


def machine():
    try:
        model = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                 if l.startswith("model name")]
        return "%s, %d CPUs" % (model[0] if model else "unknown CPU", os.cpu_count() or 0)
    except OSError:
        return "unknown machine"


def env_num(name, default, conv=float, lo=0):
    v = os.environ.get(name, "")
    if not v:
        return default
    try:
        x = conv(v)
    except ValueError:
        x = None
    if x is None or x <= lo:
        sys.stderr.write("mutants: %s='%s' is not a number above %s\n" % (name, v, lo))
        sys.exit(2)
    return x


def main(argv):
    ap = argparse.ArgumentParser(prog=argv[0], description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", action="store_true",
                    help="print the mutation points (workload, runtime, kind, place, unit, "
                    "what) and exit")
    ap.add_argument("--root", default=ROOT, help="the source tree (--list)")
    a = ap.parse_args(argv[1:])
    if a.list:
        root = a.root
        try:
            for w, rt, build, main, pts, alone in variants(root, [], []):
                for m in pts:
                    print("%s\t%s\t%s\t%s:%d\t%s\t%s" % (w, rt, m.kind, m.path, m.line,
                                                         m.unit, m.desc))
        except sc.InputError as e:
            sys.stderr.write("mutants: %s\n" % e)
            return 2
        return 0
    wls = os.environ.get("MUTANTS_WORKLOADS", "").split()
    rts = os.environ.get("MUTANTS_RUNTIMES", "").split()
    cap = env_num("MUTANTS_MAX", 16, int, -1)
    duration = env_num("MUTANTS_DURATION", 0.5)
    timeout = env_num("MUTANTS_TIMEOUT", 8.0)
    jobs = env_num("MUTANTS_JOBS", 1, int)
    out = os.path.join(ROOT, os.environ.get("MUTANTS_OUT", "results/mutants"))
    bld = Build()
    if not bld.ready():
        sys.stderr.write("mutants: no build to work from (run it as `make mutants`, which "
                         "builds first and passes the build's commands)\n")
        return 3
    exe = os.path.join(ROOT, bld.build, "stmbench")
    listing = subprocess.run([exe, "--list"], capture_output=True, text=True).stdout
    built = [l.split()[1] for l in listing.splitlines() if l.startswith("runtime ")]
    known_w = [l.split()[1] for l in listing.splitlines() if l.startswith("workload ")]
    for x in wls:
        if x not in known_w:
            sys.stderr.write("mutants: MUTANTS_WORKLOADS: unknown workload '%s' (allowed: %s)\n"
                             % (x, " ".join(known_w)))
            return 2
    for x in rts:
        if x not in built or x == "seq":
            sys.stderr.write("mutants: MUTANTS_RUNTIMES: '%s' is not a runtime of this build "
                             "with synchronisation (allowed: %s)\n"
                             % (x, " ".join(r for r in built if r != "seq")))
            return 2
    run_rts = [r for r in (rts or built) if r in built and r != "seq"]
    skipped = [r for r in run_rts if not runnable(exe, r)]
    for r in skipped:
        print("mutants: skipped %s: this machine cannot run it (exit 3)" % r)
    run_rts = [r for r in run_rts if r not in skipped]
    os.makedirs(os.path.join(out, "logs"), exist_ok=True)
    for f in os.listdir(os.path.join(out, "logs")):
        os.remove(os.path.join(out, "logs", f))
    vs = variants(ROOT, wls, run_rts)
    jobsl, npoints = [], {}
    for w, rt, build, main, pts, alone in vs:
        npoints[(w, rt)] = (len(pts), alone)
        for m in choose(pts, cap, "%s/%s" % (w, rt), w):
            jobsl.append((w, rt, build, main, m, len(jobsl) + 1))
    print("mutants: %d mutants of %d variants (at most %d each), %d at a time, runs of %ss "
          "(timeout %ss), into %s/" % (len(jobsl), len(vs), cap, jobs, duration, timeout,
                                       os.path.relpath(out, ROOT)))
    t0 = datetime.datetime.now()

    def report(job, res, k):
        w, rt, build, main, m, n = job
        print("[%d/%d] %-8s %-6s %-13s %s:%d %s" % (k, len(jobsl), w, rt, m.kind, m.path,
                                                    m.line, res["status"]), flush=True)
    runner = Runner(bld, out, duration, timeout, jobs)
    results = runner.run_all(jobsl, report)
    seconds = int((datetime.datetime.now() - t0).total_seconds())
    rows = []
    for w, rt, build, main, m, n in jobsl:
        res = results[n]
        runs = " ".join("%s:%s" % x for x in res["runs"])
        rows.append(OrderedDict([
            ("n", n), ("workload", w), ("runtime", rt), ("points", npoints[(w, rt)][0]),
            ("alone", npoints[(w, rt)][1]),
            ("kind", m.kind), ("file", m.path), ("line", m.line), ("unit", m.unit),
            ("desc", m.desc), ("status", res["status"]), ("runs", runs)]))
    with open(os.path.join(out, "mutants.csv"), "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(list(rows[0].keys()) if rows else ["n"])
        for r in rows:
            wr.writerow(list(r.values()))
    argv_s = ["make mutants"] + ["%s=%s" % (k, v) for k, v in sorted(os.environ.items())
                                 if k.startswith("MUTANTS_")]
    text = summary_md(rows, argv_s, seconds)
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(text)
    print()
    print(text.split("\n\nBy kind")[0])
    print("mutants: %d mutants in %d s; %s/summary.md, mutants.csv, logs/" % (
        len(rows), seconds, os.path.relpath(out, ROOT)))
    return 0
