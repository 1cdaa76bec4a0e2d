"""``python -m faithsieve.cli``: the ``faithsieve`` command line."""

import sys

from faithsieve.cli import main

if __name__ == "__main__":
    sys.exit(main())
