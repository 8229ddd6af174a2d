"""One line naming the cause of a failure, instead of a Java stack trace hundreds of lines long.

A failure inside Spark reaches Python as a py4j `Py4JJavaError` (or a PySpark exception that
wraps one) whose text is the whole JVM trace, often with a Python worker's traceback inside.
What the operator needs is at the bottom of the cause chain: `java.io.IOException: No space
left on device`, `AccessDeniedException: /data/out`. The full trace stays available behind
`--verbose`.
"""

from __future__ import annotations

from typing import Any

_MAX_CHAIN = 50  # a Throwable's causes are finite, but never trust a foreign object graph
_MAX_LEN = 300


def _java_causes(throwable: Any) -> list[tuple[str, str]]:
    """(class name, message) of a Java Throwable and its causes, outermost first."""
    chain: list[tuple[str, str]] = []
    current = throwable
    while current is not None and len(chain) < _MAX_CHAIN:
        try:
            name = str(current.getClass().getName())
            message = current.getMessage()
            chain.append((name, "" if message is None else str(message)))
            nxt = current.getCause()
        except Exception:  # the JVM is gone (a broken gateway): keep what we have
            break
        if nxt is None or nxt == current:
            break
        current = nxt
    return chain


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else ""


def _python_error(message: str) -> str:
    """A Python worker's traceback inside a Java message: its last line is the exception
    (Spark 4 appends a `SQLSTATE: 38000` line after it)."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    tail = [line for line in lines if not line.startswith(("File ", "at ", "^", "~", "SQLSTATE:"))]
    return tail[-1] if tail else ""


def _shorten(text: str) -> str:
    return text if len(text) <= _MAX_LEN else text[: _MAX_LEN - 1] + "…"


def _java_throwable(exc: BaseException) -> Any:
    """The Java exception behind a py4j or PySpark exception, if there is one."""
    for candidate in (exc, exc.__cause__, exc.__context__):
        if candidate is None:
            continue
        java = getattr(candidate, "java_exception", None)  # py4j's Py4JJavaError
        if java is None:
            java = getattr(candidate, "_origin", None)  # PySpark's CapturedException
        if java is not None:
            return java
    return None


def describe(exc: BaseException) -> str:
    """The cause of `exc` in one line: the innermost Java exception's class and message (or
    the Python exception a worker raised), else the exception's own first line."""
    java = _java_throwable(exc)
    if java is not None:
        chain = _java_causes(java)
        for name, message in reversed(chain):
            if name.endswith("PythonException"):
                found = _python_error(message)
                if found:
                    return _shorten(f"a Python worker failed: {found}")
        if chain:
            name, message = next(((n, m) for n, m in reversed(chain) if m.strip()), chain[-1])
            first = _first_line(message)
            cause = f"{name}: {first}" if first else name
            outer = _first_line(chain[0][1])
            if len(chain) > 1 and outer and outer not in cause:
                cause = f"{cause} (in: {outer})"  # where it happened: the file, the stage
            return _shorten(cause)
    first = _first_line(str(exc))
    name = type(exc).__name__
    return _shorten(f"{name}: {first}" if first else name)
