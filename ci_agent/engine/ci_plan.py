"""The attempt engine of `fix --local` (`ci_agent.engine.attempt`) set up for GitHub PR mode: the plan
from the action inputs, the production seams with the key from the inputs, and the record of a
verify command that could not run."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Mapping
from pathlib import Path

from ci_agent.config import Settings
from ci_agent.engine.attempt import Outcome, Plan, Seams
from ci_agent.engine.marker_entries import Unverifiable
from ci_agent.engine.platform import Words
from ci_agent.engine.seams import API_KEY_ENV, model_settings, real_seams
from ci_agent.engine.sources import Sources
from ci_agent.engine.types import ActionInputs
from ci_agent.errors import UsageError
from ci_agent.llm.client import ModelClient


def make_plan(repo: Path, source_ref: str, fix_branch: str, settings: Settings, inputs: ActionInputs,
              sources: Sources, instructions: str = "", explain: bool = False) -> Plan:
    from ci_agent.llm.anthropic_client import DEFAULT_MODEL

    # In CI the fix branch's own pipeline verifies; only the job's `verify` input turns an in-job
    # verify on. `commands.verify` of the configuration is for `fix --local`: the action's image
    # has none of the project's toolchain, so honouring it here failed every attempt (issue 13).
    try:
        verify = tuple(shlex.split(inputs.verify)) if inputs.verify else ()
    except ValueError as exc:
        raise UsageError(f"input verify cannot be split into a command: {exc}") from exc
    return Plan(repo=repo, source_ref=source_ref, fix_branch=fix_branch,
                model=model_settings(settings, DEFAULT_MODEL), command=(), verify=verify,
                logs=sources.logs, result_globs=sources.result_globs,
                timeout_s=settings.commands.timeout_s, dry_run=inputs.dry_run,
                instructions=instructions, explain=explain, labels=sources.labels, warn_inputs=False)


def verify_preflight(plan: Plan, words: Words) -> None:
    """A `UsageError` naming the input when the verify program cannot be started in this job: the
    check comes before any model request, so a job without the toolchain costs nothing."""
    from ci_agent.verify_check import missing_program, tree_mode_at

    problem = missing_program(plan.verify, os.environ.get("PATH"), tree_mode_at(plan.repo, plan.source_ref))
    if problem:
        raise UsageError(f"{words.verify_input} cannot run: {problem}; no model request was made and "
                         f"nothing was pushed. Leave it empty so CI on the fix branch verifies the "
                         "patch, or run ci-agent in an image that has this program.")


def make_seams(settings: Settings, env: Mapping[str, str], inputs: ActionInputs,
               client_factory: Callable[[], ModelClient] | None,
               missing_key: str = "input anthropic_api_key is empty; it is needed to ask Claude") -> Seams:
    from ci_agent.redact import Redactor

    key = inputs.anthropic_api_key or env.get(API_KEY_ENV, "")
    if not key and client_factory is None and not inputs.dry_run:
        raise UsageError(missing_key)
    environ = {**env, API_KEY_ENV: key}
    return real_seams(settings, environ, Redactor.from_environ(environ), client_factory)


def unverifiable_record(outcome: Outcome, plan: Plan, run_id: str) -> Unverifiable:
    """The durable record of an attempt whose verify command could not run (the last attempt)."""
    log = outcome.attempts[-1]
    run = f"{run_id or 'run'}-{log.number}"
    return Unverifiable(outcome.fingerprint, shlex.join(plan.verify), log.unverifiable,
                        int(outcome.exit_code), run)


def unverifiable_text(record: Unverifiable, words: Words, again: bool) -> str:
    """The status comment's and the job's sentence about a verify command that could not run."""
    from ci_agent.redact import sanitize_untrusted

    reason = sanitize_untrusted(record.reason)
    lift = (f"A green {words.run}, `/ci-agent retry`, or another command in {words.verify_input} "
            "lets ci-agent try again.")
    if again:
        return (f"The verify command could not run on this failure before ({reason}); no model request "
                f"was made this time. {lift}")
    return (f"The verify command could not run ({reason}), so the patch was not verified and nothing "
            f"was pushed; reruns for this failure make no model request. {lift}")
