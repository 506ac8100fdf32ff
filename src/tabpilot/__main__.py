"""``python -m tabpilot`` is the ``tabpilot`` command."""

import sys

from tabpilot.cli.main import main

sys.exit(main())
