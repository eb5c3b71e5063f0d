"""make anchors' Python parts (docs/anchors.md): `stmbench anchors` (the model's runs
derived from its bytecodes, vm-row on harness rows, the table's medians, ratios and
differences from the model, exit 2 on bad input) and scripts/anchors/programs.py's
check of the programs' state (in this process: runs in one thread, one result
changed). tests/test_anchors.sh runs the scripts themselves and checks the bytecode
counts against the binary. No timing is asserted."""
import csv
import os
import sys

from helpers import SCRIPTS, TempDirCase, stmbench, write

from stmbench import anchors

sys.path.insert(0, os.path.join(SCRIPTS, "anchors"))
import programs  # noqa: E402

HEADER = "program,interpreter,threads,repeat,seconds,runs,runs_per_s\n"


class VmRuns(TempDirCase):
    def test_whole_runs(self):
        for prog, (a, b) in anchors.PER_RUN.items():
            for it in (1, 10, 1000):
                per, once = a * it + b, anchors.once(prog, it)
                self.assertEqual(anchors.vm_runs(prog, it, 1, once + 17 * per), 17, prog)
                self.assertEqual(anchors.vm_runs(prog, it, 2, 0), 0)

    def test_memo_cache_fills_once(self):
        # keys 0..63 at ITER >= 64, slow(k) = 15 k^2 + 19 bytecodes each: 15 * 85344 + 19 * 64
        self.assertEqual(anchors.once("memo-cache", 1000), 15 * 85344 + 19 * 64)
        self.assertEqual(anchors.once("memo-cache", 3), 19 + 34 + 79)
        self.assertEqual(anchors.once("arith", 1000), 0)

    def test_no_whole_number_of_runs(self):
        per = 25 * 1000 + 13
        with self.assertRaisesRegex(ValueError, "no whole number of runs"):
            anchors.vm_runs("arith", 1000, 2, 5 * per + 1)
        with self.assertRaisesRegex(ValueError, "no bytecode count"):
            anchors.vm_runs("counters", 1000, 1, 100)
        once = anchors.once("memo-cache", 1000)
        with self.assertRaises(ValueError):          # one thread: no key computed twice
            anchors.vm_runs("memo-cache", 1000, 1, once + 5 * per + 12506)
        # two threads: a key computed twice adds its slow(k), rounded down
        self.assertEqual(anchors.vm_runs("memo-cache", 1000, 2, once + 5 * per + 12506), 5)

    def harness_csv(self, rows):
        cols = ["run_id", "runtime", "workload", "params", "threads", "duration_s", "ops",
                "check"]
        path = self.path("h.csv")
        with open(path, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(cols)
            for r in rows:
                w.writerow([r.get(c, "") for c in cols])
        return path

    def test_vm_row(self):
        per = 30 * 1000 + 23
        p = "program=parallel-map;switch-interval=100;iterations=1000;memory=refcount"
        path = self.harness_csv([
            {"runtime": "gil", "workload": "interp", "params": p, "threads": "1",
             "duration_s": "1", "ops": "1", "check": "fail"},
            {"runtime": "gil", "workload": "interp", "params": p, "threads": "2",
             "duration_s": "0.5", "ops": str(300 * per), "check": "pass"}])
        rc, out = stmbench("anchors", "vm-row", path, "--repeat", 3)
        self.assertEqual((rc, out), (0, "parallel-map,stmbench-gil-refcount,2,3,0.500000,"
                                        "300,600.000\n"))

    def test_vm_row_refuses(self):
        p = "program=arith;iterations=1000;memory=refcount"
        row = {"runtime": "gil", "workload": "interp", "params": p, "threads": "1",
               "duration_s": "1", "ops": str(25013 * 4), "check": "fail"}
        self.assertEqual(stmbench("anchors", "vm-row", self.harness_csv([row]),
                                  "--repeat", 1)[0], 1)
        row.update(check="pass", ops=str(25013 * 4 + 1))
        self.assertEqual(stmbench("anchors", "vm-row", self.harness_csv([row]),
                                  "--repeat", 1)[0], 1)
        row.update(workload="bank", params="accounts=1024")
        rc, out = stmbench("anchors", "vm-row", self.harness_csv([row]), "--repeat", 1)
        self.assertEqual(rc, 2, out)
        self.assertIn("not a run of interp", out)
        self.assertEqual(stmbench("anchors", "vm-row", self.harness_csv([]),
                                  "--repeat", 1)[0], 2)


class Table(TempDirCase):
    def table(self, rows, *extra):
        path = self.path("anchors.csv")
        write(path, HEADER + "".join(r + "\n" for r in rows))
        return stmbench("anchors", "table", path, *extra)

    @staticmethod
    def row(md, section, label):
        part = md.split("## %s\n" % section, 1)[1].split("\n## ", 1)[0]
        line = [ln for ln in part.splitlines() if ln.startswith("| %s |" % label)][0]
        return [c.strip() for c in line.strip("|").split("|")]

    def test_medians_ratios_differences(self):
        rows = []
        # the model: 1T 100 (median of 90, 100, 130), 2T 80 -> 0.80
        for rep, (one, two) in enumerate([(90, 80), (100, 80), (130, 80)], 1):
            rows.append("arith,stmbench-gil-refcount,1,%d,1,%d,%d" % (rep, one, one))
            rows.append("arith,stmbench-gil-refcount,2,%d,1,%d,%d" % (rep, two, two))
        # CPython: 400 and 380 -> 0.95, 0.15 above the model, 4x its 1T rate
        rows += ["arith,cpython-3.11.2,1,1,1,400,400", "arith,cpython-3.11.2,2,1,1,380,380"]
        # PyPy first in the file, listed after CPython; 2T/1T 0.5: -0.30
        rows = ["arith,pypy-7.3.11,1,1,1,1000,1000", "arith,pypy-7.3.11,2,1,1,500,500"] + rows
        rc, md = self.table(rows)
        self.assertEqual(rc, 0, md)
        self.assertEqual(self.row(md, "arith", "stmbench-gil-refcount (model)"),
                         ["stmbench-gil-refcount (model)", "100", "80", "0.80", "–", "–", "3/3"])
        self.assertEqual(self.row(md, "arith", "cpython-3.11.2"),
                         ["cpython-3.11.2", "400", "380", "0.95", "+0.15", "4.00×", "1/1"])
        self.assertEqual(self.row(md, "arith", "pypy-7.3.11"),
                         ["pypy-7.3.11", "1000", "500", "0.50", "-0.30", "10.00×", "1/1"])
        order = [ln.split("|")[1].strip() for ln in md.splitlines() if ln.startswith("| ")
                 and "runs/s" not in ln]
        self.assertEqual(order, ["stmbench-gil-refcount (model)", "cpython-3.11.2",
                                 "pypy-7.3.11"])

    def test_missing_points_and_program_order(self):
        rows = ["work-queue,cpython-3.11.2,1,1,1,10,10",
                "arith,stmbench-gil-refcount,1,1,1,10,10",
                "arith,cpython-3.11.2,1,1,1,20,20", "arith,cpython-3.11.2,2,1,1,30,30"]
        config = self.path("anchors.config")
        write(config, "line_transfer_start=x\n\n/usr/bin/python3: Python 3.11.2\n")
        rc, md = self.table(rows, "--config", config)
        self.assertEqual(rc, 0, md)
        self.assertLess(md.index("## arith"), md.index("## work-queue"))
        self.assertIn("- line_transfer_start=x\n- /usr/bin/python3: Python 3.11.2\n", md)
        # the model has no 2-thread rows: no ratio, so no difference either
        self.assertEqual(self.row(md, "arith", "cpython-3.11.2")[3:6], ["1.50", "–", "2.00×"])
        self.assertEqual(self.row(md, "arith", "stmbench-gil-refcount (model)")[1:4],
                         ["10", "–", "–"])
        self.assertEqual(self.row(md, "work-queue", "cpython-3.11.2")[-2:], ["–", "1/0"])

    def test_bad_input(self):
        path = self.path("bad.csv")
        write(path, "program,threads\narith,1\n")
        rc, out = stmbench("anchors", "table", path)
        self.assertEqual(rc, 2)
        self.assertIn("lacks column", out)
        self.assertEqual(self.table([])[0], 2)
        self.assertEqual(self.table(["arith,cpython-3.11.2,one,1,1,1,1"])[0], 2)
        self.assertEqual(stmbench("anchors", "table", self.path("none.csv"))[0], 2)


class ProgramsCheck(TempDirCase):
    """programs.py's expectations, on runs made here in one thread."""

    def runs(self, program, per_thread, iterations=70):
        programs.setup(iterations, len(per_thread))
        for tid, n in enumerate(per_thread):
            for _ in range(n):
                programs.RUN[program](tid, 0)

    def test_runs_pass(self):
        for prog in programs.PROGRAMS:
            self.runs(prog, [3, 2])
            self.assertIsNone(programs.check(prog, [3, 2], 2), prog)
            # the same state with another count of runs fails
            self.assertIsNotNone(programs.check(prog, [3, 3], 2), prog)

    def test_the_failing_expectation_named(self):
        self.runs("arith", [2, 1])
        programs.own[1] += 1
        msg = programs.check("arith", [2, 1], 2)
        self.assertIn("`.expect total = RUNS * (1000 * (ITER * (ITER - 1) / 2) + 12345 * "
                      "ITER)` fails for thread 1", msg)
        self.assertIn("(RUNS=1, THREADS=2, ITER=70)", msg)
        self.runs("work-queue", [1])
        programs.tasks.append(5)
        self.assertIn("`.expect len(tasks) = 0` fails: 1 != 0",
                      programs.check("work-queue", [1], 1))

    def test_slow_and_the_cache(self):
        self.assertEqual(programs.slow(5), 5 * 5 * 1000 + 7)
        self.runs("memo-cache", [1], iterations=100)
        self.assertEqual(sorted(programs.cache), list(range(64)))
        self.assertEqual(programs.cache[63], 63 * 63 * 1000 + 7)
