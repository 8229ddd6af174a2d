"""The planner's TOML config: typos refused, [spark] merged and flattened."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from jobs.settings.config import (
    DEFAULT_CONFIG,
    ConfigError,
    PlannerConfig,
    load_config,
    session_error,
    spark_property_problem,
    valid_ds,
)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "planner.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_shipped_config_loads() -> None:
    config = load_config()
    shipped = tomllib.loads(DEFAULT_CONFIG.read_text(encoding="utf-8"))
    assert config.planner.strategies == tuple(shipped["planner"]["strategies"])
    assert config.spark == {k: str(v) for k, v in shipped["spark"].items()}


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        (
            '[planner]\nstrategy = ["range"]\n',
            ["unknown key 'strategy' in [planner]", "did you mean 'strategies'", "known keys:"],
        ),
        (
            "[excution]\nbuckets = 4\n",
            ["unknown section 'excution'", "did you mean 'execution'", "[planner], [execution]"],
        ),
        ('strategies = ["range"]\n', ["unknown top-level key 'strategies'", "known sections"]),
        ("[execution]\nbucket = 4\n", ["unknown key 'bucket' in [execution]", "buckets"]),
        ("planner = 3\n", ["[planner] must be a table"]),
    ],
)
def test_unknown_sections_and_keys_are_errors(
    tmp_path: Path, text: str, needles: list[str]
) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, text))
    for needle in needles:
        assert needle in str(err.value)


def test_custom_spark_table_is_merged_over_the_shipped_defaults(tmp_path: Path) -> None:
    shipped = load_config().spark
    config = load_config(
        write(tmp_path, '[spark]\n"spark.driver.memory" = "8g"\n"spark.ui.enabled" = false\n')
    )
    assert config.spark == {**shipped, "spark.driver.memory": "8g", "spark.ui.enabled": "false"}


def test_nested_spark_tables_are_flattened(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            "[spark.sql]\nshuffle.partitions = 8\n[spark.sql.adaptive]\nenabled = false\n"
            "[spark]\ndriver.memory = '2g'\n",
        )
    )
    assert config.spark["spark.sql.shuffle.partitions"] == "8"
    assert config.spark["spark.sql.adaptive.enabled"] == "false"
    assert config.spark["spark.driver.memory"] == "2g"
    assert not [
        k for k in config.spark if not k.startswith("spark.") or k.startswith("spark.spark")
    ]
    assert "spark.sql" not in config.spark


@pytest.mark.parametrize(
    ("name", "value", "wanted"),
    [
        ("spark.driver.memory", "lots", "a size"),
        ("spark.executor.memory", "1.5g", "a size"),
        ("spark.executor.memoryOverhead", "-1g", "a size"),
        ("spark.sql.shuffle.partitions", "0", "an integer >= 1"),
        ("spark.sql.shuffle.partitions", "many", "an integer >= 1"),
        ("spark.executor.instances", "-1", "an integer >= 0"),
        ("spark.sql.adaptive.enabled", "yes", "true or false"),
        ("spark.sql.caseSensitive", "1", "true or false"),
    ],
)
def test_typed_spark_properties_are_checked(
    tmp_path: Path, name: str, value: str, wanted: str
) -> None:
    assert wanted in str(spark_property_problem(name, value))
    with pytest.raises(ConfigError, match=f"{name} = '{value}' is invalid: expected {wanted}"):
        load_config(write(tmp_path, f'[spark]\n"{name}" = "{value}"\n'))


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("spark.driver.memory", "4g"),
        ("spark.driver.memory", "4096"),
        ("spark.driver.maxResultSize", "0"),
        ("spark.executor.memory", "512M"),
        ("spark.sql.shuffle.partitions", "200"),
        ("spark.sql.adaptive.enabled", "TRUE"),
        ("spark.app.name", "anything"),
    ],
)
def test_good_spark_properties_pass(name: str, value: str) -> None:
    assert spark_property_problem(name, value) is None


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("2026-11-05", True),
        ("2024-02-29", True),
        ("2026-1-5", False),
        ("20261105", False),
        ("2026-W45-1", False),
        ("2026-02-30", False),
        ("2026-11-05T00:00", False),
        (" 2026-11-05", False),
    ],
)
def test_ds_is_strictly_yyyy_mm_dd(value: str, ok: bool) -> None:
    assert valid_ds(value) is ok


def test_session_errors_name_the_property() -> None:
    config = PlannerConfig().replace(
        spark={"spark.sql.session.timeZone": "Mars/Olympus", "spark.ui.enabled": "false"},
        source="my.toml",
    )
    exc = RuntimeError(
        "Error while instantiating 'SessionStateBuilder':\n\nCaused by: [INVALID_CONF_VALUE]"
        " The value 'Mars/Olympus' in the config \"spark.sql.session.timeZone\" is invalid."
    )
    message = session_error(exc, config)
    assert message.startswith(
        "Spark refused the [spark] property spark.sql.session.timeZone = 'Mars/Olympus' of my.toml"
    )
    assert "spark.ui.enabled" not in message
    # When Spark does not say which one, every property is listed.
    message = session_error(RuntimeError("[JAVA_GATEWAY_EXITED] Java gateway exited"), config)
    assert "spark.ui.enabled = 'false'" in message
    assert "JAVA_GATEWAY_EXITED" in message
