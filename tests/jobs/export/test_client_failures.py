"""The client's failure bookkeeping without a broker: one unresponsive broker's requests of a
batch fail together, and a bootstrap failure is named from what its connections met."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.jobs.export.brokers import have

pytestmark = pytest.mark.skipif(not have("kafka"), reason="kafka-python is needed (.[export])")


def test_a_broker_that_failed_one_request_is_not_asked_the_rest_of_the_batch() -> None:
    from jobs.export.client import Client, RequestFailed

    client = object.__new__(Client)
    client.max_in_flight = 2
    sent: list[tuple[str, int | None]] = []

    async def send(api: str, request: Any, node_id: int | None) -> Any:
        sent.append((request, node_id))
        if node_id == 3:
            raise RequestFailed(f"{api} to broker 3: no answer")
        return f"answer {request}"

    client._send = send  # type: ignore[method-assign]
    batch = [("a", 1), ("b", 3), ("c", 3), ("d", 2), ("e", 3)]
    out = asyncio.run(client._send_many("DescribeGroups", batch, per_request=True))
    assert sent == [("a", 1), ("b", 3), ("d", 2)]
    assert out[0] == "answer a"
    assert out[3] == "answer d"
    assert all(isinstance(out[i], RequestFailed) for i in (1, 2, 4))
    assert out[1] is out[2] is out[4]
    with pytest.raises(RequestFailed):  # not per request: the first failure stops the batch
        asyncio.run(client._send_many("Metadata", batch))


def test_bootstrap_failures_are_named_by_what_the_connections_met() -> None:
    import kafka.errors as errors

    from jobs.export.client import bootstrap_failure

    gave_up = errors.KafkaTimeoutError("Unable to bootstrap from ['k:9092']")
    refused = errors.KafkaConnectionError("111 ECONNREFUSED")
    silent = errors.RequestTimedOutError("Request timed out after 2000 ms")
    garbage = errors.InvalidReceiveError("Invalid frame length: 1213486160")
    auth = errors.SaslAuthenticationFailedError("invalid credentials")

    def named(*lost: BaseException, exc: BaseException = gave_up) -> str:
        return bootstrap_failure("k:9092", 2.0, exc, list(lost))

    unreachable = "cannot reach the bootstrap servers k:9092 within 2 s"
    assert named(refused, refused).startswith(unreachable)
    assert named().startswith(unreachable)
    assert named(refused, silent).startswith(
        "the bootstrap servers k:9092 accepted the connection but did not answer within 2 s"
    )
    assert named(silent, garbage).startswith(
        "the bootstrap servers k:9092 answered with bytes that are not Kafka's protocol"
    )
    assert named(auth).startswith(
        "the bootstrap servers k:9092 answered, but the connection failed:"
        " SaslAuthenticationFailedError:"
    )
    bad_setting = named(exc=ValueError("ssl_cafile: no such file"))
    assert bad_setting == (
        "cannot connect to the bootstrap servers k:9092: ValueError: ssl_cafile: no such file"
    )
