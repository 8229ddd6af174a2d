"""Each setting is declared once (jobs/settings/model.py): the shipped conf/planner.toml, its
range comments and the docs' tables are checked against the declaration; a section refuses
unknown keys and bad values, all of them at once; the run's settings are built once, and a
config's problems of every kind are named in one error."""

from __future__ import annotations

import dataclasses
import pickle
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from assignors.whatif.capacity import CapacityTarget
from jobs.settings.config import DEFAULT_CONFIG, ConfigError, PlannerConfig, load_config
from jobs.settings.model import (
    KNOWN_KEYS,
    RANGES,
    SECTIONS,
    ExecutionSection,
    PlannerSection,
    SettingsError,
    specs,
)
from jobs.settings.run import load_settings

REPO = Path(__file__).resolve().parents[3]
DECLARED = [(s, key) for s in SECTIONS for key, _ in specs(s)]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "planner.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _shipped_lines() -> dict[str, list[str]]:
    """conf/planner.toml's lines per section."""
    out: dict[str, list[str]] = {}
    section = ""
    for line in DEFAULT_CONFIG.read_text(encoding="utf-8").splitlines():
        found = re.fullmatch(r"\[([a-z.]+)\]", line.strip())
        if found:
            section = found.group(1)
        out.setdefault(section, []).append(line)
    return out


def _comment_above(lines: list[str], key: str) -> str:
    """The comment block right above `key = ...` (or above `# key = ...`, a key left out)."""
    at = next(i for i, line in enumerate(lines) if re.match(rf"(# )?{key} = ", line))
    block: list[str] = []
    for line in reversed(lines[:at]):
        if not line.startswith("#"):
            break
        block.insert(0, line.removeprefix("#").strip())
    return " ".join(block)


@pytest.mark.parametrize(("section", "key"), DECLARED, ids=[f"{s.NAME}.{k}" for s, k in DECLARED])
def test_the_shipped_file_gives_every_setting_its_declared_default(section: Any, key: str) -> None:
    shipped = tomllib.loads(DEFAULT_CONFIG.read_text(encoding="utf-8"))
    table = shipped.get(section.NAME, {})
    default = getattr(section(), key)
    if default is None:  # absent by default: shown commented out, with an example
        assert key not in table
        assert any(line.startswith(f"# {key} = ") for line in _shipped_lines()[section.NAME])
    else:
        assert getattr(section(**{key: table[key]}), key) == default
    assert _comment_above(_shipped_lines()[section.NAME], key), f"{key} has no comment"


def test_the_shipped_sections_list_their_keys_in_declared_order() -> None:
    shipped = tomllib.loads(DEFAULT_CONFIG.read_text(encoding="utf-8"))
    assert [s for s in shipped if s != "spark"] == [s.NAME for s in SECTIONS]
    for section in SECTIONS:
        declared = [k for k in KNOWN_KEYS[section.NAME] if k in shipped[section.NAME]]
        assert list(shipped[section.NAME]) == declared


@pytest.mark.parametrize(("section", "key"), sorted(RANGES))
def test_the_shipped_comment_gives_each_range(section: str, key: str) -> None:
    rng = RANGES[(section, key)]
    assert _comment_above(_shipped_lines()[section], key).endswith(f"[{rng.low}, {rng.high}]")


