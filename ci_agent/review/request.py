"""The reviewer's request: what it sees, and nothing else.

It sees the failure report, the patch as applied, and numbered excerpts of the files the patch
touches (after the patch, around each hunk). It never sees the fixer's summary, root cause,
assumptions, confidence or conversation: a second opinion that reads the first one's reasoning
tends to adopt it. Everything from the repository or a model is redacted, sanitised and fenced
as data, the way the fixer's prompt does it (`ci_agent.redact.fence`).

One request, one answer: the only tool is `submit_review`, forced with `tool_choice` — except
with extended or adaptive thinking, which the API refuses to combine with a forced tool; then
`auto`, and an answer without the tool call is no verdict. The reviewer thinks as the fixer does
only when it runs on the fixer's model: `review.model` names another (cheaper) model, whose
thinking options may differ, so it runs without thinking and with the forced tool.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ci_agent.llm.prompt import REPORT_BYTES, language_rule
from ci_agent.llm.types import ModelSettings
from ci_agent.patch.diff import Hunk
from ci_agent.patch.extract import extract_diff
from ci_agent.patch.parse import PatchParseError, parse_patch
from ci_agent.redact import FENCE_TAG, fence
from ci_agent.render import render
from ci_agent.render.prose import render_template, template_json
from ci_agent.report import Report

TOOL_NAME = "submit_review"
TOOLS: tuple[dict[str, Any], ...] = tuple(template_json("review_tool.json"))
PATCH_BYTES = 24_000
EXCERPT_BYTES = 16_000  # all excerpts together
EXCERPT_MARGIN = 8  # lines shown before and after each hunk
MAX_FILE_BYTES = 2_000_000
Redact = Callable[[str], str]


@dataclass(frozen=True, slots=True)
class ReviewerModel:
    """Which model reviews, and how it may answer."""

    settings: ModelSettings
    thinking: bool  # the fixer's thinking config is carried: tool_choice must be auto


def reviewer_model(fixer: ModelSettings, model: str | None) -> ReviewerModel:
    """`review.model`, or the fixer's model with the fixer's thinking and effort settings."""
    if model and model != fixer.model:
        return ReviewerModel(ModelSettings(model=model, max_tokens=fixer.max_tokens,
                                           timeout_s=fixer.timeout_s, language=fixer.language), False)
    thinking = bool(fixer.thinking_tokens) or fixer.thinking == "adaptive"
    return ReviewerModel(fixer, thinking)


def _cut(text: str, limit: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", errors="ignore") + "\n[... cut]"


def _spans(hunks: Sequence[Hunk], length: int) -> list[tuple[int, int]]:
    """1-based inclusive line ranges of the new file around each hunk, merged."""
    spans: list[tuple[int, int]] = []
    for hunk in sorted(hunks, key=lambda h: h.new_start):
        start = max(1, hunk.new_start - EXCERPT_MARGIN)
        end = min(length, hunk.new_start + max(hunk.new_count, 1) - 1 + EXCERPT_MARGIN)
        if start > end:
            continue
        if spans and start <= spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], max(spans[-1][1], end))
        else:
            spans.append((start, end))
    return spans


def _read_inside(workdir: Path, path: str) -> list[str] | None:
    """The lines of `path` if it is a regular text file inside `workdir` (never through a link)."""
    root = workdir.resolve()
    target = workdir / path
    try:
        if target.is_symlink() or not target.is_file() or not target.resolve().is_relative_to(root):
            return None
        data = target.read_bytes()[:MAX_FILE_BYTES]
    except OSError:
        return None
    if b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace").splitlines()


def excerpts(workdir: Path, diff: str, redact: Redact) -> str:
    """Numbered excerpts of the patched files around each hunk, fenced as data ("" for none)."""
    try:
        files = parse_patch(extract_diff(diff)).files
    except PatchParseError:
        return ""
    out: list[str] = []
    left = EXCERPT_BYTES
    for file_patch in files:
        if not file_patch.new_path or file_patch.binary or left <= 0:
            continue
        lines = _read_inside(workdir, file_patch.new_path)
        if lines is None:
            continue
        shown = "\n...\n".join("\n".join(f"{n:>5} | {lines[n - 1]}" for n in range(start, end + 1))
                               for start, end in _spans(file_patch.hunks, len(lines)))
        if not shown:
            continue
        block = fence(f"file {file_patch.new_path}", _cut(redact(shown), left))
        left -= len(block.encode("utf-8"))
        out.append(block)
    return "\n\n".join(out)


def review_user_text(report: Report, diff: str, excerpt_text: str, redact: Redact) -> str:
    return render_template(
        "review_user.md.j2",
        report=fence("failure report", redact(render(report, "llm", REPORT_BYTES))),
        patch=fence("patch", _cut(redact(diff), PATCH_BYTES)),
        excerpts=excerpt_text)


def review_request(reviewer: ReviewerModel, user_text: str) -> dict[str, Any]:
    """The Messages API body of the review (one call, see the module for tool_choice)."""
    s = reviewer.settings
    system = render_template("review_system.md.j2", language_rule=language_rule(s.language),
                             fence_tag=FENCE_TAG)
    request: dict[str, Any] = {
        "model": s.model,
        "max_tokens": s.max_tokens,
        "system": [{"type": "text", "text": system}],
        "tools": copy.deepcopy(list(TOOLS)),
        "tool_choice": {"type": "auto"} if reviewer.thinking else {"type": "tool", "name": TOOL_NAME},
        "messages": [{"role": "user", "content": [{"type": "text", "text": user_text}]}],
    }
    if reviewer.thinking:
        request["thinking"] = ({"type": "enabled", "budget_tokens": s.thinking_tokens} if s.thinking_tokens
                               else {"type": "adaptive"})
    if s.effort:  # the fixer's own setting (another model's settings carry none)
        request["output_config"] = {"effort": s.effort}
    return request
