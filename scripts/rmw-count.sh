#!/usr/bin/env bash
# scripts/rmw-count.sh OUT.csv - atomic read-modify-writes per bytecode of interp's
# object model, counted under valgrind's callgrind (deterministic: no timing), for the
# runtimes, memory modes and programs asked, at 1 thread.
#
# Each configuration runs twice, with --ops N and --ops 2N (same seed, --pin none);
# scripts/rmw_count.py sums the executions of every lock-prefixed instruction (and
# xchg with memory) in each run, the harness binary and its libraries (mimalloc, libc)
# alike; rmw_per_bytecode = (R(2N) - R(N)) / (ops(2N) - ops(N)), so that start-up,
# setup and the check cancel out. What it counts is what the hardware locks: the
# counts' atomics, the spinlocks' compare-and-swaps, the allocator's.
#
# Writes OUT.csv: runtime,memory,program,rmw_per_bytecode,ops_n,ops_2n,rmw_n,rmw_2n
# Environment: BUILD / STMBENCH (the harness), RMW_OPS (N, default 100000),
# RMW_RUNTIMES (default "seq gil locks"), RMW_MODES ("refcount biased"),
# RMW_PROGRAMS ("arith memo-cache parallel-map work-queue"; memo-cache fills its
# cache in its first 1.3 M bytecodes: give it RMW_OPS of 2000000 or more). The
# harness runs whole runs of a program (arith: 25,013 bytecodes at ITER 1000): N must
# span more than one, or both lengths run the same and the configuration fails.
# Exit status: 0; 1 a configuration failed (the others are written); 2 bad usage or
# an existing OUT.csv; 3 valgrind, objdump or the harness missing.
set -u
cd "$(dirname "$0")/.." || exit 3
die() { echo "rmw-count: $2" >&2; exit "$1"; }
[ $# -eq 1 ] || die 2 "usage: scripts/rmw-count.sh OUT.csv"
out=$1
[ -e "$out" ] && die 2 "$out exists: not overwritten (choose another name)"
BIN=${STMBENCH:-${BUILD:-build/release}/stmbench}
N=${RMW_OPS:-100000}
[[ $N =~ ^[0-9]+$ ]] && [ "$N" -ge 1 ] || die 2 "RMW_OPS='$N' is not a positive integer"
command -v valgrind >/dev/null || die 3 "valgrind is not installed (apt-get install valgrind)"
command -v objdump >/dev/null || die 3 "objdump is not installed (apt-get install binutils)"
[ -x "$BIN" ] || die 3 "no harness binary '$BIN': run make first"
tmp=$(mktemp -d) || die 3 "no temporary folder"
trap 'rm -rf "$tmp"' EXIT
echo "runtime,memory,program,rmw_per_bytecode,ops_n,ops_2n,rmw_n,rmw_2n" >"$tmp/out.csv"
rc=0
for rt in ${RMW_RUNTIMES:-seq gil locks}; do
    for m in ${RMW_MODES:-refcount biased}; do
        for p in ${RMW_PROGRAMS:-arith memo-cache parallel-map work-queue}; do
            ok=1
            for k in 1 2; do
                rm -f "$tmp/run.csv"
                if ! valgrind --tool=callgrind --dump-instr=yes --compress-pos=no \
                        --compress-strings=no --callgrind-out-file="$tmp/cg.$k" \
                        "$BIN" --runtime "$rt" --workload interp --program "$p" --memory "$m" \
                        --threads 1 --ops $((N * k)) --pin none --seed 1 \
                        --csv "$tmp/run.csv" >/dev/null 2>"$tmp/err"; then
                    echo "rmw-count: $rt $m $p --ops $((N * k)) failed: $(tail -1 "$tmp/err")" >&2
                    ok=0
                    break
                fi
                ops[$k]=$(/usr/bin/python3 -c 'import csv,sys; print(list(csv.DictReader(open(sys.argv[1])))[-1]["ops"])' "$tmp/run.csv")
                rmw[$k]=$(/usr/bin/python3 scripts/rmw_count.py "$tmp/cg.$k" | sed -n 's/^rmw=//p')
            done
            if [ $ok = 0 ] || [ -z "${rmw[1]:-}" ] || [ -z "${rmw[2]:-}" ]; then
                rc=1
                continue
            fi
            if [ "${ops[2]}" -le "${ops[1]}" ]; then
                echo "rmw-count: $rt $m $p: --ops $N and $((2 * N)) ran the same ${ops[1]} bytecodes (whole runs of the program): raise RMW_OPS" >&2
                rc=1
                continue
            fi
            per=$(/usr/bin/python3 -c 'import sys; a,b,c,d=map(int,sys.argv[1:]); print("%.4f" % ((d-c)/(b-a)))' \
                "${ops[1]}" "${ops[2]}" "${rmw[1]}" "${rmw[2]}")
            echo "$rt,$m,$p,$per,${ops[1]},${ops[2]},${rmw[1]},${rmw[2]}" >>"$tmp/out.csv"
            echo "rmw-count: $rt $m $p: $per atomic read-modify-writes per bytecode"
        done
    done
done
cp "$tmp/out.csv" "$out" || die 3 "cannot write $out"
exit $rc
