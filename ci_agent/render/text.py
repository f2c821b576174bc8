"""The two human/model-readable renderings: `llm` (compact plain text) and `markdown` (job summary).

Both are bounded by a byte budget and both say how many items they left out; the JSON report
always has everything.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from ci_agent.cluster import FailureCluster, cluster_failures, cluster_sizes, without_test_prefix
from ci_agent.render.budget import Section, clean, fit, shorten
from ci_agent.render.shown_paths import as_shown_to_model
from ci_agent.report import LogTail, Report, ReportDiagnostic, ReportFailure, Severity

DEFAULT_LLM_BYTES = 8000
DEFAULT_MARKDOWN_BYTES = 64 * 1024
MAX_MARKDOWN_BYTES = 1024 * 1024  # GitHub's job summary limit per step
MAX_FRAMES = 5
MESSAGE_CHARS = 400
DETAIL_LINES = 6
FAILURE_MESSAGE_CHARS = 600
FAILURE_MESSAGE_LINES = 8
MAX_LISTED_SOURCES = 5
CLUSTER_EXAMPLES = 2  # tests named for a cluster; the JSON report lists every member
MAX_GROUP_FILES = 12  # files listed under one grouped message; the rest are counted

_NOUNS = {Severity.ERROR: "errors", Severity.WARNING: "warnings", Severity.INFO: "notes"}


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def summary_line(report: Report) -> str:
    errors = sum(1 for d in report.diagnostics if d.severity is Severity.ERROR)
    warnings = sum(1 for d in report.diagnostics if d.severity is Severity.WARNING)
    parts = [plural(errors, "error"), plural(warnings, "warning")]
    c = report.counts
    if c.total or report.failures:
        parts.append(f"tests: {c.failed} failed, {c.passed} passed, {c.skipped} skipped of {c.total}")
    if report.run_errors:
        parts.append(plural(len(report.run_errors), "run error"))
    return ", ".join(parts)


def failure_count(report: Report, clusters: Sequence[FailureCluster] = ()) -> str:
    """`7`, or `486 unique of 682` when identical failures (same test, same failure) were folded,
    then `in 3 clusters` when fewer causes than failures were found (ci_agent/cluster.py)."""
    n = len(report.failures)
    text = str(n) if report.counts.failed in (0, n) else f"{n} unique of {report.counts.failed}"
    if 0 < len(clusters) < n:
        text += f" in {plural(len(clusters), 'cluster')}"
    return text


def location(diag: ReportDiagnostic) -> str:
    """MSBuild-style origin: `file(line,col)`, `file`, or the tool origin."""
    if diag.file is None:
        return diag.origin or "(no file)"
    if diag.line is None:
        return diag.file
    if diag.column is None:
        return f"{diag.file}({diag.line})"
    return f"{diag.file}({diag.line},{diag.column})"


def failure_location(failure: ReportFailure) -> str:
    if failure.file is None:
        return ""
    return f"{failure.file}:{failure.line}" if failure.line else failure.file


def _diagnostic_text(diag: ReportDiagnostic) -> str:
    code = f" {diag.code}" if diag.code else ""
    text = f"{location(diag)}: {diag.severity.value}{code}: {shorten(clean(diag.message), MESSAGE_CHARS)}"
    if diag.project and not diag.in_repo:
        text += f" [{diag.project}]"
    if diag.detail:
        detail = shorten(clean(diag.detail), MESSAGE_CHARS, DETAIL_LINES)
        text += "\n" + "\n".join("    " + line for line in detail.split("\n"))
    return text


def _frames_text(failure: ReportFailure) -> list[str]:
    lines = [clean(frame) for frame in failure.frames[:MAX_FRAMES]]
    if len(failure.frames) > MAX_FRAMES:
        lines.append(f"... {len(failure.frames) - MAX_FRAMES} more project frames")
    return lines


def _failure_header(failure: ReportFailure) -> str:
    where = failure_location(failure)
    outcome = "" if failure.outcome.value == "failed" else f" ({failure.outcome.value})"
    return f"{clean(failure.name)}{outcome}" + (f" at {where}" if where else "")


# --------------------------------------------------------------------------- llm


def _llm_omitted(n: int, noun: str) -> str:
    return f"... {n} more {noun} omitted (see the JSON report)\n"


def render_llm(report: Report, max_bytes: int = DEFAULT_LLM_BYTES) -> str:
    report = as_shown_to_model(report)  # runner paths: repo-relative or `<site-packages>/...`
    head = [f"ci-agent report: {summary_line(report)}\n"]
    sources = report.sources[:MAX_LISTED_SOURCES]
    listed = ", ".join(f"{clean(s.path)} ({s.format}, {s.bytes} bytes)" for s in sources)
    more = len(report.sources) - len(sources)
    head.append(f"inputs: {listed}{f', and {more} more' if more else ''}\n")
    sections = [
        Section("\nRUN ERRORS\n", [f"{clean(e.source)}: {shorten(clean(e.message), MESSAGE_CHARS)}\n"
                                   for e in report.run_errors], "run errors"),
        _llm_diagnostics(report, Severity.ERROR),
        _llm_failures(report),
        Section("\nLOG TAIL (no diagnostic or failed test found; the log's last lines as printed)\n",
                [_llm_tail(tail) for tail in report.log_tails], "log tails"),
        _llm_diagnostics(report, Severity.WARNING),
        _llm_diagnostics(report, Severity.INFO),
    ]
    return fit("".join(head), sections, max_bytes, _llm_omitted)


def _llm_tail(tail: LogTail) -> str:
    """A log no parser could read, by its last lines: where tools say why they stopped."""
    return f"{clean(tail.source)}:\n" + "".join(f"    {clean(line)}\n" for line in tail.lines)


def _llm_diagnostics(report: Report, severity: Severity) -> Section:
    """One item per distinct (code, message, detail): the text once, then every location of it.

    A failed build repeats the same message at many places (`'Monster' does not contain a
    definition for 'HP'` at 8 call sites); spelling it out 8 times is what made a duplicate-free
    report still long. Every unique diagnostic keeps its own location line; the omission line
    counts diagnostics, not groups.
    """
    groups = group_diagnostics(d for d in report.diagnostics if d.severity is severity)
    items = [_diagnostic_group_text(group) + "\n" for group in groups]
    noun = _NOUNS[severity]
    unique = sum(len(group) for group in groups)
    return Section(f"\n{noun.upper()} ({unique} unique)\n", items, noun, [len(group) for group in groups])


_NUMBERS_RE = re.compile(r"\d+")


def group_diagnostics(diagnostics: Iterable[ReportDiagnostic]) -> list[list[ReportDiagnostic]]:
    """Diagnostics with the same severity, code, message (numbers aside: MSB3026 "Beginning retry
    3 in 1000ms" is one story told ten times), detail and (out-of-repo) project, in first-seen
    order. Diagnostics without a file (tool origins) are never grouped: the origin is their only
    location."""
    groups: dict[tuple[object, ...], list[ReportDiagnostic]] = {}
    for d in diagnostics:
        key: tuple[object, ...] = (
            (d.severity, d.code, _NUMBERS_RE.sub("#", d.message), d.detail, None if d.in_repo else d.project)
            if d.file is not None else (id(d),)
        )
        groups.setdefault(key, []).append(d)
    return list(groups.values())


def _position(diag: ReportDiagnostic) -> str:
    if diag.line is None:
        return ""
    return f"({diag.line})" if diag.column is None else f"({diag.line},{diag.column})"


def _diagnostic_group_text(group: Sequence[ReportDiagnostic]) -> str:
    if len(group) == 1:
        return _diagnostic_text(group[0])
    first = group[0]
    code = f" {first.code}" if first.code else ""
    # How often MSBuild printed each one is no help to the model (it is in the markdown summary).
    variants = len({d.message for d in group})
    what = f"{len(group)} places" if variants == 1 else f"{len(group)} times, differing only in numbers"
    text = f"{first.severity.value}{code}: {shorten(clean(first.message), MESSAGE_CHARS)} ({what})"
    if first.project and not first.in_repo:
        text += f" [{first.project}]"
    by_file: dict[str | None, list[str]] = {}
    for d in group:
        by_file.setdefault(d.file, []).append(_position(d))
    listed = list(by_file.items())[:MAX_GROUP_FILES]
    for file, positions in listed:
        distinct = list(dict.fromkeys(p for p in positions if p))
        text += f"\n    {clean(file or '')}{' '.join(distinct)}"
    unlisted = sum(len(positions) for _, positions in list(by_file.items())[MAX_GROUP_FILES:])
    if unlisted:
        text += f"\n    ... and {unlisted} more places (see the JSON report)"
    if first.detail:
        detail = shorten(clean(first.detail), MESSAGE_CHARS, DETAIL_LINES)
        text += "\n" + "\n".join("    " + line for line in detail.split("\n"))
    return text


def _llm_failures(report: Report) -> Section:
    clusters = cluster_failures(report.failures)
    items = [_llm_failure(c.example) if c.size == 1 else _llm_cluster(c) for c in clusters]
    return Section(f"\nFAILED TESTS ({failure_count(report, clusters)})\n", items, "failed tests",
                   cluster_sizes(clusters))


def _llm_failure(failure: ReportFailure) -> str:
    return "\n".join([f"- {_failure_header(failure)}", *_failure_body(failure)]) + "\n"


def _llm_cluster(cluster: FailureCluster) -> str:
    """A cause shared by several tests: counted, two of them named, the first one's failure shown
    down to the frames they share."""
    body = _failure_body(cluster_example(cluster))
    return "\n".join([f"- {cluster_heading(cluster)}", *body]) + "\n"


def cluster_example(cluster: FailureCluster) -> ReportFailure:
    """What is shown of a cluster: the first member's message without MSTest's `Test method X
    threw exception:` (the test's name again), and the frames all members share."""
    example = cluster.example
    return replace(example, message=without_test_prefix(example.message), frames=cluster.shared_frames)


def cluster_heading(cluster: FailureCluster) -> str:
    """`70 tests fail like this: A, B and 68 more`; the first one's failure is shown below."""
    outcome = cluster.example.outcome.value
    kind = "" if outcome == "failed" else f" ({outcome})"
    names = ", ".join(clean(f.name) for f in cluster.failures[:CLUSTER_EXAMPLES])
    more = cluster.size - CLUSTER_EXAMPLES
    return f"{cluster.size} tests{kind} fail like this: {names}" + (
        f" and {more} more" if more > 0 else "")


def _failure_body(failure: ReportFailure) -> list[str]:
    lines: list[str] = []
    if failure.message:
        message = shorten(clean(failure.message), FAILURE_MESSAGE_CHARS, FAILURE_MESSAGE_LINES)
        lines.extend("    " + line for line in message.split("\n"))
    lines.extend("    " + frame for frame in _frames_text(failure))
    return lines


# --------------------------------------------------------------------------- markdown

_MD_SPECIAL_RE = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>])")


