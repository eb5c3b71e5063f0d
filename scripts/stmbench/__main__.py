"""`python3 scripts/stmbench COMMAND ...` (or `python3 -m stmbench` with scripts/ on the
path): see stmbench.cli."""
import os
import sys

if not __package__:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from stmbench.cli import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
