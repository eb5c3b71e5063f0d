# tests/checks.sh - sourced by the shell tests (tests/test_*.sh) from the repository
# root: a temporary folder $tmp (removed at exit), check NAME COMMAND... (runs one case,
# printing cmocka's [ RUN ] / [ OK ] / [ FAILED ] lines, which scripts/run-tests.sh
# counts) and checks_summary (the [ PASSED ] / [ FAILED ] totals; its status is the
# script's: 0 when every case held).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
npass=0 nfail=0
check() { # name, then a command that succeeds when the case holds
    local name=$1; shift
    echo "[ RUN      ] $name"
    if "$@"; then echo "[       OK ] $name"; npass=$((npass + 1))
    else echo "[  FAILED  ] $name"; nfail=$((nfail + 1)); fi
}
checks_summary() {
    echo "[  PASSED  ] $npass test(s)."
    [ $nfail -eq 0 ] || echo "[  FAILED  ] $nfail test(s), listed above."
    [ $nfail -eq 0 ]
}
