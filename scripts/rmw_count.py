#!/usr/bin/python3
"""scripts/rmw_count.py CALLGRIND_OUT - atomic read-modify-writes a run executed.

Reads a callgrind output written with --dump-instr=yes --compress-pos=no
--compress-strings=no (instruction-level costs, names in full), disassembles each
object it names (objdump -d), and sums the executions (Ir) of the instructions that
are atomic read-modify-writes on x86-64: every `lock`-prefixed instruction and
`xchg` with a memory operand (locked by the hardware without the prefix).

Prints one line: rmw=<total>, then with --top K the K functions with the most.
scripts/rmw-count.sh runs it on two run lengths and takes the difference.
Exit status: 0; 2 bad usage or an unreadable file; 3 objdump missing.
"""
import collections
import re
import shutil
import subprocess
import sys


def costs(path):
    """(object, address) -> executions, from an instruction-level callgrind file."""
    ir = collections.defaultdict(int)
    ob = None
    after_call = False
    with open(path) as f:
        for line in f:
            if line.startswith("ob="):
                ob = line[3:].strip()
            elif line.startswith("calls="):
                after_call = True           # the next cost line is the call's, inclusive
            elif line.startswith("0x"):
                if after_call:
                    after_call = False
                    continue
                p = line.split()
                if len(p) >= 3:
                    ir[(ob, int(p[0], 16))] += int(p[2])
    return ir


def rmw_sites(obj):
    """address -> function of each atomic read-modify-write instruction in obj."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", obj],
                         capture_output=True, text=True).stdout
    sites, fn = {}, None
    for l in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.*)>:", l)
        if m:
            fn = m.group(2)
            continue
        m = re.match(r"^\s*([0-9a-f]+):\s*(\S.*)$", l)
        if m:
            ins = m.group(2)
            if ins.startswith("lock ") or (ins.startswith("xchg") and "(" in ins):
                sites[int(m.group(1), 16)] = fn
    return sites


def main(argv):
    args = argv[1:]
    top = 0
    if len(args) == 3 and args[1] == "--top" and args[2].isdigit():
        top = int(args[2])
        args = args[:1]
    if len(args) != 1:
        print("usage: scripts/rmw_count.py CALLGRIND_OUT [--top K]", file=sys.stderr)
        return 2
    if not shutil.which("objdump"):
        print("rmw_count: objdump is missing (Debian: binutils)", file=sys.stderr)
        return 3
    try:
        ir = costs(args[0])
    except OSError as e:
        print(f"rmw_count: {e}", file=sys.stderr)
        return 2
    total = 0
    per = collections.Counter()
    for obj in sorted({o for o, _ in ir if o}):
        sites = rmw_sites(obj)
        for (o, a), n in ir.items():
            if o == obj and a in sites and n:
                total += n
                per[(obj.rsplit("/", 1)[-1], sites[a])] += n
    print(f"rmw={total}")
    for (obj, fn), n in per.most_common(top):
        print(f"  {n} {obj} {fn}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
