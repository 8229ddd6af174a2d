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
   `MAX_BACKTRACKING_STEPS` (1e8). On adversarial names (long runs of the pattern's own
   characters, spoiled by a last one), the slowest accepted patterns were measured at about
   0.1 s per 249-character name (0.2 s on a loaded machine); ordinary ones take
   microseconds. What it rejects:

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
assignors.inputs.patterns.InvalidPatternError: invalid topic pattern '(a+)+b': nested quantifier \
in '(a+)+' can backtrack catastrophically; make the inner quantifier possessive (e.g. 'x++') \
or use an atomic group '(?>...)'
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import ClassVar

from assignors.inputs.validation import KAFKA_MAX_TOPIC_LENGTH, Reason
from assignors.model import java_sorted

INVALID_PATTERN = Reason.INVALID_PATTERN.value
MAX_BACKTRACKING_STEPS = 100_000_000
"""The guard's budget for one 249-character name (see the module docstring): about 0.1 s."""
MAX_PATTERN_LENGTH = 10_000
"""Longer patterns are INVALID_PATTERN before any parsing: the guard's analysis grows with the
pattern (pairs of alternatives are compared), and a pattern this long is a list of topic names
that belongs in `topics`."""


class InvalidPatternError(ValueError):
    """A topic pattern that cannot be used: bad Java syntax, untranslatable, or unsafe."""

    reason: ClassVar[str] = INVALID_PATTERN

    def __init__(self, pattern: str, detail: str, length: int | None = None) -> None:
        shown = repr(pattern) if length is None else f"{pattern!r} ({length} characters)"
        super().__init__(f"invalid topic pattern {shown}: {detail}")
        self.pattern = pattern
        self.detail = detail


# --- the parsed pattern -------------------------------------------------------------------


@dataclass
class _Char:
    """Matches exactly one character. `literal` is set when it is one known character."""

    py: str
    literal: str | None = None

    @property
    def single(self) -> bool:
        """Python sees one character test here, not a group (as for `(?>[a]|[^b])`)."""
        return not self.py.startswith("(")


@dataclass
class _Raw:
    """Anything else that is emitted as is: anchors, back-references, `\\R`."""

    py: str
    end: bool = False  # an end-of-input anchor
    scan: bool = False  # a back-reference: compares up to a whole name, in one way


@dataclass
class _Group:
    prefix: str  # "(", "(?:", "(?>", "(?=", "(?P<n>", "(?i:", ...
    alts: list[list[_Node]]

    @property
    def transparent(self) -> bool:
        """A plain grouping: what follows the group follows its last item."""
        return self.prefix == "(" or self.prefix.endswith(":") or self.prefix.startswith("(?P<")


@dataclass
class _Quant:
    atom: _Node
    lo: int
    hi: int | None
    mode: str  # "" greedy, "?" lazy, "+" possessive
    text: str  # the quantifier as written
    src: str  # source text of atom + quantifier, for messages
    auto: bool = field(default=False)  # made possessive by the guard

    @property
    def repeats(self) -> bool:
        return self.hi is None or self.hi > 1

    @property
    def backtracks(self) -> bool:
        return self.mode != "+" and not self.auto


_Node = _Char | _Raw | _Group | _Quant


def _emit(node: _Node) -> str:
    if isinstance(node, _Char | _Raw):
        return node.py
    if isinstance(node, _Group):
        return node.prefix + "|".join("".join(map(_emit, seq)) for seq in node.alts) + ")"
    text = node.text
    if node.auto:
        text = (text[:-1] if node.mode else text) + "+"
    atom = _emit(node.atom)
    if node.mode == "+" and not isinstance(node.atom, _Char):
        # The same by definition, and CPython 3.11 can raise SystemError on a possessive
        # repeat of a group that captures (python/cpython#101955): `(?>(x)*)` for `(x)*+`.
        return f"(?>{atom}{text[:-1]})"
    return atom + text


# --- character classes ---------------------------------------------------------------------

