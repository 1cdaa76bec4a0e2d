"""``python -m faithsieve``: the ``faithsieve`` command line."""

import sys

from faithsieve.cli import main

sys.exit(main())