def _table(doc: str, header: str) -> list[list[str]]:
    """The rows of the markdown table under `header` (its first line) in `doc`."""
    lines = (REPO / "docs" / doc).read_text(encoding="utf-8").splitlines()
    at = lines.index(header)
    rows = []
    for line in lines[at + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows


def test_the_limits_table_of_operations_md_is_the_declared_ranges() -> None:
    rows = {r[0].strip("`"): r[1:] for r in _table("operations.md", "| setting | range | note |")}
    assert set(rows) == {f"{s}.{k}" for s, k in RANGES}
    for (section, key), rng in RANGES.items():
        span, note = rows[f"{section}.{key}"]
        assert span == f"{rng.low:,} – {rng.high:,}"
        assert rng.note in note


def test_the_sections_table_of_deploy_md_names_every_key() -> None:
    rows = {r[0].strip("`[]"): r[1] for r in _table("deploy.md", "| section | keys |")}
    assert set(rows) == set(KNOWN_KEYS)
    for section, keys in KNOWN_KEYS.items():
        named = re.findall(r"(?:^|; )`([a-z_]+)`", rows[section])
        named += re.findall(r", `([a-z_]+)`", rows[section])
        assert set(keys) <= set(named), section


def test_the_readme_shows_declared_defaults() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```toml\n(\[planner\]\n.*?)```", text, re.S)
    assert block is not None
    shown = tomllib.loads(block.group(1))["planner"]
    for key, value in shown.items():
        assert getattr(PlannerSection(**{key: value}), key) == getattr(PlannerSection(), key)


# --------------------------------------------------------------------------- the model


def test_a_section_refuses_an_unknown_key_and_names_every_bad_value() -> None:
    with pytest.raises(TypeError, match="bucket"):
        ExecutionSection(bucket=4)  # type: ignore[call-arg]
    with pytest.raises(SettingsError) as err:
        ExecutionSection(buckets=-1, output_files=0, group_timeout_s=1.5)  # type: ignore[arg-type]
    assert set(err.value.problems) == {"buckets", "output_files", "group_timeout_s"}
    assert err.value.problems["output_files"] == (
        "execution.output_files must be an integer >= 1 and <= 10,000, got 0"
    )


def test_replace_puts_each_key_in_its_section_and_checks_it() -> None:
    config = PlannerConfig().replace(strategies=("range",), buckets=3, target="max_member_lag:5")
    assert config.planner.strategies == ("range",)
    assert config.execution.buckets == 3
    assert config.capacity.target == "max_member_lag:5"
    assert config.planner.balance_by == PlannerConfig().planner.balance_by
    with pytest.raises(TypeError, match="no setting 'bucket'"):
        PlannerConfig().replace(bucket=3)
    with pytest.raises(SettingsError, match=r"planner\.strategies is empty"):
        PlannerConfig().replace(strategies=())


def test_as_dict_is_every_declared_setting() -> None:
    flat = PlannerConfig().as_dict()
    keys = [s.FLAT_PREFIX + k for s, k in DECLARED]
    assert list(flat) == [*keys, "spark", "source"]
    assert flat["capacity_target"] is None


# ------------------------------------------------------------------------ the capacity target


def test_the_capacity_target_is_read_and_reaches_the_run_settings(tmp_path: Path) -> None:
    path = write(tmp_path, '[capacity]\ntarget = "max_partitions_per_member:4"\n')
    config, settings = load_settings(path)
    assert config.capacity.target == "max_partitions_per_member:4"
    assert settings.capacity.target == CapacityTarget("max_partitions_per_member", 4)
    assert settings.capacity.max_members == config.planner.scenario_max_members
    assert load_settings()[1].capacity.target is None
    back = pickle.loads(pickle.dumps(settings))
    assert back == settings


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ('"max_lag:5"', "capacity.target: capacity target 'max_lag:5': unknown kind 'max_lag'"),
        ("5", "capacity.target: capacity target must be a string"),
        ('"max_partitions_per_member:0"', "must be a whole number of at least 1, not '0'"),
    ],
)
def test_a_bad_capacity_target_is_a_configuration_error(
    tmp_path: Path, value: str, needle: str
) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, f"[capacity]\ntarget = {value}\n"))
    assert needle in str(err.value)


# ------------------------------------------------------------------------ all problems at once

EVERY_KIND = """\
[planner]
strategies = ["range", "stikcy"]
recommend_from = ["range", "balancd"]
group_consumer_assignors = ["roundrobin"]
balance_by = "bytes"

[execution]
output_files = 0

[capacity]
target = "max_lag:5"
"""


def test_problems_of_the_file_and_of_its_strategies_are_named_in_one_error(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, EVERY_KIND)
    with pytest.raises(ConfigError) as err:
        load_settings(path)
    text = str(err.value)
    needles = [
        "planner.balance_by must be one of",
        "execution.output_files must be an integer >= 1",
        "capacity.target: capacity target 'max_lag:5'",
        "group_consumer_assignors: 'roundrobin' is not a broker-side assignor",
        "'stikcy'",
        "planner.recommend_from: 'balancd' is neither a built-in strategy",
    ]
    assert [n for n in needles if n not in text] == [], text
    assert text.startswith(f"{path}: 6 problems: (1) ")
    assert text.count(str(path)) == 1


def test_the_catalog_is_built_once_per_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from assignors.catalog.catalog import StrategyCatalog

    built = []
    real = StrategyCatalog.build.__func__  # type: ignore[attr-defined]

    def counting(cls: type[StrategyCatalog], *args: Any, **kwargs: Any) -> StrategyCatalog:
        built.append(args[0])
        return real(cls, *args, **kwargs)  # type: ignore[no-any-return]

    monkeypatch.setattr(StrategyCatalog, "build", classmethod(counting))
    _, settings = load_settings()
    inputs = settings.for_inputs(has_current_assignment=True, has_offsets=True, has_weights=False)
    assert len(built) == 1
    assert inputs.catalog is settings.catalog
    assert dataclasses.replace(inputs, has_offsets=False).catalog is settings.catalog
    assert len(built) == 1
