#!/usr/bin/env bash
# tests/test_regress_confirm.sh - make regress's second round (scripts/regress-run.sh,
# "confirmation"): a timed figure that regressed is measured again with fresh pairs and
# stays a regression only if the second round regresses too.
#
# B is a wrapper around the real harness that offers only `seq` and `bank` and rewrites
# the ops/s its timed runs write into the CSV: a tenth in the first round only (a spell
# of the machine; ten times in the second, so that timing noise cannot decide the
# case), or a tenth always (a slowdown of the code). A is the real harness.
# Cases: transient -> no regression ("not confirmed"); persistent -> regression
# ("confirmed"); transient with REGRESS_CONFIRM=0 -> regression.
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${STMBENCH:-build/release/stmbench}
[ -x "$BIN" ] || BIN=build/stmbench
real=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/b" <<EOF
#!/usr/bin/env bash
# the wrapper B: MODE (file) says transient (halve the first FIRST timed runs) or always
real=$real
if [ "\$1" = --list ]; then
    "\$real" --list | awk '\$1 == "runtime" && \$2 != "seq" { next } \$1 == "workload" && \$2 != "bank" { next } { print }'
    exit \${PIPESTATUS[0]}
fi
csv=
prev=
for a in "\$@"; do [ "\$prev" = --csv ] && csv=\$a; prev=\$a; done
"\$real" "\$@"
rc=\$?
[ -n "\$csv" ] && [ \$rc -eq 0 ] || exit \$rc
n=\$(( \$(cat "$tmp/count" 2>/dev/null || echo 0) + 1 ))
echo \$n >"$tmp/count"
mode=\$(cat "$tmp/mode")
# a tenth of the measured ops/s (a slowdown no timing noise can hide), or, in the
# second round of a transient, ten times them (so that noise cannot make it regress)
f=0.1
[ "\$mode" = transient ] && [ \$n -gt 5 ] && f=10
awk -F, -v OFS=, -v f=\$f 'NR == 1 { for (i = 1; i <= NF; i++) if (\$i == "ops_per_s") c = i }
    { lines[NR] = \$0 } END { for (i = 1; i <= NR; i++) { if (i == NR) { \$0 = lines[i]; \$c = \$c * f } else \$0 = lines[i]; print } }' \
    "\$csv" >"\$csv.tmp" && mv "\$csv.tmp" "\$csv"
exit 0
EOF
chmod +x "$tmp/b"

pass=0 fail=0
check() { # name expected_rc expected_text mode [env...]
    local name=$1 want=$2 text=$3 mode=$4
    shift 4
    echo "$mode" >"$tmp/mode"
    rm -f "$tmp/count"
    out=$(env REGRESS_A_BIN="$real" REGRESS_B_BIN="$tmp/b" REGRESS_THREADS=1 REGRESS_REPEAT=5 \
          REGRESS_REPEAT_N=5 REGRESS_DURATION=0.05 REGRESS_COUNTS=0 BUILD="$tmp/build" "$@" \
          scripts/regress-run.sh 2>&1)
    rc=$?
    echo "[ RUN      ] $name"
    if [ $rc -eq "$want" ] && grep -q -- "$text" <<<"$out"; then
        echo "[       OK ] $name"
        pass=$((pass + 1))
    else
        echo "$out" | tail -n 15
        echo "exit $rc (expected $want), expected text: $text"
        echo "[  FAILED  ] $name"
        fail=$((fail + 1))
    fi
}
check "a spell in the first round only is not confirmed" 0 "not confirmed" transient
check "a slowdown in both rounds is confirmed" 1 "confirmed by a second round" always
check "REGRESS_CONFIRM=0: the first round decides" 1 "REGRESSION" transient REGRESS_CONFIRM=0
if [ $fail -eq 0 ]; then
    echo "[  PASSED  ] $pass test(s)."
else
    echo "[  FAILED  ] $fail test(s), listed above."
fi
[ $fail -eq 0 ]
