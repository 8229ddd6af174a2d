"""The DAG's reading of the job's exit codes, checked without Airflow (tests/ops runs the DAG
itself in .venv-airflow): the codes are literals in dags/kafka_assignment_planner.py."""

from __future__ import annotations

import ast
from pathlib import Path

from jobs.cli import plan as cli

DAG_FILE = Path(__file__).resolve().parents[3] / "dags" / "kafka_assignment_planner.py"


def _literal(name: str) -> dict[int, str]:
    tree = ast.parse(DAG_FILE.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            value = ast.literal_eval(node.value)
            assert isinstance(value, dict)
            return value
    raise AssertionError(f"{name} not found in {DAG_FILE}")


def test_a_locked_output_is_retried_not_final() -> None:
    final, retried = _literal("FINAL_EXIT_CODES"), _literal("RETRIED_EXIT_CODES")
    assert cli.EXIT_LOCKED not in final
    assert cli.EXIT_LOCKED in retried
    assert cli.EXIT_TERMINATED in retried
    assert cli.EXIT_INTERRUPTED in retried


def test_final_codes_are_the_verdicts_on_the_input() -> None:
    final, retried = _literal("FINAL_EXIT_CODES"), _literal("RETRIED_EXIT_CODES")
    assert set(final) == {cli.EXIT_BAD_INPUT, cli.EXIT_NEEDS_ATTENTION}
    assert not set(final) & set(retried)


def test_the_exporters_lock_and_stop_codes_are_retried() -> None:
    """A concurrent export, or a retry after a killed one whose lock has not expired yet,
    exits 4: retried, never final; SIGTERM (the task's timeout) exits 143: retried too."""
    from jobs.cli import export as exporter

    final, retried = _literal("EXPORT_FINAL_EXIT_CODES"), _literal("EXPORT_RETRIED_EXIT_CODES")
    assert set(final) == {exporter.EXIT_BAD_INPUT}
    for code in (exporter.EXIT_LOCKED, exporter.EXIT_TERMINATED, exporter.EXIT_INTERRUPTED):
        assert code in retried
    assert exporter.EXIT_NEEDS_ATTENTION not in final | retried  # a warning: planning goes on
    assert not set(final) & set(retried)
