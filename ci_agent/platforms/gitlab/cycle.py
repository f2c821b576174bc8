"""`ci-agent fix --gitlab`: the GitLab CI platform of the fix cycle, and the end of the job
(dotenv outputs, a Markdown summary artifact, one log line, exit code).

The job is the `.post`-stage `ci-agent-fix` job of `pipelines/gitlab/ci-agent.yml` (a failed
pipeline) or its `ci-agent-success` job (a green pipeline on a `ci-agent/fix/*` branch). The
failure is read from the failed jobs' traces and from the build logs and result files in those
jobs' artifacts, all fetched through the API; never from the checkout, which holds only what the
commit holds (the job has `dependencies: []`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ci_agent.engine import gitops
from ci_agent.engine.forge import Forge
from ci_agent.engine.runner import Result, run_cycle, summary
from ci_agent.engine.sources import Sources, fetched_sources
from ci_agent.engine.types import FIX_BRANCH_PREFIX, ActionInputs, Trigger
from ci_agent.errors import CiAgentError, ExitCode, ForgeError, UsageError
from ci_agent.platforms.gitlab.env import (
    TOKEN_VARIABLE,
    GitLabContext,
    gitlab_context,
    gitlab_inputs,
    gitlab_trigger,
)
from ci_agent.platforms.gitlab.output import (
    bounded,
    leave_job_files,
    outputs,
    print_also,
    print_outcome,
    print_request,
)
from ci_agent.platforms.gitlab.words import GITLAB_WORDS
from ci_agent.redact import Redactor
from ci_agent.render.untrusted import untrusted_md
from ci_agent.slash.dispatch import handle_command
from ci_agent.slash.request import CommandRequest

if TYPE_CHECKING:
    from ci_agent.llm.client import ModelClient

# "job_token": push with CI_JOB_TOKEN (the project allows it) while the API uses the access token.
PUSH_VARIABLE = "CI_AGENT_GITLAB_PUSH"
# Set by `ci-agent serve` / `ci-agent poll` on the pipeline they create for one command note.
MR_IID_VARIABLE = "CI_AGENT_COMMAND_MR_IID"
NOTE_ID_VARIABLE = "CI_AGENT_COMMAND_NOTE_ID"
JOB_TOKEN_USER = "gitlab-ci-token"


@dataclass
class GitLabPlatform:
    env: Mapping[str, str]
    ctx: GitLabContext
    inputs: ActionInputs
    words = GITLAB_WORDS

    @property
    def workspace(self) -> Path:
        return self.ctx.project_dir

    # Protecting `ci-agent/fix/*` is the documented way for protected variables to reach the fix
    # branch's pipelines; the protection's own push rules still decide whether our token may push.
    protected_fix_branch_ok = True

    def missing_key(self, fix_branch: str) -> str:
        text = ("ANTHROPIC_API_KEY is not set in this job; add it as a masked CI/CD variable "
                "(Settings > CI/CD > Variables)")
        if not self.ctx.ref_protected:
            text += (f". This pipeline runs on {self.ctx.branch or fix_branch or 'a branch'}, which is "
                     "not protected, and GitLab gives protected variables only to protected branches "
                     f"and tags: clear the variable's Protect flag, or protect the wildcard "
                     f"{FIX_BRANCH_PREFIX}* (ci-agent doctor --gitlab explains)")
        return text

    def token(self) -> str:
        if self.inputs.token:
            return self.inputs.token
        if not self.ctx.job_token:
            raise UsageError(f"neither {TOKEN_VARIABLE} nor CI_JOB_TOKEN is set; add a project access "
                             f"token (api scope, Developer role) as the masked CI/CD variable "
                             f"{TOKEN_VARIABLE}")
        if not self.inputs.dry_run:
            # Known before any model call: spending tokens and pushing a branch that no merge
            # request will ever show would only leave debris.
            raise UsageError(f"{TOKEN_VARIABLE} is not set, and CI_JOB_TOKEN cannot create merge "
                             "requests or notes; add a project access token with the api scope and "
                             f"the Developer role as the masked CI/CD variable {TOKEN_VARIABLE}")
        return self.ctx.job_token

    def _is_job_token(self, token: str) -> bool:
        return not self.inputs.token and token == self.ctx.job_token

    def forge(self, token: str) -> Forge:
        from ci_agent.platforms.gitlab.forge import GitLabForge

        kind = "job" if self._is_job_token(token) else "private"
        return GitLabForge(self.ctx.project_path, token, url=self.ctx.server_url, token_kind=kind)

    def pushes_with_job_token(self, token: str) -> bool:
        return self._is_job_token(token) or (self.env.get(PUSH_VARIABLE, "").strip() == "job_token"
                                             and bool(self.ctx.job_token))

    def push_auth(self, repo: Path, token: str) -> list[str]:
        if self.pushes_with_job_token(token):
            return gitops.auth_config(repo, self.ctx.job_token, self.ctx.server_url, user=JOB_TOKEN_USER)
        return gitops.auth_config(repo, token, self.ctx.server_url, user="oauth2")

    def sources(self, forge: Forge, trig: Trigger, inputs: ActionInputs, dest: Path) -> Sources:
        """The failed jobs' traces, and `build_logs` / `test_results` in their artifacts. Never
        the checkout: this job (`dependencies: []`) wrote no result, so a file there is the
        commit's own (sources.py says the rule)."""
        return fetched_sources(forge, trig, inputs, dest, own_prefix=own_job_prefix(self.ctx.job_name))

    def start_ci(self, forge: Forge, token: str, fix_branch: str, commit: str) -> str:
        """A push made with CI_JOB_TOKEN starts no pipeline: create one through the API."""
        if not self.pushes_with_job_token(token):
            return "CI starts by itself on the pushed commit."
        try:
            started = forge.start_ci(fix_branch, commit)
        except ForgeError as error:
            return (f"**CI must be started by hand on `{fix_branch}`**: pushes made with CI_JOB_TOKEN "
                    f"start no pipeline, and creating one failed: {error}")
        if started.kind == "already_running":
            return f"Pipeline {started.run_id} runs on the pushed commit of `{fix_branch}`."
        if started.kind == "not_startable":
            return f"**CI must be started by hand on `{fix_branch}`**: the push used CI_JOB_TOKEN."
        return (f"Pipeline {started.run_id} was created on `{fix_branch}` (pushes made with CI_JOB_TOKEN "
                "start none).")


