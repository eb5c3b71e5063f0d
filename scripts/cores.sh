# scripts/cores.sh - sourced by the scripts that size runs by the machine (bench.sh,
# regress-run.sh, scaling.sh, stress.sh), from the repository root. Sets ncores to the
# number of cores hwloc sees (as the harness's pinning does), falling back to lstopo's
# list and then to nproc when hwloc's tools are missing or print nothing usable.
ncores=$(hwloc-calc --number-of core machine:0 2>/dev/null) ||
    ncores=$(lstopo-no-graphics --only core 2>/dev/null | wc -l)
[[ $ncores =~ ^[0-9]+$ ]] && [ "$ncores" -ge 1 ] || ncores=$(nproc)
