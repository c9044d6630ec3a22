"""``python -m harness``: the terminal (harness/ui/cli.py)."""

import sys

from .ui.cli import main

if __name__ == "__main__":
    sys.exit(main())
