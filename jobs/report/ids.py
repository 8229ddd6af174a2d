"""Long ids in the report's tables: shortened in the cell, whole in its tooltip.

Group and member ids are free strings; a producer may use ids of thousands of characters
(a UUID chain, a serialized client config). One such id would widen its table column past the
page; the cell shows its head and tail around an ellipsis (both ends tell ids apart: a common
prefix such as `payments-eu-west-1-` is common in practice), and `title=` holds the full id.
"""

from __future__ import annotations

from markupsafe import Markup, escape

MAX_ID_CHARS = 48  # longer ids are shortened: about a third of the page's table width
HEAD, TAIL = 30, 15


def shorten(text: str, limit: int = MAX_ID_CHARS) -> str:
    """`text` if it fits in `limit` characters, else its head, an ellipsis and its tail."""
    if len(text) <= limit:
        return text
    tail = max(1, limit * TAIL // (HEAD + TAIL + 3))
    head = limit - tail - 1
    return f"{text[:head]}…{text[-tail:]}"


def short_id(value: object, limit: int = MAX_ID_CHARS) -> Markup:
    """An id for a table cell: escaped, shortened past `limit` with the full id in `title=`."""
    if value is None:
        return Markup("—")
    text = str(value)
    short = shorten(text, limit)
    if short == text:
        return escape(text)
    return Markup('<span title="{}">{}</span>').format(text, short)
