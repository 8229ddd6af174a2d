"""A bucket's input as the job sends it: members apart from owned and offsets rows."""

from __future__ import annotations

import pandas as pd

from jobs.plan.udf import MEMBER_INPUT_COLUMNS, PARTITION_INPUT_COLUMNS
from jobs.tables.rows import KIND_MEMBER


def cogrouped(pdf: pd.DataFrame) -> list[pd.DataFrame]:
    """`pdf` (rows of `INPUT_COLUMNS`) as the two frames of the job's cogroup, each with only
    its kinds' columns; an empty side as Spark may hand it over, without columns."""
    is_member = pdf["kind"] == KIND_MEMBER
    members = pdf[is_member][list(MEMBER_INPUT_COLUMNS)].reset_index(drop=True)
    partitions = pdf[~is_member][list(PARTITION_INPUT_COLUMNS)].reset_index(drop=True)
    return [frame if len(frame) else pd.DataFrame() for frame in (members, partitions)]
