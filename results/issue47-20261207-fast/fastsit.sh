#!/bin/bash
# usage: fastsit.sh OUTDIR WAIT_S  - waits up to WAIT_S for a fast line-transfer phase (<100 ns),
# then runs 5 interleaved rounds of work-queue-q (and work-queue) at 1 and 2 threads.
OUT=$1; WAIT=$2
BIN=/tmp/stmbench-sit
mkdir -p $OUT
end=$(( $(date +%s) + WAIT ))
while :; do
  lt=$($BIN --line-transfer 2>&1 | tail -1)
  ns=$(echo "$lt" | sed -E 's/^line_transfer_ns=([0-9.]+).*/\1/')
  echo "$(date +%T) $lt" >> $OUT/line_transfer.log
  if awk -v n="$ns" 'BEGIN{exit !(n < 100)}'; then break; fi
  [ $(date +%s) -ge $end ] && break
  sleep 20
done
for r in 1 2 3 4 5; do
  echo "round $r $(date +%T) $($BIN --line-transfer 2>&1 | tail -1)" >> $OUT/line_transfer.log
  for p in work-queue-q work-queue; do
    for cfg in "stm biased" "stm tracing" "stm buffered" "locks biased" "gil refcount"; do
      set -- $cfg
      for t in 1 2; do
        $BIN --workload interp --program $p --runtime $1 --memory $2 --threads $t --duration 0.5 --csv $OUT/runs.csv > /dev/null 2>&1
      done
    done
  done
done
echo "round end $(date +%T) $($BIN --line-transfer 2>&1 | tail -1)" >> $OUT/line_transfer.log
