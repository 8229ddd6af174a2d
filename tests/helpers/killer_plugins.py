"""Plugins that take their worker down in ways no exception handler can catch, but only for
groups whose id starts with `bad`; every other group gets a range-like assignment."""

from __future__ import annotations

import ctypes
import os
import time
from collections.abc import Mapping
from typing import Any


class _Base:
    name = "base"

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Any]
    ) -> dict[str, list[tuple[str, int]]]:
        members = sorted(subscriptions)
        if any(m.startswith("bad") for m in members):
            self.fail()
        out: dict[str, list[tuple[str, int]]] = {m: [] for m in members}
        for topic in sorted(partitions_per_topic):
            subs = [m for m in members if topic in subscriptions[m].topics]
            for p in range(partitions_per_topic[topic]):
                out[subs[p % len(subs)]].append((topic, p))
        return out

    def fail(self) -> None:
        raise NotImplementedError


class Exits(_Base):
    name = "exits"

    def fail(self) -> None:
        os._exit(3)


class Segfaults(_Base):
    name = "segfaults"

    def fail(self) -> None:
        ctypes.string_at(0)  # reads address 0: SIGSEGV, as a broken native library would


class Hangs(_Base):
    name = "hangs"

    def fail(self) -> None:
        time.sleep(3600)


class Hogs(_Base):
    name = "hogs"

    def fail(self) -> None:
        hoard = []
        while True:  # until the guard stops it
            hoard.append(bytearray(64 * 2**20))
            for i in range(0, len(hoard[-1]), 4096):
                hoard[-1][i] = 1  # touch every page: resident, not just reserved


class HangsWhenGrown(_Base):
    """Plans `bad` groups as they are, and hangs once one holds a member the capacity search
    added (its id contains `-joined`)."""

    name = "hangswhengrown"

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Any]
    ) -> dict[str, list[tuple[str, int]]]:
        members = sorted(subscriptions)
        grown = any("-joined" in m for m in members)
        if grown and any(m.startswith("bad") for m in members):
            time.sleep(3600)
        return super().assign(partitions_per_topic, {m: subscriptions[m] for m in members})

    def fail(self) -> None:
        pass  # the bad group as it is plans like the others