_POSIX = {
    "Lower": "a-z",
    "Upper": "A-Z",
    "ASCII": "\\x00-\\x7f",
    "Alpha": "a-zA-Z",
    "Digit": "0-9",
    "Alnum": "a-zA-Z0-9",
    "Punct": "!-/:-@\\[-`{-~",
    "Graph": "!-~",
    "Print": " -~",
    "Blank": " \\t",
    "Cntrl": "\\x00-\\x1f\\x7f",
    "XDigit": "0-9a-fA-F",
    "Space": " \\t\\n\\x0b\\f\\r",
}
_HSPACE = " \\t\\xa0\\u1680\\u180e\\u2000-\\u200a\\u202f\\u205f\\u3000"
_VSPACE = "\\n\\x0b\\f\\r\\x85\\u2028\\u2029"
_LINE_END = "(?:\\r\\n|[\\n\\r\\x85\\u2028\\u2029])"
_CATEGORY_GROUPS = ("L", "M", "N", "P", "S", "Z", "C")
_SHORTHANDS = ("\\d", "\\D", "\\w", "\\W", "\\s", "\\S")
# Groups whose content, once matched, is never backtracked into.
_ATOMIC_PREFIXES = ("(?>", "(?=", "(?!", "(?<=", "(?<!")


@lru_cache(maxsize=1)
def _category_ranges() -> dict[str, str]:
    """Unicode general category -> class contents; one pass over all code points, cached."""
    runs: dict[str, list[list[int]]] = {}
    for cp in range(0x110000):
        cat = unicodedata.category(chr(cp))
        for key in (cat, cat[0]):
            lst = runs.setdefault(key, [])
            if lst and lst[-1][1] == cp - 1:
                lst[-1][1] = cp
            else:
                lst.append([cp, cp])
    out: dict[str, str] = {}
    for key, spans in runs.items():
        out[key] = "".join(
            _class_char(chr(a)) + ("" if a == b else "-" + _class_char(chr(b))) for a, b in spans
        )
    out["LC"] = out.get("Lu", "") + out.get("Ll", "") + out.get("Lt", "")
    return out


def _class_char(ch: str) -> str:
    """One character written safely inside a Python character class."""
    if " " < ch < "\x7f" and ch not in "\\]^-[&~|":
        return ch
    return f"\\U{ord(ch):08x}"


def _property(name: str) -> str | None:
    """Class contents for a `\\p{name}` Java accepts and we can translate, else None."""
    if name in _POSIX:
        return _POSIX[name]
    for prefix in ("Is", "gc=", "general_category="):
        if name.startswith(prefix) and len(name) > len(prefix):
            name = name[len(prefix) :]
            break
    if name in _CATEGORY_GROUPS or name == "LC" or (len(name) == 2 and name[0] in "LMNPSZC"):
        return _category_ranges().get(name)
    return None


# --- the translator -----------------------------------------------------------------------


@dataclass(slots=True)
class _Operand:
    """One `&&` operand of a class being parsed: set contents plus nested/negated classes."""

    contents: str = ""
    unions: list[str] = field(default_factory=list)


_SIMPLE_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "a": "\a", "e": "\x1b"}
_NAMED_REF = re.compile(r"k<([a-zA-Z][a-zA-Z0-9]*)>")
_HEX = re.compile(r"\{([0-9a-fA-F]+)\}|([0-9a-fA-F]{2})")
_UNICODE = re.compile(r"[0-9a-fA-F]{4}")
_OCTAL = re.compile(r"[0-3][0-7]{2}|[0-7]{1,2}")
_CHAR_NAME = re.compile(r"\{([^}]*)\}")


