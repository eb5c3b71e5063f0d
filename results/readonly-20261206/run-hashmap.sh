#!/bin/bash
# Run from the repository root, at 2010a4b (make first); appends to this folder.
B=build/release/stmbench; D=results/readonly-20261206
for r in 1 2 3 4 5; do
 $B --line-transfer 2>&1 | tail -1 | sed "s/^/round=$r /" >> $D/line-transfer.txt
 for cfg in "--update 0" "--update 0 --buckets 131072" "--update 20" "--update 20 --buckets 131072"; do
  for rt in stm locks; do for t in 1 2; do
   $B --runtime $rt --workload hashmap --size 1024 --range 2048 $cfg --threads $t --duration 2 --csv $D/runs.csv > /dev/null 2>&1 || echo "FAIL $rt $t $cfg"
  done; done
 done
done
$B --line-transfer 2>&1 | tail -1 | sed "s/^/after /" >> $D/line-transfer.txt
