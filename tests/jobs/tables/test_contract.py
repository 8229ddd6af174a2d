"""docs/data-contract.md against the one declaration of the contract (`jobs.tables.contract`):
the inputs' column lists and their pyarrow block, the outputs' table of columns and the
metrics table; and the contract against what derives from it."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa

from jobs.tables import contract, group_read, rows, schemas

REPO = Path(__file__).resolve().parents[3]
PAGE = (REPO / "docs" / "data-contract.md").read_text(encoding="utf-8")


def _spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def _items(span: str) -> list[tuple[str, str | None]]:
    """`a string, b int (note)` -> [(a, string), (b, int)]; a name alone has no type."""
    out = []
    for item in re.sub(r"\([^)]*\)", "", span).split(","):
        words = item.split()
        out.append((words[0], words[1] if len(words) > 1 else None))
    return out


def _input_paragraph(name: str) -> str:
    match = re.search(rf"^`{name}` \((?:required|optional)\)(.*?)(?:\n\n)", PAGE, re.S | re.M)
    assert match, name
    return match.group(1)


def test_the_inputs_prose_lists_every_column_with_its_nullability_and_type() -> None:
    for table in contract.INPUTS:
        text = _input_paragraph(table.name)
        required_text, _, nullable_text = text.partition("nullable:")
        required = [i for s in _spans(required_text)[:1] for i in _items(s)]
        nullable = [i for s in _spans(nullable_text.split(".")[0]) for i in _items(s)]
        assert [n for n, _ in required] == [c.name for c in table.columns if not c.nullable]
        assert [n for n, _ in nullable] == [c.name for c in table.columns if c.nullable]
        for name, sql in required + nullable:
            if sql is not None:
                assert sql == rows.sql_type(table.column(name).type), (table.name, name)


def test_the_pyarrow_block_writes_the_contracts_columns_and_types() -> None:
    block = PAGE.split("```python\n", 1)[1].split("```", 1)[0]
    scope: dict[str, object] = {}
    exec(block, scope)  # the page's own code (tests/e2e/test_inputs.py runs it too)
    for table in contract.INPUTS:
        schema = scope[table.name.upper()]
        assert isinstance(schema, pa.Schema)
        assert schema.names == list(table.names), table.name
        assert schema.types == [c.type for c in table.columns], table.name


def _output_rows() -> dict[str, str]:
    section = PAGE.split("### Outputs", 1)[1].split("\n\n", 2)[1]
    cells = {}
    for line in section.splitlines():
        parts = [p.strip() for p in line.strip().strip("|").split("|")]
        names = _spans(parts[0])
        if len(parts) == 3 and names:
            cells[names[0]] = parts[2]
    return cells


def _listed(cell: str) -> list[str]:
    """Columns of an outputs table cell: comma lists in backticks, and `a_` / `b_` `x, y`
    for a_x, b_x, a_y, b_y."""
    out: list[str] = []
    prefixes = re.search(r"((?:`\w+_` */ *)+`\w+_`) `([^`]+)`", cell)
    for span in _spans(cell.split(" then ")[0] if prefixes else cell):
        if "," in span or not out:
            out += [n for n, _ in _items(span) if not n.isupper()]
    if prefixes:
        heads = _spans(prefixes.group(1))
        out += [h + n for n, _ in _items(prefixes.group(2)) for h in heads]
        # columns after the prefixed ones: `..., then `a_` / `b_` `x, y`, then `z``
        for tail in cell.split(" then ")[2:]:
            out += [n for n, _ in _items(_spans(tail)[0]) if not n.isupper()]
    return out


def _metrics() -> set[str]:
    table = PAGE.split("\nMetrics (one row", 1)[1].split("\n\n", 2)[1]
    names: set[str] = set()
    for line in table.splitlines()[2:]:
        for span in _spans(line.strip("|").split("|")[0]):
            head, _, rest = span.rpartition("_/")
            if head:  # min_/max_/avg_/stddev_partitions_per_member
                tail = rest.split("_", 1)[1]
                names |= {f"{p}_{tail}" for p in [*head.split("_/"), rest.split("_", 1)[0]]}
            else:
                names.add(span)
    return names


def test_the_outputs_table_lists_every_column_in_the_contracts_order() -> None:
    cells = _output_rows()
    assert set(contract.OUTPUT_NAMES) <= set(cells)
    for table in contract.OUTPUTS:
        listed = _listed(cells[table.name])
        if table is contract.BALANCE_METRICS:
            assert listed == ["group_id", "strategy"]
            assert _metrics() == set(table.names[2:])
        else:
            assert listed == list(table.names), table.name
    assert "partitioned by `strategy`" in cells["assignments"] or "(partitioned by" in next(
        line for line in PAGE.splitlines() if line.startswith("| `assignments`")
    )


def test_the_derived_declarations_follow_the_contract() -> None:
    for table in contract.INPUTS:
        spark = next(t for t in schemas.INPUT_TABLES if t.name == table.name)
        assert [n for n, _ in spark.columns] == list(table.names)
        assert spark.nullable == table.nullable
        assert spark.required == table.required
        assert list(group_read.INPUT_COLUMNS[table.name]) == list(table.names)
    for table in contract.OUTPUTS:
        fields = schemas.OUTPUT_SCHEMAS[table.name].fields
        assert [(f.name, f.nullable) for f in fields] == [
            (c.name, c.nullable) for c in table.columns
        ]
        assert [f.dataType.simpleString() for f in fields] == [
            rows.sql_type(c.type) for c in table.columns
        ]
        assert rows.sql_struct(table) == schemas.OUTPUT_SCHEMAS[table.name].simpleString()
        assert set(table.sort_keys) <= set(table.names)
        assert set(table.file_keys) <= set(table.names)
    assert [t.name for t in rows.TABLE_OF.values()] == list(contract.OUTPUT_NAMES)


def test_the_kind_codes_are_distinct() -> None:
    assert len(set(rows.KINDS)) == len(rows.KINDS)
    assert all(len(k) == 1 for k in rows.KINDS)
