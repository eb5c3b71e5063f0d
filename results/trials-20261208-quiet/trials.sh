#!/bin/bash
cd /work/main
A=/work/main/build/release/regress/base/src
log=/tmp/trials/log.txt; mkdir -p /tmp/trials; : > $log
for round in 1 2; do for c in a b c d; do
  if [ $c = a ]; then src=/work/main; else src=/tmp/trial-$c; fi
  lt=$(build/release/stmbench --line-transfer 2>&1 | tail -1 | grep -o 'line_transfer_ns=[0-9.]*')
  t0=$(date +%s)
  BUILD=build/release REGRESS_A_BIN=$A/build/stmbench REGRESS_A_SRC=$A REGRESS_B_BIN=$src/build/release/stmbench REGRESS_B_SRC=$src \
    REGRESS_THREADS=1 REGRESS_COUNTS=0 REGRESS_OUT=/tmp/trials/$c-$round scripts/regress-run.sh > /tmp/trials/$c-$round.log 2>&1
  rc=$?
  echo "case=$c round=$round rc=$rc secs=$(( $(date +%s) - t0 )) $lt load=$(cut -d' ' -f1 /proc/loadavg) :: $(grep -E '^\*\*[0-9]+ figures' /tmp/trials/$c-$round.log | tail -1) :: flagged: $(grep -iE 'REGRESSION' /tmp/trials/$c-$round.log | grep -v figures | grep -o '^| [a-z]* | [a-z]* | [0-9]' | tr '\n' ';')" >> $log
done; done
echo done >> $log
