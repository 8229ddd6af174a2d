"""Patterns against topic names: compile once, bound the work, resolve a subscription."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from assignors.inputs.patterns.guard import Guard
from assignors.inputs.patterns.translator import (
    MAX_PATTERN_LENGTH,
    InvalidPatternError,
    Translator,
    emit,
)
from assignors.model import java_sorted
from assignors.problems import KAFKA_MAX_TOPIC_LENGTH, is_legal_topic_name

# --- public API ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CompiledPattern:
    """A translated pattern and the guard's bound on its work against one topic name."""

    regex: re.Pattern[str]
    steps: int


@lru_cache(maxsize=4096)
def analyse_java_pattern(pattern: str) -> CompiledPattern:
    """`compile_java_pattern` plus the backtracking bound per name (see the module docstring).

    >>> analyse_java_pattern("orders-.*").steps < analyse_java_pattern(".*a.*b").steps
    True
    >>> analyse_java_pattern("x" * (MAX_PATTERN_LENGTH + 1))
    Traceback (most recent call last):
    ...
    assignors.inputs.patterns.translator.InvalidPatternError: invalid topic pattern \
'xxx...' (10001 characters): longer than 10000 characters; list the topics instead
    """
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise InvalidPatternError(
            f"{pattern[:3]}...",
            f"longer than {MAX_PATTERN_LENGTH} characters; list the topics instead",
            length=len(pattern),
        )
    t = Translator(pattern)
    try:
        alts = t.parse()
        guard = Guard(pattern, t.flags_seen)
        for seq in alts:
            guard.possessify(seq, [None])
        steps = guard.check(alts)
        py = "|".join("".join(map(emit, seq)) for seq in alts)
    except RecursionError:
        raise InvalidPatternError(pattern, "too deeply nested") from None
    try:
        return CompiledPattern(re.compile(py, re.ASCII), steps)
    except (re.error, OverflowError, RecursionError) as exc:
        raise InvalidPatternError(pattern, f"not usable in Python: {exc}") from None


@lru_cache(maxsize=4096)
def re2j_refusal(pattern: str) -> str | None:
    """Why the broker would not resolve this Java pattern as Java does, or None (module
    `re2j`): a consumer-protocol member's pattern is compiled with RE2/J. Raises
    InvalidPatternError when the pattern is not Java either (the guard is not consulted: a
    pattern RE2/J refuses is never matched).

    >>> print(re2j_refusal(r"orders\\.(?!test).*"))
    the broker compiles consumer-protocol patterns with RE2/J, which refuses the negative \
look-ahead '(?!test)': the member's heartbeat fails with INVALID_REGULAR_EXPRESSION and it \
gets no assignment
    >>> print(re2j_refusal("[a-z&&[^x]]+"))
    the broker compiles consumer-protocol patterns with RE2/J, which reads the class \
intersection '&&' and the nested character class '[^x]' differently from Java: the broker \
would match other topics than the planner
    >>> re2j_refusal(r"(?<env>prod|test)\\.orders-[a-z]+?") is None
    True
    """
    if len(pattern) > MAX_PATTERN_LENGTH:
        analyse_java_pattern(pattern)  # raises the same INVALID_PATTERN error
    t = Translator(pattern)
    try:
        t.parse()
    except RecursionError:
        raise InvalidPatternError(pattern, "too deeply nested") from None
    refused: list[str] = []
    differs: list[str] = []
    for _, what, refuses in sorted(t.re2j):
        seen = refused if refuses else differs
        if what not in seen:
            seen.append(what)
    if not refused and not differs:
        return None
    parts = []
    if refused:
        parts.append(
            f"refuses {_and(refused)}: the member's heartbeat fails with"
            " INVALID_REGULAR_EXPRESSION and it gets no assignment"
        )
    if differs:
        parts.append(
            f"reads {_and(differs)} differently from Java: the broker would match other"
            " topics than the planner"
        )
    return "the broker compiles consumer-protocol patterns with RE2/J, which " + "; and ".join(
        parts
    )


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def compile_java_pattern(pattern: str) -> re.Pattern[str]:
    """Translate a Java regex into a compiled Python one, or raise InvalidPatternError.

    The result is meant for `fullmatch` (Java `matches()`); it is compiled with `re.ASCII`,
    Java's default for `\\w \\d \\s \\b` and case-insensitive matching.

    >>> compile_java_pattern(r"(?<env>prod|test)-[a-z]+\\z").pattern
    '(?P<env>prod|test)\\\\-[a-z]++\\\\Z'
    >>> compile_java_pattern("a(?i)b|c").pattern
    'a(?i:b)|(?i:c)'
    >>> bool(compile_java_pattern("[a-z&&[^aeiou]]+").fullmatch("xyz"))
    True
    """
    return analyse_java_pattern(pattern).regex


def match_topics(pattern: str | re.Pattern[str], topics: Iterable[str]) -> list[str]:
    """The topics whose whole name matches, in Java string order (no match: empty list).

    Names longer than Kafka's 249-character limit cannot be topics and never match.

    >>> match_topics("logs-.*", ["logs-a", "logs-", "xlogs-b", "logs-b"])
    ['logs-', 'logs-a', 'logs-b']
    >>> match_topics("nothing", ["a", "b"])
    []
    """
    compiled = compile_java_pattern(pattern) if isinstance(pattern, str) else pattern
    return java_sorted(
        {t for t in topics if len(t) <= KAFKA_MAX_TOPIC_LENGTH and compiled.fullmatch(t)}
    )


MAX_GROUP_BACKTRACKING_STEPS: Final = 10_000_000_000
"""The backtracking budget of one group's patterns against every topic name (see
`PatternResolver`): the patterns' worst-case steps per name times the number of names.
Seconds of matching in the very worst case, far less on real names (docs/performance.md)."""


class PatternResolver:
    """`subscribe(Pattern)` against the snapshot's topics, memoised per pattern (many members
    of many groups share a pattern).

    Calling it resolves a pattern to the matching topic names, in Java string order, or raises
    ValueError (`InvalidPatternError`: the reason is in the message). Only legal topic names
    can match. `cost` is the worst-case backtracking work of matching the pattern against
    every name: the guard's bound per name (`guard.Guard`) times the number of
    names; `build_group` holds each group's patterns to `MAX_GROUP_BACKTRACKING_STEPS`
    together, so that a pattern cheap per name still cannot stall a run with many topics.
    """

    def __init__(self, topics: Iterable[str]) -> None:
        self.topics = [t for t in topics if is_legal_topic_name(t)]
        self._cache: dict[str, list[str] | ValueError] = {}

    def cost(self, pattern: str) -> int:
        """Worst-case steps to match `pattern` against every topic name (0 when invalid)."""
        try:
            return analyse_java_pattern(pattern).steps * len(self.topics)
        except ValueError:
            return 0

    def __call__(self, pattern: str) -> list[str]:
        hit = self._cache.get(pattern)
        if hit is None:
            try:
                hit = match_topics(analyse_java_pattern(pattern).regex, self.topics)
            except ValueError as exc:  # InvalidPatternError: the reason is in the message
                hit = exc
            self._cache[pattern] = hit
        if isinstance(hit, ValueError):
            raise hit
        return hit
