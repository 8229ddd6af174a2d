"""Which Arrow types each contract type takes (jobs/tables/inputs.py), without a JVM."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql import types as T

from jobs.tables.inputs import BAD, FLOAT, NULL, OK, _verdict, arrow_type_name

STRINGS = T.ArrayType(T.StringType())


@pytest.mark.parametrize(
    ("arrow", "expected", "verdict"),
    [
        (pa.string(), T.StringType(), OK),
        (pa.large_string(), T.StringType(), OK),
        (pa.dictionary(pa.int32(), pa.string()), T.StringType(), OK),  # pandas categorical
        (pa.null(), T.StringType(), NULL),
        (pa.int64(), T.StringType(), BAD),
        (pa.int8(), T.IntegerType(), OK),
        (pa.int64(), T.IntegerType(), OK),
        (pa.uint32(), T.IntegerType(), OK),
        # Spark reads uint64 as decimal(20,0): accepted, values above 2^63-1 reported (scan)
        (pa.uint64(), T.IntegerType(), OK),
        (pa.uint64(), T.LongType(), OK),
        (pa.float64(), T.IntegerType(), FLOAT),
        (pa.float32(), T.LongType(), FLOAT),
        (pa.string(), T.IntegerType(), BAD),
        (pa.int64(), T.DoubleType(), OK),
        (pa.float32(), T.DoubleType(), OK),
        (pa.string(), T.DoubleType(), BAD),
        (pa.list_(pa.string()), STRINGS, OK),
        (pa.large_list(pa.large_string()), STRINGS, OK),
        (pa.list_(pa.null()), STRINGS, OK),  # pyarrow's type for lists that are all empty
        (pa.list_(pa.int32()), STRINGS, BAD),
        (pa.string(), STRINGS, BAD),
        (pa.timestamp("us"), T.StringType(), BAD),
    ],
)
def test_verdicts(arrow: pa.DataType, expected: T.DataType, verdict: str) -> None:
    assert _verdict(arrow, expected) == verdict


@pytest.mark.parametrize(
    ("arrow", "name"),
    [
        (pa.int32(), "int"),
        (pa.int64(), "bigint"),
        (pa.null(), "null"),
        (pa.large_string(), "string"),
        (pa.list_(pa.int64()), "array<bigint>"),
        (pa.dictionary(pa.int8(), pa.string()), "string"),
        (pa.timestamp("ms"), "timestamp[ms]"),
    ],
)
def test_type_names_follow_the_contract(arrow: pa.DataType, name: str) -> None:
    assert arrow_type_name(arrow) == name
