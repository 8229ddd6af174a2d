"""librdkafka's own sticky `assign_cb`, run from the library confluent-kafka bundles.

The bundled `librdkafka.so` keeps its symbol table, so its internal functions can be called
through ctypes at their offsets: `rd_kafka_assignor_run` (the eligible topics and the sticky
assignor, as a leader runs them, without the cooperative step), and the unit-test helpers
that build members and metadata (`ut_init_member_with_rack`,
`rd_kafka_metadata_new_topic_mock`, `ut_populate_internal_*_metadata`). What this relies on
is checked at start (the library version, the symbols, where `rd_kafka_t` keeps its group
handle, the member struct's layout) and `available()` says why not otherwise.

The assignor can crash its process (that is one of the facts tested), so it runs in a child
process serving cases on stdin, one JSON line each; `NativeSticky` restarts the child after a
crash and reports the signal. Its crashes are reads after free, fatal or not by what the
allocator left in the freed memory, so the child runs with `FREED_MEMORY_POISONED`: glibc keeps
no per-thread cache of freed chunks and fills them with a pattern, and every such read kills
the process (SIGSEGV, or SIGABRT where librdkafka's allocation of a poisoned size fails).

A case: {"topics": [[name, partitions]], "replication": r, "broker_racks": k, "racks": [...],
"members": [{"id", "topics", "owned": [[topic, p]], "generation", "rack" (null: none)}]},
partition j of a topic on brokers (j + i + first) % brokers as librdkafka's mock metadata
places them, broker b on rack racks[b % k]."""

from __future__ import annotations

import ctypes
import glob
import json
import os
import shutil
import subprocess
import sys
from typing import Any

FREED_MEMORY_POISONED = {"GLIBC_TUNABLES": "glibc.malloc.tcache_count=0", "MALLOC_PERTURB_": "165"}

VERSION = "2.16.0"
MEMBER_SIZE = 112  # sizeof(rd_kafka_group_member_t)
# rd_kafka_group_member_t offsets
SUBSCRIPTION, ASSIGNMENT, OWNED, MEMBER_ID, INSTANCE_ID, GENERATION = 0, 8, 16, 64, 72, 96
NEEDED = (
    "rd_kafka_assignor_run",
    "rd_kafka_assignor_find",
    "rd_kafka_metadata_new_topic_mock",
    "ut_init_member_with_rack",
    "ut_populate_internal_broker_metadata",
    "ut_populate_internal_topic_metadata",
    "rd_kafka_rebalance_protocol",
)

P = ctypes.c_void_p


class KStr(ctypes.Structure):
    _fields_ = [("len", ctypes.c_int), ("str", ctypes.c_char_p)]


class MdTopic(ctypes.Structure):
    _fields_ = [
        ("topic", ctypes.c_char_p),
        ("partition_cnt", ctypes.c_int),
        ("partitions", P),
        ("err", ctypes.c_int),
    ]


class Toppar(ctypes.Structure):
    _fields_ = [
        ("topic", ctypes.c_char_p),
        ("partition", ctypes.c_int32),
        ("offset", ctypes.c_int64),
        ("metadata", P),
        ("metadata_size", ctypes.c_size_t),
        ("opaque", P),
        ("err", ctypes.c_int),
        ("_private", P),
    ]


class ToppList(ctypes.Structure):
    _fields_ = [
        ("cnt", ctypes.c_int),
        ("size", ctypes.c_int),
        ("elems", ctypes.POINTER(Toppar)),
    ]


def _library() -> str | None:
    try:
        import confluent_kafka
    except ImportError:
        return None
    if confluent_kafka.libversion()[0] != VERSION:
        return None
    here = os.path.dirname(confluent_kafka.__file__)
    found = glob.glob(os.path.join(here, os.pardir, "confluent_kafka.libs", "librdkafka*.so*"))
    return found[0] if found else None


def _symbols(path: str) -> dict[str, int]:
    out = subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout
    syms: dict[str, int] = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            syms[parts[2]] = int(parts[0], 16)
    return syms


