"""The Arrow floor writes the job's own files again: the same paths, rows, row groups and
compression (tools.floors)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tools.floors import ArrowFloor, same_rows


def _output(root: Path) -> None:
    rows = pa.table({"group_id": [f"g{i}" for i in range(1000)], "partition": list(range(1000))})
    for strategy in ("range", "roundrobin"):
        folder = root / "assignments" / f"strategy={strategy}"
        folder.mkdir(parents=True)
        pq.write_table(
            rows, folder / "part-00000.parquet", row_group_size=300, compression="snappy"
        )
    (root / "elections").mkdir()
    pq.write_table(rows.slice(0, 10), root / "elections" / "part-00000.parquet", compression="zstd")
    (root / "_manifest.json").write_text("{}")


def test_the_arrow_floor_writes_the_jobs_files_again(tmp_path: Path) -> None:
    estate, job, floor = tmp_path / "in", tmp_path / "job", tmp_path / "floor"
    estate.mkdir()
    pq.write_table(pa.table({"topic": ["t"] * 5, "partition": list(range(5))}),
                   estate / "topic_partitions.parquet")  # fmt: skip
    _output(job)
    seconds = ArrowFloor(str(estate), str(job), processes=2).run(str(floor))
    assert seconds >= 0
    assert same_rows(str(job), str(floor))
    for path in job.rglob("*.parquet"):
        mine = pq.ParquetFile(floor / path.relative_to(job)).metadata
        theirs = pq.ParquetFile(path).metadata
        assert mine.num_rows == theirs.num_rows
        assert mine.num_row_groups == theirs.num_row_groups
        assert mine.row_group(0).column(0).compression == theirs.row_group(0).column(0).compression
    assert not same_rows(str(job), str(tmp_path / "in"))
