"""Every relative link in README.md and docs/*.md resolves: the file exists, and an anchor
(`page.md#section`, `#section`) names a heading of that page under GitHub's slug rules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# Pages added by their features (exporter, one group without Spark, Kafka 4 groups): links to
# them are accepted while the page is missing, and checked like any other once it exists.
PENDING_PAGES = frozenset({"docs/exporter.md", "docs/one-group.md", "docs/kafka4.md"})

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[(?:[^\]\n]|\\\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)


def prose(text: str) -> str:
    """The page without fenced code blocks (their `#` lines and brackets are not markdown)."""
    return FENCE.sub("", text)


def github_slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lowercased, punctuation other than `-`
    and `_` removed, each space a hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text).lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings; repeated headings get -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    for match in HEADING.finditer(prose(page.read_text(encoding="utf-8"))):
        slug = github_slug(match.group(2))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def links(page: Path) -> list[str]:
    text = INLINE_CODE.sub("", prose(page.read_text(encoding="utf-8")))
    return [m.group(1) for m in LINK.finditer(text)]


def is_external(target: str) -> bool:
    return re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target) is not None


def broken_links(page: Path) -> list[str]:
    problems = []
    for target in links(page):
        if is_external(target):
            continue
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        rel = dest.relative_to(ROOT).as_posix() if dest.is_relative_to(ROOT) else str(dest)
        if not dest.exists():
            if rel not in PENDING_PAGES:
                problems.append(f"{target}: no file {rel}")
            continue
        if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            problems.append(f"{target}: no heading #{anchor} in {rel}")
    return problems


def test_the_pages_exist() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    assert "README.md" in names
    assert len(names) > 1, "docs/*.md holds the pages the README links to"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(page: Path) -> None:
    assert broken_links(page) == []


def test_github_slugs() -> None:
    assert github_slug("Bad input: a clear error, and nothing lost") == (
        "bad-input-a-clear-error-and-nothing-lost"
    )
    assert github_slug("How long `make test` takes") == "how-long-make-test-takes"
    assert github_slug("`rebalance_costs`") == "rebalance_costs"
    assert github_slug("Where Java's hash-map order decides") == (
        "where-javas-hash-map-order-decides"
    )
    assert github_slug("Object stores (S3, GCS, ABFS)") == "object-stores-s3-gcs-abfs"


def test_the_checker_finds_broken_links(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# Title\n\n## A section\n\n```\n# not a heading\n[not](a-link.md)\n```\n\n"
        "[ok](#a-section) [gone](#not-a-heading) [missing](nowhere.md) `[code](x.md)`\n"
        "[web](https://kafka.apache.org/) [self](page.md#title)\n",
        encoding="utf-8",
    )
    assert links(page) == [
        "#a-section",
        "#not-a-heading",
        "nowhere.md",
        "https://kafka.apache.org/",
        "page.md#title",
    ]
    assert anchors(page) == {"title", "a-section"}
    problems = broken_links(page)
    assert len(problems) == 2
    assert problems[0].startswith("#not-a-heading: no heading")
    assert problems[1].startswith("nowhere.md: no file")