def available() -> str | None:
    """None when the native assignor can run here, else why not."""
    path = _library()
    if path is None:
        return f"confluent-kafka with librdkafka {VERSION} is not installed"
    if shutil.which("nm") is None:
        return "nm (binutils) is not installed"
    missing = [s for s in NEEDED if s not in _symbols(path)]
    return f"librdkafka has no symbols {missing}" if missing else None


class _Server:
    """The child's side: librdkafka loaded, a consumer's group handle and the assignor."""

    def __init__(self) -> None:
        path = _library()
        assert path is not None
        self.lib = lib = ctypes.CDLL(path)
        syms = _symbols(path)
        exported = ctypes.cast(lib.rd_kafka_rebalance_protocol, P).value
        assert exported is not None
        base = exported - syms["rd_kafka_rebalance_protocol"]

        def fn(name: str, restype: Any, *argtypes: Any) -> Any:
            return ctypes.CFUNCTYPE(restype, *argtypes)(base + syms[name])

        self.run_assignor = fn(
            "rd_kafka_assignor_run", ctypes.c_int, P, P, P, P, ctypes.c_int, P, ctypes.c_size_t
        )
        find = fn("rd_kafka_assignor_find", P, P, ctypes.c_char_p)
        self.md_new = fn(
            "rd_kafka_metadata_new_topic_mock", P, P, ctypes.c_size_t, ctypes.c_int, ctypes.c_int
        )
        self.init_member = fn(
            "ut_init_member_with_rack", None, P, ctypes.c_char_p, P, P, ctypes.c_size_t
        )
        self.brokers = fn(
            "ut_populate_internal_broker_metadata", None, P, ctypes.c_int, P, ctypes.c_size_t
        )
        self.partitions = fn("ut_populate_internal_topic_metadata", None, P)
        lib.rd_kafka_topic_partition_list_new.restype = P
        lib.rd_kafka_topic_partition_list_new.argtypes = [ctypes.c_int]
        lib.rd_kafka_topic_partition_list_add.restype = P
        lib.rd_kafka_topic_partition_list_add.argtypes = [P, ctypes.c_char_p, ctypes.c_int32]
        lib.rd_kafka_conf_new.restype = P
        lib.rd_kafka_conf_set.argtypes = [P, ctypes.c_char_p, ctypes.c_char_p, P, ctypes.c_size_t]
        lib.rd_kafka_new.restype = P
        lib.rd_kafka_new.argtypes = [ctypes.c_int, P, P, ctypes.c_size_t]
        errstr = ctypes.create_string_buffer(512)
        conf = lib.rd_kafka_conf_new()
        for key, value in (
            ("group.id", "g"),
            ("partition.assignment.strategy", "cooperative-sticky"),
        ):
            assert lib.rd_kafka_conf_set(conf, key.encode(), value.encode(), errstr, 512) == 0
        rk = lib.rd_kafka_new(1, conf, errstr, 512)  # RD_KAFKA_CONSUMER
        assert rk
        # rd_kafka_rebalance_protocol starts `push rbx; mov rax, [rdi + rk_cgrp]`
        code = ctypes.string_at(exported, 8)
        assert code[:4] == b"\x53\x48\x8b\x87", code.hex()
        self.rkcg = P.from_address(rk + int.from_bytes(code[4:8], "little")).value
        self.rkas = find(rk, b"cooperative-sticky")
        assert self.rkcg
        assert self.rkas
        self.keep: list[object] = []

    def _metadata(self, case: dict[str, Any]) -> int:
        topics = case["topics"]
        arr = (MdTopic * max(1, len(topics)))()
        for i, (name, n) in enumerate(topics):
            encoded = name.encode()
            self.keep.append(encoded)
            arr[i].topic = encoded
            arr[i].partition_cnt = n
        replication = case.get("replication", 0)
        broker_racks = case.get("broker_racks", 0)
        brokers = replication * broker_racks if broker_racks > 0 else replication
        md: int = self.md_new(ctypes.cast(arr, P), len(topics), replication or -1, brokers)
        if replication:
            racks = case.get("racks", [])
            kstrs = (ctypes.POINTER(KStr) * (len(racks) + 1))()
            for i, r in enumerate(racks):
                k = KStr(len(r.encode()), r.encode())
                self.keep.append(k)
                kstrs[i] = ctypes.pointer(k)
            self.brokers(md, broker_racks, ctypes.cast(kstrs, P), len(racks) + 1)
            self.partitions(md)
        return md

    def _member(self, at: int, m: dict[str, Any]) -> None:
        topics = (ctypes.c_char_p * max(1, len(m["topics"])))(*[t.encode() for t in m["topics"]])
        rack = m.get("rack")
        # a null rack as a v3 subscription without one parses: a string of length -1
        k = KStr(-1, None) if rack is None else KStr(len(rack.encode()), rack.encode())
        self.keep.append(k)
        self.init_member(
            at, m["id"].encode(), ctypes.byref(k), ctypes.cast(topics, P), len(m["topics"])
        )
        for offset in (MEMBER_ID, INSTANCE_ID):
            kid = ctypes.cast(P.from_address(at + offset).value, ctypes.POINTER(KStr))[0]
            assert kid.str == m["id"].encode(), "rd_kafka_group_member_t has another layout"
        sub = ctypes.cast(P.from_address(at + SUBSCRIPTION).value, ctypes.POINTER(ToppList))[0]
        assert sub.cnt == len(m["topics"]), "rd_kafka_group_member_t has another layout"
        owned = m.get("owned") or []
        lst = self.lib.rd_kafka_topic_partition_list_new(max(1, len(owned)))
        for t, p in owned:
            self.lib.rd_kafka_topic_partition_list_add(lst, t.encode(), p)
        P.from_address(at + OWNED).value = lst
        ctypes.c_int.from_address(at + GENERATION).value = m.get("generation", 1)

    def run(self, case: dict[str, Any]) -> dict[str, list[list[Any]]]:
        md = self._metadata(case)
        members = case["members"]
        buf = ctypes.create_string_buffer(MEMBER_SIZE * max(1, len(members)))
        base = ctypes.addressof(buf)
        for i, m in enumerate(members):
            self._member(base + MEMBER_SIZE * i, m)
        err = ctypes.create_string_buffer(512)
        assert self.run_assignor(self.rkcg, self.rkas, md, base, len(members), err, 512) == 0
        out: dict[str, list[list[Any]]] = {}
        for i, m in enumerate(members):
            got = P.from_address(base + MEMBER_SIZE * i + ASSIGNMENT).value
            lst = ctypes.cast(got, ctypes.POINTER(ToppList))[0]
            out[m["id"]] = [
                [lst.elems[j].topic.decode(), lst.elems[j].partition] for j in range(lst.cnt)
            ]
        return out


