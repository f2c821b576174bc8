"""`ci-agent fix --local`: one fix cycle on a local repository, in a git worktree, no forge.

Progress: human lines on stderr, or JSON lines on stdout with `--json`. The Markdown summary
goes to stdout (or `--summary FILE`). Exit codes are DESIGN.md §4.2: 0 fixed/committed/nothing
to do/dry run/flaky, 1 an infrastructure failure (no model call),
2 usage, 3 budget exhausted, 4 the model declined or no safe patch, 5 the model
service failed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ci_agent.cli import repo_root_arg
from ci_agent.cli.distill import write_stdout
from ci_agent.config import Settings
from ci_agent.config.load import load_settings
from ci_agent.errors import CiAgentError, ExitCode, UsageError
from ci_agent.platforms.local.source import LocalSource, local_source

if TYPE_CHECKING:  # the engine is imported when the verb runs, not when the CLI starts
    from ci_agent.engine.attempt import Outcome, Plan
    from ci_agent.engine.ledger import Ledger
    from ci_agent.llm.client import ModelClient
    from ci_agent.llm.pricing import Pricing
    from ci_agent.llm.types import ModelSettings


HELP = "ask Claude for a fix of the failing build and leave it on a local branch"
DESCRIPTION = ("Collect the failure (given logs, or run --command), distill it, ask Claude for "
    "a minimal patch, police and apply it, verify it (--verify), and commit it on "
    "ci-agent/fix/<branch>, all in a git worktree: your working copy is never touched. "
    "Before the model: an infrastructure failure (feed, network, disk, memory) ends the run, and the "
    "failed tests are re-run alone once: passing then, they are flaky and nothing is patched. "
    "Exit 0 done (or flaky), 1 infrastructure failure, 2 usage, 3 attempt budget exhausted, "
    "4 no safe patch, 5 model service failure.")


def add_arguments(fix: argparse.ArgumentParser) -> None:
    fix.add_argument("--ci", metavar="PLATFORM",
                     help="where this runs: github (inside GitHub Actions), gitlab (inside GitLab CI), "
                     "local (this repository, no forge) or auto (GitHub Actions or GitLab CI when "
                     "their variables say so, else local); --github, --gitlab, --local are the same")
    fix.add_argument("--local", action="store_true", help="work on the local repository (no forge)")
    fix.add_argument("--github", action="store_true",
                     help="run as the GitHub Action: inputs from INPUT_*, context from GITHUB_* "
                     "(fix branch, draft PR, status comment)")
    fix.add_argument("--gitlab", action="store_true",
                     help="run as the GitLab CI job of pipelines/gitlab/ci-agent.yml: inputs from "
                     "CI_AGENT_INPUT_*, context from CI_* (fix branch, draft MR, status note)")
    fix.add_argument("--build-log", action="append", default=[], metavar="F", help="a build log (repeatable)")
    fix.add_argument("--test-results", action="append", default=[], metavar="GLOB",
                     help="test-result files (repeatable; with --command, relative to the repository)")
    fix.add_argument("--command", metavar="CMD", help="build/test command to run and read (split like a "
                     "shell, never run by one; default: commands.test or commands.build of .ci-agent.yml)")
    fix.add_argument("--verify", metavar="CMD", help="command that must pass after the patch "
                     "(default: commands.verify)")
    fix.add_argument("--dry-run", action="store_true",
                     help="stop before the model call and print the exact request (no key needed)")
    fix.add_argument("--max-attempts", type=int, metavar="N", help="consecutive failed attempts allowed")
    fix.add_argument("--model", metavar="M", help="Claude model (default: model.name or a current Sonnet)")
    fix.add_argument("--json", action="store_true", help="JSON-lines progress events on stdout")
    fix.add_argument("--summary", metavar="FILE", help="write the Markdown summary here, not to stdout")
    fix.add_argument("--repo", metavar="DIR", default=".", help="the git repository (default: .)")
    fix.add_argument("--keep-worktree", action="store_true", help="keep the worktree for inspection")
    fix.add_argument("--retry", action="store_true",
                     help="start a new attempt count (like /ci-agent retry)")


class _Events:
    def __init__(self, as_json: bool, redact: Callable[[str], str]) -> None:
        self.as_json = as_json
        self.redact = redact

    def __call__(self, event: str, **fields: Any) -> None:
        if self.as_json:
            write_stdout(self.redact(json.dumps({"event": event, **fields}, ensure_ascii=False)) + "\n")
            return
        detail = " ".join(f"{k}={v}" for k, v in fields.items() if not isinstance(v, dict | list))
        print(self.redact(f"ci-agent: {event} {detail}".rstrip()), file=sys.stderr, flush=True)



def _plan(args: argparse.Namespace, repo: Path, settings: Settings, model: ModelSettings,
          source: LocalSource) -> Plan:
    from ci_agent.engine.attempt import Plan

    command = settings.commands.test or settings.commands.build
    if args.build_log and not args.command:
        command = ()  # the given logs are the failure; do not also run the configured command
    results: tuple[str, ...] = tuple(args.test_results) or settings.results.globs
    if not command:  # no command runs in the worktree: given globs are the user's files
        results = tuple(g if os.path.isabs(g) else os.path.abspath(g) for g in args.test_results)
    logs = tuple(os.path.abspath(p) for p in args.build_log)
    if not command and not logs and not results:
        raise UsageError("nothing to read: give --build-log/--test-results, or --command (or set "
                         "commands.test in .ci-agent.yml)")
    return Plan(repo=repo, source_ref=source.ref, fix_branch=source.fix_branch, model=model,
                command=command, verify=settings.commands.verify, logs=logs, result_globs=results,
                timeout_s=settings.commands.timeout_s, dry_run=args.dry_run,
                keep_worktree=args.keep_worktree, retry=args.retry, judge_locally=True)


def _check_verify(plan: Plan, where: str) -> None:
    """Before the model is called: a verify program that cannot be started fails every attempt."""
    from ci_agent.verify_check import missing_program, tree_mode_at

    problem = missing_program(plan.verify, os.environ.get("PATH"), tree_mode_at(plan.repo, plan.source_ref))
    if problem:
        raise UsageError(f"{where} cannot run: {problem}; no model request was made")


def _overrides(args: argparse.Namespace) -> dict[str, object]:
    return {"budget.max_attempts": args.max_attempts, "model.name": args.model,
            "commands.test": args.command, "commands.verify": args.verify}


def chosen_platform(args: argparse.Namespace) -> str:
    """`--ci NAME`, or the alias flag given (`--github` before `--gitlab` before `--local`, as
    they were always read); a usage error when none is, or when `--ci` and an alias disagree."""
    alias = next((name for name in ("github", "gitlab", "local") if getattr(args, name)), None)
    if args.ci is None:
        if alias is None:
            raise UsageError("give --local (this repository), --github (inside GitHub Actions) or "
                             "--gitlab (inside GitLab CI)")
        return alias
    if alias is not None and alias != args.ci:
        raise UsageError(f"--ci {args.ci[:40]} and --{alias} name different platforms; give one")
    return str(args.ci)


def run_fix_command(args: argparse.Namespace, env: Mapping[str, str] | None = None,
                    client_factory: Callable[[], ModelClient] | None = None) -> int:
    """The `fix` verb. `client_factory` replaces the Anthropic client (tests script one)."""
    from ci_agent.engine.attempt import identity
    from ci_agent.engine.dry_run import DryRunLedger
    from ci_agent.engine.guidance import in_work_tree, with_guidance
    from ci_agent.engine.ledger import GitLedger
    from ci_agent.engine.money import close_day, local_meter, run_metered
    from ci_agent.engine.seams import API_KEY_ENV, model_settings, real_seams
    from ci_agent.engine.spend import today
    from ci_agent.engine.summary import summary_markdown
    from ci_agent.llm.pricing import Pricing
    from ci_agent.platforms import platform_named
    from ci_agent.redact import Redactor

    environ = os.environ if env is None else env
    platform = platform_named(chosen_platform(args), environ)
    if platform is not None:
        return platform.fix(environ, client_factory, None)
    repo = repo_root_arg(args.repo)
    # the working tree is what local mode trusts, for the guidance as for .ci-agent.yml
    settings = with_guidance(load_settings(repo, environ, _overrides(args)), in_work_tree(repo))
    redactor = Redactor.from_environ(environ)
    redact: Callable[[str], str] = redactor.redact
    from ci_agent.llm.anthropic_client import DEFAULT_MODEL

    source = local_source(repo)
    plan = _plan(args, repo, settings, model_settings(settings, DEFAULT_MODEL), source)
    _check_verify(plan, "--verify" if args.verify else "commands.verify of .ci-agent.yml")
    if not args.dry_run and not environ.get(API_KEY_ENV) and client_factory is None:
        raise UsageError(f"{API_KEY_ENV} is not set; it is needed to ask Claude (--dry-run needs no key)")
    seams = real_seams(settings, environ, redactor, client_factory)
    emit = _Events(args.json, redact)
    if source.note:
        emit("detached_head", note=source.note)
    ledger: Ledger = GitLedger(plan.repo, plan.fix_branch, identity(settings))
    if args.dry_run:  # the local platform's writes are its side records: a dry run keeps none
        ledger = DryRunLedger(ledger)
    seams, day = local_meter(plan, settings, seams, lambda text: emit("warning", message=text))
    outcome = run_metered(plan, settings, seams, emit, ledger)
    close_day(seams.meter, day, today(), outcome.capped, lambda text: emit("warning", message=text))
    if outcome.request is not None:
        _print_request(outcome, emit, args.json, Pricing.from_config(settings.prices))
        return int(outcome.exit_code)
    summary = redact(summary_markdown(outcome, plan))
    _write_summary(summary, args.summary, args.json)
    extra: dict[str, object] = {"summary": summary} if args.json and not args.summary else {}
    if outcome.triage is not None and outcome.triage.verdict is not None:
        extra["verdict"] = outcome.triage.verdict.to_json()
        extra["quarantine"] = list(outcome.triage.quarantine)
    emit("done", status=outcome.status, exit_code=int(outcome.exit_code), branch=outcome.fix_branch,
         usage=outcome.usage.to_json(), message=outcome.message, cost_usd=round(outcome.cost_usd, 6),
         **extra)
    return int(outcome.exit_code)


def request_bytes(request: Mapping[str, Any]) -> int:
    """Size of the request body as JSON (compact, UTF-8), which is what goes over the wire."""
    return len(json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _print_request(outcome: Outcome, emit: _Events, as_json: bool, pricing: Pricing) -> None:
    from ci_agent.engine.dry_run import estimated_cost
    from ci_agent.llm.pricing import usd

    assert outcome.request is not None
    size = request_bytes(outcome.request)
    review = {"review": outcome.message} if outcome.message else {}  # a review would follow (issue 16)
    cost = estimated_cost(outcome.request, pricing)
    if as_json:
        emit("dry_run", bytes=size, estimated_cost_usd=round(cost, 6), request=outcome.request, **review)
        emit("done", status="dry_run", exit_code=0, branch=outcome.fix_branch)
        return
    write_stdout(emit.redact(json.dumps(outcome.request, indent=2, ensure_ascii=False)) + "\n")
    print(f"ci-agent: dry run: the request is {size} bytes "
          f"({len(outcome.request.get('tools', []))} tools); nothing was sent", file=sys.stderr)
    if outcome.message:
        print(f"ci-agent: dry run: {outcome.message}", file=sys.stderr)
    print(f"ci-agent: dry run: this first call could cost up to {usd(cost)} (the money caps' "
          "worst case: every input token at the cache-write rate, a full max_tokens answer)", file=sys.stderr)


def _write_summary(text: str, path: str | None, as_json: bool) -> None:
    if path:
        try:
            Path(path).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CiAgentError(f"cannot write the summary to {path}: {exc.strerror or exc}") from exc
    elif not as_json:
        write_stdout(text)


__all__ = ["ExitCode", "add_arguments", "run_fix_command"]
