"""One source per fact: the results files' columns are harness/columns.h's lists, and
every other place that spells them out says the same (docs/contract.md's tables, the
report's required columns and time columns, tests/test_csv.c's required columns); the
runtimes and workloads the scripts order by are runtime/runtimes.h's. A test fails
naming the copy that differs."""
import os
import re
import unittest

from helpers import ROOT, read

from stmbench import lists, results


def names(which):
    return [n for n, _ in lists.columns(which)]


def contract_table(heading):
    """The column names of docs/contract.md's table under `heading`, in order: every
    `name` in backticks of each row's column cell (a row may cover a range)."""
    text = read(os.path.join(ROOT, "docs", "contract.md"))
    i = text.index(heading)
    out, seen_table = [], False
    for line in text[i:].splitlines()[1:]:
        if line.startswith("|"):
            seen_table = True
            cells = [c.strip() for c in line.strip("|").split("|")]
            cell = cells[1] if re.fullmatch(r"[0-9]+(-[0-9]+)?", cells[0]) else cells[0]
            out += re.findall(r"`([a-z_0-9]+)`", cell)
        elif seen_table:
            break
    return out


class Columns(unittest.TestCase):
    def test_header_lists_parse(self):
        runs = names("RESULTS_COLUMNS")
        self.assertEqual(runs[:2], ["run_id", "timestamp"])
        self.assertEqual(len(runs), len(set(runs)))
        kinds = [k for _, k in lists.columns("RESULTS_COLUMNS")]
        # the required ones first, never after an optional one (old files stay readable)
        self.assertEqual(kinds, sorted(kinds, key=lambda k: k != "req"))
        self.assertEqual(set(kinds), {"req", "opt"})

    def test_contract_runs_table(self):
        self.assertEqual(contract_table("### Runs CSV"), names("RESULTS_COLUMNS"))

    def test_contract_conflict_table(self):
        self.assertEqual(contract_table("### Conflict log"), names("CONFLICT_COLUMNS"))

    def test_contract_says_how_many_are_required(self):
        text = read(os.path.join(ROOT, "docs", "contract.md"))
        req = len(results.RUN_COLUMNS)
        self.assertIn("The first %d are required" % req, text)

    def test_report_columns(self):
        runs = names("RESULTS_COLUMNS")
        self.assertEqual(results.RUN_COLUMNS, runs[:len(results.RUN_COLUMNS)])
        # the time breakdown's columns, in the order the report labels them
        at = runs.index(results.TIME_COLUMNS[0])
        self.assertEqual(runs[at:at + len(results.TIME_COLUMNS)], results.TIME_COLUMNS)
        self.assertEqual(runs[at - 1], "thread_time_ns")
        for col, _ in results.OP_LATENCY:
            self.assertIn(col, runs)
        for col in results.NUMERIC:
            self.assertIn(col, runs)

    def test_test_csv_required_columns(self):
        text = read(os.path.join(ROOT, "tests", "test_csv.c"))
        m = re.search(r"REQUIRED_COLUMNS\[\] =((?:\s*\"[^\"]*\")+);", text)
        self.assertIsNotNone(m, "tests/test_csv.c: no REQUIRED_COLUMNS")
        spelled = "".join(re.findall(r"\"([^\"]*)\"", m.group(1))).split(",")
        self.assertEqual(spelled, results.RUN_COLUMNS)

    def test_fixture_and_baseline_load(self):
        # old files (the fixture has the first columns only, plus extras) still load
        for path in (os.path.join(ROOT, "tests", "fixtures", "runs.csv"),
                     os.path.join(ROOT, "results", "baseline", "runs.csv")):
            self.assertTrue(results.read_runs(path))


class Runtimes(unittest.TestCase):
    def test_runtimes_h_order(self):
        rts, wls = lists._from_header()
        self.assertEqual(rts[:5], ["seq", "mutex", "gil", "locks", "stm"])
        self.assertIn("htm", rts)
        self.assertIn("bank", wls)
        # the binary, where built, lists the same names in the same order (itm may be
        # left out of a build)
        got = lists._from_binary()
        if got:
            self.assertEqual(got[0], [r for r in rts if r in got[0]])
            self.assertEqual(got[1], wls)
        self.assertEqual(lists.RUNTIME_ORDER, (got or (rts, wls))[0])

    def test_no_runtime_list_by_hand(self):
        """No script spells the runtimes out in an order of its own: no list or tuple
        of five runtime names or more (a selection, such as the length sweep's
        competitors, is fewer)."""
        rts, _ = lists._from_header()
        name = r"\s*[\"'](?:%s)[\"']\s*" % "|".join(rts)
        pat = re.compile(r"[\[(]%s(?:,%s){4,}" % (name, name))
        pkg = os.path.join(ROOT, "scripts", "stmbench")
        for f in sorted(os.listdir(pkg)):
            if f.endswith(".py"):
                self.assertIsNone(pat.search(read(os.path.join(pkg, f))), f)
        self.assertIsNotNone(pat.search('ORDER = ["seq", "mutex", "gil", "locks", "stm"]'))


if __name__ == "__main__":
    unittest.main()
