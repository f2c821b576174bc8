"""The end of a `--github` run: step outputs, job summary, annotations, one log line, exit code.

`github_fix(env)` is what `ci-agent fix --github` calls: everything comes from `env` and the
files it names, so tests drive it with an environment and a bare origin."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, TextIO

from ci_agent.errors import CiAgentError
from ci_agent.gh_output import annotation_lines, log_line, write_outputs, write_summary
from ci_agent.ghmode.run import Result, run_github
from ci_agent.redact import Redactor, sanitize_untrusted

if TYPE_CHECKING:
    from ci_agent.llm.client import ModelClient

_TITLES = {"fixed": "fixed", "committed": "patch pushed, CI decides", "escalated": "escalated",
           "gave_up": "no safe patch", "nothing_to_do": "nothing to fix", "skipped": "skipped",
           "refused": "refused"}


def outputs(result: Result) -> dict[str, str]:
    pr = result.pr
    return {"outcome": result.outcome, "attempt": str(result.attempt) if result.attempt else "",
            "branch": result.branch, "pr_number": str(pr.number) if pr else "",
            "pr_url": pr.url if pr else "", "tokens": str(result.tokens)}


def summary(result: Result) -> str:
    title = _TITLES.get(result.outcome, result.outcome)
    lines = [f"## ci-agent: {title}", sanitize_untrusted(result.message)]
    if result.pr is not None:
        lines.append(f"Fix pull request: [#{result.pr.number}]({result.pr.url})")
    if result.details:
        lines.append(result.details)
    return "\n\n".join(lines) + "\n"


def github_fix(env: Mapping[str, str], client_factory: Callable[[], ModelClient] | None = None,
               out: TextIO | None = None) -> int:
    stream = out or sys.stdout
    redact = Redactor.from_environ(dict(env)).redact
    try:
        result, ctx = run_github(env, client_factory, stream)
    except CiAgentError as exc:
        summary_path = env.get("GITHUB_STEP_SUMMARY", "")
        write_summary(summary_path, f"## ci-agent: error\n\n{sanitize_untrusted(redact(str(exc)))}\n")
        raise
    assert ctx is not None
    write_outputs(ctx.output_path, outputs(result))
    write_summary(ctx.summary_path, redact(summary(result)))
    if result.report is not None and result.outcome not in ("refused", "skipped"):
        stream.write(redact(annotation_lines(result.report)))
    word = "skipped" if result.outcome == "skipped" else result.outcome
    print(log_line(redact(f"ci-agent: {word}: {result.message}")), file=stream, flush=True)
    return int(result.exit_code)
