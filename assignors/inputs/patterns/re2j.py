"""What the broker's regex engine reads: RE2/J's syntax, next to Java's.

A consumer-protocol (KIP-848) member that subscribes by pattern sends it to the group
coordinator, which compiles it with RE2/J (`com.google.re2j.Pattern.compile`) and matches
every topic name in full, as `Pattern.matcher(topic).matches()` does on the client. RE2/J is
a linear-time engine and refuses what needs backtracking or memory of the input: a pattern it
cannot compile fails the member's heartbeat with INVALID_REGULAR_EXPRESSION, and the member
gets no assignment. The planner reads patterns as Java does (`translator`), so for such a
group it records where RE2/J parts from Java (`Translator.re2j`) and refuses the member
(`PATTERN_NOT_RE2J`) rather than plan topics the broker would never assign.

Two kinds, both named in the detail:

* refused by RE2/J: look-ahead and look-behind, back-references (`\\1`, `\\k<name>`), atomic
  groups `(?>...)`, possessive quantifiers (`x*+`), repeat counts above 1000, inline flags
  other than `i m s U` (`(?d)`, `(?u)`, `(?-x)`) or a `-` with no flag after it, the escapes
  `\\Z \\R \\h \\H \\V \\e \\cX \\uhhhh \\N{...}`, `\\Q...\\E` inside a class, and character
  properties other than the Unicode general categories (`\\p{Alpha}`, `\\p{IsL}`,
  `\\p{gc=L}`, `\\p{LC}`, `\\p{Cn}`);
* read differently: a nested class (`[a[b]]`, `[[:alpha:]]`) or an intersection `&&`, where
  RE2/J reads `[` and `&` as plain characters, and an octal escape with three digits after
  `\\0` (`\\0101`), of which RE2/J reads two.

What both engines read alike on topic names is accepted: named groups `(?<name>...)` (RE2/J
reads them since 1.8), lazy quantifiers, `(?U)` (Java: Unicode classes; RE2/J: lazy by
default; neither changes which ASCII names match in full), `\\v`, `\\b`, `\\z`, `\\Q...\\E`.
"""

from __future__ import annotations

from typing import Final

MAX_REPEAT: Final = 1000
"""RE2/J's largest repeat count: `x{1001}` does not compile."""

FLAGS: Final = frozenset("imsU")
"""The inline flags RE2/J knows."""

CATEGORIES: Final = frozenset(
    {
        *("L", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "Mn", "Mc", "Me", "N", "Nd", "Nl", "No"),
        *("P", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "S", "Sm", "Sc", "Sk", "So"),
        *("Z", "Zs", "Zl", "Zp", "C", "Cc", "Cf", "Co", "Cs"),
    }
)
"""The `\\p{...}` names RE2/J shares with Java's translator: the Unicode general categories it
has tables for (no `LC`, no `Cn`), by their bare names (no `Is` or `gc=` prefix). Its other
names (scripts such as `\\p{Greek}`, `Any`) are refused by the translator, whatever RE2/J
would do with them."""

ESCAPES: Final = frozenset("ZRhHVecuN")
"""Java escapes RE2/J refuses (`\\Z \\R \\h \\H \\V \\e \\cX \\uhhhh \\N{...}`): an escape letter it
does not know does not compile."""
