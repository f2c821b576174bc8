"""Byte-level repairs of a result file before the XML parser sees it (used by `SanitizingReader`).

`FieldCapper` bounds memory: libxml2 builds every text node, CDATA section and attribute value
whole (up to 1 GB with `huge_tree`) before lxml hands it over, so a 400 MB failure message
would cost gigabytes however early we cut it afterwards. The capper finds runs without `<`
longer than a cap by probing fixed-size blocks (a few `bytes.find` calls per MiB, nothing per
tag), works out what the run is (text, CDATA, comment, or an attribute value still open) by
lexing from its `<`, keeps the first `FIELD_BYTES` of that field and drops the rest up to the
field's end, leaving `… [truncated N bytes]` in its place. Cut points never split a UTF-8
character or an entity reference.

`StrayLtEscaper` turns a `<` that cannot start markup (`a < b` in text, the `<` of a tag cut
off by the next tag) into `&lt;`, and a `&` that starts no reference into `&amp;`, outside CDATA
sections: libxml2 stops at the first even in recover mode (losing every test after it) and
keeps memory for every one of the second (a million stray `&` cost 400 MB).
"""

from __future__ import annotations

import re

from ci_agent.parsers.caps import FIELD_BYTES, FIELD_TAIL_BYTES, marker

_LOOKBACK = 4 * FIELD_BYTES  # bytes since the last `<` remembered to lex a run's start
# A complete start or end tag; atomic groups keep a hostile tag linear.
_TAG_RE = re.compile(
    rb"</?(?>[^\s/>\"'<]*)(?>\s+(?>[^\s=/>\"'<]+)\s*=\s*(?>\"[^\"<]*\"|'[^'<]*'))*+\s*/?>")
# A tag up to the opening quote of an attribute value.
_OPEN_ATTR_RE = re.compile(
    rb"<(?>[^\s/>\"'<]+)(?>\s+(?>[^\s=/>\"'<]+)\s*=\s*(?>\"[^\"<]*\"|'[^'<]*'))*+\s+(?>[^\s=/>\"'<]+)\s*=\s*([\"'])")
# Each pattern starts with one literal byte: an alternation of `<...|&...` runs 7x slower (the
# regex engine then tries every byte). CDATA sections are matched whole and given back as they
# are: `<` and `&` are data in them.
_STRAY_LT_RE = re.compile(
    rb"<(?:!\[CDATA\[.*?\]\]>"
    rb"|(?![A-Za-z_:/!?\x80-\xff])"  # cannot start markup: `a < b`, `<<`, `< `
    # or a tag cut off: the next `<` comes before its `>` (with no quote between: `message="a < b"`
    # is an attribute value holding a raw `<`, whose inner `<` the rule above escapes).
    rb"|(?=/?[A-Za-z_:\x80-\xff][^<>\"']*<))", re.S)
_AMP = rb"&(?!(?:[A-Za-z_:][\w.:-]{0,64}|#[0-9]{1,10}|#[xX][0-9a-fA-F]{1,8});)"
_STRAY_AMP_RE = re.compile(_AMP)  # fast: is there a stray `&` at all?
_STRAY_AMP_OUTSIDE_CDATA_RE = re.compile(rb"<!\[CDATA\[.*?\]\]>|" + _AMP, re.S)