class _Translator:
    def __init__(self, pattern: str) -> None:
        self.s = pattern
        self.i = 0
        self.groups = 0  # capturing groups opened so far
        self.open: list[int] = []  # capturing groups still open
        self.names: dict[str, int] = {}
        self.closed_names: set[str] = set()
        # Every flag turned on anywhere: the guard assumes it everywhere (which only makes it
        # decide "these characters may overlap" more often).
        self.flags_seen = re.ASCII

    def fail(self, detail: str) -> InvalidPatternError:
        return InvalidPatternError(self.s, detail)

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    # Sequences and alternations.

    def parse(self) -> list[list[_Node]]:
        alts = self.parse_alts()
        if self.i < len(self.s):  # only a stray ')' stops the top level early
            raise self.fail(f"unmatched ')' at index {self.i}")
        return alts

    def parse_alts(self) -> list[list[_Node]]:
        alts: list[list[_Node]] = []
        carried: dict[str, bool] = {}  # inline flags set in this group so far
        while True:
            start = dict(carried)
            seq = self.parse_seq(carried)
            if start:
                seq = [_Group(_flag_prefix(start), [seq])]
            alts.append(seq)
            if self.peek() != "|":
                return alts
            self.i += 1

    def parse_seq(self, carried: dict[str, bool]) -> list[_Node]:
        items: list[_Node] = []
        while self.i < len(self.s) and self.peek() not in "|)":
            start = self.i
            if self.s.startswith("(?", self.i) and self._is_flag_group():
                flags = self._parse_flags(end=")")
                carried.update(flags)
                rest = self.parse_seq(carried)
                items.append(_Group(_flag_prefix(flags), [rest]))
                return items
            atom = self.parse_atom(items)
            if atom is None:
                continue
            items.append(self.parse_quantifier(atom, start))
        return items

    def parse_quantifier(self, atom: _Node, start: int) -> _Node:
        ch = self.peek()
        if ch not in ("*", "+", "?", "{"):
            return atom
        q_start = self.i
        if ch == "{":
            m = re.compile(r"\{(\d+)(,(\d*))?\}").match(self.s, self.i)
            if m is None:
                raise self.fail(f"illegal repetition at index {self.i}")
            lo = int(m.group(1))
            hi = lo if m.group(2) is None else (int(m.group(3)) if m.group(3) else None)
            if hi is not None and hi < lo:
                raise self.fail(f"illegal repetition range {m.group(0)!r}")
            self.i = m.end()
        else:
            lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[ch]
            self.i += 1
        mode = ""
        if self.peek() in ("?", "+"):
            mode = self.peek()
            self.i += 1
        return _Quant(atom, lo, hi, mode, self.s[q_start : self.i], self.s[start : self.i])

    def parse_atom(self, items: list[_Node]) -> _Node | None:
        ch = self.peek()
        if ch in ("*", "+", "?"):
            raise self.fail(f"dangling meta character {ch!r} at index {self.i}")
        if ch == "{":
            raise self.fail(f"illegal repetition at index {self.i}")
        if ch == "(":
            return self.parse_group()
        if ch == "[":
            return self.parse_class()
        if ch == "\\":
            return self.parse_escape(items)
        self.i += 1
        if ch == ".":
            return _Char(".")
        if ch in ("^", "$"):
            return _Raw(ch, end=ch == "$")
        return _Char(re.escape(ch), ch)

    def _is_flag_group(self) -> bool:
        m = re.compile(r"\(\?[a-zA-Z-]*[):]").match(self.s, self.i)
        return m is not None and m.group(0).endswith(")")

    def _parse_flags(self, end: str) -> dict[str, bool]:
        self.i += 2  # "(?"
        flags: dict[str, bool] = {}
        on = True
        while self.peek() != end:
            ch = self.peek()
            self.i += 1
            if ch == "-":
                on = False
            elif ch in "ims":
                flags[ch] = on
                if on and ch != "m":
                    self.flags_seen |= re.IGNORECASE if ch == "i" else re.DOTALL
            elif ch == "U":
                flags["U"] = on
                if on:
                    self.flags_seen = (self.flags_seen & ~re.ASCII) | re.UNICODE
            elif ch in "du":
                pass  # UNIX_LINES / UNICODE_CASE: no effect on legal topic names (module doc)
            elif ch == "x":
                if on:
                    raise self.fail("comments mode (?x) is not supported")
            elif ch == "c":
                raise self.fail("canonical equivalence (?c) is not supported")
            else:
                raise self.fail(f"unknown inline modifier {ch!r}")
        self.i += 1
        return flags

    def parse_group(self) -> _Node:
        s, i = self.s, self.i
        capture = False
        name = None
        if s.startswith("(?", i):
            for prefix in ("(?:", "(?=", "(?!", "(?>", "(?<=", "(?<!"):
                if s.startswith(prefix, i):
                    self.i += len(prefix)
                    py_prefix = prefix
                    break
            else:
                m = re.compile(r"\(\?<([a-zA-Z][a-zA-Z0-9]*)>").match(s, i)
                if m is not None:
                    name = m.group(1)
                    if name in self.names:
                        raise self.fail(f"named capturing group <{name}> is already defined")
                    capture = True
                    py_prefix = f"(?P<{name}>"
                    self.i = m.end()
                elif re.compile(r"\(\?[a-zA-Z-]*:").match(s, i):
                    py_prefix = _flag_prefix(self._parse_flags(end=":"))
                else:
                    raise self.fail(f"unknown group type at index {i}: {s[i : i + 3]!r}")
        else:
            capture = True
            py_prefix = "("
            self.i += 1
        if capture:
            self.groups += 1
            self.open.append(self.groups)
            if name is not None:
                self.names[name] = self.groups
        alts = self.parse_alts()
        if self.peek() != ")":
            raise self.fail("unclosed group")
        self.i += 1
        if capture:
            self.open.pop()
            if name is not None:
                self.closed_names.add(name)
        return _Group(py_prefix, alts)

    # Escapes.

    def parse_escape(self, items: list[_Node]) -> _Node | None:
        self.i += 1
        ch = self.peek()
        if not ch:
            raise self.fail("trailing backslash")
        if ch == "Q":
            return self._quoted(items)
        if ch in "123456789":
            return self._backref()
        if ch == "k":
            return self._named_backref()
        if ch in _ZERO_WIDTH:
            if ch == "b" and self.peek(1) == "{":
                raise self.fail("\\b{g} (grapheme boundary) is not supported")
            self.i += 1
            return _Raw(_ZERO_WIDTH[ch], end=ch in "zZ")
        if ch == "R":
            self.i += 1
            return _Raw(f"(?>\\r\\n|[{_VSPACE}])")
        if ch in ("G", "X"):
            raise self.fail(f"\\{ch} is not supported")
        kind, value = self._class_escape()
        if kind == "char":
            return _Char(re.escape(value), value)
        if kind == "set":
            return _Char(value if value in _SHORTHANDS else f"[{value}]")
        return _Char(value)  # "neg": an expression already

    def _quoted(self, items: list[_Node]) -> _Node | None:
        """`\\Q...\\E` (at the Q): literal characters; the last one is returned, so that a
        quantifier after `\\E` applies to it alone."""
        self.i += 1
        end = self.s.find("\\E", self.i)
        quoted = self.s[self.i :] if end < 0 else self.s[self.i : end]
        self.i = len(self.s) if end < 0 else end + 2
        chars = [_Char(re.escape(c), c) for c in quoted]
        if not chars:
            return None
        items.extend(chars[:-1])
        return chars[-1]

    def _named_backref(self) -> _Node:
        m = _NAMED_REF.match(self.s, self.i)
        if m is None:
            raise self.fail("\\k is not followed by <name>")
        self.i = m.end()
        name = m.group(1)
        if name not in self.names:
            raise self.fail(f"named capturing group <{name}> does not exist")
        # Java: a reference to a group that has not matched (still open) fails to match.
        if name not in self.closed_names:
            return _Raw("(?!)")
        return _Raw(f"(?P={name})", scan=True)

    def _backref(self) -> _Node:
        # Java reads the longest number that still names an existing group.
        j = self.i + 1
        ref = int(self.s[self.i])
        while j < len(self.s) and self.s[j].isdigit() and ref * 10 + int(self.s[j]) <= self.groups:
            ref = ref * 10 + int(self.s[j])
            j += 1
        self.i = j
        if ref > self.groups or ref in self.open:
            return _Raw("(?!)")  # Java: fails to match (Python would not compile it)
        return _Raw(f"(?:\\{ref})", scan=True)

    def _class_escape(self) -> tuple[str, str]:
        """After a backslash: ("char", c) | ("set", class contents) | ("neg", one-char regex)."""
        ch = self.peek()
        self.i += 1
        if ch in _SIMPLE_ESCAPES:
            return "char", _SIMPLE_ESCAPES[ch]
        if ch in "dDwWsS":
            return "set", "\\" + ch
        if ch in "hv":
            return "set", _HSPACE if ch == "h" else _VSPACE
        if ch in "HV":
            return "neg", f"[^{_HSPACE if ch == 'H' else _VSPACE}]"
        reader = _CHAR_READERS.get(ch)
        if reader is not None:
            return "char", reader(self)
        if ch in "pP":
            return self._property_escape(ch)
        if ch.isascii() and ch.isalnum():
            raise self.fail(f"illegal/unsupported escape sequence \\{ch}")
        return "char", ch

    def _control_char(self) -> str:
        if not self.peek():
            raise self.fail("illegal control escape \\c")
        self.i += 1
        return chr(ord(self.s[self.i - 1]) ^ 64)

    def _matched(self, pattern: re.Pattern[str], error: str) -> re.Match[str]:
        m = pattern.match(self.s, self.i)
        if m is None:
            raise self.fail(error)
        self.i = m.end()
        return m

    def _hex_char(self) -> str:
        m = self._matched(_HEX, "illegal hexadecimal escape sequence")
        cp = int(m.group(1) or m.group(2), 16)
        if cp > 0x10FFFF:
            raise self.fail("hexadecimal codepoint is too big")
        return chr(cp)

    def _unicode_char(self) -> str:
        return chr(int(self._matched(_UNICODE, "illegal Unicode escape sequence").group(0), 16))

    def _octal_char(self) -> str:
        return chr(int(self._matched(_OCTAL, "illegal octal escape sequence").group(0), 8))

    def _named_char(self) -> str:
        m = _CHAR_NAME.match(self.s, self.i)
        try:
            value = unicodedata.lookup(m.group(1)) if m else None
        except KeyError:
            value = None
        if m is None or value is None:
            raise self.fail("unknown character name in \\N{...}")
        self.i = m.end()
        return value

    def _property_escape(self, ch: str) -> tuple[str, str]:
        """`\\p{...}` / `\\P{...}` (or one-letter `\\pL`), after the p or P."""
        if self.peek() == "{":
            end = self.s.find("}", self.i)
            if end < 0:
                raise self.fail("unclosed character family")
            name = self.s[self.i + 1 : end]
            self.i = end + 1
        else:
            name = self.peek()
            self.i += 1
        contents = _property(name)
        if contents is None:
            raise self.fail(f"character property \\p{{{name}}} is not supported")
        if not contents:
            return ("neg", "[^\\s\\S]") if ch == "p" else ("neg", "[\\s\\S]")
        return ("set", contents) if ch == "p" else ("neg", f"[^{contents}]")

    # Character classes: each becomes one single-character Python expression.

    def parse_class(self) -> _Char:
        return _Char(self._class_expr())

    def _class_expr(self) -> str:
        """Parse `[...]` at self.i (Java syntax) into a single-character Python regex."""
        start = self.i
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        operands: list[str] = []  # intersected (&&)
        operand = _Operand()  # the current one
        first = True
        while True:
            ch = self.peek()
            if not ch:
                raise self.fail(f"unclosed character class at index {start}")
            if ch == "]" and not first:
                self.i += 1
                break
            first = False
            if ch == "[":
                operand.unions.append(self._class_expr())
            elif self.s.startswith("&&", self.i):
                self.i += 2
                operands.append(self._close_operand(operand))
                operand = _Operand()
                first = self.peek() != "]"  # "[a&&]" is "[a]" in Java
            elif ch == "\\" and self.peek(1) == "Q":
                end = self.s.find("\\E", self.i + 2)
                quoted = self.s[self.i + 2 :] if end < 0 else self.s[self.i + 2 : end]
                self.i = len(self.s) if end < 0 else end + 2
                operand.contents += "".join(_class_char(c) for c in quoted)
            else:
                self._class_item(operand)
        operands.append(self._close_operand(operand))
        if not negated:
            if len(operands) == 1:
                return operands[0]
            return "(?:" + "".join(f"(?={op})" for op in operands[:-1]) + operands[-1] + ")"
        if len(operands) > 1 or operand.unions or not operands[0].startswith("["):
            raise self.fail("negated character classes with nested classes or && are unsupported")
        return "[^" + operands[0][1:]

    def _class_item(self, operand: _Operand) -> None:
        """One character, range, shorthand or negated escape of a class, added to `operand`."""
        kind, lo = self._class_atom()
        if kind == "set":
            operand.contents += lo
        elif kind == "neg":
            operand.unions.append(lo)
        elif self.peek() == "-" and self.peek(1) not in ("]", "[", ""):
            self.i += 1
            kind, hi = self._class_atom()
            if kind != "char":
                raise self.fail(f"illegal character range at index {self.i}")
            if ord(hi) < ord(lo):
                raise self.fail(f"illegal character range {lo}-{hi}")
            operand.contents += _class_char(lo) + "-" + _class_char(hi)
        else:
            operand.contents += _class_char(lo)

    def _close_operand(self, operand: _Operand) -> str:
        parts = ([f"[{operand.contents}]"] if operand.contents else []) + operand.unions
        if not parts:
            raise self.fail(f"empty character class operand at index {self.i}")
        if len(parts) == 1:
            return parts[0]
        if all(p.startswith("[") and not p.startswith("[^") for p in parts):
            return "[" + "".join(p[1:-1] for p in parts) + "]"  # one set
        # One character either way, but `[a]|[^b]` could match 'a' twice over: an atomic
        # group keeps the union from multiplying backtracking paths.
        return "(?>" + "|".join(parts) + ")"

    def _class_atom(self) -> tuple[str, str]:
        """One item of a class: ("char", c), ("set", contents) or ("neg", one-char regex)."""
        ch = self.peek()
        if ch != "\\":
            self.i += 1
            return "char", ch
        self.i += 1
        if not self.peek():
            raise self.fail("trailing backslash")
        return self._class_escape()


