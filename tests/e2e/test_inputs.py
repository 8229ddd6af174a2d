"""Inputs as users write them, through the real entry point `main`.

Every refused input must exit 2 with the culprit named (table, column, file) and nothing
written; every accepted one is planned as if written with the contract's exact types.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobs.plan_assignments import main
from jobs.tables.schemas import INPUT_TABLES
from tools.sample_estate import SCHEMAS

pytestmark = pytest.mark.e2e
README = Path(__file__).resolve().parents[2] / "docs" / "data-contract.md"


def run_main(tmp_path: Path, estate: Path, caplog: Any, *extra: str) -> tuple[int, str]:
    out = tmp_path / "out"
    caplog.clear()
    code = main(["--input", str(estate), "--output", str(out), "--strategies", "range", *extra])
    return code, caplog.text


def assert_refused(tmp_path: Path, code: int, log: str, *needles: str) -> None:
    assert code == 2, log[-3000:]
    for needle in needles:
        assert needle in log, f"{needle!r} not in:\n{log[-3000:]}"
    assert "Traceback" not in log
    assert not (tmp_path / "out").exists()
    assert not list(tmp_path.glob(".out*")), "no temporary output may remain"


def typed(name: str, rows: dict[str, list[Any]]) -> pa.Table:
    """A table with the contract's exact types (the columns not given are all null)."""
    n = len(next(iter(rows.values())))
    schema = SCHEMAS[name]
    return pa.table({f.name: rows.get(f.name, [None] * n) for f in schema}, schema=schema)


def good_estate(root: Path) -> Path:
    """topic `t` (4 partitions), one group `g` with two members subscribing to it."""
    (root / "topic_partitions").mkdir(parents=True)
    (root / "subscriptions").mkdir()
    pq.write_table(
        typed("topic_partitions", {"topic": ["t"] * 4, "partition": [0, 1, 2, 3]}),
        root / "topic_partitions" / "part-0.parquet",
    )
    pq.write_table(
        typed(
            "subscriptions",
            {"group_id": ["g", "g"], "member_id": ["a", "b"], "topics": [["t"], ["t"]]},
        ),
        root / "subscriptions" / "part-0.parquet",
    )
    return root


