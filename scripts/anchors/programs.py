#!/usr/bin/env python3
"""scripts/anchors/programs.py PROGRAM [--threads T] [--duration D] [--iterations N]

The four object-model programs of interp (workloads/interp/programs.c: arith,
memo-cache, parallel-map, work-queue) as a Python programmer writes them, run by
real interpreters so that `make anchors` (scripts/anchors.sh, docs/anchors.md) can
set the model's gil rows beside CPython's and PyPy's.

Each program keeps the VM program's shared state and arithmetic: ITER (--iterations,
default 1000, as the harness's), the global `scale` = 1000, the shared dict `cache`
(64 keys, each filled once by slow(k), k * k additions of 1000, then + 7), the shared
list `tasks`, and one threading.Lock for the program's `with atomic:` section (as in
CPython and PyPy, where the GIL alone would not make `total += x` atomic). Results
that the VM keeps per thread (`.per_thread int`) are one slot per thread here.

The driver starts T threads (threading) that wait at a barrier; when the last one
arrives the clock starts and every thread repeats the program's run until D seconds
have passed (the deadline is read between runs: a run in progress is finished, as
the VM drains its run in progress after the stop). seconds is the time from the
barrier to the last join (the harness's duration_s is measured the same way); runs is
the number of runs the threads completed. Then the program's `.expect` lines of
programs.c are checked against the shared state, with RUNS the runs of each thread
(per-thread results) or of all threads together (shared ones).

Output, one line on stdout:
  program=P interpreter=I threads=T seconds=S runs=R runs_per_s=X check=pass
with I as cpython-3.11.2 or pypy-7.3.11. A failed expectation prints a line naming it
on stderr (and check=fail on stdout).

Runs under CPython 3 and PyPy 3 (7.3: Python 3.9's language, standard library only).
Exit status: 0 the check passed, 1 a check failed (or a thread raised), 2 bad usage.
"""
import argparse
import platform
import sys
import threading
import time

PROGRAMS = ("arith", "memo-cache", "parallel-map", "work-queue")

# ---- the programs' state (reset by setup() before each sitting)
ITER = 1000
scale = 1000
cache = {}
tasks = []
lock = threading.Lock()
total = 0          # parallel-map
count = 0          # parallel-map
processed = 0      # work-queue
checksum = 0       # work-queue
own = []           # arith's `total` and memo-cache's `got`: one slot per thread


def setup(iterations, threads):
    global ITER, scale, cache, tasks, total, count, processed, checksum, own
    ITER = iterations
    scale = 1000
    cache = {}
    tasks = []
    total = count = processed = checksum = 0
    own = [0] * threads


# ---- the four programs: one complete run each; `bump` is added to what the run
# publishes (0, except under --perturb: the check must then fail)

def arith(tid, bump):
    acc = 0
    for i in range(ITER):
        a = i * scale + 12345
        acc += (a * 3 - a) - a
    own[tid] += acc + bump                  # total += acc (per thread)


def slow(k):
    r = 0
    for j in range(k * k):
        r += 1000
    return r + 7


def memo_cache(tid, bump):
    acc = 0
    for i in range(ITER):
        k = i % 64
        if k not in cache:
            cache[k] = slow(k)
        acc += cache[k] * 2
    own[tid] += acc + bump                  # got += acc (per thread)


def parallel_map(tid, bump):
    global total, count
    mine = []
    for i in range(ITER):
        mine.append(i * i)
    with lock:                               # with atomic:
        for x in mine:
            total += x
        count += len(mine) + bump


def work_queue(tid, bump):
    global processed, checksum
    for i in range(ITER):
        tasks.append(1000 + i)
    n = 0
    s = 0
    while True:
        # the VM's LIST_POP: the last task, 0 when empty, in one step (`if tasks:
        # tasks.pop()` would race with the other threads' pops)
        try:
            t = tasks.pop()
        except IndexError:
            t = 0
        if not t:
            break
        pair = [t]
        pair.append(t * 3)
        s += pair[1] + 7
        n += 1
    with lock:                               # with atomic:
        processed += n + bump
        checksum += s


RUN = {"arith": arith, "memo-cache": memo_cache, "parallel-map": parallel_map,
       "work-queue": work_queue}


# ---- the .expect lines of programs.c: (text, per_thread, value now, wanted value)

