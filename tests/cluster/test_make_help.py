"""`make help` lists every target of the Makefile."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_make_help_lists_every_target() -> None:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    targets = set(re.findall(r"^([a-z][a-z0-9_-]*):", (REPO / "Makefile").read_text(), re.M))
    assert {"help", "test", "test-cluster", "test-airflow", "venv"} <= targets
    shown = subprocess.run(
        ["make", "--no-print-directory", "help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    listed = {
        line.split()[0]
        for line in re.sub(r"\x1b\[[0-9;]*m", "", shown).splitlines()
        if line.strip()
    }
    assert targets <= listed, f"missing from make help: {sorted(targets - listed)}"
