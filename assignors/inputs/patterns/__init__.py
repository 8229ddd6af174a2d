"""`subscribe(Pattern)` semantics: Java regular expressions matched against topic names.

A member that subscribes by pattern gets every topic whose *whole* name matches (Java
`Pattern.matcher(topic).matches()`). A pattern that matches nothing is a legal, empty
subscription. Patterns are written in Java's regex dialect, so `compile_java_pattern`
translates it to Python's `re`, or raises `InvalidPatternError` (reason `INVALID_PATTERN`):

* translated: possessive quantifiers and atomic groups (native since Python 3.11; a
  possessive quantifier on a group is written as the atomic group it means, `(x)*+` ->
  `(?>(x)*)`, as CPython 3.11 can raise SystemError on the former: python/cpython#101955),
  `(?<name>...)`/`\\k<name>` (Python spells them `(?P<name>...)`/`(?P=name)`), `\\Q...\\E`,
  `\\z` and `\\Z`, `\\h \\H \\v \\V \\R \\e \\cX`, `\\x{...}`, Java octal `\\0nnn`, POSIX classes
  `\\p{Alpha}` etc. (US-ASCII, as Java's default), Unicode general categories `\\p{Lu}` /
  `\\pL` / `\\p{IsL}` / `\\p{gc=L}`, class union `[a-c[x-z]]` (one set, or an atomic
  group when a part is negated) and intersection `[a-z&&[^x]]`, Java's numeric
  back-reference rule, and inline flags anywhere (`a(?i)b|c`: Java applies the flag up to
  the end of the enclosing group, across `|`).
* Java defaults kept: `\\d \\w \\s \\b` and case-insensitivity are ASCII-only (Python's `re.ASCII`);
  `(?U)` switches to Unicode. `(?u)` (Unicode case folding alone) and `(?d)` (UNIX_LINES) are
  accepted without effect: Python cannot separate them from `(?U)`, and they only change
  results for non-ASCII names or line terminators, which Kafka topic names
  (`[a-zA-Z0-9._-]`, at most 249 characters) cannot contain. `.`, `^` and `$` differ from Java
  only on line terminators too, so they are kept as they are.
* rejected: what Java itself rejects (dangling or illegal quantifiers like `{x}`, unknown
  escapes such as `\\y`, Python-only syntax like `(?P<n>...)` or `(?#...)`), and what has no
  faithful Python equivalent: comments mode `(?x)`, `(?c)`, `\\G`, `\\X`, `\\b{g}`,
  scripts/blocks/binary properties (`\\p{IsLatin}`, `\\p{InGreek}`, `\\p{javaLowerCase}`),
  negated classes that nest classes or use `&&`, and variable-length look-behind.

Consumer-protocol (KIP-848) groups. The broker, not the consumer, resolves their patterns,
with RE2/J: `re2j_refusal` says where a pattern leaves what RE2/J reads as Java does
(look-around, back-references, possessive quantifiers, atomic groups, nested classes, ...:
module `re2j`), and validation refuses such a member (`PATTERN_NOT_RE2J`). Classic groups
keep Java's semantics.

Backtracking guard. Java and Python both match by backtracking, so `(a+)+b` against a long
`aaaa...` takes exponential time, and CPython cannot interrupt a running match (a timeout
thread does not help; a subprocess per match is far too slow for 100k groups). The guard is
therefore static, on the parsed pattern, and cheap (about a millisecond per pattern, plus
0.1 s once per process when two classes are first compared in step 1):

1. *Auto-possessification* (safe rewriting, as PCRE does): a greedy or lazy quantifier on a
   single-character atom becomes possessive when what must follow it can never match the
   same character (`[a-z]+\\.` -> `[a-z]++\\.`, `([a-z0-9]+[-.])*`, a trailing `.*` -> `.*+`).
   Two characters are compared exactly when one is a literal or can only match ASCII (then
   all 128 are tried), and are otherwise assumed to overlap; an inline flag (`(?i)`, `(?s)`,
   `(?U)`) turned on anywhere is assumed everywhere. This never changes which names match.
2. *A worst-case bound*, computed bottom-up on the rewritten pattern for names of at most
   N = 249 characters. For each sub-pattern and start position, `ways` bounds the number of
   distinct ways it can match (each is handed to what follows, which may fail and come back
   for the next one), and `steps` the work to find and give up all of them:

   * a character or class, an anchor: 1 way, 1 step; a back-reference: 1 way, N steps;
   * a sequence: ways multiply, and each item's steps are paid once per way of matching
     what precedes it;
   * alternatives: steps add up; ways add up too, unless every alternative starts with a
     character that none of the others can start with (`(eu|us)`: only one gets further);
   * an atomic group, a look-around, a possessive quantifier (written, or made so by step 1):
     1 way, the steps of what is inside;
   * `x{lo,hi}`, where `x` has `w` ways: at most `top = min(hi, N // shortest match of x)`
     iterations (`lo + N` when `x` can match empty: an empty iteration ends the loop);
     ways `w**lo + ... + w**top`; each partial path (`w**0 + ... + w**(top-1)` of them)
     tries `x` once more, paying its steps and, for a group (or a class Python runs as
     one, such as `[a[^b]]`), 20 steps to enter it and 20 per way out. A possessive
     `x{lo,hi}+` can only retry its first `lo` iterations.

   The pattern is INVALID_PATTERN when `steps + ways` of the whole exceeds
   `MAX_BACKTRACKING_STEPS` (1e8): a fraction of a second per 249-character name for the
   slowest accepted patterns on adversarial names (long runs of the pattern's own
   characters, spoiled by a last one; figures in docs/performance.md). What it rejects:

   * a repeat of a body that can match the same text in more than one way: any
     non-possessive inner quantifier, `?` and `{0,n}` included (`(a+)+`, `(a?a?)*`,
     `(\\w?\\w?)+`, `(x+x+)+`, `(a{0,16}){0,16}`), or alternatives that can start alike
     (`(a|a)*`, `(a|ab)*`). `w >= 2` to the power of up to 249 is astronomical, so only a
     small bounded count of such a body passes (`(ab?b?){3}c`); the message names the
     repeat.
   * too many backtracking quantifiers in a row, a bounded one counting by its range:
     three unbounded `.*a.*a.*b` (4.7e7 steps) pass, four (1.2e10) do not; six `a{0,16}`
     pass, seven (17**6 ways of splitting the a's before the last) do not.
3. `match_topics` ignores names longer than Kafka's 249-character limit (no real topic has
   one), which the bound relies on.

The message always says how to rewrite the pattern (possessive quantifiers or atomic
groups). Known false positives, rejected although fast in practice:

* the bound lets every way of matching a prefix reach every later item with a full-length
  name left: `.*\\..*\\..*\\.v[0-9]+` (three `.*` that can give characters back, then a
  repeat: 4e9) is rejected though the `.v` before the last repeat makes it cheap;
* ways are counted, not the strings they match: `(a|ab)*` (no name splits two ways) and
  `((ab)*|a)*` are rejected, and so are `(a?)*` and `(?:a?|b)+`, whose second way is the
  empty match (Python ends a loop at an empty iteration, so these are linear);
* a first character that is not a single atom counts as any character, so an alternative
  starting with an optional item or empty makes the alternatives start alike: `(-?x|y)+`,
  `(|a)*`;
* two classes that may both match non-ASCII characters count as overlapping, so
  `(?U)(\\w+\\W)*` is rejected (`(\\w+\\W)*` is accepted).

>>> match_topics(r"orders\\.(eu|us)\\..*", ["orders.eu.v1", "orders.apac.v1", "xorders.eu.v1"])
['orders.eu.v1']
>>> compile_java_pattern(r"\\Qa.b\\E\\p{Digit}+").pattern
'a\\\\.b[0-9]++'
>>> compile_java_pattern("(a+)+b")
Traceback (most recent call last):
...
assignors.inputs.patterns.translator.InvalidPatternError: invalid topic pattern '(a+)+b': \
nested quantifier in '(a+)+' can backtrack catastrophically; make the inner quantifier \
possessive (e.g. 'x++') or use an atomic group '(?>...)'
"""

from __future__ import annotations

from assignors.inputs.patterns.guard import MAX_BACKTRACKING_STEPS
from assignors.inputs.patterns.resolver import (
    CompiledPattern,
    PatternResolver,
    analyse_java_pattern,
    compile_java_pattern,
    match_topics,
    re2j_refusal,
)
from assignors.inputs.patterns.translator import (
    INVALID_PATTERN,
    MAX_PATTERN_LENGTH,
    InvalidPatternError,
)

__all__ = [
    "INVALID_PATTERN",
    "MAX_BACKTRACKING_STEPS",
    "MAX_PATTERN_LENGTH",
    "CompiledPattern",
    "InvalidPatternError",
    "PatternResolver",
    "analyse_java_pattern",
    "compile_java_pattern",
    "match_topics",
    "re2j_refusal",
]
