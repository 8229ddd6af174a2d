"""Benchmark of the exporter (not a test): N classic groups of 5 members and 3 topics each on
a local noida-db broker, then one export; prints the time and the requests sent.

    python tools/bench_export.py [--groups 2000]

The members join with raw JoinGroup/SyncGroup requests carrying real consumer-protocol bytes
(no consumer threads: 10,000 real consumers would measure the clients, not the exporter).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jobs.export.protocol import (
    Assignment,
    Subscription,
    encode_assignment,
    encode_subscription,
)
from tests.jobs.export.brokers import noida, run_module

TOPICS, PARTITIONS, MEMBERS = 30, 6, 5


def build(bootstrap: str, groups: int) -> None:  # noqa: C901 (a benchmark script)
    from confluent_kafka.admin import AdminClient, NewTopic
    from kafka.admin import KafkaAdminClient
    from kafka.protocol.consumer.group import JoinGroupRequest, SyncGroupRequest

    admin = AdminClient({"bootstrap.servers": bootstrap})
    names = [f"bench-{i:02d}" for i in range(TOPICS)]
    for f in admin.create_topics([NewTopic(t, PARTITIONS, 1) for t in names]).values():
        f.result(30)
    clients = [
        KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=120000)
        for _ in range(MEMBERS)
    ]
    # All members of a group have their member id before any joins with it, so the broker
    # forms each group with its five members in one generation.
    barrier = threading.Barrier(MEMBERS)

    def member(slot: int) -> None:
        # One connection per member: a broker answers one request per connection at a time,
        # and a JoinGroup waits for the group's other members.
        kp = clients[slot]

        async def run() -> None:
            for i in range(groups):
                gid = f"bench-group-{i:05d}"
                topics = sorted({names[(i + k * 7) % TOPICS] for k in range(3)})
                node = await kp._find_coordinator_id(gid)
                meta = encode_subscription(Subscription(3, topics, None, [], -1, None))
                proto = [JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=meta)]
                member_id = ""
                first = True
                while True:
                    r = await kp._manager.send(
                        JoinGroupRequest(
                            group_id=gid,
                            session_timeout_ms=300000,
                            rebalance_timeout_ms=60000,
                            member_id=member_id,
                            group_instance_id=None,
                            protocol_type="consumer",
                            protocols=proto,
                        ),
                        node_id=node,
                        request_timeout_ms=120000,
                    )
                    member_id = r.member_id
                    if first:
                        first = False
                        await kp._net.sleep(0)
                        barrier.wait()
                    if r.error_code == 0:
                        break
                assignments = []
                if r.leader == member_id:
                    ids = sorted(m.member_id for m in r.members)
                    parts = [(t, p) for t in topics for p in range(PARTITIONS)]
                    for n, m in enumerate(ids):
                        mine = parts[n :: len(ids)]
                        owned = [(t, [p for tt, p in mine if tt == t]) for t in topics]
                        assignments.append(
                            SyncGroupRequest.SyncGroupRequestAssignment(
                                member_id=m, assignment=encode_assignment(Assignment(3, owned))
                            )
                        )
                await kp._manager.send(
                    SyncGroupRequest(
                        group_id=gid,
                        generation_id=r.generation_id,
                        member_id=member_id,
                        group_instance_id=None,
                        protocol_type="consumer",
                        protocol_name="range",
                        assignments=assignments,
                    ),
                    node_id=node,
                    request_timeout_ms=120000,
                )
                if slot == 0 and (i + 1) % 200 == 0:
                    print(f"  {i + 1} groups joined", file=sys.stderr)

        kp._manager.run(run)

    threads = [threading.Thread(target=member, args=(k,)) for k in range(MEMBERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--groups", type=int, default=2000)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp, noida(Path(tmp)) as broker:
        t0 = time.monotonic()
        build(broker.bootstrap, args.groups)
        print(f"estate built in {time.monotonic() - t0:.1f} s", file=sys.stderr)
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
