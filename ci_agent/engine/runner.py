"""One fix cycle in PR/MR mode, forge-neutral: `ci-agent fix --github` and `fix --gitlab` both
run it, each through its `Platform` (fixcycle.github, fixcycle.gitlab).

Order of things (DESIGN.md §4.3): mask secrets; read inputs and context; refuse forks and skip
`ci-agent/*` branches before any network call; read the durable state (the remote fix branch's
trailers + our status comment's marker); fold this CI run into it when it ran on the fix branch
(the pending attempt passes or fails; a rerun of a handled run changes nothing); check the budget
before any model call; run the attempt engine in a worktree; push fast-forward only; open or
reuse the draft fix change request; upsert the status comment(s); escalate once. The platform's
module writes the outcome where its CI reads it (step outputs, dotenv, job summary).
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ci_agent import git
from ci_agent.engine import gitops, state, texts
from ci_agent.engine.budget import Budget, assess
from ci_agent.engine.collect import Collected, collect, describe
from ci_agent.engine.forge import ChangeRequest, Forge, Permission
from ci_agent.engine.ledger import MarkerLedger
from ci_agent.engine.marker import ForgeState, events, fetch_fix_branch, observe_run, read_chain
from ci_agent.engine.platform import Platform, Words
from ci_agent.engine.sources import Sources
from ci_agent.engine.types import ActionInputs, Trigger
from ci_agent.errors import ExitCode, ForgeError, UsageError
from ci_agent.logguard import log_line
from ci_agent.render.untrusted import untrusted_md, untrusted_md_line

if TYPE_CHECKING:
    from ci_agent.config import Settings
    from ci_agent.engine.attempt import Outcome, Plan
    from ci_agent.llm.client import ModelClient

@dataclass
class Result:
    outcome: str  # fixed|committed|proposed|explained|escalated|gave_up|nothing_to_do|skipped|refused
    exit_code: ExitCode
    message: str
    branch: str = ""
    attempt: int = 0
    pr: ChangeRequest | None = None
    tokens: int = 0
    details: str = ""  # Markdown for the job summary (already sanitised)
    report: Any = None  # the distilled Report, for annotations
    request: Mapping[str, Any] | None = None  # a dry run: the model request it built (redacted)


_TITLES = {"fixed": "fixed", "committed": "patch pushed, CI decides", "escalated": "escalated",
           "gave_up": "no safe patch", "nothing_to_do": "nothing to fix", "skipped": "skipped",
           "refused": "refused", "proposed": "patch proposed for review", "explained": "explained"}
# Every `outcome` a run can end with; "error" is written when the run raised (the step failed).
OUTCOMES = (*_TITLES, "error")


def summary(result: Result, words: Words) -> str:
    """The job summary: the outcome, its sentence, the fix change request, the run's details."""
    title = _TITLES.get(result.outcome, result.outcome)
    lines = [f"## ci-agent: {title}", untrusted_md(result.message)]
    if result.pr is not None:
        lines.append(f"Fix {words.change_request}: [{words.ref(result.pr.number)}]({result.pr.url})")
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


def run_cycle(env: Mapping[str, str], inputs: ActionInputs, trig: Trigger, platform: Platform,
              client_factory: Callable[[], ModelClient] | None = None, *, instructions: str = "",
              explain: bool = False) -> Result:
    """One cycle for a trigger the platform judged acceptable (not refused, not skipped). A trigger
    of kind "command" is a writer's `/ci-agent fix` or `explain` on the failure of run `run_id`."""
    runner = _Runner(env, inputs, trig, platform, client_factory)
    runner.instructions, runner.explain = instructions, explain
    return runner.go()


