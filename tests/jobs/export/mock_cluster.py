"""librdkafka's mock cluster through the C library confluent-kafka ships (ctypes): several
brokers on 127.0.0.1 with racks, topics with leaders on chosen brokers, committed offsets.

The mock serves ApiVersions 0-2 only: kafka-python 3.0.12 asks for v4 and cannot parse the
mock's refusal, so the exporter caps ApiVersions at v2 (`client.API_VERSIONS_MAX`) and then
talks to it. The mock has no ListGroups, DescribeGroups or ConsumerGroupDescribe: its groups
can be joined and committed to, not listed, so tests of a whole export against it stand in
for those two requests at the client boundary."""

from __future__ import annotations

import ctypes
import glob
import os
from typing import Any

import pytest


def _lib() -> Any:
    try:
        import confluent_kafka
    except ImportError:
        pytest.skip("confluent-kafka is not installed (pip install -e '.[export]')")
    here = os.path.dirname(confluent_kafka.__file__)
    found = glob.glob(os.path.join(here, os.pardir, "confluent_kafka.libs", "librdkafka*.so*"))
    if not found:
        pytest.skip("confluent-kafka's bundled librdkafka was not found")
    lib = ctypes.CDLL(found[0])
    lib.rd_kafka_conf_new.restype = ctypes.c_void_p
    lib.rd_kafka_new.restype = ctypes.c_void_p
    lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_mock_cluster_new.restype = ctypes.c_void_p
    lib.rd_kafka_mock_cluster_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
    lib.rd_kafka_mock_cluster_bootstraps.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_cluster_destroy.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_destroy.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_broker_set_rack.argtypes = [ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p]
    lib.rd_kafka_mock_topic_create.argtypes = [
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_int,
    ]
    lib.rd_kafka_mock_partition_set_leader.argtypes = [
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.c_int32,
        ctypes.c_int32,
    ]
    lib.rd_kafka_mock_partition_set_follower.argtypes = [
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.c_int32,
        ctypes.c_int32,
    ]
    lib.rd_kafka_mock_broker_set_down.argtypes = [ctypes.c_void_p, ctypes.c_int32]
    lib.rd_kafka_mock_group_initial_rebalance_delay_ms.argtypes = [ctypes.c_void_p, ctypes.c_int32]
    return lib


class MockCluster:
    def __init__(self, brokers: int) -> None:
        self.lib = _lib()
        errstr = ctypes.create_string_buffer(512)
        conf = self.lib.rd_kafka_conf_new()
        self.rk = self.lib.rd_kafka_new(0, conf, errstr, 512)  # RD_KAFKA_PRODUCER
        if not self.rk:
            pytest.skip(f"librdkafka did not start: {errstr.value.decode()}")
        self.mc = self.lib.rd_kafka_mock_cluster_new(self.rk, brokers)
        if not self.mc:
            self.lib.rd_kafka_destroy(self.rk)
            pytest.skip("librdkafka's mock cluster did not start")
        self.bootstrap = self.lib.rd_kafka_mock_cluster_bootstraps(self.mc).decode()

    def set_rack(self, broker: int, rack: str) -> None:
        self.lib.rd_kafka_mock_broker_set_rack(self.mc, broker, rack.encode())

    def set_group_initial_rebalance_delay(self, ms: int) -> None:
        """How long the coordinator waits for more members before an empty group's first round
        (the broker's group.initial.rebalance.delay.ms)."""
        self.lib.rd_kafka_mock_group_initial_rebalance_delay_ms(self.mc, ms)

    def create_topic(self, topic: str, partitions: int, replication: int) -> None:
        self.lib.rd_kafka_mock_topic_create(self.mc, topic.encode(), partitions, replication)

    def set_leader(self, topic: str, partition: int, broker: int) -> None:
        self.lib.rd_kafka_mock_partition_set_leader(self.mc, topic.encode(), partition, broker)

    def produce(self, topic: str, partition: int, count: int) -> None:
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": self.bootstrap})
        for i in range(count):
            producer.produce(topic, value=b"%d" % i, partition=partition)
        assert producer.flush(30) == 0

    def commit(self, group_id: str, offsets: dict[tuple[str, int], int]) -> None:
        """Commit offsets for a group without joining it (a simple consumer group)."""
        from confluent_kafka import Consumer, TopicPartition

        c = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": group_id,
                "enable.auto.commit": False,
            }
        )
        try:
            tps = [TopicPartition(t, p, o) for (t, p), o in sorted(offsets.items())]
            c.commit(offsets=tps, asynchronous=False)
        finally:
            c.close()

    def partitions(self, topic: str) -> dict[int, tuple[int, list[int]]]:
        """Leader and replicas of each partition, as librdkafka (not the exporter) reads them."""
        from confluent_kafka.admin import AdminClient

        md = AdminClient({"bootstrap.servers": self.bootstrap}).list_topics(topic, timeout=30)
        return {p.id: (p.leader, list(p.replicas)) for p in md.topics[topic].partitions.values()}

    def close(self) -> None:
        self.lib.rd_kafka_mock_cluster_destroy(self.mc)
        self.lib.rd_kafka_destroy(self.rk)
