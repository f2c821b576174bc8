"""Paths as the model is shown them: repo-relative, or a short name for where third-party code lives.

A CI log prints the runner's paths: the checkout (`/home/runner/work/repo/repo/`, `D:\\a\\repo\\repo\\`,
`/builds/group/project/`), the interpreter's packages (`/opt/hostedtoolcache/Python/3.11.9/x64/
lib/python3.11/site-packages/requests/api.py`), a venv (`/home/runner/work/_temp/.venv/bin/python`).
Only the part after those prefixes says anything about the failure; the rest costs tokens and
invites the model to name files it cannot read. So the `llm` rendering shows the checkout's
files relative to the repository root and third-party files under a placeholder
(`<site-packages>/requests/api.py`, `<stdlib>/unittest/case.py`, `<venv>/bin/python`,
`<toolcache>/jdk/8.0.265/...`, `<runner-temp>/...`). The JSON report keeps every path as printed.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ci_agent.paths import is_absolute, relative_to
from ci_agent.report import LogTail, Report, ReportDiagnostic, ReportFailure, RunError, SourceInfo

_SEP = r"[\\/]"
_I = re.IGNORECASE
# Third-party locations, tried in order on one path; the placeholder replaces everything up to
# and including the match. The last match wins (`.../site-packages/pkg/_vendor/site-packages/x`).
_PLACES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"{_SEP}(site|dist)-packages{_SEP}", _I), "<{0}-packages>/"),
    # A virtual environment's own files (its interpreter, scripts): `.venv/bin/python`.
    (re.compile(rf"{_SEP}(?:\.?venv|\.tox{_SEP}[^\\/]+|\.nox{_SEP}[^\\/]+|\.?virtualenvs{_SEP}[^\\/]+)"
                rf"(?={_SEP}(?:bin|Scripts|lib|Lib|include|pyvenv\.cfg)(?:{_SEP}|$))", _I), "<venv>/"),
    # The standard library: `/usr/lib/python3.11/`, `.../x64/lib/python3.11/`, `C:\\Python311\\Lib\\`.
    (re.compile(r"/lib/python\d+(?:\.\d+)?/"), "<stdlib>/"),
    (re.compile(rf"{_SEP}Python[^\\/]*(?:{_SEP}[\d.]+{_SEP}x(?:64|86))?{_SEP}Lib{_SEP}", _I), "<stdlib>/"),
    # Runner tool caches and scratch folders (GitHub-hosted runners, Linux, macOS and Windows).
    (re.compile(r"^(?:/opt|/Users/runner|[A-Za-z]:)[\\/]hostedtoolcache[\\/](?:windows[\\/])?", _I),
     "<toolcache>/"),
    (re.compile(r"^(?:/home/runner/work|/Users/runner/work|/__w|[A-Za-z]:[\\/]a)[\\/]_temp[\\/]", _I),
     "<runner-temp>/"),
)
# A GitHub-hosted runner's default checkout, `<work>/<repo>/<repo>/` (GITHUB_WORKSPACE): the name
# twice is the layout's mark, so a log from another job's runner is made relative without a root.
_RUNNER_CHECKOUT_RE = re.compile(
    r"^(?:/home/runner/work|/Users/runner/work|/__w|[A-Za-z]:[\\/]a)[\\/](?!_)([^\\/]+)[\\/]\1[\\/]", _I
)
# An absolute path inside free text: Windows `C:\\x\\y` / `C:/x`, or POSIX `/x/y` not inside a word,
# a relative path or a URL. It ends at whitespace, quotes, brackets and the `:line` suffix.
_PATH_IN_TEXT_RE = re.compile(
    r"(?<![\w.~:/\\-])(?:[A-Za-z]:[\\/]|/)[^\s'\"`<>|;,:()\[\]{}]*"
)
MAX_PATHS_PER_TEXT = 2000  # a hostile message of a million slashes costs no more than this


def _placed(path: str) -> str | None:
    for pattern, placeholder in _PLACES:
        last = None
        for found in pattern.finditer(path):
            last = found
        if last is not None:
            rest = path[last.end():].replace("\\", "/")
            return placeholder.format(last.group(1) if last.groups() else "") + rest.lstrip("/")
    return None


def shown_path(path: str, root: str | None) -> str:
    """`path` as the model is shown it: site-packages first (also inside the checkout's venv),
    then repo-relative under `root` (or a GitHub runner's `<work>/<repo>/<repo>/`), then the other
    third-party places; else unchanged."""
    if not path:
        return path
    packages = _PLACES[0][0]
    if packages.search(path):
        return _placed(path) or path
    if root and is_absolute(path):
        inside = relative_to(path, root)
        if inside is not None:
            return inside or "."
    if is_absolute(path):
        checkout = _RUNNER_CHECKOUT_RE.match(path)
        if checkout is not None and checkout.end() < len(path):
            return path[checkout.end():].replace("\\", "/")
        return _placed(path) or path
    return path


def shown_paths_in(text: str, root: str | None) -> str:
    """Every absolute path in free text (a message, a command line) replaced by shown_path."""
    if "/" not in text and "\\" not in text:
        return text
    seen = 0

    def one(m: re.Match[str]) -> str:
        nonlocal seen
        seen += 1
        return shown_path(m.group(0), root) if seen <= MAX_PATHS_PER_TEXT else m.group(0)

    return _PATH_IN_TEXT_RE.sub(one, text)


def _text(text: str | None, root: str | None) -> str | None:
    return None if text is None else shown_paths_in(text, root)


def _file(path: str | None, in_repo: bool, root: str | None) -> str | None:
    return path if path is None or in_repo else shown_path(path, root)  # in the repo: relative already


def _diagnostic(d: ReportDiagnostic, root: str | None) -> ReportDiagnostic:
    return replace(d, file=_file(d.file, d.in_repo, root), message=shown_paths_in(d.message, root),
                   detail=_text(d.detail, root),
                   project=d.project if d.in_repo or d.project is None else shown_path(d.project, root))


def _failure(f: ReportFailure, root: str | None) -> ReportFailure:
    return replace(f, message=_text(f.message, root), file=_file(f.file, False, root),
                   frames=tuple(shown_paths_in(frame, root) for frame in f.frames))


def as_shown_to_model(report: Report) -> Report:
    """The report with its paths as the model is shown them (the module docstring)."""
    root = report.repo_root
    return replace(
        report,
        # A source is a file or the command that printed it (`.../_temp/.venv/bin/python -m pytest`).
        sources=tuple(SourceInfo(shown_paths_in(s.path, root), s.format, s.bytes) for s in report.sources),
        diagnostics=tuple(_diagnostic(d, root) for d in report.diagnostics),
        failures=tuple(_failure(f, root) for f in report.failures),
        run_errors=tuple(RunError(shown_paths_in(e.source, root), shown_paths_in(e.message, root))
                         for e in report.run_errors),
        log_tails=tuple(LogTail(shown_paths_in(t.source, root),
                                tuple(shown_paths_in(line, root) for line in t.lines))
                        for t in report.log_tails),
    )
