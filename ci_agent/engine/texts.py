"""The words ci-agent writes on GitHub in PR mode: the fix PR's title and body, the status comment,
the escalation comment. Untrusted parts (failure text, the model's prose, patches) are sanitised
by the caller's `summary_markdown` or here, and always redacted by the caller before posting."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ci_agent.engine.budget import AttemptRecord, Budget, budget_sentence
from ci_agent.engine.platform import Words
from ci_agent.llm.pricing import usd
from ci_agent.redact import sanitize_untrusted
from ci_agent.render import render
from ci_agent.render.text import md_code
from ci_agent.render.untrusted import untrusted_md, untrusted_md_line
from ci_agent.report import Report
from ci_agent.triage import Verdict

ESCALATION_TAG = "<!-- ci-agent:escalation -->"
LABEL = "ci-agent"
ESCALATED_LABEL = "ci-agent:escalated"
PAUSED_LABEL = "ci-agent:paused"
BUILD_CHANGE_LABEL = "ci-agent:build-change"
FLAKY_LABEL = "ci-agent:flaky"
_FAILURE_BYTES = 12_000


def fence(text: str, lang: str = "") -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def pr_title(source: str, summary: str) -> str:
    line = " ".join(sanitize_untrusted(summary).split())[:100]
    return f"ci-agent: fix {source}" + (f" — {line}" if line else "")


def pr_body(source: str, attempt_markdown: str, words: Words) -> str:
    """The change request's body: what failed, root cause, patch, verification and tokens come
    from the run's Markdown summary (already sanitised); this adds how to review it."""
    return (f"ci-agent opened this {words.change_request} to fix the failing build of `{source}`.\n"
            "Review it like any other change; CI on this branch decides whether it works.\n\n"
            f"{attempt_markdown}")


def build_change_callout(changes: Sequence[str], words: Words) -> str:
    """The warning at the very top of a change request whose patch edits build-time code
    (`path: why`, from the patch engine): a reviewer reads these files before anything else."""
    # the path is the model's: a code span (no backticks inside) shows it as text, never as a
    # mention, link or HTML; `why` is ours
    items = "\n".join(f"> - `{_code_span(path)}`: {why}"
                      for path, _, why in (change.rpartition(": ") for change in changes))
    return (f"> [!WARNING]\n> **This patch changes code that runs at build time:** review these "
            f"files before anything else in this {words.change_request}; CI runs them with the "
            f"pipeline's permissions.\n{items}\n\n")


def _code_span(text: str) -> str:
    return " ".join(sanitize_untrusted(text).replace("`", "'").split())


def ci_note(actions_token: bool, workflow: str, dispatched: bool | None, fix_branch: str) -> str:
    """How CI gets to run on the fix branch (pushes made with GITHUB_TOKEN start no workflow)."""
    if not actions_token:
        return "CI starts by itself on the pushed commit."
    if dispatched:
        return f"CI was started on `{fix_branch}` with a workflow_dispatch of `{workflow}`."
    why = (f"`{workflow}` has no `workflow_dispatch` trigger" if workflow
           else "no `ci_workflow` input names a workflow to dispatch")
    return (f"**CI must be started by hand on `{fix_branch}`**: this push was made with the "
            f"workflow's GITHUB_TOKEN, whose pushes start no workflow run, and {why}. Use a GitHub "
            "App token or a PAT as `github_token`, or add `workflow_dispatch` to the CI workflow "
            "and name it in `ci_workflow`.")


class Markup(str):
    """Markdown of ours, posted as written (a deliberate mention of the asker, the proposal block
    whose bytes `/ci-agent apply` checks, the help list). Every other line of a status comment
    is treated as untrusted."""


def status_text(headline: str, fix_branch: str, source: str, budget: Budget | None, lines: Sequence[str],
                tokens: int, cost_usd: float = 0.0) -> str:
    """The status comment. `lines` are untrusted unless `Markup`: run messages quote branch names,
    error text and the model's words, so each goes through `untrusted_md` here, the one place."""
    out = [f"### ci-agent: {headline}",
           f"Fix branch {md_code(fix_branch)} for {md_code(source)}."]
    if budget is not None:
        out.append(budget_sentence(budget))
    out.extend(line if isinstance(line, Markup) else untrusted_md(line) for line in lines if line)
    out.append(f"Tokens used on this fix branch: {tokens}. Cost on this fix branch: {usd(cost_usd)}.")
    return "\n\n".join(out) + "\n"