class FieldCapper:
    """Streaming: `feed(chunk) -> bytes`, then `finish() -> bytes`. Counts what it cut."""

    def __init__(self, limit: int = FIELD_BYTES, keep_end: int = FIELD_TAIL_BYTES) -> None:
        self.limit = max(64, limit)
        self.keep_end = max(0, min(keep_end, self.limit // 2))
        self._end = b""  # the last `keep_end` bytes dropped so far: the field's end, kept
        self._block = self.limit // 2
        self.fields_cut = 0
        self.bytes_cut = 0
        self._tail = b""  # emitted bytes since the last `<` (at most _LOOKBACK)
        self._tail_known = True  # False: more than _LOOKBACK bytes since it
        self._until: bytes | None = None  # while dropping: the end of the field being cut
        self._dropped = 0
        self._hold = b""  # a terminator's possible first half, kept back while dropping

    def feed(self, data: bytes) -> bytes:
        out: list[bytes] = []
        data, self._hold = self._hold + data, b""
        pos = 0
        while pos < len(data):
            if self._until is not None:
                pos = self._drop(data, pos, out)
                continue
            found = self._long_run(data, pos)
            if found < 0:
                self._emit(data[pos:], out)
                break
            pos = self._cut(data, pos, found, out)
        return b"".join(out)

    def finish(self) -> bytes:
        if self._until is None:
            return self._hold
        self._keep(self._hold)
        self._until, self._hold = None, b""
        return self._marker()

    # -- internals ---------------------------------------------------------------------------

    def _long_run(self, data: bytes, pos: int) -> int:
        """Start of the first `_block` bytes without `<` at or after `pos`; -1 when none."""
        block = self._block
        for start in range(pos, len(data) - block + 1, block):
            if data.find(b"<", start, start + block) < 0:
                return start
        return -1

    def _emit(self, piece: bytes, out: list[bytes]) -> None:
        out.append(piece)
        last = piece.rfind(b"<")
        if last >= 0:
            self._tail, self._tail_known = piece[last + 1:], True
        else:
            self._tail += piece
        if len(self._tail) > _LOOKBACK:
            self._tail, self._tail_known = self._tail[-_LOOKBACK:], False

    def _cut(self, data: bytes, pos: int, block_at: int, out: list[bytes]) -> int:
        """Handle the long run around `data[block_at:]`; return where scanning resumes."""
        self._emit(data[pos:block_at], out)
        view = b"<" + self._tail if self._tail_known else b""
        context = _context(view + data[block_at:block_at + self._block]) if view else None
        if context is None:  # no idea what the run is: call it text (recover mode mends the rest)
            start, until = len(view), b"<"
        else:
            start, until = context
        # `start` is where the field's content begins, counted in `view` then `data[block_at:]`.
        kept = len(view) - start  # content bytes already emitted (negative: content not begun)
        end = data.find(until, block_at + max(0, -kept))
        content_from = block_at + max(0, -kept)
        budget = self.limit - max(0, kept)
        if end >= 0 and end - content_from <= budget:
            self._emit(data[block_at:end], out)
            return end
        cut = _safe_cut(data, content_from + max(0, budget), content_from)
        self._emit(data[block_at:cut], out)
        self.fields_cut += 1
        self._until, self._dropped = until, 0
        return self._drop(data, cut, out)

    def _drop(self, data: bytes, pos: int, out: list[bytes]) -> int:
        assert self._until is not None
        end = data.find(self._until, pos)
        if end < 0:
            keep = len(self._until) - 1
            stop = max(pos, len(data) - keep)
            self._keep(data[pos:stop])
            self._hold = data[stop:]
            return len(data)
        self._keep(data[pos:end])
        self._until = None
        self._emit(self._marker(), out)
        return end

    def _keep(self, dropped: bytes) -> None:
        self._dropped += len(dropped)
        if self.keep_end:
            self._end = (self._end + dropped[-self.keep_end:])[-self.keep_end:]

    def _marker(self) -> bytes:
        end = _safe_start(self._end)
        self._end = b""
        cut = self._dropped - len(end)
        self.bytes_cut += cut
        return marker(cut).encode("utf-8") + b" " + end


def _context(text: bytes) -> tuple[int, bytes] | None:
    """(offset where the open field's content starts, the bytes that end it) for `text`, which
    starts at the `<` of a run with no other `<` in it; None when it cannot be told."""
    if text.startswith(b"<![CDATA["):
        end = text.find(b"]]>", 9)
        return (9, b"]]>") if end < 0 else (end + 3, b"<")
    for opening, closing in ((b"<!--", b"-->"), (b"<?", b"?>")):
        if text.startswith(opening):
            end = text.find(closing, len(opening))
            return (len(opening), closing) if end < 0 else (end + len(closing), b"<")
    tag = _TAG_RE.match(text)
    if tag is not None:
        return tag.end(), b"<"
    attr = _OPEN_ATTR_RE.match(text)
    if attr is not None and text.find(attr.group(1), attr.end()) < 0:
        return attr.end(), attr.group(1)
    return None


def _safe_cut(data: bytes, at: int, floor: int) -> int:
    """`at`, moved back so it splits neither a UTF-8 character nor an entity reference."""
    at = max(floor, min(at, len(data)))
    for _ in range(3):  # a UTF-8 character is at most 4 bytes: back over 3 continuation bytes
        if floor < at < len(data) and 0x80 <= data[at] <= 0xBF:
            at -= 1
    amp = data.rfind(b"&", max(floor, at - 12), at)
    if amp >= 0 and data.find(b";", amp, at) < 0:
        at = amp
    return at


def _safe_start(data: bytes) -> bytes:
    """`data` without a UTF-8 character or an entity reference cut at its start."""
    start = 0
    while start < min(3, len(data)) and 0x80 <= data[start] <= 0xBF:
        start += 1
    semi = data.find(b";", start, start + 12)
    if semi >= 0 and data.find(b"&", start, semi) < 0:
        start = semi + 1
    return data[start:]


class StrayLtEscaper:
    """Escapes stray `<` and `&` in a stream; remembers an open CDATA section across chunks."""

    def __init__(self) -> None:
        self.escaped = 0
        self.first_at: int | None = None  # offset of the first escape in the repaired stream
        self._in_cdata = False
        self._offset = 0  # bytes handed out before the current chunk
        self._base = 0

    def feed(self, data: bytes) -> bytes:
        out = self._feed(data)
        self._offset += len(out)
        return out

    def _feed(self, data: bytes) -> bytes:
        if not self._in_cdata and b"<" not in data and b"&" not in data:
            return data
        head = rest = b""
        if self._in_cdata:
            end = data.find(b"]]>")
            if end < 0:
                return data
            head, data, self._in_cdata = data[:end + 3], data[end + 3:], False
        opened = data.rfind(b"<![CDATA[")
        if opened >= 0 and data.find(b"]]>", opened + 9) < 0:
            data, rest, self._in_cdata = data[:opened], data[opened:], True
        self._base = self._offset + len(head)
        if b"<" in data:
            data = _STRAY_LT_RE.sub(self._escape, data)
        if b"&" in data and _STRAY_AMP_RE.search(data):
            data = _STRAY_AMP_OUTSIDE_CDATA_RE.sub(self._escape, data)
        return head + data + rest

    def _escape(self, match: re.Match[bytes]) -> bytes:
        found = match.group()
        if len(found) > 1:
            return found  # a CDATA section
        if self.first_at is None:
            self.first_at = self._base + match.start()
        self.escaped += 1
        return b"&lt;" if found == b"<" else b"&amp;"
