"""The plain-pandas oracle of the bucket row format (`jobs.tables.rows`): a UDF frame's output
tables decoded independently of the job's decoders (Spark SQL, pyarrow), with `json.loads`
and string splits."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow as pa

from jobs.tables.rows import (
    COSTS_PAYLOAD_COLUMNS,
    KIND_ASSIGNMENT,
    KIND_REBALANCE_COSTS,
    PAYLOAD,
    ROUND_SEPARATOR,
    SHARED_SEPARATOR,
    TABLE_OF,
)


def costs_values(payload: str) -> dict[str, str | None]:
    """A `rebalance_costs` payload's values by column, as text (None for null)."""
    values = payload.split(",", len(COSTS_PAYLOAD_COLUMNS) - 1)
    return {name: v or None for name, v in zip(COSTS_PAYLOAD_COLUMNS, values, strict=True)}


def expand_shared(rows: pd.DataFrame) -> pd.DataFrame:
    """Assignment rows of the wide frame, one per strategy (see SHARED_SEPARATOR)."""
    shared = rows[rows[PAYLOAD].notna()]
    if shared.empty:
        return rows
    entries = shared[PAYLOAD].astype(object).map(lambda text: text.split(SHARED_SEPARATOR))
    extra = shared.assign(entry=entries).explode("entry")
    parts = extra["entry"].map(lambda entry: entry.split(ROUND_SEPARATOR))
    extra["strategy"] = parts.map(lambda p: p[0]).astype(rows["strategy"].dtype)
    own = parts.map(lambda p: int(p[1]) if len(p) > 1 else None)
    rounds = extra["rebalance_round"].astype(object).where(own.isna(), own)
    extra["rebalance_round"] = rounds.astype(rows["rebalance_round"].dtype)
    return pd.concat([rows, extra.drop(columns="entry")], ignore_index=True)


def split_tables(wide: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The output tables of a wide frame in plain pandas (the oracle of the Spark split)."""
    out = {}
    for kind, table in TABLE_OF.items():
        rows = wide[wide["kind"] == kind]
        names = list(table.names)
        if kind == KIND_ASSIGNMENT:
            out[table.name] = expand_shared(rows)[names].reset_index(drop=True)
        elif kind == KIND_REBALANCE_COSTS:
            texts = {c.name for c in table.columns if c.type == pa.string()}
            records = []
            for gid, payload in zip(rows["group_id"], rows[PAYLOAD], strict=True):
                values = costs_values(payload).items()
                typed = {n: v if v is None or n in texts else int(v) for n, v in values}
                records.append({"group_id": gid, **typed})
            out[table.name] = pd.DataFrame.from_records(records, columns=names)
        else:
            records = [json.loads(p) for p in rows[PAYLOAD]]
            out[table.name] = pd.DataFrame.from_records(records, columns=names)
    return out
