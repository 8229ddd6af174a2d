"""`python -m jobs.export_snapshot --bootstrap-servers H:P --output DIR`: export a live Kafka
cluster's consumer groups to the planner's input tables (the command: jobs/cli/export.py)."""

from __future__ import annotations

import sys

from jobs.cli.export import main

if __name__ == "__main__":
    sys.exit(main())
