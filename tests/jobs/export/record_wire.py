"""Record the member bytes real clients leave with a real coordinator, for test_wire.py.

`python -m tests.jobs.export.record_wire` starts noida-db with the live estate (librdkafka's range,
roundrobin and cooperative-sticky members, kafka-python's sticky ones), describes its groups
through the exporter's client and writes each member's metadata and assignment as hex to
tests/jobs/export/wire/classic_members.json. The expected rows are frozen separately
(`--freeze`), from the decoders of the time, so that a new decoder is compared to the old.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent / "wire"
RECORDED = HERE / "classic_members.json"


def record() -> None:
    from jobs.export.client import Client, RawGroup
    from tests.jobs.export import estate
    from tests.jobs.export.brokers import noida

    with tempfile.TemporaryDirectory() as tmp, noida(Path(tmp)) as broker:
        estate.create_topics(broker.bootstrap)
        estate.start_groups(broker.bootstrap)
        try:
            estate.wait_stable()
            client = Client(broker.bootstrap, {}, 30.0)
            try:
                info = client.metadata()
                ids = sorted(g.group_id for g in estate.GROUPS)
                where, _ = client.coordinators(ids)
                by_node: dict[int, list[str]] = {}
                for g, n in sorted(where.items()):
                    by_node.setdefault(n, []).append(g)
                described = client.describe_groups(by_node)
            finally:
                client.close()
        finally:
            estate.stop_groups()
    groups: list[dict[str, Any]] = []
    for gid in sorted(described):
        g = described[gid]
        assert isinstance(g, RawGroup), g
        groups.append(
            {
                "group_id": g.group_id,
                "state": g.state,
                "protocol_type": g.protocol_type,
                "protocol": g.protocol,
                "members": [
                    {
                        "member_id": m.member_id,
                        "group_instance_id": m.group_instance_id,
                        "client_id": m.client_id,
                        "client_host": m.client_host,
                        "metadata": m.metadata.hex(),
                        "assignment": m.assignment.hex(),
                    }
                    for m in sorted(g.members, key=lambda m: m.member_id)
                ],
            }
        )
    doc = {"cluster_topics": sorted(info.topics), "groups": groups}
    RECORDED.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{RECORDED}: {len(groups)} groups, {sum(len(g['members']) for g in groups)} members")


def main(argv: list[str]) -> None:
    if "--freeze" in argv:
        from tests.jobs.export.test_wire import freeze

        freeze()
    else:
        record()


if __name__ == "__main__":
    main(sys.argv[1:])
