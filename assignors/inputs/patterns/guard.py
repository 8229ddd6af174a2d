"""The backtracking guard: a bound on the work of matching one topic name, or a refusal."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from assignors.inputs.patterns.translator import (
    ATOMIC_PREFIXES,
    Char,
    Group,
    InvalidPatternError,
    Node,
    Quant,
    Raw,
)
from assignors.problems import KAFKA_MAX_TOPIC_LENGTH

# --- the backtracking guard ----------------------------------------------------------------


def _after(rest: list[Node], follow: list[Char | None]) -> list[Char | None]:
    """What may follow a node: the first character of `rest`, else what follows the sequence."""
    if all(isinstance(n, Raw) and n.end for n in rest) and follow == [None]:
        return [None]  # only end anchors, then the end
    if rest:
        nxt = _first_char(rest)
        return [nxt] if nxt is not None else []
    return follow


def _first_char(seq: list[Node]) -> Char | None:
    """The single-character atom every match of `seq` starts with, if it is that simple."""
    for node in seq:
        if isinstance(node, Char):
            return node
        if isinstance(node, Quant) and node.lo >= 1 and isinstance(node.atom, Char):
            return node.atom
        if isinstance(node, Group) and node.transparent and len(node.alts) == 1:
            return _first_char(node.alts[0])
        return None
    return None


MAX_BACKTRACKING_STEPS = 100_000_000
"""The guard's budget for one 249-character name (see the package docstring)."""

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
    """Every other code point (4 MB, so built once)."""
    return "".join(map(chr, range(128, 0x110000)))


@lru_cache(maxsize=1024)
def _ascii_only(py: str, flags: re.RegexFlag) -> bool:
    """Whether a one-character expression matches no character outside ASCII (ms each)."""
    return re.compile(py, flags).search(_non_ascii()) is None


class Guard:
    def __init__(self, pattern: str, flags: re.RegexFlag) -> None:
        self.pattern = pattern
        # With `(?U)` somewhere, a character may be matched in either mode: try both. (Modes
        # are whole-pattern flags here: CPython's `search` misreads a scoped `(?u:...)`.)
        base = flags & ~(re.ASCII | re.UNICODE)
        self.modes = [base | re.ASCII] + ([base] if flags & re.UNICODE else [])

    def disjoint(self, a: Char, b: Char) -> bool:
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

    def possessify(self, seq: list[Node], follow: list[Char | None]) -> None:
        """Make quantifiers possessive where the following input can never be eaten by them.

        `follow` lists what may come right after `seq`: a single-character atom, or None for
        the end of the whole input; an empty list means "unknown".
        """
        for k, node in enumerate(seq):
            after = _after(seq[k + 1 :], follow)
            if isinstance(node, Quant):
                self._possessify_quant(node, after)
            elif isinstance(node, Group):
                for alt in node.alts:
                    self.possessify(alt, after if node.transparent else [])

    def _possessify_quant(self, node: Quant, after: list[Char | None]) -> None:
        if isinstance(node.atom, Char):
            if (
                node.backtracks
                and after
                and all(f is None or self.disjoint(node.atom, f) for f in after)
            ):
                node.auto = True
        elif isinstance(node.atom, Group) and node.atom.transparent:
            # The body is followed by what follows the group and, when it repeats, by the
            # start of any alternative of the next iteration.
            inner: list[Char | None] = list(after)
            if node.repeats:
                starts = [_first_char(alt) for alt in node.atom.alts]
                inner = [] if None in starts else inner + starts
            for alt in node.atom.alts:
                self.possessify(alt, inner if after else [])
        elif isinstance(node.atom, Group):
            for alt in node.atom.alts:
                self.possessify(alt, [])

    def check(self, alts: list[list[Node]]) -> int:
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

    def _cost(self, node: Node) -> _Cost:
        if isinstance(node, Char):
            return _Cost(1, 1, 1)
        if isinstance(node, Raw):
            return _Cost(1, KAFKA_MAX_TOPIC_LENGTH if node.scan else 1, 0)
        if isinstance(node, Group):
            inner = self._alts_cost(node.alts)
            if node.prefix == "(?>":
                return _Cost(1, inner.steps, inner.minlen)
            if node.prefix in ATOMIC_PREFIXES:  # look-around: zero width, one way
                return _Cost(1, inner.steps, 0)
            return inner
        return self._quant_cost(node)

    def _alts_cost(self, alts: list[list[Node]]) -> _Cost:
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

    def _seq_cost(self, seq: list[Node]) -> _Cost:
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

    def _quant_cost(self, q: Quant) -> _Cost:
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
        if not (isinstance(q.atom, Char) and q.atom.single):  # in and out of a group body
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

    def _distinct_starts(self, alts: list[list[Node]]) -> bool:
        firsts = [_first_char(seq) for seq in alts]
        for k, a in enumerate(firsts):
            if a is None:
                return False
            for b in firsts[k + 1 :]:
                if b is None or not self.disjoint(a, b):
                    return False
        return True
