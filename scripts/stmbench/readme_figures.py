"""stmbench readme-figures [README.md [results/baseline]] - checks that the
figures README.md quotes in "## The figures" are those of the committed make bench
results (results/baseline), made on the machine the README names.

Checked, each as one case:
  machine   the section names the machine and revision of overhead.md's header
            ("Machine: AMD EPYC, 2 cores. Revision: 66265ab5a3b1.") as "... on the
            2-core AMD EPYC VM" and "at revision 66265ab" (the first 7 characters;
            a revision marked -dirty, "at revision 66265ab with uncommitted changes");
  n%        the README's n% table equals overhead.md's, cell by cell;
  2T/1T     every "<runtime> ×R" of the "2 threads over 1 thread" paragraph equals the
            "× own" of that runtime at 2 threads in overhead.md's table of the workload
            (rounded to 2 decimals as printed).
Prints one line per case in cmocka's words and a summary; exit 1 when one fails,
2 on bad input (a file missing, a section not found).
"""
import argparse
import re
import sys


def die(msg):
    print("check-readme-figures: " + msg, file=sys.stderr)
    sys.exit(2)


def read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        die("cannot read %s: %s" % (path, e.strerror))


def table_after(text, marker):
    """The first markdown table after `marker`: {row label: {column: cell}}."""
    i = text.find(marker)
    if i < 0:
        return None
    rows = []
    for line in text[i:].splitlines()[1:]:
        s = line.strip()
        if s.startswith("|"):
            rows.append([c.strip() for c in s.strip("|").split("|")])
        elif rows:
            break
    if len(rows) < 3:
        return None
    head = rows[0]
    return {r[0]: dict(zip(head[1:], r[1:])) for r in rows[2:]}


def norm(cell):
    return cell.replace("\u2212", "-").replace(" ", "")


def own_speedups(overhead):
    """{workload: {runtime: '×R' at 2 threads}} from overhead.md's per-workload tables."""
    out = {}
    for m in re.finditer(r"^### (\w+)\n", overhead, re.M):
        w = m.group(1)
        t = overhead[m.end():]
        nxt = re.search(r"^##", t, re.M)
        t = t[: nxt.start()] if nxt else t
        for line in t.splitlines():
            c = [x.strip() for x in line.strip().strip("|").split("|")]
            if len(c) > 4 and c[1] == "2" and c[4].startswith("\u00d7"):
                out.setdefault(w, {})[c[0]] = c[4]
    return out


def main(argv):
    ap = argparse.ArgumentParser(prog=argv[0], description=__doc__.split("\n\n")[0])
    ap.add_argument("readme", nargs="?", default="README.md")
    ap.add_argument("base", nargs="?", default="results/baseline")
    a = ap.parse_args(argv[1:])
    readme_path, base = a.readme, a.base
    readme = read(readme_path)
    overhead = read(base + "/overhead.md")
    i = readme.find("## The figures")
    if i < 0:
        die("%s has no section '## The figures'" % readme_path)
    j = readme.find("\n## ", i + 1)
    sec = readme[i: j if j > 0 else len(readme)]

    cases = []
    m = re.search(r"Machine: ([^,]+), (\d+) cores\. Revision: ([0-9a-f]+)(-dirty)?\.", overhead)
    if not m:
        die("%s/overhead.md names no machine and revision" % base)
    cpu, cores, rev = m.group(1), m.group(2), m.group(3)[:7]
    want = ["%s-core %s" % (cores, cpu), "revision %s" % rev]
    if m.group(4):  # the bench ran with uncommitted changes: the README must say so
        want[1] = "revision %s with uncommitted changes" % rev
    flat = " ".join(sec.split())
    missing = [w for w in want if w not in flat]
    cases.append(("machine and revision (%s)" % ", ".join(want),
                  "" if not missing else "README does not say: " + ", ".join(missing)))

    mine = table_after(sec, "**n% slower than single-thread**")
    theirs = table_after(overhead, "## n% slower than single-thread")
    if mine is None or theirs is None:
        die("an n% table is missing (README or overhead.md)")
    diffs = []
    for w, row in theirs.items():
        for rt, cell in row.items():
            got = mine.get(w, {}).get(rt)
            if got is None or norm(got) != norm(cell):
                diffs.append("%s/%s: README %s, results %s" % (w, rt, got, cell))
    cases.append(("n% table equals overhead.md's", "; ".join(diffs)))

    k = sec.find("**2 threads over 1 thread**")
    if k < 0:
        die("README has no '2 threads over 1 thread' paragraph")
    para = re.sub(r"\([^)]*\)", "", sec[k:].split("\n\n")[0])
    speed = own_speedups(overhead)
    diffs, n = [], 0
    for part in para.split("**", 2)[-1].split(";"):
        words = part.replace(":", " ").split()
        ws = [x for x in words if x in speed]
        if not ws:
            continue
        w = ws[0]
        for rt, r in re.findall(r"(\w+) \u00d7([0-9]+(?:\.[0-9]+)?)", part):
            n += 1
            exp = speed[w].get(rt)
            if exp is None or exp != "\u00d7" + r:
                diffs.append("%s %s: README \u00d7%s, results %s" % (w, rt, r, exp))
    if n == 0:
        diffs.append("no 'runtime \u00d7R' figures found")
    cases.append(("2 threads over 1 thread: %d figures equal overhead.md's" % n,
                  "; ".join(diffs)))

    failed = 0
    for name, err in cases:
        print("[ RUN      ] %s" % name)
        if err:
            failed += 1
            print("  %s" % err)
            print("[  FAILED  ] %s" % name)
        else:
            print("[       OK ] %s" % name)
    print("[==========] %d test(s) run." % len(cases))
    print("[  PASSED  ] %d test(s)." % (len(cases) - failed))
    if failed:
        print("[  FAILED  ] %d test(s), listed above." % failed)
    return 1 if failed else 0
