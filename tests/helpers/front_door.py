"""Output-directory checks shared by the front-door tests."""

from __future__ import annotations

import hashlib
from pathlib import Path


def snapshot(root: Path) -> dict[str, str]:
    """Every file below `root` (hidden ones too) with a digest of its bytes."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def siblings(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.glob(f".{path.name}.__*"))
