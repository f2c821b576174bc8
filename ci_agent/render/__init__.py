"""Report -> text for a reader: `llm`, `markdown`, `json`, `github`, `codequality`, `junit`."""

from __future__ import annotations

from collections.abc import Sequence

from ci_agent.errors import UsageError
from ci_agent.render.budget import size
from ci_agent.render.codequality import render_codequality
from ci_agent.render.github import render_github
from ci_agent.render.json_report import render_json
from ci_agent.render.junit import render_junit
from ci_agent.render.text import DEFAULT_LLM_BYTES, DEFAULT_MARKDOWN_BYTES, render_llm, render_markdown
from ci_agent.render.verdict import VerdictJson, after_first_line, llm_line, markdown_line, room_for
from ci_agent.report import ParseResult, Report

FORMATS = ("llm", "markdown", "json", "github", "codequality", "junit")

__all__ = ["FORMATS", "render", "render_codequality", "render_github", "render_json", "render_junit",
           "render_llm", "render_markdown"]


def render(report: Report, fmt: str, max_bytes: int | None = None,
           cases: Sequence[tuple[str, ParseResult]] = (), verdict: VerdictJson | None = None) -> str:
    """Render `report` as `fmt`. `max_bytes` bounds llm and markdown; `cases` feeds junit.
    `verdict` (a triage `Verdict.to_json()`, issue 16): one line in llm and markdown, the
    `verdict` key in json; the other formats are for tools that know no verdicts."""
    llm_budget = max_bytes if max_bytes is not None else DEFAULT_LLM_BYTES
    if fmt == "llm":
        return _llm(report, llm_budget, verdict)
    if fmt == "markdown":
        budget = max_bytes if max_bytes is not None else DEFAULT_MARKDOWN_BYTES
        if verdict is None:
            return render_markdown(report, budget)
        line = markdown_line(verdict)
        return after_first_line(render_markdown(report, room_for(budget, line)), line)
    if fmt == "json":
        return render_json(report, llm_bytes=size(_llm(report, llm_budget, verdict)), verdict=verdict)
    if fmt == "github":
        return render_github(report)
    if fmt == "codequality":
        return render_codequality(report)
    if fmt == "junit":
        return render_junit(cases)
    raise UsageError(f"unknown output format {fmt!r}; known: {', '.join(FORMATS)}")


def _llm(report: Report, budget: int, verdict: VerdictJson | None) -> str:
    if verdict is None:
        return render_llm(report, budget)
    line = llm_line(verdict)
    return after_first_line(render_llm(report, room_for(budget, line)), line)