def escalation_text(fix_branch: str, failures: Sequence[AttemptRecord], report: Report | None,
                    tokens: int, *, unpushed_source: str = "", cost_usd: float = 0.0, cap: str = "") -> str:
    """`unpushed_source`: every attempt failed the in-job verify and was rolled back, so the fix
    branch was never pushed; the text names the failing branch instead. `cap`: a money cap
    stopped the run (its sentence: which cap, the amount spent, the cap)."""
    if cap:
        head = [f"### ci-agent: escalated: a cost cap was reached on {md_code(fix_branch)}",
                untrusted_md(cap[:1].upper() + cap[1:] + "."),
                "ci-agent makes no further model calls here until the cap is raised in .ci-agent.yml "
                "(`budget:`), a green run, or a writer's `/ci-agent retry` (the day cap: the next UTC day)."]
    elif unpushed_source:
        head = [f"### ci-agent: escalated after {len(failures)} failed attempts to fix "
                f"{md_code(unpushed_source)}",
                "Every attempt failed the job's `verify` command and was rolled back, so nothing was "
                "pushed. ci-agent makes no further automatic attempts here; a person needs to look."]
    else:
        head = [f"### ci-agent: escalated after {len(failures)} failed attempts on {md_code(fix_branch)}",
                "ci-agent makes no further automatic attempts on this branch. A person needs to look; "
                "a commit pushed to this branch, or a green run, starts a new count."]
    out = [ESCALATION_TAG, *head, "#### What each attempt changed"]
    out.extend(f"- attempt {f.number}: {untrusted_md_line(f.summary) or '(no summary)'} — failure "
               f"after it: {md_code(f.after or 'see CI')}" for f in failures)
    if report is not None:
        out.append("#### What still fails\n\n" + fence(sanitize_untrusted(render(report, "llm",
                                                                                _FAILURE_BYTES))))
    out.append((f"Tokens used by these attempts: {tokens}." if unpushed_source
                else f"Tokens used on this fix branch: {tokens}.") + f" Cost: {usd(cost_usd)}.")
    return "\n\n".join(out) + "\n"


PROPOSAL_HEADING = "#### Proposed patch"
MAX_PROPOSAL_CHARS = 40_000  # the status comment must stay well under GitHub's 65,536


def proposal_block(diff: str) -> Markup:
    """The patch as posted in mode propose; `extract_proposal` reads exactly this back."""
    ticks = "```"
    while ticks in diff:
        ticks += "`"
    body = diff if diff.endswith("\n") else diff + "\n"  # byte for byte: no stripping here
    return Markup(f"{PROPOSAL_HEADING}\n\n{ticks}diff\n{body}{ticks}\n\n"
                  "A writer can apply exactly this patch with `/ci-agent apply` (nothing else is applied).")


def extract_proposal(body: str) -> str | None:
    """The diff inside the proposal block of a status comment body, with its final newline; None
    when the block is missing or its fence is broken."""
    start = body.find(PROPOSAL_HEADING + "\n\n")
    if start < 0:
        return None
    rest = body[start + len(PROPOSAL_HEADING) + 2:]
    opening, _, after = rest.partition("\n")
    ticks = opening.removesuffix("diff")
    if not ticks or set(ticks) != {"`"} or len(ticks) < 3:
        return None
    end = after.find("\n" + ticks + "\n")
    if end < 0:
        return None
    return after[:end] + "\n"


def explanation_text(root_cause: str, summary: str, assumptions: Sequence[str],
                     open_questions: Sequence[str], confidence: float) -> str:
    """`/ci-agent explain`: the model's analysis, sanitised (it is untrusted prose)."""
    out = ["#### Root cause", untrusted_md(root_cause) or "(none given)"]
    if summary:
        out += ["#### What would fix it", untrusted_md(summary)]
    if assumptions:
        out += ["#### Assumptions"] + [f"- {untrusted_md_line(a)}" for a in assumptions]
    if open_questions:
        out += ["#### Open questions"] + [f"- {untrusted_md_line(q)}" for q in open_questions]
    out.append(f"Confidence: {confidence:.2f}. Nothing was changed; `/ci-agent fix` makes an attempt.")
    return "\n\n".join(out)


# --- the verdicts before the model (issue 16) ------------------------------------------------------

VERDICT_HEADLINES = {"flaky": "flaky: the failed tests passed when re-run; no patch",
                     "pre_existing": "pre-existing: the default branch fails the same way; no patch",
                     "infrastructure": "infrastructure: the environment failed, not the code; no patch"}
_SHOWN_TESTS = 20
_SHOWN_EVIDENCE = 8


def _listed(names: Sequence[str]) -> str:
    shown = ", ".join(names[:_SHOWN_TESTS])
    return shown + (f" and {len(names) - _SHOWN_TESTS} more" if len(names) > _SHOWN_TESTS else "")


def verdict_lines(verdict: Verdict, quarantine: Sequence[str] = ()) -> list[str]:
    """The status comment's lines for a verdict: its reason, the tests it names, the evidence
    (log lines: untrusted, shown as code) and the quarantine candidates. Only the evidence block
    is `Markup` (a fence we build around sanitised text); `status_text` treats the rest as
    untrusted."""
    lines = [verdict.reason]
    if verdict.tests:
        lines.append(f"Tests: {_listed(verdict.tests)}.")
    if verdict.evidence:
        evidence = "\n".join(sanitize_untrusted(e) for e in verdict.evidence[:_SHOWN_EVIDENCE])
        lines.append(Markup("Evidence:\n\n" + fence(evidence, "text")))
    if quarantine:
        lines.append(f"Quarantine candidates (flaky again and again; consider quarantining or fixing "
                     f"them): {_listed(quarantine)}.")
    return lines


def verdict_details(verdict: Verdict, lines: Sequence[str]) -> str:
    """The job summary's part for a verdict: the status comment's lines, then the verdict as JSON
    (what `to_json()` gives; a fence around our own serialisation, so no text of it renders)."""
    body = "\n\n".join(line if isinstance(line, Markup) else untrusted_md(line) for line in lines)
    # `<` escaped as JSON allows: no tag or comment of a log line reaches the raw Markdown
    text = json.dumps(verdict.to_json(), indent=2, ensure_ascii=False).replace("<", "\\u003c")
    data = fence(text, "json")
    return (f"### Verdict: {verdict.kind}\n\n{body}\n\n"
            f"<details><summary>verdict (JSON)</summary>\n\n{data}\n\n</details>")