_ZERO_WIDTH = {"b": "\\b", "B": "\\B", "A": "\\A", "z": "\\Z", "Z": f"(?={_LINE_END}?\\Z)"}
_CHAR_READERS: dict[str, Callable[[_Translator], str]] = {
    "c": _Translator._control_char,
    "x": _Translator._hex_char,
    "u": _Translator._unicode_char,
    "0": _Translator._octal_char,
    "N": _Translator._named_char,
}


def _flag_prefix(flags: dict[str, bool]) -> str:
    on = "".join(f for f in "ims" if flags.get(f) is True)
    off = "".join(f for f in "ims" if flags.get(f) is False)
    if "U" in flags:
        on += "u" if flags["U"] else "a"
    if not on and not off:
        return "(?:"
    return "(?" + on + ("-" + off if off else "") + ":"


# --- the backtracking guard ----------------------------------------------------------------


def _after(rest: list[_Node], follow: list[_Char | None]) -> list[_Char | None]:
    """What may follow a node: the first character of `rest`, else what follows the sequence."""
    if all(isinstance(n, _Raw) and n.end for n in rest) and follow == [None]:
        return [None]  # only end anchors, then the end
    if rest:
        nxt = _first_char(rest)
        return [nxt] if nxt is not None else []
    return follow


def _first_char(seq: list[_Node]) -> _Char | None:
    """The single-character atom every match of `seq` starts with, if it is that simple."""
    for node in seq:
        if isinstance(node, _Char):
            return node
        if isinstance(node, _Quant) and node.lo >= 1 and isinstance(node.atom, _Char):
            return node.atom
        if isinstance(node, _Group) and node.transparent and len(node.alts) == 1:
            return _first_char(node.alts[0])
        return None
    return None