def md_text(text: str) -> str:
    """Inline Markdown that shows `text` literally (no links, emphasis, HTML or mentions)."""
    escaped = html.escape(clean(text).replace("\n", " "), quote=False)
    return _MD_SPECIAL_RE.sub(r"\\\1", escaped).replace("@", "@\u200b")


def md_code(text: str) -> str:
    """An inline code span that holds any text, backticks included."""
    text = clean(text).replace("\n", " ")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_block(text: str) -> str:
    text = clean(text)
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}\n"


def _md_omitted(n: int, noun: str) -> str:
    return f"\n_... {n} more {noun} omitted (see the JSON report)_\n"


def render_markdown(report: Report, max_bytes: int = DEFAULT_MARKDOWN_BYTES) -> str:
    max_bytes = min(max_bytes, MAX_MARKDOWN_BYTES)
    head = f"## ci-agent: {md_text(summary_line(report))}\n\n"
    sources = ", ".join(md_code(s.path) for s in report.sources[:MAX_LISTED_SOURCES])
    more = len(report.sources) - MAX_LISTED_SOURCES
    head += f"Inputs: {sources}{f' and {more} more' if more > 0 else ''}\n"
    sections = [
        Section("\n### Run errors\n\n", [f"- {md_code(e.source)}: {md_text(e.message)}\n"
                                         for e in report.run_errors], "run errors"),
        _md_diagnostics(report, Severity.ERROR),
        _md_failures(report),
        Section("\n### Log tail\n\nNo diagnostic or failed test found; the log's last lines as printed.\n\n",
                [_md_tail(tail) for tail in report.log_tails], "log tails"),
        _md_diagnostics(report, Severity.WARNING),
        _md_diagnostics(report, Severity.INFO),
    ]
    return fit(head, sections, max_bytes, _md_omitted)


