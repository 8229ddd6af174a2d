"""Java regex topic subscriptions: translation, full-match semantics, backtracking guard."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from functools import partial

import pytest

from assignors.inputs.patterns import (
    INVALID_PATTERN,
    InvalidPatternError,
    compile_java_pattern,
    match_topics,
)

TOPICS = ["orders", "orders.eu", "orders.us", "Orders.eu", "payments-v1", "payments-v2", "a.b"]


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("orders", ["orders"]),  # full match: not a prefix search
        ("orders.*", ["orders", "orders.eu", "orders.us"]),
        (r"orders\.(eu|us)", ["orders.eu", "orders.us"]),
        ("(?i)orders\\.eu", ["Orders.eu", "orders.eu"]),
        ("payments-v[12]", ["payments-v1", "payments-v2"]),
        ("nothing-matches", []),
        (r"\Qa.b\E", ["a.b"]),
        (r"\p{Lower}+\.\p{Lower}{2}", ["orders.eu", "orders.us"]),
        (r"\p{Alpha}+", ["orders"]),
        (r"\p{Lu}\p{Ll}+\.eu", ["Orders.eu"]),
        (r"\pL+-v\p{Digit}", ["payments-v1", "payments-v2"]),
        (r"payments-v\x{32}", ["payments-v2"]),
        (r"payments-v\u0031", ["payments-v1"]),
        (r"payments-v\061", ["payments-v1"]),  # Java octal: \0 then 61
        (r"payments-v\0061", ["payments-v1"]),  # \0 then 061
        (r"[a-z&&[^aeiou]]+", []),
        (r"[a-z&&[^xyz]]+s", ["orders"]),
        (r"[o[p]][a-z]+", ["orders"]),
        (r"(?<name>orders)\.\k<name>", []),
        (r"(o)rders\.e\1", []),
        (r"(.)\.\1", []),
        (r"o(?i)RDERS|PAYMENTS-V1", ["orders", "payments-v1"]),
        (r"orders\z", ["orders"]),
        (r"orders\Z", ["orders"]),
        (r"orders(?:\.eu)?+", ["orders", "orders.eu"]),
        (r"(?>orders|orders\.eu)", ["orders"]),  # atomic: no retry of the second branch
        (r"\w+\.\w+", ["Orders.eu", "a.b", "orders.eu", "orders.us"]),
        (r"payments\Wv\d", ["payments-v1", "payments-v2"]),
    ],
)
def test_match_topics(pattern: str, expected: list[str]) -> None:
    assert match_topics(pattern, TOPICS) == sorted(expected)


@pytest.mark.parametrize(
    ("pattern", "python"),
    [
        (r"a*+b++c?+d{2}+", "a*+b++c?+d{2}+"),
        (r"(?<g>x)\k<g>", r"(?P<g>x)(?P=g)"),
        (r"x\z", r"x\Z"),
        (r"a(?i)b|c", "a(?i:b)|(?i:c)"),
        (r"(?i:a)b", "(?i:a)b"),
        (r"(?U)\w", r"(?u:\w)"),
        (r"\e\cA", "\x1b\x01"),
        (r"[\d&&[^5]]", r"(?:(?=[\d])[^5])"),
        (r"[ab[cd]]", "[abcd]"),  # one set, as Python would make of `[ab]|[cd]`
        (r"[a[^b]]", "(?>[a]|[^b])"),  # one character either way: not two ways to match 'a'
        (r"((x)|y)*+", "(?>((x)|y)*)"),  # CPython 3.11 raises SystemError on `((x)|y)*+`
        (r"(?:ab)?+", "(?>(?:ab)?)"),
        (r"[^\d_]", r"[^\d_]"),
        (r"a.*", "a.*+"),  # trailing: auto-possessive, same matches
        (r"[a-z]+\.x", r"[a-z]++\.x"),
        (r"(\.[a-z]+)+", r"(\.[a-z]++)+"),
        (r"(a)\1", r"(a)(?:\1)"),
        (r"(a)\12", r"(a)(?:\1)2"),  # Java: \12 is \1 then '2' when group 12 does not exist
        (r"\2(a)", r"(?!)(a)"),  # Java: reference to a group that has not matched fails
        ("(?<!x)y", "(?<!x)y"),
    ],
)
def test_translation(pattern: str, python: str) -> None:
    assert compile_java_pattern(pattern).pattern == python


@pytest.mark.parametrize(
    ("pattern", "fragment"),
    [
        ("{x}", "illegal repetition"),
        ("a{", "illegal repetition"),
        ("*a", "dangling meta character"),
        ("a**", "dangling meta character"),
        ("(?P<n>a)", "unknown group type"),
        ("(?#comment)", "unknown group type"),
        ("(?x)a b", "comments mode"),
        ("a)", "unmatched ')'"),
        ("(a", "unclosed group"),
        ("[a-", "unclosed character class"),
        ("[z-a]", "illegal character range"),
        (r"\y", "illegal/unsupported escape"),
        (r"\G", "not supported"),
        (r"\p{IsLatin}", "not supported"),
        (r"\p{javaLowerCase}", "not supported"),
        (r"[^a[b]]", "negated character classes"),
        (r"\k<nope>", "does not exist"),
        ("(?<=a+)b", "not usable in Python"),  # Java allows bounded look-behind only anyway
        ("a\\", "trailing backslash"),
        ("(" * 5000 + ")" * 5000, "too deeply nested"),
    ],
)
def test_rejected_with_reason(pattern: str, fragment: str) -> None:
    with pytest.raises(InvalidPatternError) as info:
        compile_java_pattern(pattern)
    assert fragment in str(info.value)
    assert info.value.reason == INVALID_PATTERN
    assert info.value.pattern == pattern


# The three patterns that hung before the guard was tightened: `?` and bounded repeats
# inside a repeated group, and many bounded repeats in a row.
# A hang detector, not a speed check: an unguarded catastrophic pattern backtracks for minutes
# to hours on these names, a guarded one matches in microseconds. The gap is so wide that a
# loaded machine cannot blur it; speed itself is measured by `make bench`, never here.
HANG_S = 10.0


def _seconds(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


REPRODUCED = ["(a?a?)*b", "(?:a?a?a?)+b", "a{0,16}" * 12 + "b"]


@pytest.mark.parametrize(
    "pattern",
    [
        *REPRODUCED,
        "(a+)+b",
        "(a*)*b",
        r"(\w+\s?)+$",
        "(a|aa)+b",
        "(a|a)*b",
        "(a|ab)*c",  # linear in fact (no string splits two ways), but alternatives start alike
        "(x+x+)+y",
        r"(\w?\w?)+z",
        "((ab)*|a)*c",  # also linear in fact
        "(a{0,16}){0,16}b",  # nested bounded repeats
        "((a{1,8}){1,8}){1,8}b",
        "(a{2,3}){1,100}b",  # 2 or 3 characters per iteration: many ways to split a run
        "(a?){200}a{200}",  # the classic: a bounded count does not help
        "(?:a|a?)+b",  # an inner `?` in an alternative
        "(.*a){20}",
        ".*a.*a.*a.*b",  # four backtracking quantifiers: polynomial, but n**4
        ".*a.*a.*a.*a.*b",
        "a{0,16}" * 7 + "b",  # bounded repeats count by their range: 17**6 ways
        r"(?s)(\n|.)+x",  # with DOTALL, `.` and `\n` overlap
        r"(?U)(éa|\wa?)+x",  # with UNICODE_CHARACTER_CLASS, `\w` matches 'é'
    ],
)
def test_catastrophic_patterns_are_rejected_fast(pattern: str) -> None:
    # Rejected by the static cost bound before any name is matched: a pattern that reached
    # the matcher would backtrack for hours on this name, so rejection itself proves "fast".
    # (No wall-clock assertion: timing belongs to `make bench`, not to tests.)
    with pytest.raises(InvalidPatternError, match="backtrack") as info:
        match_topics(pattern, ["a" * 200 + "c"])
    assert info.value.reason == INVALID_PATTERN


@pytest.mark.parametrize(
    "pattern",
    [
        "(a?)*c",  # Python ends a loop at an empty iteration: linear
        "(?:a?|b)+c",
        r".*\..*\..*\.v[0-9]+",  # the bound assumes the last repeat may scan a whole name
        "(-?x|y)+",  # an optional first item hides the first character
        r"(?U)(\w+\W)*",  # both classes may match non-ASCII characters
    ],
)
def test_known_false_positives_are_rejected(pattern: str) -> None:
    # Documented in the module docstring; a possessive quantifier or atomic group fixes each.
    with pytest.raises(InvalidPatternError, match="backtrack"):
        compile_java_pattern(pattern)


@pytest.mark.parametrize(
    ("pattern", "detail"),
    [
        ("(a?a?)*b", "nested quantifier in '(a?a?)*' can backtrack catastrophically"),
        ("(?:a?a?a?)+b", "nested quantifier in '(?:a?a?a?)+'"),
        ("a{0,16}" * 12 + "b", "steps on a 249-character name (at most 1.0e+08)"),
        ("(a|ab)*c", "alternatives that can start alike, repeated in '(a|ab)*'"),
        ("(a{0,16}){0,16}b", "nested quantifier in '(a{0,16}){0,16}'"),
        (".*a.*a.*a.*b", "steps on a 249-character name (at most 1.0e+08)"),
    ],
)
def test_rejection_names_the_cause(pattern: str, detail: str) -> None:
    with pytest.raises(InvalidPatternError) as info:
        compile_java_pattern(pattern)
    assert detail in info.value.detail
    assert "possessive" in info.value.detail  # and how to fix it


@pytest.mark.parametrize(
    ("length", "pattern"), [(30, p) for p in REPRODUCED] + [(120, REPRODUCED[2])]
)
def test_reproduced_hangs_are_rejected_before_matching(length: int, pattern: str) -> None:
    # These backtrack for seconds to forever on `length` characters: the guard keeps them from
    # the engine.
    with pytest.raises(InvalidPatternError) as info:
        match_topics(pattern, ["a" * length])
    assert "backtrack" in info.value.detail  # refused by the static bound, never matched


ADVERSARIAL = [
    "a" * 249,
    "a" * 248 + "!",
    "topic." + "a" * 240 + "-",
    "foo" * 83,
    "-" * 248 + "!",
    "." * 248 + "!",
    "orders" + "." * 242 + "!",
    "a." * 124 + "!",
]


@pytest.mark.parametrize(
    "pattern",
    [
        "(a++)+b",  # possessive inner
        "(a+)++b",  # possessive outer
        "(?>a+)+b",  # atomic inner
        "(a|a)*+b",  # ambiguous, but possessive
        "(foo|bar)+",  # alternatives start differently
        r"topic(\.[a-z]+)+",  # auto-possessive inner
        r"[a-z]+(-[a-z]+)*-v\d+",
        r"([a-z0-9]+[-_.])*[a-z0-9]+",  # class vs class: disjoint, so auto-possessive
        r"(\w+\W)*",
        ".*a.*a.*b",  # three backtracking quantifiers
        ".*foo.*bar.*baz",
        "(ab?b?){3}c",  # a small bounded repeat of an ambiguous body
        "a{0,16}" * 6 + "b",
        r"[a\H]*b",  # a class union is one atomic character
        r"orders\..*",
        r"(payments|clicks)\.[a-z0-9-]+",
        "app-[0-9]{1,5}",
        "t[12]",
        ".*-dlq",
        "(?i)ORDERS.*",
        r"[a-z]+(\.[a-z]+)*",
        r"(.*)-(.*)\.\1",
    ],
)
def test_safe_patterns_accepted_and_never_hang(pattern: str) -> None:
    compiled = compile_java_pattern(pattern)
    for name in ADVERSARIAL:
        assert _seconds(partial(match_topics, compiled, [name])) < HANG_S, name


def test_ordinary_topic_patterns() -> None:
    topics = [
        "orders.eu",
        "orders",
        "payments.v1",
        "clicks.web-2",
        "app-123",
        "app-123456",
        "t1",
        "t3",
        "orders-dlq",
        "ORDERS.EU",
        "a.b.c",
        "a..b",
    ]
    cases = {
        r"orders\..*": ["orders.eu"],
        r"(payments|clicks)\.[a-z0-9-]+": ["clicks.web-2", "payments.v1"],
        "app-[0-9]{1,5}": ["app-123"],
        "t[12]": ["t1"],
        ".*-dlq": ["orders-dlq"],
        "(?i)ORDERS.*": ["ORDERS.EU", "orders", "orders-dlq", "orders.eu"],
        r"[a-z]+(\.[a-z]+)*": ["a.b.c", "orders", "orders.eu"],
    }
    for pattern, expected in cases.items():
        assert match_topics(pattern, topics) == expected, pattern


def test_possessive_group_with_capture_matches_instead_of_crashing() -> None:
    # CPython 3.11 raises SystemError on `((x)|y|z)*+` (python/cpython#101955).
    assert match_topics("((x)|y|z)*+", ["xyz", "xyzw"]) == ["xyz"]
    assert match_topics("(?:(x)|y){1,3}+z", ["xyz", "z"]) == ["xyz"]


@pytest.mark.parametrize(
    ("pattern", "name"),
    [
        (r"(?U)\w+é", "éé"),  # `\w` takes 'é' too: must not become `\w++`
        ("(?s)a.*\n", "ab\n"),  # with DOTALL, `.` takes '\n' too
        (r"(?i)[a-z]+K", "kk"),
        (r"[a-z]+[k-m]", "kk"),
    ],
)
def test_auto_possessive_respects_flags(pattern: str, name: str) -> None:
    assert match_topics(pattern, [name]) == [name]


# --- property: whatever the guard accepts stays fast -------------------------------------------

_FUZZ_ATOMS = ("a", "a", "a", "[ab]", ".", r"\w", "[a[^b]]", "b", "-", "(?=a)")
_FUZZ_QUANTS = (
    "?",
    "?",
    "??",
    "*",
    "+",
    "*?",
    "{0,3}",
    "{0,16}",
    "{1,5}",
    "{2}",
    "{3,}",
    "*+",
    "?+",
)


def _fuzz_item(rng: random.Random, depth: int) -> str:
    """An atom or a group of 1-3 alternatives, usually quantified; mostly things 'a' matches."""
    if depth < 2 and rng.random() < 0.3:
        alts = (
            "".join(_fuzz_item(rng, depth + 1) for _ in range(rng.randint(1, 3)))
            for _ in range(rng.choice((1, 1, 2, 3)))
        )
        atom = rng.choice(("(", "(?:", "(?>")) + "|".join(alts) + ")"
    else:
        atom = rng.choice(_FUZZ_ATOMS)
    if rng.random() < 0.75:
        atom += rng.choice(_FUZZ_QUANTS)
    return atom


def _fuzz_pattern(rng: random.Random) -> str:
    pattern = "".join(_fuzz_item(rng, 0) for _ in range(rng.randint(1, 8)))
    pattern += rng.choice(("", "b", "-", "a"))
    if rng.random() < 0.1:
        pattern = "(a*)" + pattern + r"\1"
    return pattern


def _adversarial_names(pattern: str) -> list[str]:
    """Long runs of the pattern's own characters, each spoiled by a last one it cannot match."""
    alphabet = sorted({c for c in pattern if c in "ab-"}) or ["a"]
    runs = [c * 248 for c in alphabet] + ["".join(alphabet) * 248]
    return [run[:248] + end for run in runs for end in ("!", "\n")]


