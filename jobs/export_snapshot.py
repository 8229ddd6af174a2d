"""`python -m jobs.export_snapshot --bootstrap-server H:P --output DIR`: export a live Kafka
cluster's consumer groups to the planner's input tables (the command: jobs/cli/export.py;
the same as `kafka-planner export`)."""

from __future__ import annotations

import sys

from jobs.cli.export import main

if __name__ == "__main__":
    sys.exit(main())
