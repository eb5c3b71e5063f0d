#!/bin/bash
# usage: chaos.sh THREADS SECONDS OUTDIR  (runs /tmp/stmbench-chaos: a copy, so rebuilds do not disturb it)
T=$1; S=$2; OUT=$3
cd /work/main
end=$(( $(date +%s) + S ))
i=0; fail=0
log=$OUT/chaos-t$T.log
: > $log
while [ $(date +%s) -lt $end ]; do
  for p in work-queue-q memo-cache-sd; do
    for m in tracing refcount biased buffered; do
      [ $(date +%s) -ge $end ] && break 2
      seed=$((1000*T + i))
      out=$(STM_CHAOS=1 timeout 600 /tmp/stmbench-chaos --workload interp --runtime stm --program $p --memory $m --threads $T --duration 2 --seed $seed 2>&1)
      rc=$?
      i=$((i+1))
      last=$(printf '%s\n' "$out" | tail -1)
      if [ $rc -ne 0 ] || ! printf '%s\n' "$last" | grep -q "check=pass"; then fail=$((fail+1)); echo "FAIL rc=$rc p=$p m=$m seed=$seed: $(printf '%s' "$out" | tail -3 | tr '\n' ' ')" >> $log; else echo "ok p=$p m=$m seed=$seed $(printf '%s' "$last" | grep -o 'ops=.*')" >> $log; fi
    done
  done
done
echo "threads=$T runs=$i failed=$fail" >> $log
