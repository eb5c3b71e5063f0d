#!/usr/bin/env bash
# tests/test_layout_link.sh [BUILD] - scripts/layout-link.sh, make regress's code
# layouts: the harness linked again with 32 and 64 bytes of padding has every function
# of the STM that many bytes further on and the same instructions (the disassembly of
# _stm_commit equal but for addresses), lists the same runtimes and runs a checked
# bank under stm; padding 0 is a copy; a copy of the binary without the objects it was
# linked from, or a bad padding, is refused.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/checks.sh      # $tmp, check, checks_summary
build=${1:-build/release}
bin=$build/stmbench
[ -x "$bin" ] || { echo "[  FAILED  ] no $bin: build first"; exit 1; }

addr() { nm "$1" | awk -v f="$2" '$3 == f {print $1; exit}'; }
# the instructions of one function without their addresses (the operands that name
# other code shift with it; what is compared is the mnemonics and the rest)
body() { objdump -d --no-show-raw-insn "$1" | awk -v f="<$2>:" '$2 == f {on = 1; next} on && NF == 0 {exit}
    on { sub(/^ *[0-9a-f]+:\t/, ""); gsub(/[0-9a-f]+ <[^>]*>/, "X"); gsub(/0x[0-9a-f]+\(%rip\)/, "R"); print }'; }
moved() { # pad: every STM function and the harness's workload code moved by the pad
    local pad=$1 f a0 a1
    scripts/layout-link.sh . "$bin" "$pad" "$tmp/l$pad" >/dev/null || return 1
    for f in _stm_commit _stm_begin _stm_write_slowpath; do
        a0=$(addr "$bin" $f) a1=$(addr "$tmp/l$pad" $f)
        [ -n "$a0" ] && [ $((16#$a1 - 16#$a0)) -eq "$pad" ] || { echo "  $f: $a0 -> $a1"; return 1; }
    done
    [ "$(body "$bin" _stm_commit)" = "$(body "$tmp/l$pad" _stm_commit)" ] &&
        [ -n "$(body "$bin" _stm_commit)" ]
}
check "32 bytes of padding move the STM's functions by 32, same instructions" moved 32
check "64 bytes of padding move them by 64" moved 64
runs() {
    [ "$("$tmp/l32" --list)" = "$("$bin" --list)" ] &&
        "$tmp/l32" --runtime stm --workload bank --threads 2 --duration 0.05 | grep -q 'check=pass'
}
check "the padded binary lists the same and runs a checked bank under stm" runs
zero() { scripts/layout-link.sh . "$bin" 0 "$tmp/l0" && cmp -s "$bin" "$tmp/l0"; }
check "padding 0 is a copy" zero
refused() {
    cp "$bin" "$tmp/elsewhere"
    ! scripts/layout-link.sh . "$tmp/elsewhere" 32 "$tmp/x" 2>/dev/null &&
        ! scripts/layout-link.sh . "$bin" 3x "$tmp/x" 2>/dev/null && [ ! -e "$tmp/x" ]
}
check "a binary without its objects and a bad padding are refused" refused
checks_summary
