# scripts/cores.sh - sourced by the scripts that size runs by the machine (bench.sh,
# regress-run.sh, scaling.sh, stress.sh), from the repository root. Sets ncores to the
# number of cores hwloc sees (as the harness's pinning does), falling back to lstopo's
# list and then to nproc when hwloc's tools are missing or print nothing usable; and
# npus to the hardware threads (hwloc's PUs, what the harness binds threads to), at
# least ncores, falling back to nproc.
ncores=$(hwloc-calc --number-of core machine:0 2>/dev/null) ||
    ncores=$(lstopo-no-graphics --only core 2>/dev/null | wc -l)
[[ $ncores =~ ^[0-9]+$ ]] && [ "$ncores" -ge 1 ] || ncores=$(nproc)
npus=$(hwloc-calc --number-of pu machine:0 2>/dev/null)
[[ $npus =~ ^[0-9]+$ ]] && [ "$npus" -ge 1 ] || npus=$(nproc)
[ "$npus" -ge "$ncores" ] || npus=$ncores