def test_accepted_patterns_never_hang_on_adversarial_names() -> None:
    rng = random.Random(20240611)
    accepted = 0
    reasons: list[str] = []
    slowest = (0.0, "", "")
    for _ in range(1500):
        pattern = _fuzz_pattern(rng)
        try:
            compiled = compile_java_pattern(pattern)
        except InvalidPatternError as exc:
            reasons.append(exc.reason)
            continue
        accepted += 1
        for name in _adversarial_names(pattern):
            seconds = _seconds(partial(match_topics, compiled, [name]))
            slowest = max(slowest, (seconds, pattern, name))
    assert accepted > 400  # both sides of the guard were exercised
    assert len(reasons) > 400
    assert set(reasons) == {INVALID_PATTERN}
    elapsed, pattern, name = slowest
    assert elapsed < HANG_S, f"{pattern!r} took {elapsed:.2f} s on {name!r}"


def test_over_long_names_never_match() -> None:
    assert match_topics("a+", ["a" * 249, "a" * 250]) == ["a" * 249]


def test_accepts_compiled_pattern_and_dedupes() -> None:
    compiled = compile_java_pattern("t.")
    assert match_topics(compiled, ["t2", "t1", "t2", "tt3"]) == ["t1", "t2"]


def test_java_order_of_results() -> None:
    # U+FF01 sorts after U+1F600 in Java (UTF-16 code units), before it by code point.
    assert match_topics(".", ["\U0001f600", "\uff01"]) == ["\U0001f600", "\uff01"]
