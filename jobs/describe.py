"""`python -m jobs.describe`: one group of a planner output, as `kafka-consumer-groups.sh
--describe --group G` shows a live group (the command: jobs/cli/describe.py; the same as
`kafka-planner describe`)."""

from __future__ import annotations

import sys

from jobs.cli.describe import main

if __name__ == "__main__":
    sys.exit(main())
