"""The documentation stays true: docs/performance.md holds current figures in at most 300
lines, no page tells the history of its own making, and every `assignors.…` / `jobs.…` /
`tools.…` name cited in the docs or in a comment or docstring of the code exists.

No JVM: the code is read with `ast` and `tokenize`, never imported."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PERFORMANCE = ROOT / "docs" / "performance.md"
MAX_PERFORMANCE_LINES = 300

# Phrases that tell how the text or the code came to be rather than what it is. Kafka's own
# vocabulary stays allowed: "the previous generation", `--previous`, "previous_owner", "a
# member no longer in the group", "a broker not reachable any more", "is used to compute".
HISTORY = re.compile(
    r"\bas before\b|\bwas \.\w|\(was\b|\bpreviously\b|\bformerly\b|\bused to be\b"
    r"|\bnow (?:the|we)\b|\bsince then\b|\b(?:tried|measured) and not kept\b"
    r"|\bbefore and after\b|\bbefore/after\b",
    re.IGNORECASE,
)
# The performance page states current figures: no comparison of a change's two sides.
PERFORMANCE_HISTORY = re.compile(r"→|->|\btried\b|\bnot kept\b|\bsince\b", re.IGNORECASE)

CITED = re.compile(r"(?<![\w./-])((?:assignors|jobs|tools)(?:\.[A-Za-z_]\w*)+)")
# `module.name` in backticks, the module named by its last part alone (`udf.write_rows`).
SHORT = re.compile(r"`([a-z_]\w*)\.([A-Za-z_]\w*)(?:\(\))?`")
# Property namespaces spelled like a module: Kafka's `group.id` and `client.rack`, Hadoop's
# `fs.defaultFS`, the config's `planner.strategies`.
PROPERTY_PREFIXES = frozenset({"group", "client", "fs", "planner", "spark"})


def history_phrases(text: str) -> list[str]:
    return [m.group(0) for m in HISTORY.finditer(text)]


def test_the_performance_page_is_short() -> None:
    lines = PERFORMANCE.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_PERFORMANCE_LINES


def test_the_performance_page_tells_no_history() -> None:
    text = PERFORMANCE.read_text(encoding="utf-8")
    assert [m.group(0) for m in PERFORMANCE_HISTORY.finditer(text)] == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_page_tells_the_history_of_its_making(page: Path) -> None:
    lines = page.read_text(encoding="utf-8").splitlines()
    found = [f"{n}: {h}" for n, line in enumerate(lines, 1) for h in history_phrases(line)]
    assert found == []


def test_the_history_check_finds_history_and_spares_kafka_terms() -> None:
    for text in (
        "planned as before",
        "# .ready (was .installed)",
        "the stamp was .installed",
        "it previously read every row",
        "formerly the cache",
        "this used to be a shuffle",
        "now the workers write",
        "Since then the bookkeeping counts",
        "Tried and not kept: a checkpoint",
        "before/after",
    ):
        assert history_phrases(text), text
    for text in (
        "the previous generation of the group",
        "kafka-consumer-groups.sh --previous",
        "the `previous_owner` column",
        "a member no longer in `subscriptions`",
        "a broker not reachable any more",
        "the digest is used to compute the key",
        "the previous output stays until the swap",
        "an owned partition on another rack is not kept",
    ):
        assert history_phrases(text) == [], text


def _module_file(dotted: str) -> Path | None:
    path = ROOT.joinpath(*dotted.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _names(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """The names a module or class body binds, each with its node."""
    out: dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        out[name.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                out[(alias.asname or alias.name).split(".")[0]] = node
        elif isinstance(node, ast.If | ast.Try | ast.With):
            out.update(_names([*node.body, *getattr(node, "orelse", [])]))
    return out


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def resolves(dotted: str) -> bool:
    """Does `pkg.module.name[.attribute]` name a module, or something a module or a class of
    it defines? A name imported into the module counts as defined there."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        path = _module_file(".".join(parts[:i]))
        if path is None:
            continue
        rest = parts[i:]
        body: list[ast.stmt] = _tree(path).body
        for name in rest:
            node = _names(body).get(name)
            if node is None:
                return False
            if not isinstance(node, ast.ClassDef):
                return True  # a function, value or import: its own attributes are not checked
            body = node.body
        return True
    return False


def _comments_and_docstrings(path: Path) -> list[tuple[int, str]]:
    """Comments, and the strings that stand alone as statements: docstrings of modules,
    classes, functions and attributes."""
    source = path.read_text(encoding="utf-8")
    found = [
        (tok.start[0], tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT
    ]
    found += [
        (node.lineno, node.value.value)
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    ]
    return found


def _texts() -> list[tuple[str, int, str]]:
    out = [
        (page.relative_to(ROOT).as_posix(), n, line)
        for page in PAGES
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
    ]
    for root in ("assignors", "jobs", "tools"):
        for path in sorted((ROOT / root).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            out += [(rel, n, text) for n, text in _comments_and_docstrings(path)]
    return out


def test_every_cited_name_exists() -> None:
    dead = [
        f"{where}:{line}: {name}"
        for where, line, text in _texts()
        for name in CITED.findall(text)
        if not name.split(".")[-1].isupper() or len(name.split(".")[-1]) > 1  # `jobs.X`
        if not resolves(name.rstrip("."))
    ]
    assert dead == []


@cache
def _by_stem() -> dict[str, str]:
    """Module names of assignors/, jobs/ and tools/ by their last part, where that is unique."""
    seen: dict[str, list[str]] = {}
    for root in ("assignors", "jobs", "tools"):
        for path in (ROOT / root).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            seen.setdefault(parts[-1], []).append(".".join(parts))
    return {stem: names[0] for stem, names in seen.items() if len(names) == 1}


def test_every_module_cited_by_its_short_name_has_the_name() -> None:
    """`pipeline.topic_catalog` in a comment of jobs/: jobs.plan.pipeline defines it."""
    dead = [
        f"{where}:{line}: {stem}.{name}"
        for where, line, text in _texts()
        if where.endswith(".py")
        for stem, name in SHORT.findall(text)
        if stem in _by_stem() and stem not in PROPERTY_PREFIXES
        if not resolves(f"{_by_stem()[stem]}.{name}")
    ]
    assert dead == []


def test_the_citation_check_finds_dead_names() -> None:
    assert resolves("jobs.settings.run.load_settings")
    assert resolves("assignors.catalog.catalog.StrategyCatalog")
    assert resolves("jobs.plan.udf")
    assert not resolves("jobs.plan.pipeline.check_whatif")
    assert not resolves("assignors.model.NoSuchClass")
