"""The generic compiler family: gcc/clang, tsc, rustc, go, mypy, ruff/flake8/ESLint-unix, GNU ld.

All of them print one header line per diagnostic, mostly `file:line[:col]: severity: message`.
Context lines (`In function`, source excerpts, carets, `~~~^`) are skipped; `note:` lines and
rustc's `= note:`/`help:` lines become the `detail` of the diagnostic they follow.

Every pattern is anchored and its file part cannot contain `:` (a drive letter aside), so a
line like `a:` * 10000 fails in linear time: no catastrophic backtracking by construction.
MSBuild's `file(l,c): error CS0103:` is left to the msbuild parser; only tsc's `TSnnnn` codes
in that shape are ours.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ci_agent.report import Diagnostic, ParseResult, Severity

# A printed path: optional drive letter, then no colon (and no leading space) up to the position.
_FILE = r"(?P<file>(?:[A-Za-z]:[\\/])?[^\s:<>|\"*?][^:<>|\"*?]*?|<[\w -]+>)"
_FILE_NO_PAREN = r"(?P<file>(?:[A-Za-z]:[\\/])?[^\s:(<>|\"*?][^:(<>|\"*?]*?)"

# What every positioned header starts with; the patterns below are tried only after it matched.
_POSITION_RE = re.compile(_FILE + r":\d+:")
# gcc, clang, rustc --error-format=short, mypy (optionally with columns and error ends).
_GCC_RE = re.compile(
    _FILE + r":(?P<line>\d+)(?::(?P<col>\d+))?(?::(?P<end_line>\d+):(?P<end_col>\d+))?: "
    r"(?P<sev>fatal error|error|warning|note|remark)(?:\[(?P<code>[\w-]+)\])?: (?P<msg>.*)"
)
# tsc --pretty false: `src/a.ts(3,7): error TS2322: msg` (the TS code tells it from MSBuild).
_TSC_PAREN_RE = re.compile(
    _FILE_NO_PAREN
    + r"\((?P<line>\d+),(?P<col>\d+)\): (?P<sev>error|warning|message) (?P<code>TS\d+): (?P<msg>.*)"
)
# tsc --pretty true (after ANSI removal): `src/a.ts:3:7 - error TS2322: msg`.
_TSC_PRETTY_RE = re.compile(
    _FILE + r":(?P<line>\d+):(?P<col>\d+) - (?P<sev>error|warning|message) (?P<code>TS\d+): (?P<msg>.*)"
)
# tsc pretty related information, indented under its diagnostic: `  src/a.ts:3:3 - 'age' is declared here.`
_TSC_RELATED_RE = re.compile(r"\s+" + _FILE + r":\d+:\d+ - (?!error|warning)")
# rustc human format: a header, then ` --> file:line:col` on the next line.
_RUST_HEADER_RE = re.compile(r"(?P<sev>error|warning)(?:\[(?P<code>E\d{4})\])?: (?P<msg>.*)")
_RUST_LOCATION_RE = re.compile(r"\s*--> " + _FILE + r":(?P<line>\d+):(?P<col>\d+)\s*")
_RUST_DETAIL_RE = re.compile(r"\s*(?:= )?(?:note|help): ")
# A suggestion under `help:`, in rustc's diff gutter: `1 + use std::collections::HashMap;`
# (`-` removes, `~` replaces). Source excerpts have `|` there, so only suggestions match.
_RUST_SUGGESTION_RE = re.compile(r"\s*\d+ *[+~-] (?P<code>.*)")
_RUST_SNIPPET_RE = re.compile(r"\s*\d+ +\| .*")  # `11 |     call(a, /* usize */)` under a help
_RUST_LINT_RE = re.compile(r"#\[(?:warn|deny|forbid)\((?P<lint>[\w:]+)\)\]")
# go build / go vet: no severity word; the .go extension is what makes it safe to claim.
_GO_RE = re.compile(r"(?P<file>(?:[A-Za-z]:[\\/])?[^\s:][^:]*?\.go):(?P<line>\d+):(?P<col>\d+): (?P<msg>.*)")
_GO_CALL_DETAIL = ("\thave (", "\twant (")
# ruff concise / flake8 / pycodestyle: `a.py:1:1: F401 [*] msg`.
_LINT_CODE_RE = re.compile(
    _FILE + r":(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]{1,4}\d{2,4}) (?:\[\*\] )?(?P<msg>.*)"
)
# ESLint `-f unix`: `/p/a.js:1:10: 'x' is defined but never used. [Error/no-unused-vars]`.
_ESLINT_UNIX_RE = re.compile(
    _FILE + r":(?P<line>\d+):(?P<col>\d+): (?P<msg>.*) \[(?P<sev>Error|Warning)(?:/(?P<code>[\w@/-]+))?\]"
)
# Compiler drivers and linkers speaking for themselves: `collect2: error: ld returned 1 exit status`.
_TOOL_RE = re.compile(
    r"(?:\S*/)?(?P<tool>(?:[\w.]+-)*(?:gcc|g\+\+|cc|c\+\+|clang|clang\+\+|collect2|cc1|cc1plus|ld|lld"
    r"|ld\.\w+|mold|rustc|nvcc)(?:-[\d.]+)?(?:\.exe)?): (?P<sev>fatal error|error|warning): (?P<msg>.*)"
)
# GNU ld: `/usr/bin/ld: /tmp/cc.o: in function `main':` (context) or `/usr/bin/ld: cannot find -lfoo`.
_LD_RE = re.compile(r"(?:\S*/)?(?P<tool>ld|ld\.bfd|ld\.gold|ld\.lld|lld|mold)(?:\.exe)?: (?P<msg>.*)")
_LD_CONTEXT_RE = re.compile(r".*: in function [`'‘](?P<func>.*)['’]:")
# `a.c:(.text+0xf): undefined reference to `f'` - an object-file location, not a source position.
_LD_REF_RE = re.compile(
    r"(?P<where>[^\s:][^:]*?:\(\.[\w.$]+\+0x[0-9a-fA-F]+\)): "
    r"(?P<msg>(?:undefined reference to|multiple definition of) .*)"
)
_GCC_CONTEXT_RE = re.compile(_FILE + r": (?P<ctx>In (?:member |static member )?function .*|In constructor .*"
                             r"|In destructor .*|In instantiation of .*|At top level):")
_MYPY_CODE_RE = re.compile(r"  \[(?P<code>[a-z][a-z0-9-]*)\]$")
_GCC_FLAG_RE = re.compile(r" \[(?P<code>-W[^\]\s]+)\]$")
_LAST_TOKEN_RE = re.compile(r"[^\\/\s]*$")

_SEVERITIES = {
    "fatal error": Severity.ERROR,
    "error": Severity.ERROR,
    "Error": Severity.ERROR,
    "warning": Severity.WARNING,
    "Warning": Severity.WARNING,
    "note": Severity.INFO,
    "remark": Severity.INFO,
    "message": Severity.INFO,
}
MAX_DETAIL_LINES = 20
MAX_UNIQUE = 100_000  # unique diagnostics kept per input; memory stays bounded on generated junk
MAX_DETAIL_CHARS = 400


def plausible_file(path: str) -> bool:
    """A printed path, not `12` of a timestamp, `localhost` of an address or `10.0.0.1` of an IP."""
    if path.startswith("<") and path.endswith(">"):
        return True
    last = _LAST_TOKEN_RE.search(path)
    name = last.group(0) if last else path
    if not name or name.replace(".", "").isdigit():
        return False
    return "." in name or "/" in path or "\\" in path


def split_code(message: str) -> tuple[str, str | None]:
    """Message without a trailing `[-Wflag]` (gcc/clang) or `  [error-code]` (mypy), and that code."""
    m = _GCC_FLAG_RE.search(message) or _MYPY_CODE_RE.search(message)
    if m is None:
        return message, None
    return message[: m.start()].rstrip(), m.group("code")


@dataclass(slots=True)
class _Pending:
    """A diagnostic still collecting detail lines (notes, rustc's location and help)."""

    found: Diagnostic  # what the header said (rustc's following lines may complete it)
    detail: list[str] = field(default_factory=list)
    rust_header: bool = False  # a rustc human header waiting for its ` --> ` line
    in_help: bool = False  # after a rustc `help:` line: its snippet shows the suggested code

    def add_detail(self, text: str) -> None:
        if len(self.detail) < MAX_DETAIL_LINES:
            self.detail.append(text.strip()[:MAX_DETAIL_CHARS])

    def freeze(self) -> Diagnostic:
        return replace(self.found, detail="\n".join(self.detail) or None)


def _where(note: Diagnostic) -> str:
    """`file:line:col: ` of a note as printed (empty without a file)."""
    if note.file is None:
        return ""
    position = "".join(f":{n}" for n in (note.line, note.column) if n is not None)
    return f"{note.file}{position}: "


def _int(text: str | None) -> int | None:
    return int(text) if text else None


def match_header(line: str) -> _Pending | None:
    """The diagnostic a header line starts, or None. Pure: no context needed.

    Cheap substring tests pick which patterns can apply: most lines of a build log match none.
    """
    if ": " not in line:
        return None
    if line.startswith("vet: "):
        # `go vet` prints the type checker's errors behind its own name: `vet: a/b.go:46:19: msg`.
        line = line[5:]
    if line.startswith(("error", "warning")):
        m = _RUST_HEADER_RE.match(line)
        if m:
            return _Pending(Diagnostic(_SEVERITIES[m["sev"]], m["msg"], code=m["code"]), rust_header=True)
    if " TS" in line:
        m = _TSC_PAREN_RE.match(line) or _TSC_PRETTY_RE.match(line)
        if m:
            return _at(m, _SEVERITIES[m["sev"]], m["code"])
    m = _POSITION_RE.match(line)
    if m is None:
        return _match_tool(line)
    if not plausible_file(m["file"]):
        return None
    return _match_positioned(line)


def _at(m: re.Match[str], severity: Severity, code: str | None) -> _Pending:
    """A diagnostic from a match with file, line, col and msg groups."""
    return _Pending(Diagnostic(severity, m["msg"], m["file"], int(m["line"]), int(m["col"]), code))


def _match_positioned(line: str) -> _Pending | None:
    """Lines that start with `file:line`: gcc-like, ESLint unix, ruff/flake8, go."""
    m = _GCC_RE.match(line)
    if m:
        message, flag = split_code(m["msg"])
        return _Pending(Diagnostic(
            _SEVERITIES[m["sev"]], message, m["file"], int(m["line"]), _int(m["col"]), m["code"] or flag,
            end_line=_int(m["end_line"]), end_column=_int(m["end_col"]),
        ))
    if line.endswith("]"):
        m = _ESLINT_UNIX_RE.fullmatch(line)
        if m:
            return _at(m, _SEVERITIES[m["sev"]], m["code"])
    m = _LINT_CODE_RE.match(line)
    if m:
        severity = Severity.WARNING if m["code"].startswith("W") else Severity.ERROR
        return _at(m, severity, m["code"])
    if ".go:" in line:
        m = _GO_RE.match(line)
        if m:
            return _at(m, Severity.ERROR, None)
    return None


def _match_tool(line: str) -> _Pending | None:
    if ": error: " in line or ": warning: " in line or ": fatal error: " in line:
        m = _TOOL_RE.match(line)
        if m:
            return _Pending(Diagnostic(_SEVERITIES[m["sev"]], m["msg"], origin=m["tool"].rsplit("/", 1)[-1]))
    return None


class CompilersConsumer:
    """Per-input state: the open diagnostic (collecting notes), gcc/ld context, what was emitted."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._open: _Pending | None = None
        # gcc's `a.c: In function 'main':` - (file, context) for the diagnostics in that file that follow
        self._context: tuple[str, str] | None = None
        self._ld_function: str | None = None
        self._seen: dict[Diagnostic, None] = {}  # insertion-ordered set: exact repeats kept once
        self._printed = 0
        self._dropped = 0

    def feed(self, line: str) -> None:
        if self._open is not None and self._open.rust_header and self._feed_rust_body(line):
            return
        if ":" not in line:
            if line.startswith(_GO_CALL_DETAIL):
                self._feed_indented(line)
            return  # blank lines, carets, `compilation terminated.`: notes may still follow
        if line[0].isspace():
            self._feed_indented(line)
            return
        header = match_header(line)
        if header is not None:
            self._start(header)
            return
        self._feed_other(line)

    def _start(self, header: _Pending) -> None:
        if header.found.severity is Severity.INFO and self._open is not None and not self._open.rust_header:
            self._open.add_detail(f"{_where(header.found)}note: {header.found.message}")
            return
        self._close()
        if self._context and self._context[0] == header.found.file:
            header.add_detail(self._context[1])
        self._open = header

    def _feed_rust_body(self, line: str) -> bool:
        """Lines under a rustc human header. True when the line was consumed."""
        pending = self._open
        assert pending is not None
        m = _RUST_LOCATION_RE.fullmatch(line)
        if m and pending.found.file is None:
            pending.found = replace(pending.found, file=m["file"], line=int(m["line"]), column=int(m["col"]))
            return True
        if pending.found.file is None:
            # No ` --> ` right after the header: a summary such as `error: aborting due to 2 previous
            # errors`; keep it only if it carries an error code (rare, but then it is a real one).
            if pending.found.code is None:
                self._open = None
            else:
                pending.found, pending.rust_header = replace(pending.found, origin="rustc"), False
            return False
        if not line.strip():
            pending.rust_header = False  # a blank line ends a rustc block
            return True
        if _RUST_DETAIL_RE.match(line):
            lint = _RUST_LINT_RE.search(line)
            if lint and pending.found.code is None:
                pending.found = replace(pending.found, code=lint["lint"])
            pending.add_detail(line.strip().removeprefix("= "))
            pending.in_help = line.startswith("help: ")
            return True
        if _RUST_SUGGESTION_RE.fullmatch(line) or (pending.in_help and _RUST_SNIPPET_RE.fullmatch(line)):
            pending.add_detail(line)  # the code the help suggests: often the whole fix
            return True
        if line.startswith((" ", "|")) or line[:1].isdigit() or line.startswith("..."):
            return True  # source excerpt, gutter, carets
        pending.rust_header = False
        return False

    def _feed_indented(self, line: str) -> None:
        if self._open is not None and _TSC_RELATED_RE.match(line):
            self._open.add_detail(line)
        elif (self._open is not None and line.startswith(_GO_CALL_DETAIL)
              and (self._open.found.file or "").endswith(".go")):
            self._open.add_detail(line)  # go's `have (int, string)` / `want (Policy)` under a call error
        # everything else indented is a source excerpt, caret line or `from x.h:2:` include chain

    def _feed_other(self, line: str) -> None:
        m = _GCC_CONTEXT_RE.match(line)
        if m:
            self._context = (m["file"], m["ctx"])
            return
        m = _LD_RE.match(line)
        if m:
            self._feed_linker(m["tool"], m["msg"])
            return
        m = _LD_REF_RE.match(line)
        if m:
            self._start(self._linker_error(m["msg"], m["where"]))

    def _feed_linker(self, tool: str, message: str) -> None:
        ctx = _LD_CONTEXT_RE.fullmatch(message)
        if ctx:
            self._ld_function = ctx["func"]
            return
        severity = Severity.ERROR
        if message.startswith("warning: "):
            severity, message = Severity.WARNING, message.removeprefix("warning: ")
        elif message.startswith("error: "):
            message = message.removeprefix("error: ")
        ref = _LD_REF_RE.match(message)
        if ref:
            self._start(self._linker_error(ref["msg"], ref["where"]))
            return
        self._start(_Pending(Diagnostic(severity, message, origin=tool)))

    def _linker_error(self, message: str, where: str) -> _Pending:
        pending = _Pending(Diagnostic(Severity.ERROR, message, origin="ld"))
        if self._ld_function:
            pending.add_detail(f"in function {self._ld_function} ({where})")
        else:
            pending.add_detail(where)
        return pending

    def _close(self) -> None:
        pending, self._open = self._open, None
        if pending is None or (pending.rust_header and pending.found.file is None):
            return
        self._printed += 1
        diagnostic = pending.freeze()
        if len(self._seen) < MAX_UNIQUE:
            self._seen.setdefault(diagnostic, None)
        elif diagnostic not in self._seen:
            self._dropped += 1

    def finish(self) -> ParseResult:
        if self._open is not None and self._open.rust_header and self._open.found.file is None:
            self._open = None
        self._close()
        result = ParseResult(
            format=PARSER.name, diagnostics=list(self._seen), printed_diagnostics=self._printed
        )
        if self._dropped:
            result.notes.append(f"{self._dropped} further unique diagnostic(s) not kept (cap {MAX_UNIQUE})")
        return result


@dataclass(frozen=True, slots=True)
class CompilersParser:
    name: str = "compilers"
    description: str = "gcc/clang, tsc, rustc, go, mypy, ruff/flake8 and GNU ld diagnostics"

    def sniff(self, head: Sequence[str]) -> bool:
        for i, line in enumerate(head):
            header = match_header(line)
            if header is None:
                if _LD_REF_RE.match(line):
                    return True
                continue
            if not header.rust_header:
                return True
            following = head[i + 1] if i + 1 < len(head) else ""
            if _RUST_LOCATION_RE.fullmatch(following):
                return True
        return False

    def consumer(self, source: str) -> CompilersConsumer:
        return CompilersConsumer(source)


PARSER = CompilersParser()
