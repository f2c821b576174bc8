"""What one CI cycle carries from step to step: the run (`Run`: the trigger, the inputs, the
platform, and how the cycle writes — status comment, job result, log lines), the fix branch it
works on (`Cycle`), and the `Result` a platform writes where its CI reads it.

Every executor of a decision (`ci_agent.engine.execute` and the modules it calls) works through
these names; none reaches into another's private state.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ci_agent import git
from ci_agent.config import Settings
from ci_agent.engine import gitops, texts
from ci_agent.engine.attempt import Outcome, Plan
from ci_agent.engine.budget import Budget
from ci_agent.engine.collect import Collected
from ci_agent.engine.forge import ChangeRequest, Forge
from ci_agent.engine.marker import ForgeState
from ci_agent.engine.platform import Platform, Words
from ci_agent.engine.summary import summary_markdown
from ci_agent.engine.types import ActionInputs, Trigger
from ci_agent.errors import ExitCode, UsageError
from ci_agent.llm.client import ModelClient
from ci_agent.llm.pricing import usd
from ci_agent.logguard import log_line
from ci_agent.redact import Redactor
from ci_agent.render.untrusted import untrusted_md, untrusted_md_line
from ci_agent.triage import Verdict


@dataclass
class Result:
    # fixed|committed|proposed|explained|escalated|gave_up|nothing_to_do|skipped|refused, or a
    # verdict before the model: flaky|pre_existing|infrastructure
    outcome: str
    exit_code: ExitCode
    message: str
    branch: str = ""
    attempt: int = 0
    pr: ChangeRequest | None = None
    tokens: int = 0
    details: str = ""  # Markdown for the job summary (already sanitised)
    report: Any = None  # the distilled Report, for annotations
    request: Mapping[str, Any] | None = None  # a dry run: the model request it built (redacted)
    verdict: Verdict | None = None  # a verdict before the model (outcome flaky|pre_existing|infrastructure)
    cost_usd: float = 0.0  # USD spent on the fix branch so far (the marker's total)


_TITLES = {"fixed": "fixed", "committed": "patch pushed, CI decides", "escalated": "escalated",
           "gave_up": "no safe patch", "nothing_to_do": "nothing to fix", "skipped": "skipped",
           "refused": "refused", "proposed": "patch proposed for review", "explained": "explained",
           # the verdicts before the model (issue 16): no patch, no model call
           "flaky": "flaky, not broken: no patch",
           "pre_existing": "pre-existing on the default branch: no patch",
           "infrastructure": "infrastructure failure: no patch"}
# Every `outcome` a run can end with; "error" is written when the run raised (the step failed).
OUTCOMES = (*_TITLES, "error")


def summary(result: Result, words: Words) -> str:
    """The job summary: the outcome, its sentence, the fix change request, the run's details."""
    title = _TITLES.get(result.outcome, result.outcome)
    lines = [f"## ci-agent: {title}", untrusted_md(result.message)]
    if result.pr is not None:
        lines.append(f"Fix {words.change_request}: [{words.ref(result.pr.number)}]({result.pr.url})")
    if result.cost_usd:
        lines.append(f"Cost on this fix branch: {usd(result.cost_usd)}.")
    if result.details:
        lines.append(result.details)
    return "\n\n".join(lines) + "\n"


@dataclass
class Cycle:
    """What one run knows once the fix branch is identified."""

    repo: Path
    settings: Settings
    forge: Forge
    token: str
    source: str
    fix_branch: str
    pr: ChangeRequest | None
    marker: ForgeState
    remote_tip: str | None
    auth: list[str]
    # The local ref the attempt engine commits on. The fix branch itself in mode pr; in modes
    # push/propose (the source branch is the one fixed) a private name, so the runner's own
    # checkout of that branch is never moved under its feet.
    local_branch: str = ""
    # `/ci-agent stop`: the change request labelled paused. Runs that decide a pending attempt
    # still record their verdict; only new attempts wait for `/ci-agent resume`.
    paused: ChangeRequest | None = None

    @property
    def engine_branch(self) -> str:
        return self.local_branch or self.fix_branch


IN_PLACE_PREFIX = "ci-agent/in-place/"


