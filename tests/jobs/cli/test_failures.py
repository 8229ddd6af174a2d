"""What the entry point prints and returns on SIGTERM, a locked output and a failure inside
Spark: one line naming the cause, its own exit code. No JVM here: stand-ins for the session,
the run and py4j's Java exception objects."""

from __future__ import annotations

import logging
import signal
from typing import Any

import pytest

from jobs.cli import plan as cli
from jobs.failures import describe
from jobs.output import OutputLocked

ARGS = ["--input", "in", "--output", "out"]


class _Java:
    """A stand-in for a py4j JavaObject of a java.lang.Throwable."""

    def __init__(self, name: str, message: str | None, cause: _Java | None = None) -> None:
        self.name, self.message, self.cause = name, message, cause

    def getClass(self) -> Any:
        return type("C", (), {"getName": lambda _: self.name})()

    def getMessage(self) -> str | None:
        return self.message

    def getCause(self) -> _Java | None:
        return self.cause


class Py4JJavaError(Exception):
    def __init__(self, java: _Java) -> None:
        super().__init__("An error occurred while calling o1355.parquet.\n" + "\tat x.y(Z)\n" * 300)
        self.java_exception = java


def _disk_full() -> Py4JJavaError:
    root = _Java("java.io.IOException", "No space left on device")
    fs = _Java("org.apache.hadoop.fs.FSError", "java.io.IOException: No space left on device", root)
    return Py4JJavaError(
        _Java(
            "org.apache.spark.SparkException",
            "[TASK_WRITE_FAILED] Task failed while writing rows to file:/data/.out.__tmp-1/a.",
            fs,
        )
    )


def test_describe_names_the_innermost_java_cause_and_where() -> None:
    text = describe(_disk_full())
    assert text.startswith("java.io.IOException: No space left on device (in: [TASK_WRITE_FAILED]")
    assert "\n" not in text


def test_describe_names_a_python_workers_exception() -> None:
    worker = _Java(
        "org.apache.spark.api.python.PythonException",
        'Traceback (most recent call last):\n  File "udf.py", line 3, in f\n'
        "MemoryError: cannot allocate 8 GiB\n",
    )
    exc = Py4JJavaError(_Java("org.apache.spark.SparkException", "Job aborted", worker))
    assert describe(exc) == "a Python worker failed: MemoryError: cannot allocate 8 GiB"


def test_describe_names_a_python_workers_exception_before_its_sqlstate() -> None:
    worker = _Java(
        "org.apache.spark.api.python.PythonException",
        "[PYTHON_EXCEPTION] An exception was thrown from the Python worker: Traceback (most"
        ' recent call last):\n  File "guard.py", line 9, in guarded\n'
        "OSError: [Errno 28] No space left on device: '/data/.out.__tmp-1/_rows/0.parquet'\n"
        " SQLSTATE: 38000\n",
    )
    exc = Py4JJavaError(_Java("org.apache.spark.SparkException", "Job aborted", worker))
    assert describe(exc) == (
        "a Python worker failed: OSError: [Errno 28] No space left on device:"
        " '/data/.out.__tmp-1/_rows/0.parquet'"
    )


def test_describe_of_a_plain_python_exception() -> None:
    assert describe(ValueError("bad\nmore")) == "ValueError: bad"


@pytest.fixture
def _no_jvm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "build_session", lambda config: object())
    monkeypatch.setattr(signal, "signal", lambda *a: None)


@pytest.mark.usefixtures("_no_jvm")
def test_a_failure_inside_spark_prints_one_line_naming_its_cause(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def run(*_: Any, **__: Any) -> Any:
        raise _disk_full()

    monkeypatch.setattr(cli, "run", run)
    assert cli.main(ARGS) == cli.EXIT_UNEXPECTED
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1
    assert errors[0].exc_info is None, "no trace without --verbose"
    assert "nothing written: java.io.IOException: No space left on device" in errors[0].message
    assert "--verbose shows the full trace" in errors[0].message

    caplog.clear()
    assert cli.main([*ARGS, "--verbose"]) == cli.EXIT_UNEXPECTED
    assert [r.exc_info is not None for r in caplog.records if r.levelno >= logging.ERROR] == [True]


@pytest.mark.usefixtures("_no_jvm")
def test_a_locked_output_exits_4(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def run(*_: Any, **__: Any) -> Any:
        raise OutputLocked("another run holds out: pid 7 on host h")

    monkeypatch.setattr(cli, "run", run)
    assert cli.main(ARGS) == cli.EXIT_LOCKED == 4
    assert "output locked, nothing written (exit 4, retry later): another run holds" in caplog.text


@pytest.mark.usefixtures("_no_jvm")
def test_sigterm_mid_run_exits_143_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def run(*_: Any, **__: Any) -> Any:
        cli._on_sigterm(signal.SIGTERM, None)  # lands mid-call
        raise AssertionError("not reached")

    monkeypatch.setattr(cli, "run", run)
    assert cli.main(ARGS) == cli.EXIT_TERMINATED == 143
    err = capsys.readouterr().err
    assert err.strip() == "terminated (SIGTERM): nothing written, any previous output is unchanged"

    # the next run in the same process starts afresh: Ctrl-C is 130 again
    def ctrl_c(*_: Any, **__: Any) -> Any:
        cli._on_sigint(signal.SIGINT, None)

    monkeypatch.setattr(cli, "run", ctrl_c)
    assert cli.main(ARGS) == cli.EXIT_INTERRUPTED
