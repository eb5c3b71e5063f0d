"""Shared by the Python tests (tests/python/test_*.py, run by scripts/run-tests.sh with
`python3 -m unittest discover`): the repository's paths, the package on sys.path, and
running a command of it in a child process."""
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "scripts")
GOLDEN = os.path.join(ROOT, "tests", "golden")
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
PY = "/usr/bin/python3"
if SCRIPTS not in sys.path:
    sys.path.insert(0, SCRIPTS)


def run(args, cwd=ROOT):
    """args run from the repository root; (exit status, stdout and stderr together)."""
    p = subprocess.run(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=600)
    return p.returncode, p.stdout


def stmbench(*args):
    """`scripts/stmbench ARGS...` in a child process: (exit status, output)."""
    return run([PY, os.path.join(SCRIPTS, "stmbench")] + [str(a) for a in args])


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


class TempDirCase(unittest.TestCase):
    """A test case with its own temporary directory, self.tmp, removed afterwards."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="stmbench-pytest.")
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)
