#!/usr/bin/env bash
# scripts/deps.sh - checks the Debian packages stmbench needs; as root installs the
# missing ones with apt-get, otherwise prints the exact command and exits 1.
set -u
PKGS=(make clang g++ libhwloc-dev hwloc libcmocka-dev libbenchmark-dev
      python3-matplotlib python3-scipy valgrind libclang-rt-14-dev
      libmimalloc-dev)
missing=()
for p in "${PKGS[@]}"; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
    [ "$st" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
    echo "stmbench: missing Debian packages: ${missing[*]}" >&2
    echo "stmbench: run as root:  apt-get update && $cmd" >&2
    exit 1
fi
echo "stmbench: installing missing Debian packages: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2 || { echo "stmbench: apt-get update failed" >&2; exit 1; }
$cmd >&2 || { echo "stmbench: '$cmd' failed" >&2; exit 1; }
