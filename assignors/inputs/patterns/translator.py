"""Java regex syntax to Python's `re`: the parsed pattern and the translator."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import ClassVar

from assignors.inputs.patterns.re2j import CATEGORIES, ESCAPES, FLAGS, MAX_REPEAT
from assignors.problems import Reason

INVALID_PATTERN = Reason.INVALID_PATTERN.value
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
class Char:
    """Matches exactly one character. `literal` is set when it is one known character."""

    py: str
    literal: str | None = None

    @property
    def single(self) -> bool:
        """Python sees one character test here, not a group (as for `(?>[a]|[^b])`)."""
        return not self.py.startswith("(")


@dataclass
class Raw:
    """Anything else that is emitted as is: anchors, back-references, `\\R`."""

    py: str
    end: bool = False  # an end-of-input anchor
    scan: bool = False  # a back-reference: compares up to a whole name, in one way


@dataclass
class Group:
    prefix: str  # "(", "(?:", "(?>", "(?=", "(?P<n>", "(?i:", ...
    alts: list[list[Node]]

    @property
    def transparent(self) -> bool:
        """A plain grouping: what follows the group follows its last item."""
        return self.prefix == "(" or self.prefix.endswith(":") or self.prefix.startswith("(?P<")


@dataclass
class Quant:
    atom: Node
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


Node = Char | Raw | Group | Quant


def emit(node: Node) -> str:
    if isinstance(node, Char | Raw):
        return node.py
    if isinstance(node, Group):
        return node.prefix + "|".join("".join(map(emit, seq)) for seq in node.alts) + ")"
    text = node.text
    if node.auto:
        text = (text[:-1] if node.mode else text) + "+"
    atom = emit(node.atom)
    if node.mode == "+" and not isinstance(node.atom, Char):
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
ATOMIC_PREFIXES = ("(?>", "(?=", "(?!", "(?<=", "(?<!")


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


class Translator:
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
        # Where RE2/J parts from Java (module `re2j`): (index, what, whether RE2/J refuses it
        # rather than reading it differently). Recorded for every pattern, used for
        # consumer-protocol groups only.
        self.re2j: list[tuple[int, str, bool]] = []

    def fail(self, detail: str) -> InvalidPatternError:
        return InvalidPatternError(self.s, detail)

    def not_re2j(self, start: int, what: str, refused: bool = True, note: str = "") -> None:
        """Record that the source from `start` to here is `what` RE2/J does not read as Java."""
        src = self.s[start : self.i]
        shown = src if len(src) <= 40 else src[:37] + "..."
        self.re2j.append((start, f"{what} {shown!r}" + (f" ({note})" if note else ""), refused))

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    # Sequences and alternations.

    def parse(self) -> list[list[Node]]:
        alts = self.parse_alts()
        if self.i < len(self.s):  # only a stray ')' stops the top level early
            raise self.fail(f"unmatched ')' at index {self.i}")
        return alts

    def parse_alts(self) -> list[list[Node]]:
        alts: list[list[Node]] = []
        carried: dict[str, bool] = {}  # inline flags set in this group so far
        while True:
            start = dict(carried)
            seq = self.parse_seq(carried)
            if start:
                seq = [Group(_flag_prefix(start), [seq])]
            alts.append(seq)
            if self.peek() != "|":
                return alts
            self.i += 1

    def parse_seq(self, carried: dict[str, bool]) -> list[Node]:
        items: list[Node] = []
        while self.i < len(self.s) and self.peek() not in "|)":
            start = self.i
            if self.s.startswith("(?", self.i) and self._is_flag_group():
                flags = self._parse_flags(end=")")
                carried.update(flags)
                rest = self.parse_seq(carried)
                items.append(Group(_flag_prefix(flags), [rest]))
                return items
            atom = self.parse_atom(items)
            if atom is None:
                continue
            items.append(self.parse_quantifier(atom, start))
        return items

    def parse_quantifier(self, atom: Node, start: int) -> Node:
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
        if mode == "+":
            self.not_re2j(q_start, "the possessive quantifier")
        if lo > MAX_REPEAT or (hi is not None and hi > MAX_REPEAT):
            self.not_re2j(q_start, f"a repeat count above {MAX_REPEAT}")
        return Quant(atom, lo, hi, mode, self.s[q_start : self.i], self.s[start : self.i])

    def parse_atom(self, items: list[Node]) -> Node | None:
        ch = self.peek()
        if ch in ("*", "+", "?"):
            raise self.fail(f"dangling meta character {ch!r} at index {self.i}")
        if ch == "{":
            raise self.fail(f"illegal repetition at index {self.i}")
        if ch == "(":
            start = self.i
            group = self.parse_group()
            if isinstance(group, Group) and group.prefix in _NOT_RE2J_GROUPS:
                self.not_re2j(start, _NOT_RE2J_GROUPS[group.prefix])
            return group
        if ch == "[":
            return self.parse_class()
        if ch == "\\":
            return self.parse_escape(items)
        self.i += 1
        if ch == ".":
            return Char(".")
        if ch in ("^", "$"):
            return Raw(ch, end=ch == "$")
        return Char(re.escape(ch), ch)

    def _is_flag_group(self) -> bool:
        m = re.compile(r"\(\?[a-zA-Z-]*[):]").match(self.s, self.i)
        return m is not None and m.group(0).endswith(")")

    def _parse_flags(self, end: str) -> dict[str, bool]:
        start = self.i
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
        self._re2j_flags(start)
        return flags

    def _re2j_flags(self, start: int) -> None:
        """RE2/J knows fewer flags, and wants at most one '-', with a flag after it."""
        letters = self.s[start + 2 : self.i - 1]
        for ch in letters:
            if ch not in FLAGS and ch != "-":
                self.not_re2j(start, f"the inline flag {ch!r} in")
        if letters.count("-") > 1:
            self.not_re2j(start, "two '-' in the inline flags")
        elif letters.endswith("-"):
            self.not_re2j(start, "a '-' with no flag after it in the inline flags")

    def parse_group(self) -> Node:
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
        return Group(py_prefix, alts)

    # Escapes.

    def parse_escape(self, items: list[Node]) -> Node | None:
        start = self.i
        self.i += 1
        ch = self.peek()
        if not ch:
            raise self.fail("trailing backslash")
        if ch == "Q":
            return self._quoted(items)
        if ch in "123456789":
            ref = self._backref()
            self.not_re2j(start, "the back-reference")
            return ref
        if ch == "k":
            ref = self._named_backref()
            self.not_re2j(start, "the back-reference")
            return ref
        if ch in _ZERO_WIDTH:
            if ch == "b" and self.peek(1) == "{":
                raise self.fail("\\b{g} (grapheme boundary) is not supported")
            self.i += 1
            if ch in ESCAPES:
                self.not_re2j(start, "the escape")
            return Raw(_ZERO_WIDTH[ch], end=ch in "zZ")
        if ch == "R":
            self.i += 1
            self.not_re2j(start, "the escape")
            return Raw(f"(?>\\r\\n|[{_VSPACE}])")
        if ch in ("G", "X"):
            raise self.fail(f"\\{ch} is not supported")
        kind, value = self._class_escape()
        if kind == "char":
            return Char(re.escape(value), value)
        if kind == "set":
            return Char(value if value in _SHORTHANDS else f"[{value}]")
        return Char(value)  # "neg": an expression already

    def _quoted(self, items: list[Node]) -> Node | None:
        """`\\Q...\\E` (at the Q): literal characters; the last one is returned, so that a
        quantifier after `\\E` applies to it alone."""
        self.i += 1
        end = self.s.find("\\E", self.i)
        quoted = self.s[self.i :] if end < 0 else self.s[self.i : end]
        self.i = len(self.s) if end < 0 else end + 2
        chars = [Char(re.escape(c), c) for c in quoted]
        if not chars:
            return None
        items.extend(chars[:-1])
        return chars[-1]

    def _named_backref(self) -> Node:
        m = _NAMED_REF.match(self.s, self.i)
        if m is None:
            raise self.fail("\\k is not followed by <name>")
        self.i = m.end()
        name = m.group(1)
        if name not in self.names:
            raise self.fail(f"named capturing group <{name}> does not exist")
        # Java: a reference to a group that has not matched (still open) fails to match.
        if name not in self.closed_names:
            return Raw("(?!)")
        return Raw(f"(?P={name})", scan=True)

    def _backref(self) -> Node:
        # Java reads the longest number that still names an existing group.
        j = self.i + 1
        ref = int(self.s[self.i])
        while j < len(self.s) and self.s[j].isdigit() and ref * 10 + int(self.s[j]) <= self.groups:
            ref = ref * 10 + int(self.s[j])
            j += 1
        self.i = j
        if ref > self.groups or ref in self.open:
            return Raw("(?!)")  # Java: fails to match (Python would not compile it)
        return Raw(f"(?:\\{ref})", scan=True)

    def _class_escape(self) -> tuple[str, str]:
        """After a backslash: ("char", c) | ("set", class contents) | ("neg", one-char regex)."""
        start = self.i - 1
        ch = self.peek()
        out = self._java_class_escape()
        if ch in ESCAPES:
            self.not_re2j(start, "the escape")
        elif ch == "0" and self.i - start == 5:
            self.not_re2j(start, "the octal escape", False, "RE2/J reads two digits after \\0")
        elif ch in "pP":
            name = self.s[start + 2 : self.i]
            if name.startswith("{"):
                name = name[1:-1]
            if name not in CATEGORIES:
                self.not_re2j(start, "the character property", note="not a general category")
        return out

    def _java_class_escape(self) -> tuple[str, str]:
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

    def parse_class(self) -> Char:
        return Char(self._class_expr())

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
                nested = self.i
                operand.unions.append(self._class_expr())
                self.not_re2j(nested, "the nested character class", False)
            elif self.s.startswith("&&", self.i):
                self.i += 2
                self.not_re2j(self.i - 2, "the class intersection", False)
                operands.append(self._close_operand(operand))
                operand = _Operand()
                first = self.peek() != "]"  # "[a&&]" is "[a]" in Java
            elif ch == "\\" and self.peek(1) == "Q":
                quote = self.i
                end = self.s.find("\\E", self.i + 2)
                quoted = self.s[self.i + 2 :] if end < 0 else self.s[self.i + 2 : end]
                self.i = len(self.s) if end < 0 else end + 2
                self.not_re2j(quote, "the quotation", note="inside a character class")
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


# Groups RE2/J cannot compile: it never looks around or gives up backtracking points.
_NOT_RE2J_GROUPS = {
    "(?=": "the look-ahead",
    "(?!": "the negative look-ahead",
    "(?<=": "the look-behind",
    "(?<!": "the negative look-behind",
    "(?>": "the atomic group",
}
_ZERO_WIDTH = {"b": "\\b", "B": "\\B", "A": "\\A", "z": "\\Z", "Z": f"(?={_LINE_END}?\\Z)"}
_CHAR_READERS: dict[str, Callable[[Translator], str]] = {
    "c": Translator._control_char,
    "x": Translator._hex_char,
    "u": Translator._unicode_char,
    "0": Translator._octal_char,
    "N": Translator._named_char,
}


def _flag_prefix(flags: dict[str, bool]) -> str:
    on = "".join(f for f in "ims" if flags.get(f) is True)
    off = "".join(f for f in "ims" if flags.get(f) is False)
    if "U" in flags:
        on += "u" if flags["U"] else "a"
    if not on and not off:
        return "(?:"
    return "(?" + on + ("-" + off if off else "") + ":"
