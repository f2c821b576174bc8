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
from ci_agent.report import ParseResult, Report

FORMATS = ("llm", "markdown", "json", "github", "codequality", "junit")

__all__ = ["FORMATS", "render", "render_codequality", "render_github", "render_json", "render_junit",
           "render_llm", "render_markdown"]


def render(report: Report, fmt: str, max_bytes: int | None = None,
           cases: Sequence[tuple[str, ParseResult]] = ()) -> str:
    """Render `report` as `fmt`. `max_bytes` bounds llm and markdown; `cases` feeds junit."""
    llm_budget = max_bytes if max_bytes is not None else DEFAULT_LLM_BYTES
    if fmt == "llm":
        return render_llm(report, llm_budget)
    if fmt == "markdown":
        return render_markdown(report, max_bytes if max_bytes is not None else DEFAULT_MARKDOWN_BYTES)
    if fmt == "json":
        return render_json(report, llm_bytes=size(render_llm(report, llm_budget)))
    if fmt == "github":
        return render_github(report)
    if fmt == "codequality":
        return render_codequality(report)
    if fmt == "junit":
        return render_junit(cases)
    raise UsageError(f"unknown output format {fmt!r}; known: {', '.join(FORMATS)}")