class _Runner:
    def __init__(self, env: Mapping[str, str], inputs: ActionInputs, trig: Trigger, platform: Platform,
                 client_factory: Callable[[], ModelClient] | None) -> None:
        self.env, self.inputs, self.trig, self.platform = env, inputs, trig, platform
        self.words = platform.words
        self.instructions, self.explain = "", False
        self.command = trig.kind == "command"
        # modes push and propose fix the source branch itself; a fix branch keeps mode pr's ways
        self.in_place = inputs.mode in ("push", "propose") and not trig.on_fix_branch
        # runs on the branch that holds our attempts decide them
        self.observing = trig.on_fix_branch or self.in_place
        self.client_factory = client_factory
        self.notes: tuple[str, ...] = ()  # what could not be fetched (missing artifacts ...)
        self.config_note = ""  # the branch changes the configuration: it takes effect after merge
        from ci_agent.redact import Redactor

        self.redact = Redactor.from_environ({**env, "CI_AGENT_INPUT_KEY": inputs.anthropic_api_key,
                                             "CI_AGENT_INPUT_TOKEN": inputs.token}).redact

    # -- the flow --------------------------------------------------------------------------------

    def go(self) -> Result:
        token = self.platform.token()
        repo = repo_root(self.platform.workspace)
        forge = self.platform.forge(token)
        # Who pushed a same-repository branch had write access; the check matters for the source
        # branch's run. Runs on our fix branch were started by our own pushes (an App bot has no
        # collaborator permission), so they are not checked.
        if self.trig.kind in ("workflow_run", "pipeline") and self.trig.actor and not self.trig.on_fix_branch:
            level = forge.permission(self.trig.actor)
            if level < Permission.WRITE:
                return Result("refused", ExitCode.OK, f"{self.trig.actor} has {level.name.lower()} "
                              "permission on this repository; ci-agent only acts for people with "
                              "write access (Developer or more on GitLab)", self.trig.branch)
        settings = self._settings(repo, forge, token)
        cycle = self._cycle(repo, settings, forge, token)
        if isinstance(cycle, Result):
            return cycle
        with tempfile.TemporaryDirectory(prefix="ci-agent-cycle-") as tmp:
            return self._with_cycle(cycle, Path(tmp))

    def _cycle(self, repo: Path, settings: Settings, forge: Forge, token: str) -> Cycle | Result:
        trig = self.trig
        if self.in_place:
            return self._in_place_cycle(repo, settings, forge, token)
        fix_branch = trig.branch if trig.on_fix_branch else state.fix_branch_for(trig.branch)
        pr = forge.find_change_request(fix_branch)
        own: ChangeRequest | None = None
        if not trig.on_fix_branch and trig.pr_number is None and not self.command:
            # An inline step of a push run knows no pull request: the failing branch's own one
            # (if any) holds the marker until a fix one exists, and the escalation if none ever does.
            own = forge.find_change_request(trig.branch)
            if own is not None and not own.fork:
                self.trig = trig = replace(trig, pr_number=own.number)
        # Our marker lives on the fix PR; before there is one, on the source PR (if any); with
        # neither, only an escalation leaves one: on the failing commit (`escalation`).
        holder = pr.number if pr else trig.pr_number
        if holder:
            marker = ForgeState.from_json(forge.read_status_state(holder))
        else:
            from ci_agent.engine.escalation import commit_record

            marker = commit_record(self, forge, settings)
        source = trig.branch
        if trig.on_fix_branch:
            source = marker.source_branch or (pr.target_branch if pr else "")
            if not source:
                return Result("skipped", ExitCode.OK, f"{fix_branch} has no open fix "
                              f"{self.words.change_request}, so the branch it fixes is unknown; "
                              "nothing to do", fix_branch)
        paused = pr if pr is not None and texts.PAUSED_LABEL in pr.labels else None
        if paused is None and not trig.on_fix_branch and not self.command:
            # `/ci-agent stop` on the person's change request, before any fix one exists
            if own is None and trig.pr_number is not None:
                own = forge.find_change_request(trig.branch)
            paused = own if own is not None and texts.PAUSED_LABEL in own.labels else None
        if paused is not None and not self.command and not trig.on_fix_branch:
            return Result("skipped", ExitCode.OK, f"{self.words.ref(paused.number)} is labelled "
                          f"{texts.PAUSED_LABEL}; no automatic attempts", fix_branch, pr=pr)
        if fix_branch == forge.default_branch() or (forge.protected(fix_branch)
                                                    and not self.platform.protected_fix_branch_ok):
            raise UsageError(f"{fix_branch} is the default or a protected branch; ci-agent never "
                             "pushes there")
        auth = self.platform.push_auth(repo, token)
        remote_tip = fetch_fix_branch(repo, fix_branch)
        marker = replace(marker, fix_branch=fix_branch, source_branch=source)
        return Cycle(repo, settings, forge, token, source, fix_branch, pr, marker, remote_tip, auth,
                     paused=None if self.command else paused)

    def _in_place_cycle(self, repo: Path, settings: Settings, forge: Forge, token: str) -> Cycle | Result:
        """Modes push and propose: the failing branch is the one fixed, through its own open
        change request (which holds the status comment). Push never writes to the default or a
        protected branch; propose writes nothing but the comment."""
        branch, mode, cr = self.trig.branch, self.inputs.mode, self.words.change_request
        pr = forge.find_change_request(branch)
        if pr is None and mode == "push":
            return Result("skipped", ExitCode.OK, f"mode push commits onto the failing {cr}'s branch, "
                          f"and {branch} has no open {cr}; nothing was done (mode pr opens a fix {cr})",
                          branch)
        if mode == "push" and (branch == forge.default_branch() or forge.protected(branch)):
            return Result("skipped", ExitCode.OK, f"mode push never pushes to the default or a "
                          f"protected branch ({branch}); use mode pr there", branch, pr=pr)
        paused = pr if pr is not None and texts.PAUSED_LABEL in pr.labels and not self.command else None
        marker = ForgeState.from_json(forge.read_status_state(pr.number) if pr else None)
        marker = replace(marker, fix_branch=branch, source_branch=branch)
        return Cycle(repo, settings, forge, token, branch, branch, pr, marker, fetch_fix_branch(repo, branch),
                     self.platform.push_auth(repo, token), IN_PLACE_PREFIX + state.sanitise_branch(branch),
                     paused)

    def _with_cycle(self, cycle: Cycle, tmp: Path) -> Result:
        trig = self.trig
        chain = read_chain(cycle.repo, cycle.remote_tip)
        if trig.run_id and trig.run_id in cycle.marker.runs and not self.command:
            return self._result(cycle, "skipped", ExitCode.OK,
                                f"run {trig.run_id} was already handled ({cycle.marker.runs[trig.run_id]}); "
                                "a rerun changes nothing")
        if self.observing and not trig.failed:  # a green run (inline: `job_status: success`)
            if trig.conclusion != "success":  # cancelled, skipped ...: no verdict either way
                return self._result(cycle, "skipped", ExitCode.OK, f"the {self.words.run} concluded "
                                    f"{trig.conclusion or 'without a conclusion'}; it decides nothing")
            return self._observed(cycle, chain, green=True, collected=None)
        sources = self.platform.sources(cycle.forge, trig, self.inputs, tmp)
        self.notes = sources.notes
        collected = collect(cycle.repo, logs=sources.logs, result_globs=sources.result_globs, root=cycle.repo,
                            labels=sources.labels)
        if self.explain:
            if not collected.red:
                return self._result(cycle, "nothing_to_do", ExitCode.OK, "nothing fails in the "
                                    f"latest failed {self.words.run}'s logs and results; nothing to explain",
                                    collected=collected)
            return self._attempt(cycle, chain, collected, sources)
        if self.observing and collected.red:
            return self._observed(cycle, chain, green=False, collected=collected, sources=sources)
        if self.observing:
            # Inline, this step runs because a step failed: logs that show nothing failing are
            # misconfigured inputs, never proof of a green run (that comes from workflow_run).
            return self._result(cycle, "nothing_to_do", ExitCode.OK, "the logs and results given show "
                                f"no failure on {cycle.fix_branch}; check the build_logs and "
                                "test_results inputs" + _notes(sources), collected=collected)
        if not collected.red:
            return self._result(cycle, "nothing_to_do", ExitCode.OK, "nothing fails in the logs and "
                                "results given; nothing to fix" + _notes(sources), collected=collected)
        tip = chain[-1] if chain else None
        if tip is not None and tip.attempt is not None and tip.key not in cycle.marker.results:
            if cycle.pr is None and not self.command:
                from ci_agent.engine.publish import orphaned

                return orphaned(self, cycle, chain, tip, collected)
            waiting = (f"attempt {tip.attempt.number} on {cycle.fix_branch} is waiting for its CI "
                       f"{self.words.run}; no new attempt")
            if cycle.pr is not None and texts.LABEL not in cycle.pr.labels and not self.inputs.dry_run:
                cycle.forge.add_labels(cycle.pr.number, [texts.LABEL])  # the job stopped before it
            if cycle.pr is not None and cycle.forge.read_status_state(cycle.pr.number) is None:
                # the job that pushed it stopped before writing the status comment: write it now
                budget = assess(events(chain, cycle.marker), self.inputs.max_attempts)
                self._status(cycle, cycle.pr, f"attempt {tip.attempt.number} pushed, waiting for CI",
                             budget, [waiting])
            return self._result(cycle, "skipped", ExitCode.OK, waiting, collected=collected)
        return self._attempt(cycle, chain, collected, sources)

    def _observed(self, cycle: Cycle, chain: list[Any], green: bool, collected: Collected | None,
                  sources: Sources | None = None) -> Result:
        # Paused, a red run is recorded without its run id: the attempt's verdict counts now, and
        # after `/ci-agent resume` the same run (re-run) may still start the next attempt.
        holding = cycle.paused is not None and not green
        seen = observe_run(cycle.marker, chain, "" if holding else self.trig.run_id, self.trig.sha, green,
                           collected.fingerprint if collected else "")
        waiting = self.command and seen.verdict == "seen" and _pending(chain, seen.state)
        if seen.verdict == "stale" or waiting:
            return self._result(cycle, "skipped", ExitCode.OK, f"this run tested an older commit of "
                                f"{cycle.fix_branch}; a newer one is waiting for its own run",
                                collected=collected)
        cycle.marker = seen.state
        from ci_agent.engine import verdicts

        if green:
            return verdicts.success(self, cycle, chain)
        assert collected is not None
        if cycle.paused is not None:
            return verdicts.held(self, cycle, chain, seen.attempt, collected)
        return self._attempt(cycle, chain, collected, sources or Sources((), ()))

    # -- outcomes --------------------------------------------------------------------------------

    def _attempt(self, cycle: Cycle, chain: list[Any], collected: Collected, sources: Sources) -> Result:
        budget = assess(events(chain, cycle.marker), self.inputs.max_attempts)
        if budget.exhausted and not self.explain:  # before any model call; explaining changes no code
            from ci_agent.engine.escalation import escalate

            return escalate(self, cycle, budget, collected)
        from ci_agent.engine.attempt import run_fix
        from ci_agent.engine.ci_plan import (
            make_plan,
            make_seams,
            unverifiable_record,
            unverifiable_text,
            verify_preflight,
        )

        source_ref = (gitops.fetch_source(cycle.repo, cycle.source, cycle.auth)
                      if not self.observing else "refs/heads/" + cycle.engine_branch)
        gitops.reset_local_fix_branch(cycle.repo, cycle.engine_branch, cycle.remote_tip)
        ledger = MarkerLedger(cycle.repo, cycle.engine_branch, cycle.marker, chain, self.trig.run_id,
                              read_marker=not self.inputs.dry_run)
        plan = make_plan(cycle.repo, source_ref, cycle.engine_branch, cycle.settings, self.inputs, sources,
                         self.instructions, self.explain)
        if plan.verify and not self.explain:  # before any model call: a verify that cannot start
            verify_preflight(plan, self.words)  # would waste every attempt's money
            standing = cycle.marker.standing_unverifiable(collected.fingerprint, describe(plan.verify))
            if standing is not None:  # it could not run for this failure before: no new payment
                return self._result(cycle, "error", ExitCode(standing.code),
                                    unverifiable_text(standing, self.words, again=True), collected=collected)
        seams = make_seams(cycle.settings, self.env, self.inputs, self.client_factory,
                           self.platform.missing_key(cycle.fix_branch))
        outcome = run_fix(plan, cycle.settings, seams, self._emit, ledger)
        tokens = outcome.usage.total
        cycle.marker = replace(ledger.marker, tokens=cycle.marker.tokens + tokens)
        details = self._details(outcome, plan)
        if outcome.status == "dry_run":
            from ci_agent.engine.dry_run import size_sentence

            assert outcome.request is not None
            result = self._result(cycle, "skipped", ExitCode.OK, "dry run: nothing was sent, pushed or "
                                  f"posted; {size_sentence(outcome.request)}, printed in the log",
                                  collected=collected, details=details)
            result.request = outcome.request
            return result
        if outcome.status == "escalated":
            assert outcome.budget is not None
            from ci_agent.engine.escalation import escalate

            return escalate(self, cycle, outcome.budget, collected, tokens=tokens, details=details)
        if outcome.status == "explained":
            from ci_agent.engine.publish import explained

            return explained(self, cycle, outcome, details, collected)
        if outcome.status == "unverifiable":  # recorded, so reruns for this failure pay nothing
            record = unverifiable_record(outcome, plan, self.trig.run_id)
            cycle.marker = cycle.marker.with_unverifiable(record)
            message = unverifiable_text(record, self.words, again=False)
            self._status(cycle, cycle.pr, "the verify command could not run", outcome.budget, [message])
            return self._result(cycle, "error", outcome.exit_code, message, tokens=tokens,
                                collected=collected, details=details)
        if outcome.status in ("fixed", "committed") and self.in_place and self.inputs.mode == "propose":
            from ci_agent.engine.publish import propose

            return propose(self, cycle, outcome, details, collected)
        if outcome.status in ("fixed", "committed"):
            return self._publish(cycle, outcome, plan, details, collected)
        status = outcome.status if outcome.status in ("gave_up", "nothing_to_do") else "gave_up"
        self._status(cycle, cycle.pr, "no safe patch" if status == "gave_up" else "nothing to fix",
                     outcome.budget, [self.redact(outcome.message)])
        return self._result(cycle, status, outcome.exit_code, outcome.message, tokens=tokens,
                            collected=collected, details=details)

    def _publish(self, cycle: Cycle, outcome: Outcome, plan: Plan, details: str,
                 collected: Collected) -> Result:
        log = outcome.attempts[-1]
        rejected = gitops.push_fast_forward(cycle.repo, log.commit, cycle.fix_branch, cycle.auth)
        tokens = outcome.usage.total
        if rejected is not None:
            now = fetch_fix_branch(cycle.repo, cycle.fix_branch)
            if now != cycle.remote_tip:  # someone else pushed: their commit wins, never force
                return self._result(cycle, "skipped", ExitCode.OK, f"{cycle.fix_branch} moved on origin "
                                    "while this attempt ran (another run or a person); nothing was "
                                    "pushed and the next CI run decides", tokens=tokens, details=details)
            raise ForgeError(f"pushing {cycle.fix_branch} to origin failed: {self.redact(rejected)}")
        summary = log.proposal.summary if log.proposal else ""
        callout = texts.build_change_callout(log.build_change, self.words) if log.build_change else ""
        body = self.redact(callout + texts.pr_body(cycle.source, details, self.words))
        title = self.redact(texts.pr_title(cycle.source, summary))
        labels = [texts.LABEL, *([texts.BUILD_CHANGE_LABEL] if log.build_change else [])]
        forge = cycle.forge
        if self.in_place:
            pass  # mode push: the person's own change request is never retitled or relabelled
        elif cycle.pr is None:
            try:
                cycle.pr = forge.open_change_request(cycle.fix_branch, cycle.source, title, body,
                                                     draft=self.inputs.draft)
            except ForgeError as error:
                # No fix branch may stay on origin without its change request: take our push
                # back (only if the branch is still exactly our commit), then report the error.
                undone = gitops.undo_push(cycle.repo, cycle.fix_branch, log.commit, cycle.remote_tip,
                                          cycle.auth)
                where = ("the pushed attempt was taken back" if undone else f"the pushed attempt stays "
                         f"on {cycle.fix_branch}; a rerun opens its {self.words.change_request}")
                raise ForgeError(f"{error} ({where})") from error
            forge.add_labels(cycle.pr.number, labels)
        else:
            cycle.pr = forge.update_change_request(cycle.pr.number, title=title, body=body)
            forge.add_labels(cycle.pr.number, labels)
            if not log.build_change and texts.BUILD_CHANGE_LABEL in cycle.pr.labels:
                forge.remove_label(cycle.pr.number, texts.BUILD_CHANGE_LABEL)  # this attempt has none
        cycle.marker = cycle.marker.with_run(self.trig.run_id, f"attempt {log.number}") \
            if self.trig.run_id else cycle.marker
        note = self.platform.start_ci(cycle.forge, cycle.token, cycle.fix_branch, log.commit)
        verified = "verified locally; " if outcome.status == "fixed" else ""
        message = f"attempt {log.number} pushed to {cycle.fix_branch} ({verified}CI decides)"
        budget = assess(events(read_chain(cycle.repo, fetch_fix_branch(cycle.repo, cycle.fix_branch)),
                               cycle.marker), self.inputs.max_attempts)
        lines = [message, self.redact(texts.pr_title(cycle.source, summary)), note]
        if outcome.no_progress:
            lines.append("**No progress:** the failure is one a previous patch already tried to fix.")
        self._status(cycle, cycle.pr, f"attempt {log.number} pushed, waiting for CI", budget, lines)
        return self._result(cycle, outcome.status, ExitCode.OK, message, attempt=log.number, tokens=tokens,
                            collected=collected, details=details)

    # -- helpers ---------------------------------------------------------------------------------

    def _status(self, cycle: Cycle, pr: ChangeRequest | None, headline: str, budget: Budget | None,
                lines: list[str], also: tuple[int, ...] = ()) -> None:
        if self.inputs.dry_run:
            return
        if self.config_note:
            lines = [*lines, self.config_note]
        body = self.redact(texts.status_text(headline, cycle.fix_branch, cycle.source, budget, lines,
                                             cycle.marker.tokens))
        numbers = [n for n in (pr.number if pr else None, self.trig.pr_number, *also) if n is not None]
        for number in dict.fromkeys(numbers):
            # another job may have written since we read: keep what it recorded
            current = ForgeState.from_json(cycle.forge.read_status_state(number))
            cycle.marker = cycle.marker.merged_with(current)
            cycle.forge.upsert_status_comment(number, cycle.marker.to_json(), body)

    def _details(self, outcome: Outcome, plan: Plan) -> str:
        from ci_agent.engine.summary import summary_markdown

        return self.redact(summary_markdown(outcome, replace(plan, source_ref=self._source_name(plan))))

    def _source_name(self, plan: Plan) -> str:
        ref = plan.source_ref
        return self.trig.branch if ref.startswith(gitops.SOURCE_PREFIX) else ref.removeprefix("refs/heads/")

    def _result(self, cycle: Cycle, outcome: str, code: ExitCode, message: str, *, attempt: int = 0,
                tokens: int = 0, pr: ChangeRequest | None = None, collected: Collected | None = None,
                details: str = "") -> Result:
        if self.notes:
            notes = "".join(f"- {untrusted_md_line(n)}\n" for n in self.notes)
            details = "**Inputs not used:**\n" + notes + "\n" + details
        return Result(outcome, code, message, cycle.fix_branch, attempt, pr or cycle.pr, tokens, details,
                      collected.report if collected else None)

    def _emit(self, event: str, **fields: Any) -> None:
        detail = " ".join(f"{k}={v}" for k, v in fields.items() if not isinstance(v, dict | list))
        print(log_line(self.redact(f"ci-agent: {event} {detail}".rstrip())), file=sys.stderr, flush=True)

    def _settings(self, repo: Path, forge: Forge, token: str) -> Settings:
        """The default branch's configuration, never the failing branch's (fixcycle/trusted.py)."""
        from ci_agent.engine.trusted import cycle_config

        settings, note = cycle_config(repo, self.env, self.inputs, self.trig, forge.default_branch(),
                                      self.platform.push_auth(repo, token), self.words)
        self.config_note = self.redact(note)
        return settings


def _pending(chain: list[Any], marker: ForgeState) -> bool:
    """The tip is an attempt CI has not decided yet."""
    tip = chain[-1] if chain else None
    return tip is not None and tip.attempt is not None and tip.key not in marker.results


def _notes(sources: Sources) -> str:
    return "".join(f"; {n}" for n in sources.notes)


def repo_root(workspace: Path) -> Path:
    try:
        return git.toplevel(workspace)
    except git.GitError as exc:
        raise UsageError(f"the workspace {workspace} is not a git checkout; check out the "
                         "repository with its history first") from exc
