"""The house of jobs/: its wings, imports only downward, and the module map of
docs/development.md naming exactly the modules of the tree.

The wings, top to bottom (a module may import its own wing and any wing below its own):

    cli        the commands: flags, exit codes, the checks before Spark starts
    plan       the run: pipeline, UDF, one group's planning, guard, session, summary
    report     report.html
    export     the snapshot exporter
    output     the output directory and the pyarrow writers of its files
    tables     the data contract, inputs, the manifest, one group's read and view
    settings   the declared settings, the config read, the run's settings
    shared     the modules at the top of jobs/ that every wing may use: fs, failures, together

The entry points (`plan_assignments`, `describe`, `plan_group`, `export_snapshot` at the top of
jobs/, and any `__main__` module) stand above every wing, and nothing imports them.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
JOBS = REPO / "jobs"
WINGS = ("cli", "plan", "report", "export", "output", "tables", "settings")  # top to bottom
SHARED = ("fs", "failures", "together")
ENTRY_POINTS = ("plan_assignments", "describe", "plan_group", "export_snapshot")
TOP_MODULES = {"__init__", *ENTRY_POINTS, *SHARED}
ENTRY, PACKAGE = "entry point", "the jobs package"


def _module(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _wing(module: str) -> str:
    """The wing of a module of jobs/ (a shared module is a wing of its own)."""
    parts = module.split(".")
    if parts == ["jobs"]:
        return PACKAGE
    if parts[-1] == "__main__" or (len(parts) == 2 and parts[1] in ENTRY_POINTS):
        return ENTRY
    return parts[1]


def _rank(wing: str) -> int:
    if wing == ENTRY:
        return len(WINGS) + 1
    if wing in WINGS:
        return len(WINGS) - WINGS.index(wing)
    return 0 if wing in SHARED else -1


def _is_module(name: str) -> bool:
    path = REPO.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _imported(path: Path) -> list[tuple[int, str]]:
    """Every module of jobs/ that `path` imports (lazy imports in functions included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                name = f"{base}.{alias.name}"
                found.append((node.lineno, name if _is_module(name) else base))
    return [(line, name) for line, name in found if name == "jobs" or name.startswith("jobs.")]


def _modules() -> list[Path]:
    return sorted(JOBS.rglob("*.py"))


def _imports() -> list[tuple[str, int, str]]:
    return [(_module(p), line, name) for p in _modules() for line, name in _imported(p)]


def test_every_import_between_wings_goes_downward() -> None:
    upward = [
        f"{source}:{line} imports {target} ({_wing(source)} -> {_wing(target)})"
        for source, line, target in _imports()
        if _wing(source) != _wing(target) or _wing(source) in (ENTRY, *SHARED)
        if not _rank(_wing(source)) > _rank(_wing(target))
    ]
    assert upward == []


def test_the_rule_sees_the_imports() -> None:
    """The parse finds real edges, lazy ones too (so an empty list above means something)."""
    edges = {(_wing(s), _wing(t)) for s, _, t in _imports()}
    assert {("cli", "plan"), ("plan", "report"), ("plan", "output"), ("output", "tables")} <= edges
    assert ("report", "together") in edges
    assert ("entry point", "cli") in edges


def test_nothing_imports_an_entry_point() -> None:
    assert [(s, t) for s, _, t in _imports() if _wing(t) == ENTRY] == []


def test_the_top_of_jobs_holds_only_the_entry_points_and_the_shared_modules() -> None:
    top = {p.stem for p in JOBS.glob("*.py")}
    assert top == TOP_MODULES
    assert len(top) <= 8


def test_every_folder_of_jobs_is_a_declared_wing_with_its_docstring() -> None:
    folders = {p.name for p in JOBS.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == set(WINGS)
    for wing in WINGS:
        init = JOBS / wing / "__init__.py"
        assert ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))), init


def _module_map() -> list[str]:
    text = (REPO / "docs" / "development.md").read_text(encoding="utf-8")
    section = text.split("\n## Module map\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^- `([\w/]+\.py)`: \S", section, re.M)


def test_the_module_map_lists_exactly_the_modules_of_the_tree() -> None:
    """Each as `- `path`: what it holds`, one line, in the section "Module map"."""
    listed = _module_map()
    tree = sorted(
        p.relative_to(REPO).as_posix()
        for root in ("assignors", "jobs")
        for p in (REPO / root).rglob("*.py")
    )
    assert len(listed) == len(set(listed)), "a module is listed twice"
    assert sorted(listed) == tree
