"""`python -m bench`: run the benchmark suites."""

import sys

from bench.run import main

sys.exit(main())
