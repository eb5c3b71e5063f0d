#!/usr/bin/python3
"""The old entry points of scripts/ are links to this file: each runs its command of the
package (stmbench.cli.LEGACY) with the arguments it was given."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
from stmbench.cli import LEGACY, main  # noqa: E402

sys.exit(main([LEGACY[os.path.basename(sys.argv[0])]] + sys.argv[1:]))
