"""Today's results scripts against their outputs before issue 32 (tests/golden/, made at
5501e6b by the scripts as they were; tests/golden/README.md says how).

The report, regress and scaling tables must be the same to the byte: the move into the
package changed no figure. regress-ab's statistics now come from scipy.stats, so its
outputs are compared cell by cell with these tolerances:

  interval (lo, hi)  0.01 absolute on the ratio: the bootstrap draws its 4000
                     resamples from numpy's generator instead of Python's random, so
                     the percentiles are a Monte-Carlo estimate from other draws (on
                     the fixture they agree to the printed digits).
  p                  0.001: the exact signed-rank distribution, scipy's instead of the
                     enumeration; equal but for the rounding of the last printed digit.
  p_U                0.001 where A's and B's samples share no value. Where they do,
                     U is a half-integer and the exact distribution (without ties, as
                     before) is read at its floor by scipy, at its ceiling before: the
                     new p is never below the old one (more conservative) and at most
                     one value of U's null distribution above (0.1 for these sizes).
                     Measured throughputs (floats) do not tie; the fixture's one
                     all-equal figure and two judge cases do.
  everything else    the same: ratios are medians, verdicts must not move.
"""
import csv
import os
import unittest

from helpers import FIXTURES, GOLDEN, ROOT, TempDirCase, read, stmbench

from stmbench import ab

TOL_INTERVAL = 0.01
TOL_P = 0.001
TOL_P_TIED = 0.1

BASELINE = os.path.join(ROOT, "results", "baseline")
SCALING = os.path.join(ROOT, "results", "scaling-20261206-0d87469")
SCALING_CONFIGS = ("rbtree --size 1024 --range 2048 --update 20;"
                   "hashmap --size 1024 --range 2048 --update 20;"
                   "hashmap --size 1024 --range 2048 --update 20 --buckets 131072;"
                   "bank --transfer-pct 100;interp --program counters --switch-interval 100")


class ReportGolden(TempDirCase):
    """The report of results/baseline, before and after the move (issue 32's "Done
    when": the same tables on the same CSVs). It reads conflicts.csv.gz as committed."""

    def test_report_of_the_baseline(self):
        for f in ("runs.csv", "sweep.csv", "runs.context.json", "sweep.context.json",
                  "programmer-cost.md", "mutants.md", "conflicts.csv.gz"):
            os.symlink(os.path.join(BASELINE, f), self.path(f))
        rc, out = stmbench("report", "all", self.tmp)
        self.assertEqual(rc, 0, out)
        for f in ("overhead.md", "overhead.csv", "conflicts.md"):
            with self.subTest(file=f):
                self.assertEqual(read(self.path(f)), read(os.path.join(GOLDEN, "report", f)))


class RegressGolden(unittest.TestCase):
    def test_regress_tables(self):
        codes = dict(line.split() for line in read(os.path.join(GOLDEN, "regress",
                                                                "exit-codes.txt")).splitlines())
        for name, code in codes.items():
            with self.subTest(results=name):
                rc, out = stmbench("regress", "results/%s/runs.csv" % name, "results/baseline")
                self.assertEqual(rc, int(code))
                self.assertEqual(out, read(os.path.join(GOLDEN, "regress", name + ".txt")))


class ScalingGolden(unittest.TestCase):
    def test_scaling_table(self):
        rc, out = stmbench("scaling", SCALING, "--threads", 2, "--cores", 2,
                           "--runtimes", "stm locks", "--configs", SCALING_CONFIGS)
        self.assertEqual(rc, 0, out)
        self.assertEqual(out, read(os.path.join(GOLDEN, "scaling", "scaling.md")))
        self.assertEqual(out, read(os.path.join(SCALING, "scaling.md")))


class InterpMemoryGolden(unittest.TestCase):
    """make bench's interp_memory.md from its committed CSV: the table as committed
    (what 5501e6b's scripts/interp_memory.py made of it too)."""

    def test_interp_memory_table(self):
        rc, out = stmbench("interp-memory", BASELINE + "/interp_memory.csv", "--config",
                           BASELINE + "/interp_memory.config")
        self.assertEqual(rc, 0, out)
        self.assertEqual(out, read(os.path.join(BASELINE, "interp_memory.md")))


def tied(a, b):
    return bool(set(a) & set(b))


