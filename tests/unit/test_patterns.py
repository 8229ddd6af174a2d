"""Java regex topic subscriptions: translation, full-match semantics, backtracking guard."""

from __future__ import annotations

import time

import pytest

from assignors.patterns import (
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
        (r"[ab[cd]]", "(?:[ab]|[cd])"),
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


@pytest.mark.parametrize(
    "pattern",
    [
        "(a+)+b",
        "(a*)*b",
        r"(\w+\s?)+$",
        "(a|aa)+b",
        "(a|a)*b",
        "(x+x+)+y",
        "((ab)*|a)*c",
        ".*a.*a.*a.*a.*b",
        "(.*a){20}",
    ],
)
def test_catastrophic_patterns_are_rejected_fast(pattern: str) -> None:
    start = time.perf_counter()
    with pytest.raises(InvalidPatternError, match="backtrack"):
        match_topics(pattern, ["a" * 200 + "c"])
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize(
    "pattern",
    [
        "(a++)+b",  # possessive inner
        "(?>a+)+b",  # atomic inner
        "(foo|bar)+",  # alternatives start differently
        r"topic(\.[a-z]+)+",  # auto-possessive inner
        r"[a-z]+(-[a-z]+)*-v\d+",
        ".*a.*a.*b",
    ],
)
def test_safe_patterns_accepted_and_fast(pattern: str) -> None:
    names = ["a" * 249, "a" * 248 + "!", "topic." + "a" * 240 + "-", "foo" * 83]
    start = time.perf_counter()
    match_topics(pattern, names * 10)
    assert time.perf_counter() - start < 2.0


def test_over_long_names_never_match() -> None:
    assert match_topics("a+", ["a" * 249, "a" * 250]) == ["a" * 249]


def test_accepts_compiled_pattern_and_dedupes() -> None:
    compiled = compile_java_pattern("t.")
    assert match_topics(compiled, ["t2", "t1", "t2", "tt3"]) == ["t1", "t2"]


def test_java_order_of_results() -> None:
    # U+FF01 sorts after U+1F600 in Java (UTF-16 code units), before it by code point.
    assert match_topics(".", ["\U0001f600", "\uff01"]) == ["\U0001f600", "\uff01"]
