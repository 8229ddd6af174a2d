"""librdkafka's mock cluster through the C library confluent-kafka ships (ctypes): several
brokers on 127.0.0.1 with racks, topics with leaders on chosen brokers, committed offsets."""

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

    def create_topic(self, topic: str, partitions: int, replication: int) -> None:
        self.lib.rd_kafka_mock_topic_create(self.mc, topic.encode(), partitions, replication)

    def set_leader(self, topic: str, partition: int, broker: int) -> None:
        self.lib.rd_kafka_mock_partition_set_leader(self.mc, topic.encode(), partition, broker)

    def close(self) -> None:
        self.lib.rd_kafka_mock_cluster_destroy(self.mc)
        self.lib.rd_kafka_destroy(self.rk)
