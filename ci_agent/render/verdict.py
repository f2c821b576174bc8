"""The one line that says a report's verdict (issue 16: an "infrastructure", "flaky" or
"pre_existing" verdict means no patch) in the `llm` and `markdown` renderings; the JSON report
carries the whole verdict (`json_report.report_dict`).

Render is below triage in the layers, so a verdict arrives as its JSON form (`Verdict.to_json()`):
`kind` and `reason` are ours; `evidence` is untrusted log text, shown only as a code span.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ci_agent.render.budget import clean, shorten, size
from ci_agent.render.text import md_code, md_text

REASON_CHARS = 300
EVIDENCE_CHARS = 200

VerdictJson = Mapping[str, Any]


def llm_line(verdict: VerdictJson) -> str:
    reason = shorten(clean(str(verdict.get("reason"))), REASON_CHARS)
    return f"verdict: {clean(str(verdict.get('kind')))}: {reason}\n"


def markdown_line(verdict: VerdictJson) -> str:
    line = (f"\n**Verdict: {md_text(str(verdict.get('kind')))}.** "
            f"{md_text(shorten(str(verdict.get('reason')), REASON_CHARS))}")
    evidence = [str(e) for e in verdict.get("evidence") or ()]
    if evidence:
        line += f" First evidence: {md_code(shorten(evidence[0], EVIDENCE_CHARS))}"
    return line + "\n"


def after_first_line(rendered: str, line: str) -> str:
    """`line` right after the rendering's title line (the summary)."""
    cut = rendered.find("\n") + 1
    return rendered[:cut] + line + rendered[cut:] if cut else rendered + "\n" + line


def room_for(budget: int, line: str) -> int:
    """The byte budget left for the rendering once the verdict line is in."""
    return max(budget - size(line), 0)