@pytest.mark.slow
def test_inputs_as_pandas_and_pyarrow_write_them_are_planned(spark, tmp_path: Path, caplog) -> None:  # type: ignore[no-untyped-def]
    """Single `NAME.parquet` files from pandas, null-typed and missing nullable columns, float
    generations with NaN, part files that disagree, a case-variant extra column, and an empty
    folder for an optional table: all planned as if written with the contract's types."""
    root = tmp_path / "in"
    root.mkdir()
    # pandas: partition as int64; replica_racks and weight missing
    pd.DataFrame({"topic": ["t"] * 4 + ["u"] * 2, "partition": [0, 1, 2, 3, 0, 1]}).to_parquet(
        root / "topic_partitions.parquet"
    )
    (root / "subscriptions").mkdir()
    # part 1 by pandas: all-None columns are Arrow `null`, generation [None, 3] is float64 with
    # NaN, `GROUP_ID` differs from `group_id` only by case, topic_pattern is missing
    first = pd.DataFrame(
        {
            "group_id": ["g1", "g1"],
            "GROUP_ID": ["X", "Y"],
            "member_id": ["m0", "m1"],
            "group_instance_id": [None, None],
            "client_rack": [None, None],
            "topics": [["t", "u"], ["t", "u"]],
            "assignment_strategies": [None, None],
            "generation": [None, 3],
        }
    )
    first.to_parquet(root / "subscriptions" / "part-1.parquet")
    assert pq.read_schema(root / "subscriptions" / "part-1.parquet").field("client_rack").type == (
        pa.null()
    )
    # part 0 with the contract's types: client_rack is a string here
    pq.write_table(
        typed(
            "subscriptions",
            {"group_id": ["g2"], "member_id": ["n0"], "client_rack": ["r1"], "topics": [["t"]]},
        ),
        root / "subscriptions" / "part-0.parquet",
    )
    pd.DataFrame(
        {"group_id": ["g1"], "member_id": ["m1"], "topic": ["t"], "partition": [0]}
    ).to_parquet(root / "current_assignment.parquet")
    (root / "offsets").mkdir()  # empty: an absent optional table
    (root / "offsets" / "_SUCCESS").write_text("")

    code, log = run_main(tmp_path, root, caplog)
    try:
        assert code == 0, log[-3000:]
        out = tmp_path / "out"
        rows = {
            (r["group_id"], r["member_id"], r["topic"], r["partition"], r["previous_member_id"])
            for r in spark.read.parquet(str(out / "assignments")).collect()
        }
    finally:
        spark.conf.unset("spark.sql.caseSensitive")  # the job set it for `GROUP_ID`
    assert rows == {
        ("g1", "m0", "t", 0, "m1"),  # m1 owned t-0 in generation 3.0
        ("g1", "m0", "t", 1, None),
        ("g1", "m1", "t", 2, None),
        ("g1", "m1", "t", 3, None),
        ("g1", "m0", "u", 0, None),
        ("g1", "m1", "u", 1, None),
        ("g2", "n0", "t", 0, None),
        ("g2", "n0", "t", 1, None),
        ("g2", "n0", "t", 2, None),
        ("g2", "n0", "t", 3, None),
    }
    manifest = json.loads((out / "_manifest.json").read_text())
    assert manifest["input_rows"] == {
        "topic_partitions": 6,
        "subscriptions": 3,
        "current_assignment": 1,
        "target_assignment": None,
        "offsets": None,
    }
    assert manifest["rejected_by_reason"] == {}


def test_both_forms_of_a_table_are_refused(tmp_path: Path, caplog) -> None:  # type: ignore[no-untyped-def]
    root = good_estate(tmp_path / "in")
    pq.write_table(
        typed("topic_partitions", {"topic": ["t"], "partition": [0]}),
        root / "topic_partitions.parquet",
    )
    code, log = run_main(tmp_path, root, caplog)
    assert_refused(
        tmp_path, code, log, f"{root}/topic_partitions and {root}/topic_partitions.parquet"
    )


@pytest.mark.parametrize("string_file", ["a.parquet", "b.parquet"])
def test_part_files_that_disagree_name_both_files(  # type: ignore[no-untyped-def]
    tmp_path: Path, caplog, string_file: str
) -> None:
    """Spark reads one footer: which file it picks must not matter."""
    root = good_estate(tmp_path / "in")
    int_file = "b.parquet" if string_file == "a.parquet" else "a.parquet"
    folder = root / "topic_partitions"
    pq.write_table(
        pa.table({"topic": ["u"], "partition": pa.array([0], pa.int32())}), folder / int_file
    )
    pq.write_table(pa.table({"topic": ["v"], "partition": ["0"]}), folder / string_file)
    code, log = run_main(tmp_path, root, caplog)
    assert_refused(
        tmp_path,
        code,
        log,
        "topic_partitions: column 'partition' has type string, expected int",
        f"in topic_partitions/{string_file}",
        f"topic_partitions/{int_file}",
    )


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _invalid_utf8(path: Path) -> None:
    member = pa.array([b"ok", b"\xff\xfe"], pa.binary()).view(pa.string())
    pq.write_table(
        typed(
            "subscriptions", {"group_id": ["g", "g"], "member_id": member, "topics": [["t"], ["t"]]}
        ),
        path,
    )


def _fractional_generation(path: Path) -> None:
    pd.DataFrame(
        {
            "group_id": ["g", "g"],
            "member_id": ["a", "b"],
            "topics": [["t"], ["t"]],
            "generation": [None, 1.5],
        }
    ).to_parquet(path)