def own_job_prefix(job_name: str) -> str:
    """`ci-agent` for the job `ci-agent-fix` (the include's `job_prefix` input): the jobs of the
    include share it, so their failures are never taken for the project's."""
    for suffix in ("-fix", "-success", "-command", "-poll"):
        if job_name.endswith(suffix):
            return job_name[: -len(suffix)]
    return ""


def run_gitlab(env: Mapping[str, str], client_factory: Callable[[], ModelClient] | None = None
               ) -> Result:
    ctx = gitlab_context(env)
    inputs = gitlab_inputs(env)
    trig = gitlab_trigger(ctx)
    if trig.refused:
        return Result("refused", ExitCode.OK, trig.refused, trig.branch)
    if trig.skipped:
        return Result("skipped", ExitCode.OK, trig.skipped, trig.branch)
    return run_cycle(env, inputs, trig, GitLabPlatform(env, ctx, inputs), client_factory)


def run_gitlab_command(env: Mapping[str, str], client_factory: Callable[[], ModelClient] | None = None
                       ) -> Result:
    """`ci-agent command --gitlab`: the job of a pipeline the relay or the poller created for one
    note (`CI_AGENT_COMMAND_MR_IID`, `CI_AGENT_COMMAND_NOTE_ID`); the note itself is read back."""
    ctx = gitlab_context(env)
    inputs = gitlab_inputs(env)
    ids = [env.get(name, "").strip() for name in (MR_IID_VARIABLE, NOTE_ID_VARIABLE)]
    if not all(i.isdigit() for i in ids):
        raise UsageError(f"{MR_IID_VARIABLE} and {NOTE_ID_VARIABLE} must be numbers (the pipeline is "
                         "created by ci-agent serve or ci-agent poll)")
    request = CommandRequest(int(ids[0]), int(ids[1]))
    return handle_command(env, inputs, GitLabPlatform(env, ctx, inputs), request, client_factory)


def gitlab_fix(env: Mapping[str, str], client_factory: Callable[[], ModelClient] | None = None,
               out: TextIO | None = None) -> int:
    return finish_gitlab(env, run_gitlab, client_factory, out)


def gitlab_command(env: Mapping[str, str], client_factory: Callable[[], ModelClient] | None = None,
                   out: TextIO | None = None) -> int:
    return finish_gitlab(env, run_gitlab_command, client_factory, out)


def finish_gitlab(env: Mapping[str, str],
                  run: Callable[[Mapping[str, str], Callable[[], ModelClient] | None], Result],
                  client_factory: Callable[[], ModelClient] | None = None, out: TextIO | None = None) -> int:
    """Run, then write what the job leaves: the dotenv report, the summary artifact, one line."""
    stream = out or sys.stdout
    redact = Redactor.from_environ({**env, "CI_AGENT_INPUT_TOKEN": env.get(TOKEN_VARIABLE, "")}).redact
    workdir = Path(env.get("CI_PROJECT_DIR", "") or os.getcwd())
    try:
        result = run(env, client_factory)
    except CiAgentError as exc:
        problems = leave_job_files(workdir, {"CI_AGENT_OUTCOME": "error"},
                                   f"## ci-agent: error\n\n{untrusted_md(redact(str(exc)))}\n")
        print_also(problems)  # main prints the error itself, which stays the job's error
        raise
    problems = leave_job_files(workdir, outputs(result), bounded(redact(summary(result, GITLAB_WORDS))))
    if result.request is not None:
        print_request(result.request, redact, stream)
    print_outcome(result, redact, stream)
    print_also(problems)
    return int(result.exit_code)
