"""`python -m evaluator.cli ...`: the same as the `agentsweep` console script."""

import sys

from evaluator.cli import main

sys.exit(main())