def _null_group_id(path: Path) -> None:
    pd.DataFrame({"group_id": [None], "member_id": ["a"], "topics": [["t"]]}).to_parquet(path)


@pytest.mark.parametrize(
    ("spoil", "needles"),
    [
        (_truncate, ["subscriptions: cannot read Parquet file subscriptions/part-0.parquet"]),
        (
            _invalid_utf8,
            [
                "subscriptions: column 'member_id' in subscriptions/part-0.parquet is unreadable",
                "UTF",
            ],
        ),
        (
            _fractional_generation,
            [
                "subscriptions: column 'generation' in subscriptions/part-0.parquet has type"
                " double with the non-integral value 1.5 (row 1), expected int"
            ],
        ),
        (
            _null_group_id,
            ["subscriptions: column 'group_id' has type null, expected string (all null"],
        ),
        (
            lambda path: path.unlink(),  # a folder with no part files (only a marker)
            ["subscriptions: subscriptions/ holds no data files"],
        ),
    ],
    ids=["truncated", "invalid-utf8", "fractional-generation", "null-required", "no-part-files"],
)
def test_unreadable_inputs_exit_2_naming_the_file(  # type: ignore[no-untyped-def]
    tmp_path: Path, caplog, spoil: Any, needles: list[str]
) -> None:
    root = good_estate(tmp_path / "in")
    (root / "subscriptions" / "_SUCCESS").write_text("")
    spoil(root / "subscriptions" / "part-0.parquet")
    code, log = run_main(tmp_path, root, caplog)
    assert_refused(tmp_path, code, log, *needles)


def test_every_schema_problem_is_reported_at_once(tmp_path: Path, caplog) -> None:  # type: ignore[no-untyped-def]
    root = good_estate(tmp_path / "in")
    pq.write_table(
        pa.table({"topic": ["t"], "partition": ["0"]}), root / "topic_partitions" / "part-0.parquet"
    )
    pq.write_table(
        pa.table({"group_id": ["g"], "topics": [[1]]}), root / "subscriptions" / "part-0.parquet"
    )
    pq.write_table(
        pa.table({"group_id": ["g"], "member_id": ["a"], "topic": [7], "partition": [0]}),
        root / "current_assignment.parquet",
    )
    code, log = run_main(tmp_path, root, caplog)
    assert_refused(
        tmp_path,
        code,
        log,
        "4 problems in input",
        "topic_partitions: column 'partition' has type string, expected int",
        "subscriptions: required column 'member_id' (string) is missing",
        "subscriptions: column 'topics' has type array<bigint>, expected array<string>",
        "current_assignment: column 'topic' has type bigint, expected string",
    )


def readme_schemas() -> dict[str, pa.Schema]:
    """Execute the pyarrow schema block of docs/data-contract.md (section Inputs)."""
    text = README.read_text(encoding="utf-8")
    inputs = text[text.index("### Inputs") : text.index("### Outputs")]
    blocks = re.findall(r"```python\n(.*?)```", inputs, re.DOTALL)
    assert len(blocks) == 1, "the Inputs section shows one python block"
    namespace: dict[str, Any] = {}
    exec(blocks[0], namespace)
    return {t.name: namespace[t.name.upper()] for t in INPUT_TABLES}


def test_readme_schemas_are_the_contract() -> None:
    from jobs.tables.inputs import arrow_type_name

    schemas = readme_schemas()
    for table in INPUT_TABLES:
        shown = [(f.name, arrow_type_name(f.type)) for f in schemas[table.name]]
        assert shown == [(n, t.simpleString()) for n, t in table.columns], table.name


