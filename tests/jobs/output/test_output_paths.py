"""Pure path rules of jobs/output and jobs/fs.py (no JVM)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jobs import fs
from jobs.output import lock, normalize
from jobs.output.swap import Place


@pytest.mark.parametrize(
    ("given", "expected"),
    [("out/x/", "out/x"), ("out/x//", "out/x"), ("out/x", "out/x"), ("/", "/")],
)
def test_normalize_drops_trailing_slashes(given: str, expected: str) -> None:
    assert normalize(given) == expected


@pytest.mark.parametrize(
    ("a", "b", "overlap"),
    [
        ("/snaps/ds=1", "/snaps/ds=1", True),
        ("/snaps", "/snaps/ds=1", True),
        ("/snaps/ds=1/out", "/snaps/ds=1", True),
        ("/snaps/ds=1", "/snaps/ds=10", False),  # a prefix of the name is not a parent
        ("/out", "/snaps", False),
        ("/", "/snaps", True),
    ],
)
def test_overlap_is_by_path_components(a: str, b: str, overlap: bool) -> None:
    pa, pb = Place("file", "", a), Place("file", "", b)
    assert pa.overlaps(pb) is overlap
    assert pb.overlaps(pa) is overlap


def test_overlap_needs_the_same_file_system() -> None:
    assert not Place("hdfs", "nn:8020", "/data").overlaps(Place("file", "", "/data"))
    assert not Place("hdfs", "a:8020", "/data").overlaps(Place("hdfs", "b:8020", "/data"))


def test_exchange_swaps_two_directories_in_one_step(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "from-a").touch()
    (b / "from-b").touch()
    if not fs.exchange(str(a), str(b)):
        pytest.skip("no renameat2(RENAME_EXCHANGE) on this system")
    assert os.listdir(a) == ["from-b"]
    assert os.listdir(b) == ["from-a"]


def test_a_local_rename_never_replaces_its_target(tmp_path: Path) -> None:
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.mkdir()
    dst.mkdir()
    with pytest.raises(FileExistsError):
        fs.LocalFs().rename(str(src), str(dst))
    assert src.exists()


@pytest.mark.parametrize(
    ("holder", "stale"),
    [
        ({"pid": os.getpid()}, False),  # alive
        ({"pid": 0}, True),
        ({"pid": "x"}, True),
    ],
)
def test_only_a_dead_pid_on_this_host_is_stale(holder: dict[str, object], stale: bool) -> None:
    import socket

    assert lock._is_stale({**holder, "host": socket.gethostname()}) is stale
    assert lock._is_stale({**holder, "host": "another-host.invalid"}) is False