def _md_tail(tail: LogTail) -> str:
    summary = html.escape(clean(tail.source).replace("\n", " "), quote=False).replace("@", "@\u200b")
    return (f"<details><summary><code>{summary}</code> ({plural(len(tail.lines), 'line')})</summary>\n\n"
            + md_block("\n".join(tail.lines)) + "\n</details>\n")


def _md_diagnostics(report: Report, severity: Severity) -> Section:
    noun = _NOUNS[severity]
    items = []
    for d in report.diagnostics:
        if d.severity is not severity:
            continue
        code = f" **{md_text(d.code)}**" if d.code else ""
        count = f" (printed {d.count}x)" if d.count > 1 else ""
        message = md_text(shorten(d.message, MESSAGE_CHARS))
        items.append(f"- {md_code(location(d))}{code} {message}{count}\n")
    return Section(f"\n### {noun.capitalize()} ({len(items)} unique)\n\n", items, noun)


def _md_failures(report: Report) -> Section:
    clusters = cluster_failures(report.failures)
    items = [_md_failure(c.example) if c.size == 1 else _md_cluster(c) for c in clusters]
    return Section(f"\n### Failed tests ({failure_count(report, clusters)})\n\n", items,
                   "failed tests", cluster_sizes(clusters))


def _md_failure(failure: ReportFailure, summary: str | None = None, note: str = "") -> str:
    title = _failure_header(failure) if summary is None else summary
    summary_html = html.escape(title, quote=False).replace("@", "@\u200b")
    body = []
    if failure.message:
        body.append(shorten(clean(failure.message), FAILURE_MESSAGE_CHARS, FAILURE_MESSAGE_LINES))
    body.extend(_frames_text(failure))
    text = f"<details><summary><code>{summary_html}</code></summary>\n\n"
    if body:
        text += md_block("\n".join(body))
    return text + note + "\n</details>\n"


def _md_cluster(cluster: FailureCluster) -> str:
    """One cause shared by several tests, shown once: counted, two named, the first one's failure."""
    example = cluster_example(cluster)
    note = f"\nCluster {md_code(cluster.id)}: the JSON report lists all {cluster.size} tests.\n"
    return _md_failure(example, clean(cluster_heading(cluster)), note)