def test_tables_written_as_the_readme_shows_are_planned(spark, tmp_path: Path, caplog) -> None:  # type: ignore[no-untyped-def]
    schemas = readme_schemas()
    root = tmp_path / "in"
    root.mkdir()
    frames = {
        "topic_partitions": pd.DataFrame({"topic": ["t", "t"], "partition": [0, 1]}),
        "subscriptions": pd.DataFrame(
            {"group_id": ["g"], "member_id": ["a"], "topics": [["t"]], "generation": [None]}
        ),
        "current_assignment": pd.DataFrame(
            {"group_id": ["g"], "member_id": ["a"], "topic": ["t"], "partition": [1]}
        ),
        "offsets": pd.DataFrame(
            {"group_id": ["g"], "topic": ["t"], "partition": [1], "log_end_offset": [10]}
        ),
    }
    for name, df in frames.items():
        for column in schemas[name].names:  # columns left out are all null
            if column not in df:
                df[column] = None
        df.to_parquet(root / f"{name}.parquet", schema=schemas[name], index=False)
        assert pq.read_schema(root / f"{name}.parquet").remove_metadata() == schemas[name]
    code, log = run_main(tmp_path, root, caplog)
    assert code == 0, log[-3000:]
    manifest = json.loads((tmp_path / "out" / "_manifest.json").read_text())
    assert manifest["groups"] == {"input": 1, "planned": 1, "rejected": 0}
    assert manifest["input_rows"]["offsets"] == 1


def test_other_file_systems_fall_back_to_spark_schema_merging(  # type: ignore[no-untyped-def]
    spark, tmp_path: Path, monkeypatch
) -> None:
    """HDFS or an object store: no pyarrow checks, Spark merges the part files' schemas."""
    from jobs.tables import inputs
    from jobs.tables.schemas import SchemaError

    monkeypatch.setattr(inputs, "local_path", lambda spark, path: None)
    root = good_estate(tmp_path / "in")
    pd.DataFrame(
        {
            "group_id": ["h", "h"],
            "GROUP_ID": ["X", "Y"],
            "member_id": ["a", "b"],
            "topics": [["t"], ["t"]],
            "generation": [None, 3],
        }
    ).to_parquet(root / "subscriptions" / "part-0.parquet")
    try:
        tables = inputs.read_inputs(spark, str(root))
        rows = sorted(
            (r["group_id"], r["member_id"], r["generation"])
            for r in tables["subscriptions"].collect()  # type: ignore[union-attr]
        )
    finally:
        spark.conf.unset("spark.sql.caseSensitive")
    assert rows == [("h", "a", None), ("h", "b", 3)]
    assert tables["current_assignment"] is None

    pd.DataFrame(
        {"group_id": ["h"], "member_id": ["c"], "topics": [["t"]], "generation": [1.5]}
    ).to_parquet(root / "subscriptions" / "part-1.parquet")
    with pytest.raises(
        SchemaError, match=r"column 'generation' in .*part-1.parquet has the non-integral value 1.5"
    ):
        inputs.read_inputs(spark, str(root))

    pq.write_table(
        pa.table({"topic": ["u"], "partition": ["0"]}), root / "topic_partitions" / "x.parquet"
    )
    with pytest.raises(SchemaError, match=r"topic_partitions: cannot read Parquet at .*MERGE"):
        inputs.read_inputs(spark, str(root))


def test_an_empty_table_written_by_pandas_reads_as_empty(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """pandas types every column of an empty frame `null`: with no rows, that is no problem."""
    from jobs.tables import inputs

    root = good_estate(tmp_path / "in")
    empty = pd.DataFrame({"group_id": [], "member_id": [], "topic": [], "partition": []})
    empty.astype(object).to_parquet(root / "current_assignment.parquet")
    assert pq.read_schema(root / "current_assignment.parquet").field("group_id").type == pa.null()
    frame = inputs.read_inputs(spark, str(root))["current_assignment"]
    assert frame is not None
    assert frame.count() == 0
    assert [(f.name, f.dataType.simpleString()) for f in frame.schema.fields] == [
        ("group_id", "string"),
        ("member_id", "string"),
        ("topic", "string"),
        ("partition", "int"),
    ]
