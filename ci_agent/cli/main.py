"""Command line: `ci-agent VERB ...`. One function per verb; errors become exit codes here only."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from ci_agent import __version__, logguard
from ci_agent.errors import CiAgentError, ExitCode

OUTPUT_FORMATS = ("llm", "markdown", "json", "github", "codequality", "junit")
# Modules under ci_agent.cli with `register(verbs)`. A verb whose parser sets
# `handler=<function(args) -> int>` is run through it; the older ones are dispatched below.
VERB_MODULES = ("patch", "fix", "init", "doctor", "command", "serve", "poll")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ci-agent",
        description="Turns a red pipeline into a reviewed fix.",
    )
    parser.add_argument("--version", action="version", version=f"ci-agent {__version__}")
    verbs = parser.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True

    distill = verbs.add_parser(
        "distill",
        help="read build logs and test results, print one duplicate-free failure report",
        description="Read build logs and test-result files (TRX, JUnit, NUnit, xUnit, console logs) "
        "and print one short, duplicate-free report. No API key needed.",
    )
    distill.add_argument("paths", nargs="+", metavar="PATH", help="log or result file, glob, or - for stdin")
    distill.add_argument("--format", dest="input_format", metavar="F",
                         help="read every input as this format instead of sniffing it")
    distill.add_argument("--repo-root", metavar="DIR",
                         help="repository root for repo-relative paths (default: git, else inferred)")
    distill.add_argument("--output", "-o", choices=OUTPUT_FORMATS, default="llm",
                         help="what to print (default: llm, the text the model reads)")
    distill.add_argument("--max-bytes", type=int, default=None, metavar="N",
                         help="byte budget of the llm text (default 8000) and of the markdown summary "
                         "(default 65536, at most 1 MiB); the json report is never cut")
    for name in VERB_MODULES:
        module = importlib.import_module(f"ci_agent.cli.{name}")
        module.register(verbs)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # On a GitHub runner nothing we print may become a workflow command: one guard on both
    # streams, for every verb (logguard).
    guards = logguard.install(os.environ)
    try:
        return _main(argv)
    finally:
        logguard.uninstall(guards)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.verb == "distill":
            from ci_agent.cli.distill import run_distill

            return int(run_distill(args))
        if args.verb == "patch":
            from ci_agent.cli.patch import run_patch

            return int(run_patch(args))
        if args.verb == "fix":
            from ci_agent.cli.fix import run_fix_command

            return run_fix_command(args)
        if args.verb == "init":
            from ci_agent.cli.init import run_init

            return run_init(args)
        if args.verb == "doctor":
            from ci_agent.cli.doctor import run_doctor

            return run_doctor(args)
        handler = getattr(args, "handler", None)
        if handler is not None:
            return int(handler(args))
        parser.error(f"unknown verb {args.verb}")
    except CiAgentError as exc:
        print(f"ci-agent: error: {exc}", file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        return int(ExitCode.FAILURE)
    return int(ExitCode.OK)
