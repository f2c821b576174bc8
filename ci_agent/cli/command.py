"""`ci-agent command`: act on one `/ci-agent ...` comment of a pull request (GitHub: the
`issue_comment` / `pull_request_review_comment` workflow of pipelines/github/ci-agent-command.yml)
or merge request (GitLab: the pipeline `ci-agent serve` or `ci-agent poll` created for the note)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping

from ci_agent.errors import UsageError

HELP = "act on a /ci-agent comment (fix, explain, retry, stop, resume, status, apply, help)"
DESCRIPTION = ("Read one /ci-agent comment back from the forge, check who wrote it (write access, "
    "no bots, each comment once, a rate limit per change request), acknowledge it with 👀 and "
    "answer in the status comment. Exit codes as for fix.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--github", action="store_true",
                       help="inside a GitHub Actions job on issue_comment / pull_request_review_comment")
    where.add_argument("--gitlab", action="store_true",
                       help="inside the GitLab job created for CI_AGENT_COMMAND_MR_IID / _NOTE_ID")
    where.add_argument("--ci", metavar="PLATFORM",
                       help="github, gitlab, or auto (the CI this job runs in); --github and --gitlab "
                       "are the same")


def run_command(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> int:
    # the platforms (and the engine under them) are imported when the verb runs, not at start-up
    from ci_agent.platforms import platform_named

    environ = os.environ if env is None else env
    name = args.ci or ("github" if args.github else "gitlab")
    platform = platform_named(name, environ)
    if platform is None:
        raise UsageError("ci-agent command answers a comment on a forge: give --github or --gitlab "
                         "(the local platform has no comments to answer)")
    return platform.command(environ, None, None)