def expectations(program, runs):
    """[(text, thread or None, got, want)...]: each `.expect` of the program evaluated on
    the state now; runs: the complete runs of each thread."""
    n = ITER
    every = sum(runs)
    out = []
    if program == "arith":
        for tid, r in enumerate(runs):
            out.append(("total = RUNS * (1000 * (ITER * (ITER - 1) / 2) + 12345 * ITER)",
                        tid, own[tid], r * (1000 * (n * (n - 1) // 2) + 12345 * n)))
    elif program == "memo-cache":
        q, rem = n // 64, n % 64
        per_run = 2 * (q * (1000 * 85344 + 7 * 64)
                       + 1000 * ((rem - 1) * rem * (2 * rem - 1) // 6) + 7 * rem)
        for tid, r in enumerate(runs):
            out.append(("got = RUNS * 2 * (Q * (1000 * 85344 + 7 * 64) + 1000 * ((R - 1) * R "
                        "* (2 * R - 1) / 6) + 7 * R)", tid, own[tid], r * per_run))
    elif program == "parallel-map":
        out.append(("count = RUNS * ITER", None, count, every * n))
        out.append(("total = RUNS * ((ITER - 1) * ITER * (2 * ITER - 1) / 6)", None, total,
                    every * ((n - 1) * n * (2 * n - 1) // 6)))
    else:
        out.append(("processed = RUNS * ITER", None, processed, every * n))
        out.append(("checksum = RUNS * (3 * (1000 * ITER + ITER * (ITER - 1) / 2) + 7 * ITER)",
                    None, checksum, every * (3 * (1000 * n + n * (n - 1) // 2) + 7 * n)))
        out.append(("len(tasks) = 0", None, len(tasks), 0))
    return out


def check(program, runs, threads):
    """The first failed expectation as a message, or None when every one holds."""
    for text, tid, got, want in expectations(program, runs):
        if got != want:
            who = "" if tid is None else " for thread %d" % tid
            r = sum(runs) if tid is None else runs[tid]
            return ("anchors %s: `.expect %s` fails%s: %d != %d (RUNS=%d, THREADS=%d, "
                    "ITER=%d)" % (program, text, who, got, want, r, threads, ITER))
    return None


# ---- the driver

def interpreter():
    """cpython-3.11.2, pypy-7.3.11, or the implementation's name and version."""
    impl = platform.python_implementation().lower()
    if impl == "pypy":
        v = sys.pypy_version_info
        return "pypy-%d.%d.%d" % (v.major, v.minor, v.micro)
    return "%s-%s" % (impl, platform.python_version())


def sitting(program, threads, duration, perturb):
    """Runs the program on `threads` threads for `duration` seconds: (seconds, runs per
    thread, errors raised in the threads)."""
    body = RUN[program]
    runs = [0] * threads
    errors = []
    clock = {}

    def start():                             # the barrier's action: once, last arrival
        clock["t0"] = time.perf_counter()
        clock["deadline"] = clock["t0"] + duration

    gate = threading.Barrier(threads, action=start)

    def worker(tid):
        try:
            gate.wait()
            deadline = clock["deadline"]
            done = 0
            while time.perf_counter() < deadline:
                body(tid, 1 if perturb and tid == 0 and done == 0 else 0)
                done += 1
            runs[tid] = done
        except Exception as e:               # reported, and the sitting fails
            errors.append("thread %d: %s: %s" % (tid, type(e).__name__, e))

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return time.perf_counter() - clock.get("t0", time.perf_counter()), runs, errors


def positive(kind, minimum):
    def parse(s):
        try:
            v = kind(s)
        except ValueError:
            raise argparse.ArgumentTypeError("'%s' is not a number" % s)
        if not v >= minimum or v != v or v == float("inf"):
            raise argparse.ArgumentTypeError("'%s' must be at least %s" % (s, minimum))
        return v
    return parse


def main(argv):
    ap = argparse.ArgumentParser(
        prog="programs.py", description="interp's object-model programs in Python, "
        "run on T threads for D seconds: runs per second and the programs' checks")
    ap.add_argument("program", choices=PROGRAMS)
    ap.add_argument("--threads", type=positive(int, 1), default=1, metavar="T",
                    help="threads (default 1)")
    ap.add_argument("--duration", type=positive(float, 1e-6), default=1.0, metavar="D",
                    help="seconds (default 1)")
    ap.add_argument("--iterations", type=positive(int, 1), default=1000, metavar="N",
                    help="ITER, the loop count of one run (default 1000)")
    # tests only: thread 0's first run publishes one more than it computed
    ap.add_argument("--perturb", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)                  # bad usage: argparse's message, exit 2
    setup(a.iterations, a.threads)
    seconds, runs, errors = sitting(a.program, a.threads, a.duration, a.perturb)
    problem = "; ".join(errors) if errors else check(a.program, runs, a.threads)
    n = sum(runs)
    print("program=%s interpreter=%s threads=%d seconds=%.6f runs=%d runs_per_s=%.3f "
          "check=%s" % (a.program, interpreter(), a.threads, seconds, n,
                        n / seconds if seconds > 0 else 0.0, "fail" if problem else "pass"))
    if problem:
        print(problem if not errors else "anchors %s: %s" % (a.program, problem),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
