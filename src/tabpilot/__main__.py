"""``python -m tabpilot`` is the ``tabpilot`` command (its hot path first, see tabpilot.cli.fast)."""

import sys

from tabpilot.cli.fast import main

sys.exit(main())