class Run:
    """One CI run of ci-agent: the trigger and the inputs as given, and how it writes."""

    def __init__(self, env: Mapping[str, str], inputs: ActionInputs, trig: Trigger, platform: Platform,
                 client_factory: Callable[[], ModelClient] | None, *, instructions: str = "",
                 explain: bool = False) -> None:
        self.env, self.inputs, self.trig, self.platform = env, inputs, trig, platform
        self.words = platform.words
        self.instructions, self.explain = instructions, explain
        self.command = trig.kind == "command"
        # modes push and propose fix the source branch itself; a fix branch keeps mode pr's ways
        self.in_place = inputs.mode in ("push", "propose") and not trig.on_fix_branch
        # runs on the branch that holds our attempts decide them
        self.observing = trig.on_fix_branch or self.in_place
        self.client_factory = client_factory
        self.notes: tuple[str, ...] = ()  # what could not be fetched (missing artifacts ...)
        # what the verdicts before the model found without a verdict (engine/triage_run.py)
        self.judgment: tuple[str, ...] = ()
        # lines every status comment of this run adds (failures the default branch shares)
        self.status_notes: tuple[str, ...] = ()
        self.config_note = ""  # the branch changes the configuration: it takes effect after merge
        self.redact = Redactor.from_environ({**env, "CI_AGENT_INPUT_KEY": inputs.anthropic_api_key,
                                             "CI_AGENT_INPUT_TOKEN": inputs.token}).redact

    def status(self, cycle: Cycle, pr: ChangeRequest | None, headline: str, budget: Budget | None,
               lines: list[str], also: tuple[int, ...] = ()) -> None:
        """The status comment (with the marker) on `pr`, the trigger's change request and `also`."""
        if self.inputs.dry_run:
            return
        if self.config_note:
            lines = [*lines, self.config_note]
        lines = [*lines, *self.status_notes]
        body = self.redact(texts.status_text(headline, cycle.fix_branch, cycle.source, budget, lines,
                                             cycle.marker.tokens, cycle.marker.cost_usd))
        numbers = [n for n in (pr.number if pr else None, self.trig.pr_number, *also) if n is not None]
        for number in dict.fromkeys(numbers):
            # another job may have written since we read: keep what it recorded
            current = ForgeState.from_json(cycle.forge.read_status_state(number))
            cycle.marker = cycle.marker.merged_with(current)
            cycle.forge.upsert_status_comment(number, cycle.marker.to_json(), body)

    def result(self, cycle: Cycle, outcome: str, code: ExitCode, message: str, *, attempt: int = 0,
               tokens: int = 0, pr: ChangeRequest | None = None, collected: Collected | None = None,
               details: str = "") -> Result:
        if self.notes:
            notes = "".join(f"- {untrusted_md_line(n)}\n" for n in self.notes)
            details = "**Inputs not used:**\n" + notes + "\n" + details
        if self.judgment:
            lines = "".join(f"- {untrusted_md_line(n)}\n" for n in self.judgment)
            details = "**Before the model:**\n" + lines + "\n" + details
        return Result(outcome, code, message, cycle.fix_branch, attempt, pr or cycle.pr, tokens, details,
                      collected.report if collected else None, cost_usd=cycle.marker.cost_usd)

    def details(self, outcome: Outcome, plan: Plan) -> str:
        """The attempt engine's summary for the job summary, naming the source branch as people do."""
        ref = plan.source_ref
        name = self.trig.branch if ref.startswith(gitops.SOURCE_PREFIX) else ref.removeprefix("refs/heads/")
        return self.redact(summary_markdown(outcome, replace(plan, source_ref=name)))

    def warn(self, text: str) -> None:
        """A warning in the job log (a model with no known price, a day ledger not written)."""
        print(log_line(self.redact(f"ci-agent: warning: {text}")), file=sys.stderr, flush=True)

    def emit(self, event: str, **fields: Any) -> None:
        """The attempt engine's progress, as log lines."""
        detail = " ".join(f"{k}={v}" for k, v in fields.items() if not isinstance(v, dict | list))
        print(log_line(self.redact(f"ci-agent: {event} {detail}".rstrip())), file=sys.stderr, flush=True)


def repo_root(workspace: Path) -> Path:
    try:
        return git.toplevel(workspace)
    except git.GitError as exc:
        raise UsageError(f"the workspace {workspace} is not a git checkout; check out the "
                         "repository with its history first") from exc
