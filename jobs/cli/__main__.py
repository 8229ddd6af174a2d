"""`python -m jobs.cli COMMAND ...`: the `kafka-planner` front door without an installed
script (the command: jobs/cli/front_door.py)."""

from __future__ import annotations

import sys

from jobs.cli.front_door import main

if __name__ == "__main__":
    sys.exit(main())
