"""Ctrl-C while the job talks to the JVM: exit 130 with one line, whatever py4j raises next.

Ctrl-C reaches the JVM too (one process group); a py4j call made while the
KeyboardInterrupt unwinds then fails on the closed connection. No JVM here: the session and
the run are stand-ins.
"""

from __future__ import annotations

import signal
from typing import Any

import pytest

from jobs.cli import plan as cli

ARGS = ["--input", "in", "--output", "out"]


@pytest.fixture(autouse=True)
def _no_jvm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "build_session", lambda config: object())
    monkeypatch.setattr(signal, "signal", lambda *a: None)
    monkeypatch.setattr(cli, "_interrupted", False)


def _closed_connection() -> ConnectionError:
    return ConnectionError("Answer from Java side is empty")


def test_a_failure_while_a_ctrl_c_unwinds_exits_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def run(*_: Any, **__: Any) -> Any:
        try:
            cli._on_sigint(2, None)  # SIGINT lands mid-call
        except KeyboardInterrupt:
            raise _closed_connection() from None  # py4j's next call, on the way out

    monkeypatch.setattr(cli, "run", run)
    assert cli.main(ARGS) == cli.EXIT_INTERRUPTED
    err = capsys.readouterr().err
    assert "interrupted: nothing written, any previous output is unchanged" in err
    assert "Traceback" not in err


def test_the_same_failure_without_ctrl_c_is_unexpected(monkeypatch: pytest.MonkeyPatch) -> None:
    def run(*_: Any, **__: Any) -> Any:
        raise _closed_connection()

    monkeypatch.setattr(cli, "run", run)
    assert cli.main(ARGS) == cli.EXIT_UNEXPECTED
