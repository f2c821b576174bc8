"""`ci-agent fix --github`: the GitHub Actions platform of the fix cycle, and the end of the run
(step outputs, job summary, annotations, one log line, exit code).

`github_fix(env)` is what the command calls: everything comes from `env` and the files it names,
so tests drive it with an environment and a bare origin."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ci_agent.engine import gitops, texts
from ci_agent.engine.forge import Forge
from ci_agent.engine.runner import Result, run_cycle, summary
from ci_agent.engine.sources import Sources, fetched_sources, inline_sources
from ci_agent.engine.types import ActionInputs, Trigger
from ci_agent.errors import CiAgentError, ExitCode, UsageError
from ci_agent.logguard import emit_commands
from ci_agent.platforms.github.env import (
    SECRET_INPUTS,
    GitHubContext,
    action_inputs,
    comment_event,
    github_context,
    input_env_name,
    is_actions_token,
    trigger,
)
from ci_agent.platforms.github.output import (
    annotation_lines,
    mask_secrets,
    outputs,
    print_outcome,
    print_request,
    write_outputs,
    write_summary,
)
from ci_agent.platforms.github.words import GITHUB_WORDS
from ci_agent.redact import Redactor
from ci_agent.render.untrusted import untrusted_md
from ci_agent.slash.dispatch import handle_command
from ci_agent.slash.request import CommandRequest

if TYPE_CHECKING:
    from ci_agent.llm.client import ModelClient

THROTTLE_ENV = "CI_AGENT_GITHUB_THROTTLE"  # "0": no spacing between API requests (tests)


@dataclass
class GitHubPlatform:
    env: Mapping[str, str]
    ctx: GitHubContext
    inputs: ActionInputs
    words = GITHUB_WORDS

    @property
    def workspace(self) -> Path:
        return self.ctx.workspace

    protected_fix_branch_ok = False  # nothing on GitHub asks for it: a protected one is someone's

    def missing_key(self, fix_branch: str) -> str:
        return "input anthropic_api_key is empty; pass ${{ secrets.ANTHROPIC_API_KEY }} to ask Claude"

    def token(self) -> str:
        token = self.inputs.token or self.env.get("GITHUB_TOKEN", "")
        if not token:
            raise UsageError("input github_token is empty; pass ${{ github.token }} or an App token/PAT")
        return token

    def forge(self, token: str) -> Forge:
        from ci_agent.platforms.github.forge import GitHubForge

        throttle = self.env.get(THROTTLE_ENV, "1") != "0"
        return GitHubForge(self.ctx.repository, token, base_url=self.ctx.api_url, throttle=throttle)

    def push_auth(self, repo: Path, token: str) -> list[str]:
        return gitops.auth_config(repo, token, self.ctx.server_url)

    def sources(self, forge: Forge, trig: Trigger, inputs: ActionInputs, dest: Path) -> Sources:
        if trig.kind in ("workflow_run", "command"):  # a command acts on a failed run's logs
            return fetched_sources(forge, trig, inputs, dest)
        return inline_sources(inputs, self.ctx.workspace)

    def start_ci(self, forge: Forge, token: str, fix_branch: str, commit: str) -> str:
        """Pushes made with the workflow's GITHUB_TOKEN start no run: dispatch `ci_workflow`."""
        actions = is_actions_token(token, self.env)
        workflow = self.inputs.ci_workflow
        dispatched: bool | None = None
        if actions and workflow:
            dispatched = forge.start_ci(fix_branch, commit, workflow).kind == "started"
        return texts.ci_note(actions, workflow, dispatched, fix_branch)


def mask_from_env(env: Mapping[str, str], out: TextIO) -> None:
    """First thing printed: masks for every secret input and the usual secret variables."""
    values = [env.get(input_env_name(n), "").strip() for n in SECRET_INPUTS]
    values += [env.get(name, "").strip() for name in ("ANTHROPIC_API_KEY", "GITHUB_TOKEN")]
    mask_secrets([v for v in values if v], out)


def run_github(env: Mapping[str, str], client_factory: Callable[[], ModelClient] | None = None,
               out: TextIO | None = None) -> tuple[Result, GitHubContext]:
    stream = out or sys.stdout
    mask_from_env(env, stream)
    inputs = action_inputs(env)
    ctx = github_context(env)
    trig = trigger(ctx, inputs.job_status)
    if trig.refused:
        return Result("refused", ExitCode.OK, trig.refused, trig.branch), ctx
    if trig.skipped:
        return Result("skipped", ExitCode.OK, trig.skipped, trig.branch), ctx
    return run_cycle(env, inputs, trig, GitHubPlatform(env, ctx, inputs), client_factory), ctx


def run_github_command(env: Mapping[str, str], client_factory: Callable[[], ModelClient] | None = None,
                       out: TextIO | None = None) -> tuple[Result, GitHubContext]:
    """`ci-agent command --github`: the comment event of an `issue_comment` or
    `pull_request_review_comment` workflow, handed to the slash-command handler."""
    stream = out or sys.stdout
    mask_from_env(env, stream)
    inputs = action_inputs(env)
    ctx = github_context(env)
    event = comment_event(ctx)
    if not event.on_pull_request:
        return Result("skipped", ExitCode.OK, "the comment is on an issue, not a pull request"), ctx
    request = CommandRequest(event.number, event.comment_id, event.action, event.association, event.review)
    return handle_command(env, inputs, GitHubPlatform(env, ctx, inputs), request, client_factory), ctx


def github_fix(env: Mapping[str, str], client_factory: Callable[[], ModelClient] | None = None,
               out: TextIO | None = None) -> int:
    return finish_github(env, run_github, client_factory, out)


def github_command(env: Mapping[str, str], client_factory: Callable[[], ModelClient] | None = None,
                   out: TextIO | None = None) -> int:
    return finish_github(env, run_github_command, client_factory, out)


Runner = Callable[[Mapping[str, str], "Callable[[], ModelClient] | None", "TextIO | None"],
                  tuple[Result, GitHubContext]]


def finish_github(env: Mapping[str, str], run: Runner,
                  client_factory: Callable[[], ModelClient] | None = None, out: TextIO | None = None) -> int:
    """Run, then write what the step leaves: outputs, job summary, annotations, one log line."""
    stream = out or sys.stdout
    redact = Redactor.from_environ(dict(env)).redact
    try:
        result, ctx = run(env, client_factory, stream)
    except CiAgentError as exc:
        # Later steps (`if: steps.fix.outputs.outcome == 'error'`) can still tell what happened.
        write_outputs(env.get("GITHUB_OUTPUT", ""), {"outcome": "error", "attempt": "", "branch": "",
                                                     "pr_number": "", "pr_url": "", "tokens": "",
                                                     "verdict": "",
                                                     "cost_usd": ""})
        summary_path = env.get("GITHUB_STEP_SUMMARY", "")
        write_summary(summary_path, f"## ci-agent: error\n\n{untrusted_md(redact(str(exc)))}\n")
        raise
    write_outputs(ctx.output_path, outputs(result))
    write_summary(ctx.summary_path, redact(summary(result, GITHUB_WORDS)))
    if result.request is not None:
        print_request(result.request, redact, stream)
    if result.report is not None and result.outcome not in ("refused", "skipped"):
        emit_commands(stream, redact(annotation_lines(result.report)))
    print_outcome(result, redact, stream)
    return int(result.exit_code)
