#!/bin/bash
cd /work/main
OUT=$1; mkdir -p $OUT; : > $OUT/runs.txt
n=0; bad=0
for p in work-queue-q memo-cache-sd work-queue memo-cache; do for m in buffered refcount biased tracing; do for t in 2 8; do
  seed=$((RANDOM+1))
  out=$(STM_CHAOS=$seed ASAN_OPTIONS=detect_leaks=1 timeout 300 build/release-address/stmbench --runtime stm --workload interp --program $p --memory $m --threads $t --duration 2 2>&1); rc=$?
  n=$((n+1)); rep=$(echo "$out" | grep -c "ERROR: \(Address\|Leak\)Sanitizer")
  [ $rc -ne 0 ] || [ $rep -ne 0 ] || ! echo "$out" | grep -q check=pass && bad=$((bad+1))
  echo "stm $p $m t=$t STM_CHAOS=$seed rc=$rc asan_reports=$rep $(echo "$out" | grep -o 'check=[a-z]*' | tail -1)" >> $OUT/runs.txt
done; done; done
for p in work-queue-q memo-cache-sd work-queue memo-cache; do for m in refcount biased; do
  out=$(ASAN_OPTIONS=detect_leaks=1 timeout 300 build/release-address/stmbench --runtime locks --workload interp --program $p --memory $m --threads 8 --duration 1 2>&1); rc=$?
  n=$((n+1)); rep=$(echo "$out" | grep -c "ERROR: \(Address\|Leak\)Sanitizer")
  [ $rc -ne 0 ] || [ $rep -ne 0 ] || ! echo "$out" | grep -q check=pass && bad=$((bad+1))
  echo "locks $p $m t=8 rc=$rc asan_reports=$rep $(echo "$out" | grep -o 'check=[a-z]*' | tail -1)" >> $OUT/runs.txt
done; done
echo "runs=$n bad=$bad" >> $OUT/runs.txt
