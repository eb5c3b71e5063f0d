#!/usr/bin/env bash
# tests/test_readme_figures.sh - the figures README.md quotes are those of the committed
# results/baseline (scripts/check-readme-figures.py: machine and revision named, the n%
# table, the 2-thread speedups), and the check does catch a changed figure.
set -u
cd "$(dirname "$0")/.." || exit 1
/usr/bin/python3 scripts/check-readme-figures.py README.md results/baseline
rc=$?
# the control: one n% cell changed in a copy of the README must fail the check
tmp=$(mktemp)
awk '!done && /^\| bank \| / { sub(/\| bank \| [^|]*\|/, "| bank | +999% |"); done = 1 } { print }' \
    README.md >"$tmp"
if /usr/bin/python3 scripts/check-readme-figures.py "$tmp" results/baseline >/dev/null 2>&1; then
    echo "[ RUN      ] control: a changed n% cell is caught"
    echo "[  FAILED  ] control: a changed n% cell is caught"
    echo "[  FAILED  ] 1 test(s), listed above."
    rc=1
else
    echo "[ RUN      ] control: a changed n% cell is caught"
    echo "[       OK ] control: a changed n% cell is caught"
    echo "[  PASSED  ] 1 test(s)."
fi
rm -f "$tmp"
exit $rc
