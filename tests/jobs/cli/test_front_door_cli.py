"""`kafka-planner`, the front door: its script entry, each subcommand's `--help`, the same
flags and exit codes as the `python -m jobs.X` forms, and the error mapping they share.

The console script is what pip installs from `[project.scripts]`; here it runs as the module
it points at (`python -m jobs.cli`), which a test checks against pyproject.toml. No test
starts a JVM: every failure below is refused before a SparkSession would start.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from jobs.cli import common, front_door
from jobs.cli import describe as describe_cli
from jobs.cli import export as export_cli
from jobs.cli.exit_codes import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    EXIT_LOCKED,
    EXIT_NEEDS_ATTENTION,
    EXIT_UNEXPECTED,
)

REPO = Path(__file__).resolve().parents[3]
# subcommand -> the module its `python -m` form runs
FORMS = {
    "plan": "jobs.plan_assignments",
    "describe": "jobs.describe",
    "plan-group": "jobs.plan_group",
    "export": "jobs.export_snapshot",
    "report": "jobs.report",
}


def run(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", *args], capture_output=True, text=True, env=env, cwd=cwd
    )


def front(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return run("jobs.cli", *args, cwd=cwd)


def flags(help_text: str) -> set[str]:
    """The option strings a `--help` lists (its usage lines wrap by the program's name)."""
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", help_text))


def test_the_script_entry_is_the_front_door() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    target = project["project"]["scripts"]["kafka-planner"]
    module, _, name = target.partition(":")
    assert (module, name) == ("jobs.cli.front_door", "main")
    assert getattr(importlib.import_module(module), name) is front_door.main
    assert set(front_door.COMMANDS) == set(FORMS)


def test_help_lists_every_command() -> None:
    done = front("--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: kafka-planner ")
    for name in FORMS:
        assert re.search(rf"^\s+{re.escape(name)}\b", done.stdout, re.M), name


@pytest.mark.parametrize("command", list(FORMS))
def test_each_subcommand_has_help_with_the_python_m_forms_flags(command: str) -> None:
    via_front = front(command, "--help")
    via_module = run(FORMS[command], "--help")
    assert via_front.returncode == via_module.returncode == 0, via_front.stderr
    assert via_front.stdout.startswith(f"usage: kafka-planner {command} ")
    assert flags(via_front.stdout) == flags(via_module.stdout)
    assert "--help" in flags(via_front.stdout)


def test_no_or_an_unknown_command_exits_2_naming_the_commands() -> None:
    for args in ((), ("describ",)):
        done = front(*args)
        assert done.returncode == 2
        assert "describe" in done.stderr
        assert "plan-group" in done.stderr


def test_version() -> None:
    done = front("--version")
    assert done.returncode == 0
    assert done.stdout.startswith("kafka-planner ")


def _cases(tmp: Path) -> list[tuple[str, list[str], int]]:
    not_output = tmp / "not-an-output"
    not_output.mkdir()
    config = tmp / "broken.toml"
    config.write_text("[planner\n", encoding="utf-8")
    return [
        ("describe", ["--output", str(not_output), "--group", "g"], EXIT_BAD_INPUT),
        ("plan-group", ["--input", str(not_output), "--group", "g"], EXIT_BAD_INPUT),
        ("report", [str(not_output)], EXIT_BAD_INPUT),
        ("plan", ["--input", str(tmp), "--output", str(tmp / "o"), "--ds", "22-11"], 2),
        (
            "plan",
            ["--input", str(tmp), "--output", str(tmp / "o"), "--config", str(config)],
            EXIT_BAD_INPUT,
        ),
        (
            "export",
            [
                "--bootstrap-server",
                "127.0.0.1:1",
                "--output",
                str(tmp / "s"),
                "--command-config",
                str(tmp / "missing.properties"),
            ],
            EXIT_BAD_INPUT,
        ),
    ]


@pytest.mark.parametrize("case", range(6))
def test_exit_codes_are_the_same_through_both_doors(tmp_path: Path, case: int) -> None:
    command, args, code = _cases(tmp_path)[case]
    via_front = front(command, *args)
    via_module = run(FORMS[command], *args)
    assert via_front.returncode == via_module.returncode == code, (
        via_front.stderr,
        via_module.stderr,
    )
    assert "Traceback" not in via_front.stderr + via_module.stderr


@pytest.mark.parametrize("spelling", ["--bootstrap-server", "--bootstrap-servers"])
def test_bootstrap_server_as_kafka_spells_it_and_the_old_alias(spelling: str) -> None:
    args = export_cli.parse_args([spelling, "h:9092", "--output", "o"])
    assert args.bootstrap_servers == "h:9092"
    assert args.group is None
    assert not args.all_groups


def test_group_repeats_and_excludes_all_groups(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--bootstrap-server", "h:9092", "--output", "o"]
    args = export_cli.parse_args([*base, "--group", "a", "--group", "b", "--groups", "a|b"])
    assert (args.group, args.groups) == (["a", "b"], "a|b")
    assert export_cli.parse_args([*base, "--all-groups"]).all_groups
    with pytest.raises(SystemExit) as stopped:
        export_cli.parse_args([*base, "--group", "a", "--all-groups"])
    assert stopped.value.code == 2
    assert "not allowed with argument --group" in capsys.readouterr().err


def test_the_front_door_runs_the_same_main_in_process(tmp_path: Path) -> None:
    args = ["--output", str(tmp_path), "--group", "g"]
    assert front_door.main(["describe", *args]) == describe_cli.main(args) == EXIT_BAD_INPUT


# --- the shared mapping of errors to exit codes ----------------------------------------------


def test_every_mapped_error_names_an_exception_class() -> None:
    for name in common.ERROR_EXIT_CODES:
        module, _, cls = name.rpartition(".")
        found = getattr(importlib.import_module(module), cls)
        assert isinstance(found, type), name
        assert issubclass(found, Exception), name


def test_errors_map_to_the_documented_exit_codes() -> None:
    from jobs.export.client import ExportError
    from jobs.export.snapshot import NothingSelected
    from jobs.output import OutputError, OutputLocked
    from jobs.settings.config import ConfigError
    from jobs.tables.group_read import NotFoundError

    assert common.exit_code_of(OutputLocked("held")) == EXIT_LOCKED  # before its base class
    assert common.exit_code_of(OutputError("refused")) == EXIT_BAD_INPUT
    assert common.exit_code_of(ConfigError("bad")) == EXIT_BAD_INPUT
    assert common.exit_code_of(NotFoundError("no")) == EXIT_BAD_INPUT
    assert common.exit_code_of(ExportError("down")) == EXIT_BAD_INPUT
    assert common.exit_code_of(NothingSelected("none")) == EXIT_NEEDS_ATTENTION
    assert common.exit_code_of(KeyboardInterrupt()) == EXIT_INTERRUPTED
    assert common.exit_code_of(RuntimeError("bug")) == EXIT_UNEXPECTED


def test_an_escaping_error_is_one_line_and_its_code(capsys: pytest.CaptureFixture[str]) -> None:
    from jobs.output import OutputLocked

    def locked() -> int:
        raise OutputLocked("/data/out is held by pid 7")

    def bug() -> int:
        raise RuntimeError("boom")

    assert common.guarded("describe", locked) == EXIT_LOCKED
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "describe: " in err
    assert "pid 7" in err
    assert common.guarded("describe", bug) == EXIT_UNEXPECTED
    assert "(--verbose shows the full trace)" in capsys.readouterr().err
    assert common.guarded("describe", bug, verbose=True) == EXIT_UNEXPECTED
    assert "Traceback" in capsys.readouterr().err


def test_describe_never_imports_spark_through_the_front_door() -> None:
    code = (
        "import sys; from jobs.cli import front_door;"
        " front_door.main(['describe', '--output', '/nonexistent', '--group', 'g']);"
        " print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j', 'kafka')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stderr
