#!/usr/bin/env bash
# scripts/fuzz.sh [BUILD] - builds the libFuzzer target of the interp assembler
# (tests/fuzz/fuzz_asm.c, clang -fsanitize=fuzzer,address,undefined; it links only the
# assembler and the built-in programs, not the library) into BUILD/fuzz/ and runs it
# for FUZZ_SECONDS (default 60) on a copy of the committed seed corpus
# (tests/fuzz/corpus, plus tests/programs/*.stm). New inputs stay in the copy; a crash
# is written to BUILD/fuzz/crash-* and makes the script exit non-zero.
# Needs clang and libclang-rt-14-dev (scripts/deps.sh installs it).
set -eu
build=${1:-build/release}
secs=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-1}
cc=${FUZZ_CC:-clang}
out="$build/fuzz"
mkdir -p "$out"
if ! command -v "$cc" >/dev/null; then
    echo "fuzz: $cc not found (libFuzzer needs clang)" >&2
    exit 2
fi
echo "fuzz: building $out/fuzz_asm"
"$cc" -std=gnu11 -g -O1 -I. -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-unused-parameter \
    -Wno-unused-function -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=undefined -pthread \
    tests/fuzz/fuzz_asm.c workloads/interp/asm.c workloads/interp/programs.c \
    -o "$out/fuzz_asm"
corpus="$out/corpus"
rm -rf "$corpus"
mkdir -p "$corpus"
cp tests/fuzz/corpus/* "$corpus"/ 2>/dev/null || true
for f in tests/programs/*.stm; do
    [ -e "$f" ] && cp "$f" "$corpus/prog-$(basename "$f")"
done
echo "fuzz: running for ${secs}s on $(ls "$corpus" | wc -l) seed inputs"
log="$out/fuzz.log"
set +e
par=()
[ "$jobs" -gt 1 ] && par=(-fork="$jobs")
"$out/fuzz_asm" -max_total_time="$secs" -max_len=8192 -timeout=10 "${par[@]+"${par[@]}"}" \
    -artifact_prefix="$out/" -print_final_stats=1 "$corpus" >"$log" 2>&1
rc=$?
set -e
grep -E '^#[0-9]+ *(DONE|INITED)|stat::number_of_executed_units|stat::peak_rss|ERROR|crash-|timeout-' "$log" || true
crashes=$(ls "$out"/crash-* "$out"/timeout-* "$out"/leak-* 2>/dev/null | wc -l)
echo "fuzz: exit $rc, $crashes crash/timeout/leak file(s) in $out (log: $log)"
[ "$rc" -eq 0 ] && [ "$crashes" -eq 0 ]
