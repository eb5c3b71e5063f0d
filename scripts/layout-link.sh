#!/usr/bin/env bash
# scripts/layout-link.sh SRC BIN PAD OUT - links BIN (a stmbench binary that SRC's
# Makefile built, e.g. build/release/stmbench: relative to SRC, or absolute, also in a
# BUILD folder outside SRC) again, as
# OUT, with PAD bytes of code padding in front of every object: the same objects and
# libraries, the same link command, one object of PAD bytes of `nop`s first on it.
# Every function of the harness, the workloads and the runtimes then sits PAD bytes
# further on (functions are 16-byte aligned, so PAD is rounded up to 16 where it
# matters), while the instructions stay the same: a change of code placement alone.
# make regress measures A and B at several such layouts (REGRESS_LAYOUTS, docs/regress.md);
# works for any revision whose Makefile links BIN with $(CC) ... -o BIN (none is
# recompiled: the link command is taken from `make -n`, which rebuilds nothing).
# PAD 0 copies BIN. Prints the address shift of _stm_commit. Exit 0, or 1 with a line.
set -u
[ $# -eq 4 ] || { echo "usage: $0 SRC BIN PAD OUT" >&2; exit 2; }
src=$1 bin=$2 pad=$3 out=$4
die() { echo "layout-link: $*" >&2; exit 1; }
[[ $pad =~ ^[0-9]+$ ]] || die "PAD '$pad' is not a number of bytes"
srcabs=$(cd "$src" 2>/dev/null && pwd -P) || die "no folder $src"
case $bin in /*) ;; *) bin=$srcabs/$bin ;; esac
binabs=$(realpath -e "$bin" 2>/dev/null) || die "no binary $bin"
case $out in /*) ;; *) out=$PWD/$out ;; esac
mkdir -p "$(dirname "$out")" || die "cannot create $(dirname "$out")"
if [ "$pad" -eq 0 ]; then
    cp -f "$binabs" "$out" || die "cannot copy $binabs"
    exit 0
fi
# Inside SRC, the paths as its Makefile names them with the default BUILD (relative);
# elsewhere (BUILD=/some/dir), absolute.
rel=${binabs#"$srcabs"/}
bdir=$(dirname "$rel")
# The link command as make would run it if main.o had changed (-W), full (V=1); -n runs
# nothing. BUILD is given so that a binary of another configuration is found too.
cmd=$(cd "$srcabs" && make -n --no-print-directory -W "$bdir/obj/common/harness/main.o" \
      V=1 BUILD="$bdir" "$rel" 2>/dev/null | grep -E -- "-o $rel\$" | tail -n 1)
[ -n "$cmd" ] || die "no link command for $rel in $srcabs's make -n"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/layout-link.XXXXXX") || die "mktemp"
trap 'rm -rf "$tmp"' EXIT
cc=${cmd%% *}
# .note.GNU-stack: the padding object asks for no executable stack
printf '\t.text\n\t.skip %d, 0x90\n\t.section .note.GNU-stack,"",@progbits\n' "$pad" |
    (cd "$srcabs" && $cc -c -x assembler - -o "$tmp/pad.o") || die "cannot assemble the padding"
# The padding first, then the command's own arguments, its output ours.
args=${cmd#"$cc" }
args=${args%"-o $rel"}
(cd "$srcabs" && eval "$cc \"\$tmp/pad.o\" $args -o \"\$tmp/out\"") >"$tmp/ld.log" 2>&1 ||
    die "the link failed: $(tail -n 1 "$tmp/ld.log")"
mv -f "$tmp/out" "$out" || die "cannot write $out"
addr() { nm "$1" 2>/dev/null | awk '$3 == "_stm_commit" {print $1; exit}'; }
a0=$(addr "$binabs") a1=$(addr "$out")
[ -n "$a0" ] && [ -n "$a1" ] && echo "layout-link: $out: _stm_commit moved by $((16#$a1 - 16#$a0)) bytes"
exit 0