_GROUP_TRY = 20  # the extra cost of entering or leaving a repeated group, in steps
_CAP = 1 << 128  # costs saturate here: far above any budget, and keeps the arithmetic small


def _add(a: int, b: int) -> int:
    return min(a + b, _CAP)


def _mul(a: int, b: int) -> int:
    return min(a * b, _CAP)


def _geometric(w: int, lo: int, hi: int) -> int:
    """w**lo + ... + w**hi (0 when lo > hi), saturating at _CAP."""
    if lo > hi:
        return 0
    if w <= 1:
        return hi - lo + 1 if w == 1 else int(lo == 0)
    if (w.bit_length() - 1) * lo >= _CAP.bit_length():
        return _CAP
    total, term = 0, w**lo
    for _ in range(lo, hi + 1):
        total = _add(total, term)
        if total == _CAP:
            break
        term *= w
    return total


def _approx(n: int) -> str:
    return "more than 1e38" if n >= _CAP else f"{n:.1e}"


@dataclass
class _Cost:
    """Worst-case backtracking of a sub-pattern from one start position, on names of at most
    KAFKA_MAX_TOPIC_LENGTH characters (see the module docstring)."""

    ways: int  # distinct ways it can match: each is handed to what follows, which may fail
    steps: int  # work to find and give up all of them
    minlen: int  # the fewest characters a match consumes
    culprit: str | None = None  # what makes ways > 1: "quantifier" or "alternatives"


