"""`--previous` read through Spark and Hadoop's FileSystem (jobs/plan/since.py): the Spark
reader gives the figures pyarrow gives, on a `file://` URI (Hadoop's LocalFileSystem through
the Spark path) and on a file system Hadoop does not call local (`viewfs://`, a mount table
over a local folder: no server needed), and `read_since` takes the Spark path for the latter."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobs.plan import since
from jobs.tables.previous import local_reader, run_figures

pytestmark = pytest.mark.spark


def output(root: Path, member_figures: bool = True) -> Path:
    root.mkdir(parents=True)
    (root / "_manifest.json").write_text(json.dumps({"version": "0.1.0", "ds": "2026-12-01"}))
    extra = {"max_generation": 7, "members_digest": "d1"} if member_figures else {}
    tables = {
        "balance_metrics": [
            {"group_id": g, "strategy": s, "member_count": 2, "partition_count": 4,
             "balance_gap": gap, "total_lag": 10}
            for g, s, gap in [("a", "elected", 1), ("a", "range", 1), ("b", "roundrobin", 0)]
        ],
        "elections": [
            {"group_id": "a", "elected_strategy": "range", "error": None, **extra},
            {"group_id": "b", "elected_strategy": "roundrobin", "error": None, **extra},
            {"group_id": "c", "elected_strategy": None, "error": "NOT_PLANNED", **extra},
        ],
        "recommendations": [{"group_id": "a", "recommended_strategy": "roundrobin"}],
        "live_check": [{"group_id": "a", "verdict": "MATCHES_ELECTED"}],
    }  # fmt: skip
    for name, rows in tables.items():
        (root / name).mkdir()
        pq.write_table(pa.Table.from_pylist(rows), root / name / "part-00000.parquet")
    return root


def viewfs(spark: Any, target: Path) -> str:
    """A `viewfs://` URI of `target`: a mount table of its own, so no cached FileSystem."""
    cluster = f"since{uuid.uuid4().hex[:8]}"
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    conf.set(f"fs.viewfs.mounttable.{cluster}.link./previous", target.resolve().as_uri())
    return f"viewfs://{cluster}/previous"


@pytest.mark.parametrize("member_figures", [True, False])
def test_the_spark_reader_on_a_file_uri_reads_what_pyarrow_reads(
    spark: Any, tmp_path: Path, member_figures: bool
) -> None:
    root = output(tmp_path / "out", member_figures)
    by_pyarrow = run_figures(local_reader(str(root)))
    by_spark = run_figures(since.spark_reader(spark, root.as_uri()))
    assert by_spark.table.equals(by_pyarrow.table)
    assert by_spark.member_figures is member_figures
    assert by_spark.has_live_check
    assert by_spark.figures["a"].balance_gap == 1


def test_read_since_reads_another_file_system_through_spark(
    spark: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    root = output(tmp_path / "out")
    uri = viewfs(spark, root)
    assert since.local_path(spark, uri) is None  # Hadoop's ViewFileSystem: not local
    assert since.local_path(spark, root.as_uri()) == str(root)

    def no_os_read(path: str) -> Any:
        raise AssertionError(f"read with the OS: {path}")

    monkeypatch.setattr(since, "read_previous", no_os_read)
    found = since.read_since(spark, uri)
    assert found.unusable is None
    assert found.previous is not None
    assert found.previous.run.table.equals(run_figures(local_reader(str(root))).table)
    assert found.as_manifest() == {"path": uri, "ds": "2026-12-01", "version": "0.1.0"}
    # absent there: said as for a local path, never read from the OS
    gone = since.read_since(spark, uri + "-nothing")
    assert gone.unusable is not None
    assert "does not exist" in gone.unusable
