"""`ci-agent command`: act on one `/ci-agent ...` comment of a pull request (GitHub: the
`issue_comment` / `pull_request_review_comment` workflow of pipelines/github/ci-agent-command.yml)
or merge request (GitLab: the pipeline `ci-agent serve` or `ci-agent poll` created for the note)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from ci_agent.errors import UsageError


def register(verbs: Any) -> None:
    parser = verbs.add_parser(
        "command",
        help="act on a /ci-agent comment (fix, explain, retry, stop, resume, status, apply, help)",
        description="Read one /ci-agent comment back from the forge, check who wrote it (write access, "
        "no bots, each comment once, a rate limit per change request), acknowledge it with 👀 and "
        "answer in the status comment. Exit codes as for fix.",
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--github", action="store_true",
                       help="inside a GitHub Actions job on issue_comment / pull_request_review_comment")
    where.add_argument("--gitlab", action="store_true",
                       help="inside the GitLab job created for CI_AGENT_COMMAND_MR_IID / _NOTE_ID")


def run_command(args: argparse.Namespace) -> int:
    if args.github:
        from ci_agent.platforms.github.cycle import github_command

        return github_command(os.environ)
    if args.gitlab:
        from ci_agent.platforms.gitlab.cycle import gitlab_command

        return gitlab_command(os.environ)
    raise UsageError("give --github or --gitlab")
