#!/bin/bash
out=/tmp/ab44.csv
echo "round,bin,runtime,program,threads,ops_s" > $out
/tmp/stmbench-new --line-transfer 2>&1 | tail -1 > /tmp/ab44.lt
for r in 1 2 3 4 5; do
 for rt in stm locks gil; do for p in arith work-queue-q memo-cache; do for t in 1 2; do
  for b in old new; do
   [ $(( (r + t) % 2 )) = 0 ] && b=$([ $b = old ] && echo new || echo old)
   v=$(/tmp/stmbench-$b --workload interp --program $p --memory buffered --runtime $rt --threads $t --duration 1 2>&1 | grep -o 'ops/s=[0-9]*' | cut -d= -f2)
   echo "$r,$b,$rt,$p,$t,$v" >> $out
  done
 done; done; done
done
/tmp/stmbench-new --line-transfer 2>&1 | tail -1 >> /tmp/ab44.lt
