"""Which client library a member's consumer runs, from what DescribeGroups and
ConsumerGroupDescribe show of it: its `client.id` and, for a classic member, its metadata.

The evidence, and where each piece comes from (docs/exporter.md, "Which client library"):

- `client.id` left at the library's default. librdkafka's is `rdkafka` and kafka-python's
  `kafka-python-<version>` (both seen from the libraries themselves: confluent-kafka 2.16.1
  with librdkafka 2.16.0, kafka-python 3.0.12). Java's consumer generates
  `consumer-<group.id>-<n>` (a process-wide sequence from 1), or
  `consumer-<group.id>-<group.instance.id>` for a static member (ConsumerConfig's
  `maybeOverrideClientId` in apache/kafka).
- The subscription's user data in kafka-python's own sticky layout (the sticky assignor's
  state behind an int16 version header, which neither Java nor librdkafka writes).

Anything else (a `client.id` an operator chose, another library) is no evidence: the library
is left null, which the data contract reads as Java.
"""

from __future__ import annotations

import re

JAVA = "java"
LIBRDKAFKA = "librdkafka"
KAFKA_PYTHON = "kafka-python"

LIBRDKAFKA_CLIENT_ID = "rdkafka"
_KAFKA_PYTHON_CLIENT_ID = re.compile(r"kafka-python-\d+\.\d+(\.\d+)?([.+-]?[0-9A-Za-z.+-]*)?")
_JAVA_SEQUENCE = re.compile(r"[1-9][0-9]*")


def library_of_client_id(
    client_id: str | None, group_id: str, instance_id: str | None
) -> str | None:
    """The library whose default `client.id` this is, or None (not a default shape)."""
    if not client_id:
        return None
    if client_id == LIBRDKAFKA_CLIENT_ID:
        return LIBRDKAFKA
    if _KAFKA_PYTHON_CLIENT_ID.fullmatch(client_id):
        return KAFKA_PYTHON
    prefix = f"consumer-{group_id}-"
    if client_id.startswith(prefix):
        suffix = client_id[len(prefix) :]
        if (instance_id is not None and suffix == instance_id) or (
            instance_id is None and _JAVA_SEQUENCE.fullmatch(suffix)
        ):
            return JAVA
    return None


def client_library(
    client_id: str | None,
    group_id: str,
    instance_id: str | None,
    sticky_layout: str | None = None,
) -> str | None:
    """The member's client library: its default `client.id` first, else a metadata layout
    only that library writes (`sticky_layout`: the layout `protocol.decode_sticky_user_data`
    read the subscription's user data with, if any); None when nothing says."""
    by_id = library_of_client_id(client_id, group_id, instance_id)
    if by_id is not None:
        return by_id
    if sticky_layout == "kafka-python":
        return KAFKA_PYTHON
    return None
