"""``python -m faithsieve.cli``: the ``faithsieve`` command line."""

import sys

from faithsieve.cli import main

sys.exit(main())
