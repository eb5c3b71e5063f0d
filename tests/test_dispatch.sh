#!/usr/bin/env bash
# tests/test_dispatch.sh [BUILD] - interp's raw loop (iv_run, workloads/interp/loop_raw.h)
# dispatches with one indirect jump per handler in every runtime's copy of an optimized
# build: a compiler that merged them back into one shared jump would bring back the
# loop's dependence on where the link places it (results/dispatch-layout-20261206).
# Counts `jmp *` in iv_run of BUILD/obj/<runtime>/workloads/interp{,_locks}.o with
# objdump. The itm copy is a switch (loop_raw.h): it must have its transactional clone. A build without -O2 (MODE=debug) has nothing to check: at -O0 both compilers
# keep one jump. Prints cmocka's summary lines, so run-tests.sh counts its cases.
set -u
cd "$(dirname "$0")/.." || exit 1
build=${1:-build/release}
. tests/checks.sh      # $tmp, check, checks_summary

MIN_JUMPS=30           # 34 handlers end in a jump of their own, plus the loop head's

jumps() { # object file -> indirect jumps in its iv_run
    objdump -d --no-show-raw-insn "$1" |
        awk '/<iv_run>:$/ { f = 1; next } f && /^$/ { f = 0 } f && /jmp +\*/ { n++ } END { print n + 0 }'
}
replicated() {
    local rt o n seen=0 bad=0
    for rt in $("$build/stmbench" --list | awk '$1 == "runtime" { print $2 }'); do
        [ "$rt" = itm ] && continue      # the switch: see itm_clone below
        for o in "$build/obj/$rt/workloads/interp.o" "$build/obj/$rt/workloads/interp_locks.o"; do
            [ -e "$o" ] || continue
            n=$(jumps "$o")
            seen=$((seen + 1))
            if [ "$n" -lt "$MIN_JUMPS" ]; then
                echo "  $o: iv_run has $n indirect jumps, fewer than $MIN_JUMPS" >&2
                bad=1
            fi
        done
    done
    [ "$seen" -gt 0 ] || { echo "  no interp object under $build/obj" >&2; return 1; }
    return $bad
}
# The itm copy: gcc's TM pass clones iv_run for use inside a transaction (_ZGTt6iv_run)
# only when it has no computed goto; without the clone every interp slice under itm ran
# serial-irrevocable (one thread at a time, uninstrumented), which no figure showed but
# its cost: 22 instructions a bytecode against seq's 17 and 460 instrumented.
itm_clone() {
    local o=$build/obj/itm/workloads/interp.o
    objdump -t "$o" | grep -q '_ZGTt6iv_run$' ||
        { echo "  $o: no transactional clone of iv_run" >&2; return 1; }
}
if [ -e "$build/obj/itm/workloads/interp.o" ]; then
    check "itm: iv_run has its transactional clone (not serial-irrevocable)" itm_clone
fi
if grep -q -- '-O2' "$build/flags" 2>/dev/null; then
    check "iv_run: one indirect jump per handler in every runtime's copy but itm's" replicated
else
    echo "test_dispatch: $build is not an -O2 build: nothing to check"
fi
checks_summary
