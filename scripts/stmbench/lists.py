"""stmbench.lists - the names the C sources define, in their order, so that no script
lists them by hand:

  runtimes, workloads  as `stmbench --list` prints them (STMBENCH, else build/stmbench
                       or build/release/stmbench); without a binary, read from the
                       X-macro lists of runtime/runtimes.h themselves
  CSV columns          the X-macro lists of harness/columns.h (results.c writes them)
"""

import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _from_binary():
    cands = [os.environ.get("STMBENCH", ""), os.path.join(ROOT, "build", "stmbench"),
             os.path.join(ROOT, "build", "release", "stmbench")]
    for b in cands:
        if not b or not os.access(b, os.X_OK):
            continue
        try:
            out = subprocess.run([b, "--list"], capture_output=True, text=True,
                                 timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        rts = [ln.split()[1] for ln in out.splitlines() if ln.startswith("runtime ")]
        wls = [ln.split()[1] for ln in out.splitlines() if ln.startswith("workload ")]
        if rts and wls:
            return rts, wls
    return None


def xmacro(path, name):
    """The entries of `#define name(X, a)` in a C header: for each X(a, f1, f2, ...)
    line up to the macro's last continued line, the tuple (f1, f2, ...)."""
    out = []
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return out
    m = re.search(r"^#define %s\(X, a\)((?:.*\\\n)*.*)$" % re.escape(name), text, re.M)
    if m:
        for args in re.findall(r"\bX\(a,\s*([^)]*)\)", m.group(1)):
            out.append(tuple(x.strip().strip('"') for x in args.split(",")))
    return out


def _from_header():
    h = os.path.join(ROOT, "runtime", "runtimes.h")
    return ([e[0] for e in xmacro(h, "SYNC_RUNTIMES")],
            [e[0] for e in xmacro(h, "SYNC_WORKLOADS")])


RUNTIME_ORDER, WORKLOAD_ORDER = _from_binary() or _from_header()


def order_key(order):
    return lambda name: (order.index(name) if name in order else len(order), name)


def runtime_key(name):
    return order_key(RUNTIME_ORDER)(name)


def workload_key(name):
    return order_key(WORKLOAD_ORDER)(name)


def columns(which):
    """The columns of a results file as harness/columns.h lists them, in file order:
    [(name, kind)...], kind "req" (in every file of that kind: a reader may require it)
    or "opt" (added later: an older file may lack it). which: "RESULTS_COLUMNS" (the
    runs CSV) or "CONFLICT_COLUMNS" (the conflict log)."""
    cols = [(e[0], e[1]) for e in xmacro(os.path.join(ROOT, "harness", "columns.h"), which)]
    if not cols:
        raise RuntimeError("harness/columns.h: no %s list found" % which)
    return cols
