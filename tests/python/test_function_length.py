"""No function in runtime/ or harness/ is over about 80 lines (issue 32: a commit path
and a harness a newcomer can read in parts). The interpreter's dispatch loop, the one
exception the rule allows, lives in workloads/interp/, outside the scan. A function's
length runs from the line of its opening brace at file level to its closing brace;
a test fails naming each function over the limit."""
import glob
import os
import re
import unittest

from helpers import ROOT, read

LIMIT = 80


def strip_comments_and_strings(text):
    """The C text with comments, string and character literals blanked (newlines kept),
    so that braces inside them do not count."""
    pat = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
    return pat.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def functions(path):
    """(name, first line, length in lines) of each brace block at file level that
    follows a parenthesised parameter list (a function body)."""
    lines = strip_comments_and_strings(read(path)).split("\n")
    out, depth, start, name = [], 0, None, None
    for i, line in enumerate(lines):
        for ch in line:
            if ch == "{":
                if depth == 0:
                    head = " ".join(lines[max(0, i - 3):i + 1])
                    head = head[:head.rfind("{")]
                    head = re.sub(r"__attribute__\s*\(\(.*?\)\)", " ", head)
                    m = re.search(r"(\w+)\s*\([^;{}]*\)\s*$", head.strip())
                    start, name = i, (m.group(1) if m else None)
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0 and start is not None:
                    if name:
                        out.append((name, start + 1, i - start + 1))
                    start = None
    return out


class FunctionLength(unittest.TestCase):
    def test_none_over_the_limit(self):
        files = sorted(glob.glob(os.path.join(ROOT, "runtime", "**", "*.c"), recursive=True) +
                       glob.glob(os.path.join(ROOT, "harness", "*.c")))
        self.assertGreater(len(files), 10)
        long_ones = ["%s:%d %s (%d lines)" % (os.path.relpath(f, ROOT), line, name, n)
                     for f in files for name, line, n in functions(f) if n > LIMIT]
        self.assertEqual(long_ones, [], "functions over %d lines" % LIMIT)

    def test_the_scan_sees_functions(self):
        """The scanner finds a known function with about its length, so the test above
        cannot pass by seeing nothing."""
        found = dict((name, n) for name, _, n in
                     functions(os.path.join(ROOT, "runtime", "stm", "commit.c")))
        self.assertIn("_stm_commit", found)
        self.assertGreater(found["_stm_commit"], 10)
        self.assertGreater(len(found), 20)


if __name__ == "__main__":
    unittest.main()
