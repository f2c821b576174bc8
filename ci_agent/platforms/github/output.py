"""What a GitHub Actions step writes besides its log: masks, outputs, the job summary, annotations.

- `mask_secrets` prints `::add-mask::` for every secret value (and its encoded forms) and must
  run before anything else is printed, so the runner hides them from then on.
- `write_outputs` appends to `$GITHUB_OUTPUT` in the heredoc form with a random delimiter, so a
  value can never end its block early and set another output.
- `write_summary` appends Markdown to `$GITHUB_STEP_SUMMARY`, cut to stay within GitHub's 1 MiB
  per step.
- `annotation_lines` reuses `ci_agent.render.github` (10 per type per step, escaped values).
- `outputs` are the step outputs of a result; `print_request` shows a dry run's request and
  `print_outcome` the step's last line, both as data.
(`ci_agent.logguard.log_line` is how untrusted text reaches the log, on every platform.)
"""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TextIO

from ci_agent.engine.dry_run import request_text, size_sentence
from ci_agent.engine.runner import Result
from ci_agent.logguard import emit_commands, log_line
from ci_agent.render.github import escape_data, render_github
from ci_agent.report import Report

MAX_SUMMARY_BYTES = 1024 * 1024
_CUT_NOTE = "\n\n_(summary cut: GitHub keeps at most 1 MiB per step)_\n"


def _forms(value: str) -> list[str]:
    """The value and the encodings it commonly leaks in (base64 as in Basic auth, URL-quoted)."""
    forms = [value, base64.b64encode(value.encode()).decode(), urllib.parse.quote(value, safe="")]
    return [f for f in dict.fromkeys(forms) if f]


def mask_lines(values: Iterable[str]) -> list[str]:
    """`::add-mask::` lines for every secret value; a multi-line secret is masked line by line
    (the runner masks per line)."""
    lines: list[str] = []
    for value in values:
        for part in value.splitlines() or [value]:
            part = part.strip()
            if len(part) < 4:  # masking a 1-3 character string would blank out half the log
                continue
            for form in _forms(part):
                lines.append(f"::add-mask::{escape_data(form)}")
    return list(dict.fromkeys(lines))


def mask_secrets(values: Iterable[str], out: TextIO) -> None:
    lines = mask_lines(values)
    if lines:
        emit_commands(out, "".join(line + "\n" for line in lines))


def _delimiter(values: Iterable[str]) -> str:
    while True:
        candidate = "ghadelimiter_" + secrets.token_hex(16)
        if not any(candidate in v for v in values):
            return candidate


def output_block(outputs: Mapping[str, str]) -> str:
    """The `$GITHUB_OUTPUT` text: `name<<DELIM`, value, `DELIM`, one block per output."""
    chunks = []
    for name, value in outputs.items():
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", name):
            raise ValueError(f"bad output name {name!r}")
        value = value.replace("\r\n", "\n").replace("\r", "\n")
        delim = _delimiter([name, value])
        chunks.append(f"{name}<<{delim}\n{value}\n{delim}\n")
    return "".join(chunks)


def write_outputs(path: str, outputs: Mapping[str, str]) -> bool:
    """Append to `$GITHUB_OUTPUT`; False when there is no such file (not in Actions)."""
    if not path:
        return False
    with open(path, "a", encoding="utf-8", newline="\n") as handle:
        handle.write(output_block(outputs))
    return True


def fit_summary(markdown: str, limit: int = MAX_SUMMARY_BYTES) -> str:
    """The summary cut at a line boundary (never inside a UTF-8 character) so it, plus a note
    saying it was cut, stays within `limit` bytes."""
    data = markdown.encode("utf-8")
    if len(data) <= limit:
        return markdown
    room = limit - len(_CUT_NOTE.encode("utf-8"))
    head = data[:max(0, room)].decode("utf-8", "ignore")
    newline = head.rfind("\n")
    if newline > 0:
        head = head[:newline]
    # An open code fence would swallow the note: close it.
    if head.count("```") % 2:
        head += "\n```"
    return head + _CUT_NOTE


def write_summary(path: str, markdown: str) -> bool:
    """Append to `$GITHUB_STEP_SUMMARY` (whatever this step already wrote there counts too)."""
    if not path:
        return False
    try:
        used = os.path.getsize(path)
    except OSError:
        used = 0
    text = fit_summary(markdown, max(0, MAX_SUMMARY_BYTES - used))
    with open(path, "a", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
    return True


def annotation_lines(report: Report) -> str:
    return render_github(report)


def outputs(result: Result) -> dict[str, str]:
    """The step outputs; `verdict` is a verdict before the model as compact JSON (`Verdict.to_json`,
    `fromJSON(steps.fix.outputs.verdict).kind` in a workflow), empty without one."""
    pr = result.pr
    verdict = json.dumps(result.verdict.to_json(), separators=(",", ":")) if result.verdict else ""
    return {"outcome": result.outcome, "attempt": str(result.attempt) if result.attempt else "",
            "branch": result.branch, "pr_number": str(pr.number) if pr else "",
            "pr_url": pr.url if pr else "", "tokens": str(result.tokens), "verdict": verdict,
            "cost_usd": cost_text(result.cost_usd)}


def cost_text(amount: float) -> str:
    """USD as a plain decimal (six places: a cheap call is a fraction of a cent)."""
    return f"{amount:.6f}"


def print_request(request: Mapping[str, Any], redact: Callable[[str], str], out: TextIO) -> None:
    """A dry run's request in a collapsed group of the log; every line is data, never a command."""
    emit_commands(out, "::group::ci-agent dry run: the request to the model\n")
    out.write(log_line(redact(request_text(request))) + "\n")
    emit_commands(out, "::endgroup::\n")
    print(log_line(redact(f"ci-agent: dry run: {size_sentence(request)}; nothing was sent")), file=out,
          flush=True)


def print_outcome(result: Result, redact: Callable[[str], str], out: TextIO) -> None:
    """The step's last line: the outcome and its sentence, as data."""
    word = "skipped" if result.outcome == "skipped" else result.outcome
    print(log_line(redact(f"ci-agent: {word}: {result.message}")), file=out, flush=True)
