"""Custom assignor plugins: loading, the adapter, validation and error paths."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from assignors.catalog.plugins import (
    ASSIGNOR_FAILED,
    INVALID_ASSIGNMENT,
    AssignorFailedError,
    InvalidAssignmentError,
    PluginAssignor,
    PluginLoadError,
    Subscription,
    is_plugin_path,
    load_assignor,
)
from assignors.model import GroupSpec, Member, TopicMetadata

RANDOM = "assignors.catalog.examples.random_assignor:RandomAssignor"

PLUGINS = '''
from types import MappingProxyType

class AllToFirst:
    """Everything to the alphabetically first subscriber; records what it was given."""
    name = "all-to-first"
    seen = []

    def assign(self, partitions_per_topic, subscriptions):
        AllToFirst.seen.append((dict(partitions_per_topic), dict(subscriptions)))
        out = {}
        for topic, n in partitions_per_topic.items():
            first = min(m for m, s in subscriptions.items() if topic in s.topics)
            out.setdefault(first, []).extend((topic, p) for p in range(n))
        return out

class Returns:
    name = "returns"
    result = None

    def assign(self, partitions_per_topic, subscriptions):
        return self.result

class Raises:
    name = "raises"

    def assign(self, partitions_per_topic, subscriptions):
        raise KeyError("boom")

class Exits:
    name = "exits"

    def assign(self, partitions_per_topic, subscriptions):
        raise SystemExit(3)

class KafkaStyleName:
    def name(self):
        return "kafka-style"

    def assign(self, partitions_per_topic, subscriptions):
        return {}

class NoName:
    def assign(self, partitions_per_topic, subscriptions):
        return {}

class NoAssign:
    name = "no-assign"

class BadInit:
    name = "bad-init"

    def __init__(self):
        raise RuntimeError("needs config")

class Outer:
    class Inner:
        name = "inner"

        def assign(self, partitions_per_topic, subscriptions):
            return {}

not_a_class = 42
'''


@pytest.fixture
def plugin_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / "my_plugins.py").write_text(textwrap.dedent(PLUGINS))
    (tmp_path / "broken_plugins.py").write_text("raise ImportError('missing dependency xyz')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "my_plugins"
    sys.modules.pop("my_plugins", None)
    sys.modules.pop("broken_plugins", None)


def spec(**owned: list[tuple[str, int]]) -> GroupSpec:
    members = (
        Member("b", frozenset({"t", "ghost"}), "inst-b", "rack-1", tuple(owned.get("b", [])), 3),
        Member("a", frozenset({"t", "u"})),
        Member("c", frozenset()),
    )
    return GroupSpec("g", members, {"t": TopicMetadata("t", 3), "u": TopicMetadata("u", 1)})


def test_example_random_plugin_is_valid_and_deterministic() -> None:
    assignor = load_assignor(RANDOM)
    assert assignor.name == "random"
    out = assignor.assign(spec())
    assert out == load_assignor(RANDOM).assign(spec())
    assert list(out) == ["b", "a", "c"]
    assert out["c"] == []
    assert sorted(tp for tps in out.values() for tp in tps) == [
        ("t", 0),
        ("t", 1),
        ("t", 2),
        ("u", 0),
    ]
    assert ("u", 0) in out["a"]


def test_random_plugin_seed_depends_on_content_only() -> None:
    members = tuple(Member(f"m{i}", frozenset({"t"})) for i in range(8))
    base = GroupSpec("g1", members, {"t": TopicMetadata("t", 64)})
    renamed_group = GroupSpec("other", tuple(reversed(members)), base.topics)
    first = load_assignor(RANDOM).assign(base)
    assert load_assignor(RANDOM).assign(renamed_group) == first
    assert len({len(v) for v in first.values()}) > 1  # random, so not round robin


@pytest.mark.parametrize("sep", [":", "."])
def test_both_path_forms_load(plugin_module: str, sep: str) -> None:
    assert load_assignor(f"{plugin_module}{sep}AllToFirst").name == "all-to-first"


def test_nested_class_and_kafka_style_name(plugin_module: str) -> None:
    assert load_assignor(f"{plugin_module}:Outer.Inner").name == "inner"
    assert load_assignor(f"{plugin_module}:KafkaStyleName").name == "kafka-style"


def test_plugin_input_mirrors_kafka(plugin_module: str) -> None:
    assignor = load_assignor(f"{plugin_module}:AllToFirst")
    out = assignor.assign(spec(b=[("t", 1), ("t", 9)]))
    assert out == {"b": [], "a": [("t", 0), ("t", 1), ("t", 2), ("u", 0)], "c": []}
    partitions_per_topic, subscriptions = type(assignor.plugin).seen[-1]
    assert partitions_per_topic == {"t": 3, "u": 1}  # subscribed and existing only
    assert list(subscriptions) == ["a", "b", "c"]
    assert subscriptions["b"] == Subscription(
        topics=["ghost", "t"],
        owned_partitions=[("t", 1), ("t", 9)],
        generation=3,
        group_instance_id="inst-b",
        rack="rack-1",
    )
    assert subscriptions["c"].topics == []


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ([("t", 0)], "must return a mapping"),
        ({"zed": []}, "unknown member 'zed'"),
        ({"a": [("t", 0), ("t", 1), ("t", 2), ("u", 0)], "b": [("nope", 0)]}, "does not exist"),
        ({"a": [("t", 0), ("t", 1), ("t", 3), ("u", 0)]}, "t has partitions 0..2"),
        ({"a": [("t", 0), ("t", 1), ("t", -1)]}, "t has partitions 0..2"),
        ({"a": [("t", 0), ("t", 1)], "b": [("t", 2), ("u", 0)]}, "does not subscribe to u"),
        ({"a": [("t", 0), ("t", 1), ("u", 0)], "c": [("t", 2)]}, "does not subscribe to t"),
        ({"a": [("t", 0), ("t", 0)]}, "partition t-0 assigned twice"),
        ({"a": [("t", 0), ("u", 0)], "b": [("t", 0)]}, "assigned to both 'a' and 'b'"),
        ({"a": [("t", 0), ("u", 0)]}, "2 partition(s) left unassigned: t-1, t-2"),
        ({"a": "t0"}, "must be an iterable"),
        ({"a": [("t", "0")]}, "expected a (str topic, int partition) pair"),
        ({"a": [("t", True)]}, "expected a (str topic, int partition) pair"),
        ({"a": [("t", 0, 1)]}, "expected a (topic, partition) pair"),
    ],
)
def test_invalid_results_are_rejected_precisely(
    plugin_module: str, result: object, message: str
) -> None:
    assignor = load_assignor(f"{plugin_module}:Returns")
    assignor.plugin.result = result
    with pytest.raises(InvalidAssignmentError) as info:
        assignor.assign(spec())
    assert message in str(info.value)
    assert str(info.value).startswith("returns: ")
    assert info.value.reason == INVALID_ASSIGNMENT


def test_valid_result_is_normalised(plugin_module: str) -> None:
    assignor = load_assignor(f"{plugin_module}:Returns")
    assignor.plugin.result = {"a": (["u", 0], ("t", 2)), "b": iter([("t", 1), ("t", 0)])}
    out = assignor.assign(spec())
    assert out == {"b": [("t", 1), ("t", 0)], "a": [("u", 0), ("t", 2)], "c": []}


@pytest.mark.parametrize(("cls", "text"), [("Raises", "KeyError: 'boom'"), ("Exits", "SystemExit")])
def test_plugin_exceptions_surface_as_assignor_failed(
    plugin_module: str, cls: str, text: str
) -> None:
    with pytest.raises(AssignorFailedError) as info:
        load_assignor(f"{plugin_module}:{cls}").assign(spec())
    assert text in str(info.value)
    assert info.value.reason == ASSIGNOR_FAILED


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("no_such_module_xyz:Cls", "cannot import module 'no_such_module_xyz'"),
        ("broken_plugins:Cls", "missing dependency xyz"),
        ("{mod}:Missing", "has no attribute 'Missing'"),
        ("{mod}.Missing", "has no attribute 'Missing'"),
        ("{mod}:not_a_class", "is not a class"),
        ("{mod}:NoName", "no non-empty string `name`"),
        ("{mod}:NoAssign", "no `assign` method"),
        ("{mod}:BadInit", "needs config"),
        ("justaname", "not a plugin class path"),
        ("bad path:Cls", "not a plugin class path"),
    ],
)
def test_load_errors_name_the_culprit(plugin_module: str, name: str, message: str) -> None:
    path = name.format(mod=plugin_module)
    with pytest.raises(PluginLoadError) as info:
        load_assignor(path)
    assert message in str(info.value)
    assert repr(path) in str(info.value)


def test_is_plugin_path() -> None:
    assert is_plugin_path("a.b:C")
    assert is_plugin_path(" a.b.C ")
    assert not is_plugin_path("cooperative-sticky")
    assert not is_plugin_path("org.apache.kafka.clients.consumer.CooperativeStickyAssignor")
    assert not is_plugin_path("a b")


def test_adapter_satisfies_assignor_protocol() -> None:
    from assignors.catalog.registry import Assignor

    assignor: Assignor = load_assignor(RANDOM)
    assert isinstance(assignor, PluginAssignor)
    assert assignor.java_class == RANDOM
