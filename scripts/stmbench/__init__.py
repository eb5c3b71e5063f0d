"""stmbench - the results scripts of stmbench as one package (issue 32).

Run it as `/usr/bin/python3 scripts/stmbench COMMAND ...` (Debian's python3 has the
matplotlib and scipy it needs); `scripts/stmbench --help` lists the commands. The old
entry points (scripts/regress, scripts/regress-ab, scripts/stmbench_report.py, ...) are
links to stmbench/compat.py, which runs the same command.

Modules: lists (runtimes, workloads and CSV columns from the C sources), results
(reading results files, medians, formatting), stats (the tests and intervals, from
scipy.stats), and one module per command.
"""
