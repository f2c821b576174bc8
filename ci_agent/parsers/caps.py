"""Per-field caps of the result-file parsers (TRX, JUnit, NUnit, xUnit), in one place.

Two layers. Before the XML parser sees a byte, `xmlrepair.FieldCapper` cuts every run of
character data (a text node, a CDATA section, an attribute value) to `FIELD_BYTES`, so a 400 MB
message never becomes a 400 MB string inside libxml2 or Python. After parsing, each kept field
is cut to its own cap with `cap()`. Both leave the same explicit marker: what was cut is said,
never silently dropped.
"""

from __future__ import annotations

FIELD_BYTES = 64 * 1024  # any one text node / CDATA section / attribute value, before parsing
FIELD_TAIL_BYTES = 8 * 1024  # ... of which the end is kept too (output ends where it failed)
MESSAGE_BYTES = 64 * 1024
STACK_BYTES = 64 * 1024
NAME_BYTES = 4 * 1024
OUTPUT_BYTES = 8 * 1024  # a test's console output (its end is kept: that is where it failed)


def marker(cut: int) -> str:
    return f"… [truncated {cut} bytes]"


def cap(value: str | None, limit: int) -> str | None:
    """`value` cut to at most about `limit` UTF-8 bytes (whole characters) plus the marker.
    Empty -> None."""
    if not value:
        return None
    if len(value) <= limit // 4:  # fast path: even all 4-byte characters fit
        return value
    data = value.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return value
    kept = data[:limit].decode("utf-8", "ignore")  # "ignore": drops a character cut in half
    return kept + marker(len(data) - len(kept.encode("utf-8", "surrogatepass")))


def cap_end(value: str | None, limit: int) -> str | None:
    """The end of `value` (console output matters most at its end), with the marker first."""
    if not value:
        return None
    if len(value) <= limit // 4:
        return value
    data = value.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return value
    kept = data[-limit:].decode("utf-8", "ignore")
    return marker(len(data) - len(kept.encode("utf-8", "surrogatepass"))) + "\n" + kept


def cap_name(value: str, limit: int = NAME_BYTES) -> str:
    return cap(value, limit) or value
