"""``python -m faithsieve.cli``: the ``faithsieve`` command line."""

import sys

from faithsieve.cli import main

if __name__ == "__main__":  # importing the module (tests walk every module) runs nothing
    sys.exit(main())
