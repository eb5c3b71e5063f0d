"""stmbench COMMAND [ARGS...] - the results scripts of stmbench.

Each command is a module of this package with its own argparse options
(`stmbench COMMAND --help`); a module is imported only when its command runs, so that
the tables never wait for matplotlib.
"""
import argparse
import importlib
import signal

# command -> (module, what it does)
COMMANDS = {
    "report": ("report", "overhead and conflict tables of a results directory"),
    "plot": ("plot", "the figures of a results directory (matplotlib)"),
    "regress": ("regress", "a runs.csv against the committed baseline (wide tolerances)"),
    "ab": ("ab", "make regress's A/B verdict, judge, noise, baseline-rev, history-plot"),
    "scaling": ("scaling", "the table of make scaling from its files"),
    "machines": ("machines", "several machines' results in one report; stamp; pack"),
    "sync-cost": ("sync_cost", "what each runtime asks of the programmer, counted"),
    "interp-memory": ("interp_memory", "interp's memory modes: table and figure"),
    "anchors": ("anchors", "make anchors: the model's gil rows against CPython and PyPy"),
    "mutants": ("mutants", "make mutants: synchronisation removed, what the checks catch"),
    "readme-figures": ("readme_figures", "README's figures against results/baseline"),
}

# The file names the scripts had before the package (now links to compat.py).
LEGACY = {
    "stmbench_report.py": "report",
    "plot.py": "plot",
    "regress": "regress",
    "regress-ab": "ab",
    "report_machines.py": "machines",
    "sync_cost.py": "sync-cost",
    "interp_memory.py": "interp-memory",
    "mutants.py": "mutants",
    "check-readme-figures.py": "readme-figures",
}


def main(argv):
    ap = argparse.ArgumentParser(
        prog="stmbench", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="commands:\n" + "\n".join("  %-15s %s" % (k, v[1]) for k, v in COMMANDS.items()))
    ap.add_argument("command", choices=list(COMMANDS), metavar="COMMAND")
    ap.add_argument("args", nargs=argparse.REMAINDER, help="the command's own arguments")
    a = ap.parse_args(argv[:1])
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)   # quiet under `| head`
    mod = importlib.import_module("stmbench." + COMMANDS[a.command][0])
    return mod.main(["stmbench " + a.command] + list(argv[1:]))


def command(sub, name, run, help_text):
    """A subcommand's parser on argparse's `sub`, whose parsed namespace names the
    function that runs it (namespace.run)."""
    p = sub.add_parser(name, help=help_text)
    p.set_defaults(run=run)
    return p
