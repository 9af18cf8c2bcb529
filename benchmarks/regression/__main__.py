"""python3 -m benchmarks.regression: see the package's docstring."""

import sys

from benchmarks.regression.measure import main

sys.exit(main())