_ASCII = "".join(map(chr, range(128)))


@lru_cache(maxsize=1)
def _non_ascii() -> str:
    """Every other code point (4 MB, built once, in about 0.1 s)."""
    return "".join(map(chr, range(128, 0x110000)))


@lru_cache(maxsize=1024)
def _ascii_only(py: str, flags: re.RegexFlag) -> bool:
    """Whether a one-character expression matches no character outside ASCII (ms each)."""
    return re.compile(py, flags).search(_non_ascii()) is None


class _Guard:
    def __init__(self, pattern: str, flags: re.RegexFlag) -> None:
        self.pattern = pattern
        # With `(?U)` somewhere, a character may be matched in either mode: try both. (Modes
        # are whole-pattern flags here: CPython's `search` misreads a scoped `(?u:...)`.)
        base = flags & ~(re.ASCII | re.UNICODE)
        self.modes = [base | re.ASCII] + ([base] if flags & re.UNICODE else [])

    def disjoint(self, a: _Char, b: _Char) -> bool:
        """True when no character can match both.

        Decided exactly when one side is a literal, or can only match ASCII characters (then
        the 128 of them are tried); otherwise assumed to overlap.
        """
        if a.literal is None:
            a, b = b, a
        try:
            if a.literal is not None:
                literal = a.literal
                return not any(re.compile(b.py, m).fullmatch(literal) for m in self.modes)
            if not any(all(_ascii_only(c.py, m) for m in self.modes) for c in (a, b)):
                return False
            ra = [re.compile(a.py, m) for m in self.modes]
            rb = [re.compile(b.py, m) for m in self.modes]
            return not any(
                any(r.fullmatch(ch) for r in ra) and any(r.fullmatch(ch) for r in rb)
                for ch in _ASCII
            )
        except re.error:
            return False

    def possessify(self, seq: list[_Node], follow: list[_Char | None]) -> None:
        """Make quantifiers possessive where the following input can never be eaten by them.

        `follow` lists what may come right after `seq`: a single-character atom, or None for
        the end of the whole input; an empty list means "unknown".
        """
        for k, node in enumerate(seq):
            after = _after(seq[k + 1 :], follow)
            if isinstance(node, _Quant):
                self._possessify_quant(node, after)
            elif isinstance(node, _Group):
                for alt in node.alts:
                    self.possessify(alt, after if node.transparent else [])

    def _possessify_quant(self, node: _Quant, after: list[_Char | None]) -> None:
        if isinstance(node.atom, _Char):
            if (
                node.backtracks
                and after
                and all(f is None or self.disjoint(node.atom, f) for f in after)
            ):
                node.auto = True
        elif isinstance(node.atom, _Group) and node.atom.transparent:
            # The body is followed by what follows the group and, when it repeats, by the
            # start of any alternative of the next iteration.
            inner: list[_Char | None] = list(after)
            if node.repeats:
                starts = [_first_char(alt) for alt in node.atom.alts]
                inner = [] if None in starts else inner + starts
            for alt in node.atom.alts:
                self.possessify(alt, inner if after else [])
        elif isinstance(node.atom, _Group):
            for alt in node.atom.alts:
                self.possessify(alt, [])

    def check(self, alts: list[list[_Node]]) -> int:
        """The backtracking bound for one name; rejects the pattern above MAX_BACKTRACKING_STEPS."""
        top = self._alts_cost(alts)
        total = _add(top.steps, top.ways)  # every way to match is then tested against the end
        if total > MAX_BACKTRACKING_STEPS:
            raise InvalidPatternError(
                self.pattern,
                f"can backtrack through about {_approx(total)} steps on a "
                f"{KAFKA_MAX_TOPIC_LENGTH}-character name (at most "
                f"{_approx(MAX_BACKTRACKING_STEPS)}); make quantifiers possessive "
                "(e.g. 'x*+') or use atomic groups '(?>...)'",
            )
        return total

    def _cost(self, node: _Node) -> _Cost:
        if isinstance(node, _Char):
            return _Cost(1, 1, 1)
        if isinstance(node, _Raw):
            return _Cost(1, KAFKA_MAX_TOPIC_LENGTH if node.scan else 1, 0)
        if isinstance(node, _Group):
            inner = self._alts_cost(node.alts)
            if node.prefix == "(?>":
                return _Cost(1, inner.steps, inner.minlen)
            if node.prefix in _ATOMIC_PREFIXES:  # look-around: zero width, one way
                return _Cost(1, inner.steps, 0)
            return inner
        return self._quant_cost(node)

    def _alts_cost(self, alts: list[list[_Node]]) -> _Cost:
        costs = [self._seq_cost(seq) for seq in alts]
        steps = 0
        for c in costs:
            steps = _add(steps, c.steps)
        minlen = min(c.minlen for c in costs)
        culprit = next((c.culprit for c in costs if c.culprit is not None), None)
        if len(costs) == 1 or self._distinct_starts(alts):
            # At most one alternative gets past its first character.
            return _Cost(max(c.ways for c in costs), steps, minlen, culprit)
        ways = 0
        for c in costs:
            ways = _add(ways, c.ways)
        return _Cost(ways, steps, minlen, "alternatives" if ways > 1 else culprit)

    def _seq_cost(self, seq: list[_Node]) -> _Cost:
        ways, steps, minlen = 1, 1, 0
        culprit: str | None = None
        for node in seq:
            c = self._cost(node)
            steps = _add(steps, _mul(ways, c.steps))  # tried once per way to match the prefix
            ways = _mul(ways, c.ways)
            minlen += c.minlen
            if culprit is None and c.ways > 1:
                culprit = c.culprit
        return _Cost(ways, steps, minlen, culprit)

    def _quant_cost(self, q: _Quant) -> _Cost:
        body = self._cost(q.atom)
        n = KAFKA_MAX_TOPIC_LENGTH
        # Iterations past `lo` must consume input (an empty one ends the loop in Python).
        most = n // body.minlen if body.minlen else q.lo + n
        top = most if q.hi is None else min(q.hi, most)  # iterations that can succeed
        last = top - 1 if top == q.hi else top  # the deepest partial path that tries once more
        if q.backtracks:
            ways = _geometric(body.ways, q.lo, top)  # one way per path of lo..top iterations
            tries = _geometric(body.ways, 0, last)  # each partial path tries one more
        else:  # possessive: only the first `lo` iterations can be retried
            ways = 1
            tries = _add(_geometric(body.ways, 0, min(q.lo, last)), max(0, last - q.lo))
        per_try = body.steps
        if not (isinstance(q.atom, _Char) and q.atom.single):  # in and out of a group body
            per_try = _add(per_try, _mul(_GROUP_TRY, _add(body.ways, 1)))
        steps = _mul(per_try, tries)
        if body.ways > 1 and q.repeats and max(ways, steps) > MAX_BACKTRACKING_STEPS:
            if body.culprit == "alternatives":
                detail = (
                    f"alternatives that can start alike, repeated in {q.src!r}, can backtrack "
                    "catastrophically; use an atomic group '(?>...)' or a possessive quantifier"
                )
            else:
                detail = (
                    f"nested quantifier in {q.src!r} can backtrack catastrophically; make the "
                    "inner quantifier possessive (e.g. 'x++') or use an atomic group '(?>...)'"
                )
            raise InvalidPatternError(self.pattern, detail)
        return _Cost(ways, steps, q.lo * body.minlen, "quantifier" if ways > 1 else None)

    def _distinct_starts(self, alts: list[list[_Node]]) -> bool:
        firsts = [_first_char(seq) for seq in alts]
        for k, a in enumerate(firsts):
            if a is None:
                return False
            for b in firsts[k + 1 :]:
                if b is None or not self.disjoint(a, b):
                    return False
        return True


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
    assignors.inputs.patterns.InvalidPatternError: invalid topic pattern 'xxx...' \
(10001 characters): longer than 10000 characters; list the topics instead
    """
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise InvalidPatternError(
            f"{pattern[:3]}...",
            f"longer than {MAX_PATTERN_LENGTH} characters; list the topics instead",
            length=len(pattern),
        )
    t = _Translator(pattern)
    try:
        alts = t.parse()
        guard = _Guard(pattern, t.flags_seen)
        for seq in alts:
            guard.possessify(seq, [None])
        steps = guard.check(alts)
        py = "|".join("".join(map(_emit, seq)) for seq in alts)
    except RecursionError:
        raise InvalidPatternError(pattern, "too deeply nested") from None
    try:
        return CompiledPattern(re.compile(py, re.ASCII), steps)
    except (re.error, OverflowError, RecursionError) as exc:
        raise InvalidPatternError(pattern, f"not usable in Python: {exc}") from None


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
