#!/usr/bin/env bash
# tests/test_build.sh - the build follows its configuration (run by scripts/run-tests.sh).
#
#  1. One folder per configuration: MODE, SAN and CC each select build/<config>.
#  2. Within one folder (BUILD=dir), switching MODE, SAN or CC rebuilds the objects:
#     each object's recorded command line (DWARF DW_AT_producer, -grecord-gcc-switches)
#     and the flags the results record (BUILD/buildinfo.h) follow the switch.
#  3. A missing Debian package stops make before anything is compiled, with the
#     apt-get line (deps.sh run as a non-root user, dpkg-query saying one is missing).
# Prints cmocka's summary lines, so run-tests.sh counts its cases.
set -u
cd "$(dirname "$0")/.." || exit 1
unset STMBENCH_DEPS_OK MAKEFLAGS MFLAGS MAKELEVEL BUILD MODE SAN CC
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stmbench-test-build.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
. tests/sh_testutil.sh      # check, summary
build_dir() { make -s "$@" --eval 'print-build: ; @echo $(BUILD)' print-build 2>/dev/null; }

# 1. folders
r=0; msg=""
for spec in "release|" "debug|MODE=debug" "release-address|SAN=address" \
            "debug-undefined|MODE=debug SAN=undefined" "release-gcc|CC=gcc"; do
    want=build/${spec%%|*}; args=${spec#*|}
    # shellcheck disable=SC2086
    got=$(build_dir $args)
    [ "$got" = "$want" ] || { r=1; msg="$msg [$args] -> '$got', want '$want'"; }
done
got=$(build_dir MODE=debug BUILD="$tmp/x")
[ "$got" = "$tmp/x" ] || { r=1; msg="$msg BUILD=dir ignored ('$got')"; }
check "one build folder per configuration" $r "$msg"

# 2. one folder, switched flags: the object and buildinfo follow
obj="$tmp/b/obj/stm/workloads/bank.o"
producer() { readelf --debug-dump=info "$1" 2>/dev/null | grep -m1 DW_AT_producer; }
switch() { # NAME MAKE-ARGS PATTERN(in the object's producer) [PATTERN in buildinfo]
    local name=$1 args=$2 pat=$3 bpat=${4:-$3}
    # shellcheck disable=SC2086
    if ! make -s BUILD="$tmp/b" $args "$obj" "$tmp/b/buildinfo.h" >"$tmp/log" 2>&1; then
        check "$name" 1 "make failed: $(tail -3 "$tmp/log")"; return
    fi
    local p; p=$(producer "$obj")
    local r=0 m=""
    grep -q -- "$pat" <<<"$p" || { r=1; m="object's producer lacks '$pat': $p"; }
    grep -q -- "$bpat" "$tmp/b/buildinfo.h" || { r=1; m="$m buildinfo lacks '$bpat'"; }
    check "$name" $r "$m"
}
switch "release object" "MODE=release" "-O2"
cp "$obj" "$tmp/release.o"
switch "MODE=debug in the same BUILD rebuilds it" "MODE=debug" "-O0"
switch "SAN=address in the same BUILD rebuilds it" "MODE=debug SAN=address" "-fsanitize=address"
switch "CC=gcc in the same BUILD rebuilds it" "CC=gcc" "GNU C" 'CFLAGS "gcc '
switch "back to release" "MODE=release" "-O2"
cmp -s "$obj" "$tmp/release.o"
check "back to release gives the first object again" $? "objects differ"
# nothing rebuilt when nothing changed
before=$(stat -c %y "$obj")
make -s BUILD="$tmp/b" "$obj" >/dev/null 2>&1
[ "$(stat -c %y "$obj")" = "$before" ]
check "an unchanged configuration rebuilds nothing" $? "$obj was compiled again"

# 3. a missing package stops make before compiling, with the apt-get line
mkdir -p "$tmp/bin"
cat >"$tmp/bin/dpkg-query" <<'EOS'
#!/bin/sh
# every package installed but libhwloc-dev
for a; do last=$a; done
[ "$last" = libhwloc-dev ] && exit 1
printf 'install ok installed'
EOS
printf '#!/bin/sh\necho 1000\n' >"$tmp/bin/id"
chmod +x "$tmp/bin/dpkg-query" "$tmp/bin/id"
PATH="$tmp/bin:$PATH" make BUILD="$tmp/d" >"$tmp/log" 2>&1
rc=$?
r=0; m=""
[ $rc -ne 0 ] || { r=1; m="make exited 0"; }
grep -q "apt-get install -y --no-install-recommends libhwloc-dev" "$tmp/log" || { r=1; m="$m no apt-get line"; }
[ ! -e "$tmp/d/obj" ] || { r=1; m="$m objects were compiled"; }
check "missing package: make stops first, with the apt-get line" $r "$m $(head -3 "$tmp/log")"

summary
