#!/bin/bash
# ASan sweep of --memory buffered (issue 44) at the current revision:
# 6 object programs x {stm (STM_CHAOS), locks, gil, mutex, itm} x {2, 8} threads, 10 s each (~10 min)
cd /work/main
out=results/asan-20261208-cell-pool
: > $out/runs.txt
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
echo "# $(git rev-parse --short HEAD), build/release-address (make SAN=address), $(date -u +%FT%TZ)" >> $out/runs.txt
for th in 2 8; do for rt in stm locks gil mutex itm; do for p in arith memo-cache parallel-map work-queue work-queue-q memo-cache-sd; do
  if [ $rt = stm ]; then export STM_CHAOS=$((RANDOM+1)); else unset STM_CHAOS; fi
  build/release-address/stmbench --runtime $rt --workload interp --memory buffered --program $p --threads $th --duration 10 > /tmp/asanf.out 2> /tmp/asanf.err
  rc=$?
  rep=$(grep -c "ERROR: AddressSanitizer\|ERROR: LeakSanitizer" /tmp/asanf.err)
  echo "$rt threads=$th $p chaos=${STM_CHAOS:-0} rc=$rc asan_reports=$rep $(grep -o 'check=[a-z]*' /tmp/asanf.out)" >> $out/runs.txt
  [ $rep -gt 0 ] && cp /tmp/asanf.err $out/report-$rt-$th-$p.txt
done; done; done
echo "# end $(date -u +%FT%TZ)" >> $out/runs.txt