class NativeSticky:
    """librdkafka's `assign_cb` in a child process: `run(case)` is each member's partitions
    in librdkafka's order, or the signal that killed the child (then a new one starts)."""

    def __init__(self) -> None:
        self.child: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        path = os.pathsep.join([here, os.environ.get("PYTHONPATH", "")])
        env = dict(os.environ, PYTHONPATH=path, **FREED_MEMORY_POISONED)
        return subprocess.Popen(
            [sys.executable, "-m", "helpers.librdkafka_native"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )

    def run(self, case: dict[str, Any]) -> dict[str, list[tuple[str, int]]] | int:
        if self.child is None:
            self.child = self._start()
        child = self.child
        assert child.stdin is not None
        assert child.stdout is not None
        child.stdin.write(json.dumps(case) + "\n")
        child.stdin.flush()
        line = child.stdout.readline()
        if not line:
            self.child = None
            return child.wait()
        return {m: [(t, p) for t, p in tps] for m, tps in json.loads(line).items()}

    def close(self) -> None:
        if self.child is not None:
            assert self.child.stdin is not None
            self.child.stdin.close()
            self.child.wait()
            self.child = None


def main() -> None:
    server = _Server()
    for line in sys.stdin:
        print(json.dumps(server.run(json.loads(line))), flush=True)


if __name__ == "__main__":
    main()