class AbGolden(TempDirCase):
    def assert_cells(self, new, old, tied_samples, where):
        """new, old: {name: printed value} of one figure."""
        self.assertEqual(sorted(new), sorted(old), where)
        for k in new:
            n, o = new[k], old[k]
            if k in ("lo", "hi") and n not in ("", "-"):
                self.assertAlmostEqual(float(n), float(o), delta=TOL_INTERVAL, msg=where + k)
            elif k == "p" and n not in ("", "-"):
                self.assertAlmostEqual(float(n), float(o), delta=TOL_P, msg=where + k)
            elif k == "p_u" and n not in ("", "-"):
                if tied_samples:
                    self.assertGreaterEqual(float(n), float(o) - TOL_P, where + k)
                    self.assertLessEqual(float(n), float(o) + TOL_P_TIED, where + k)
                else:
                    self.assertAlmostEqual(float(n), float(o), delta=TOL_P, msg=where + k)
            elif k == "interval" and n not in ("-", "(exact)"):
                for x, y in zip(n.split("-"), o.split("-")):
                    self.assertAlmostEqual(float(x), float(y), delta=TOL_INTERVAL,
                                           msg=where + k)
            else:
                self.assertEqual(n, o, where + k)

    def verdict(self):
        fx = os.path.join(FIXTURES, "ab")
        rc, out = stmbench("ab", "verdict", "--a", fx + "/A.csv", "--b", fx + "/B.csv",
                           "--counts-A", fx + "/counts-A.csv", "--counts-B",
                           fx + "/counts-B.csv", "--meta", fx + "/meta.txt", "--out", self.tmp)
        self.assertEqual("rc=%d\n" % rc, read(os.path.join(GOLDEN, "ab", "verdict.rc")), out)
        A, _ = ab.read_runs(fx + "/A.csv")
        B, _ = ab.read_runs(fx + "/B.csv")
        ties = {}
        for key in set(A) & set(B):
            seeds = set(A[key]) & set(B[key])
            ties[key] = tied([A[key][s] for s in seeds], [B[key][s] for s in seeds])
        return ties

    def test_verdict_md(self):
        ties = self.verdict()
        new = read(self.path("verdict.md")).splitlines()
        old = read(os.path.join(GOLDEN, "ab", "verdict.md")).splitlines()
        self.assertEqual(len(new), len(old))
        cols = ["workload", "runtime", "figure", "a", "b", "ratio", "interval", "p", "p_u",
                "tolerance", "verdict"]
        for n, o in zip(new, old):
            if not n.startswith("| ") or n.startswith("| workload"):
                self.assertEqual(n, o)
                continue
            nc = dict(zip(cols, [c.strip() for c in n.strip("|").split("|")]))
            oc = dict(zip(cols, [c.strip() for c in o.strip("|").split("|")]))
            th = int(nc["figure"].split()[1]) if nc["figure"].startswith("ops/s") else 1
            self.assert_cells(nc, oc, ties.get((nc["runtime"], nc["workload"], th), False),
                              "%s %s %s: " % (nc["workload"], nc["runtime"], nc["figure"]))

    def test_verdict_csv(self):
        self.verdict()
        with open(self.path("verdict.csv"), newline="") as f:
            new = list(csv.DictReader(f))
        with open(os.path.join(GOLDEN, "ab", "verdict.csv"), newline="") as f:
            old = list(csv.DictReader(f))
        self.assertEqual(len(new), len(old))
        for n, o in zip(new, old):
            self.assert_cells(n, o, False, "%s %s %s: " % (n["workload"], n["runtime"],
                                                          n["figure"]))

    def test_judge(self):
        cases = read(os.path.join(GOLDEN, "ab", "judge-cases.txt")).splitlines()
        outs = read(os.path.join(GOLDEN, "ab", "judge-out.txt")).splitlines()
        self.assertEqual(len(cases), len(outs))
        for case, want in zip(cases, outs):
            args = case.split()
            rc, got = stmbench("ab", "judge", *args)
            self.assertEqual(rc, 0, got)
            new = dict(kv.split("=") for kv in got.split())
            old = dict(kv.split("=") for kv in want.split())
            xa, xb = ([float(x) for x in s.split(",")] for s in args[-2:])
            self.assert_cells(new, old, tied(xa, xb), case + ": ")

    def test_noise(self):
        rc, out = stmbench("ab", "noise", os.path.join(FIXTURES, "ab"))
        self.assertEqual(rc, 0, out)
        new, old = out.splitlines(), read(os.path.join(GOLDEN, "ab", "noise-out.txt")).splitlines()
        self.assertEqual(len(new), len(old))
        for n, o in zip(new, old):
            # interval half-widths and bounds: the bootstrap's tolerance; the rest equal
            nw, ow = n.replace(",", " ").split(), o.replace(",", " ").split()
            self.assertEqual(len(nw), len(ow))
            for x, y in zip(nw, ow):
                try:
                    self.assertAlmostEqual(float(x), float(y), delta=TOL_INTERVAL, msg=n)
                except ValueError:
                    self.assertEqual(x, y)


if __name__ == "__main__":
    unittest.main()
