"""The request we send: one cached system block, the tools, the first user turn.

The words are templates in `ci_agent/templates/` (system.md.j2, user.md.j2, language.md.j2,
attempts.md.j2) and the tools are data (tools.json, see `tool_schemas`); this module only chooses
and fills them.

The system blocks are identical for every attempt on a repository: the rules, team notes and
language, then the repository's own guidance (AGENTS.md and the like from the trusted side, as
data); with the tools rendered before them they are the stable prefix `ci_agent.llm.caching`
puts a breakpoint after when it is long enough to be cached. Everything that changes — the
report, the context, what earlier attempts changed and how they failed ("no progress" when a
failure comes back after a patch) — goes into the user turn.

Every piece of the user turn that came from outside (logs, diffs the model wrote, summaries) is
redacted by the caller's `redact`, then sanitised and fenced as data by `ci_agent.redact`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ci_agent.config import GuidanceFile
from ci_agent.llm.tool_schemas import READ_ONLY_TOOLS, tool_definitions
from ci_agent.llm.types import ModelSettings
from ci_agent.redact import FENCE_TAG, fence, sanitize_untrusted
from ci_agent.render import render
from ci_agent.render.prose import Prose, render_template
from ci_agent.report import Report

__all__ = ["READ_ONLY_TOOLS", "AttemptNote", "compose_user_text", "guidance_text", "initial_request",
           "language_rule", "system_blocks", "system_text", "tool_definitions", "user_text"]

REPORT_BYTES = 8000
PREVIOUS_REPORT_BYTES = 3000
PREVIOUS_DIFF_BYTES = 6000
_LANGUAGES = {"en": "English", "es": "Spanish", "fr": "French", "de": "German", "pt": "Portuguese",
              "it": "Italian", "nl": "Dutch", "pl": "Polish", "ja": "Japanese", "zh": "Chinese",
              "ko": "Korean", "ru": "Russian", "uk": "Ukrainian", "tr": "Turkish", "sv": "Swedish"}
_LANGUAGE = Prose("language.md.j2")
_ATTEMPTS = Prose("attempts.md.j2")


def language_rule(language: str) -> str:
    code = language.strip()
    name = None if code.casefold() == "match" else _LANGUAGES.get(code.casefold(), code)
    return _LANGUAGE("rule", name=name)


def system_text(settings: ModelSettings) -> str:
    return render_template(
        "system.md.j2",
        notes=[" ".join(n.split()) for n in settings.notes if n.strip()],  # one bullet each
        language_rule=language_rule(settings.language),
        max_turns=settings.max_turns,  # per repository, like the notes: the block stays stable
        fence_tag=FENCE_TAG,
    )


def _same(text: str) -> str:
    return text


def guidance_text(guidance: Sequence[GuidanceFile], redact: Callable[[str], str] = _same) -> str:
    """The repository guidance block: each file redacted, sanitised and fenced as data, and what
    was cut or left out said in words ("" without guidance)."""
    if not guidance:
        return ""
    return render_template(
        "guidance.md.j2", fence_tag=FENCE_TAG,
        files=[_data(f"repository guidance {g.path}", g.text, redact) for g in guidance if g.text],
        notes=[f"`{g.path}`: {g.note}" for g in guidance if g.note])


def system_blocks(settings: ModelSettings, redact: Callable[[str], str] = _same) -> list[dict[str, Any]]:
    """The rules, then the repository guidance (when there is any), as separate text blocks; no
    cache breakpoint here (`ci_agent.llm.caching.place_breakpoints` decides)."""
    blocks = [{"type": "text", "text": system_text(settings)}]
    guidance = guidance_text(settings.guidance, redact)
    if guidance:
        blocks.append({"type": "text", "text": guidance})
    return blocks


def user_text(report: str, context: str = "", previous_attempts: str = "") -> str:
    """The first user turn: previous attempts (if any) first, then the report and context.

    All three must already be redacted and sanitised by the caller."""
    return render_template("user.md.j2", report=report.rstrip(), context=context.rstrip(),
                           previous_attempts=previous_attempts.rstrip())


def initial_request(settings: ModelSettings, system: list[dict[str, Any]], user_text: str) -> dict[str, Any]:
    """The first Messages API body, exactly as the loop sends it (so `--dry-run` prints the
    truth). `tool_choice: auto`: the model may reason in text before its tool calls (`any`
    forbids that, and the API refuses it with extended thinking); a reply without a tool call is
    nudged by the loop and costs a turn. With `thinking_tokens` set, extended thinking with that
    budget; with `thinking: adaptive`, adaptive thinking; `effort` goes as `output_config`.
    No cache breakpoint here: `ci_agent.llm.caching.place_breakpoints` sets them before
    each request."""
    request: dict[str, Any] = {
        "model": settings.model,
        "max_tokens": settings.max_tokens,
        "system": system,
        "tools": tool_definitions(),
        "tool_choice": {"type": "auto"},
        "messages": [{"role": "user", "content": [{"type": "text", "text": user_text}]}],
    }
    if settings.thinking_tokens:
        request["thinking"] = {"type": "enabled", "budget_tokens": settings.thinking_tokens}
    elif settings.thinking == "adaptive":
        request["thinking"] = {"type": "adaptive"}
    if settings.effort:
        request["output_config"] = {"effort": settings.effort}
    return request


# --------------------------------------------------------------------------- the user turn


@dataclass(frozen=True, slots=True)
class AttemptNote:
    """What the next prompt is told about one earlier failed attempt."""

    number: int
    summary: str
    files: tuple[str, ...] = ()
    diff: str = ""
    verify: str = ""
    after_fingerprint: str = ""
    after: Report | None = None  # known when the attempt ran in this invocation


def _cut(text: str, limit: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", errors="ignore") + "\n[... cut]"


def _data(label: str, text: str, redact: Callable[[str], str]) -> str:
    return fence(label, sanitize_untrusted(redact(text)))


def _previous(notes: Sequence[AttemptNote], redact: Callable[[str], str]) -> list[str]:
    out = [_ATTEMPTS("earlier_attempts")]
    for note in notes:
        out.append(_ATTEMPTS("attempt_heading", number=note.number))
        if note.summary:
            out.append(_data(f"attempt {note.number} summary", note.summary, redact))
        if note.files:
            out.append(_ATTEMPTS("changed", files=note.files))
        if note.diff:
            out.append(_data(f"attempt {note.number} diff", _cut(note.diff, PREVIOUS_DIFF_BYTES), redact))
        if note.after is not None:
            out.append(_ATTEMPTS("still_failed", verify=note.verify))
            out.append(_data(f"failure after attempt {note.number}",
                             render(note.after, "llm", PREVIOUS_REPORT_BYTES), redact))
    return out


def compose_user_text(report: Report, context: str, notes: Sequence[AttemptNote], number: int,
                      max_attempts: int, no_progress: bool, redact: Callable[[str], str],
                      instructions: str = "", explain: bool = False) -> str:
    """The first user turn for attempt `number`; the paragraphs of its "Previous attempts"
    section are the macros of attempts.md.j2, in this order."""
    previous: list[str] = []
    if explain:
        previous.append(_ATTEMPTS("explain_only"))
    if instructions.strip():
        previous.append(_ATTEMPTS("reviewer", instructions=_data("reviewer instructions", instructions,
                                                                   redact)))
    if (number > 1 or notes) and not explain:
        previous.append(_ATTEMPTS("attempt_number", number=number, max_attempts=max_attempts))
    if no_progress:
        previous.append(_ATTEMPTS("no_progress"))
    if notes:
        previous += _previous(notes, redact)
    return user_text(_data("failure report", render(report, "llm", REPORT_BYTES), redact),
                     context, "\n\n".join(previous))
