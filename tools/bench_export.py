"""Benchmark of the exporter (not a test): N classic groups of 5 members and 3 topics each on
a local noida-db broker (`tools.load_groups`), then one export; prints the time, the requests
sent by kind and the exporter process's peak memory.

    python tools/bench_export.py [--groups 20000] [--lanes 256]

The members join with JoinGroup/SyncGroup requests carrying real consumer-protocol bytes, many
groups at once from this process (no consumer clients: 100,000 real consumers would measure
the clients, not the exporter).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.jobs.export.brokers import noida, run_module
from tools.load_groups import Shape
from tools.load_groups import build as build_groups


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--groups", type=int, default=20_000)
    p.add_argument("--lanes", type=int, default=256, help="groups formed at once")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp, noida(Path(tmp)) as broker:
        built = build_groups(broker.bootstrap, args.groups, Shape(), args.lanes)
        print(f"{args.groups} groups formed in {built:.1f} s", file=sys.stderr)
        out = Path(tmp) / "snap"
        t0 = time.monotonic()
        result = run_module(
            "jobs.export_snapshot",
            "--bootstrap-servers",
            broker.bootstrap,
            "--output",
            str(out),
            timeout=3600,
        )
        wall = time.monotonic() - t0
        # the exporter is the only child process that has exited (the broker still runs)
        peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        if result.returncode not in (0, 3):
            print(result.stderr, file=sys.stderr)
            return 1
        meta = json.loads((out / "_snapshot.json").read_text())
        print(
            json.dumps(
                {
                    "groups": args.groups,
                    "members": meta["row_counts"]["subscriptions"],
                    "wall_seconds_including_interpreter": round(wall, 2),
                    "export_seconds": meta["seconds"],
                    "exporter_peak_rss_mib": round(peak_mib),
                    "requests": meta["requests"],
                    "requests_total": sum(meta["requests"].values()),
                    "row_counts": meta["row_counts"],
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
