"""Command line: `ci-agent VERB ...`. One function per verb; errors become exit codes here only."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ci_agent import __version__, logguard
from ci_agent.cli import command, doctor, fix, init, patch, poll, run_reporting_errors, serve
from ci_agent.cli.distill import run_distill

OUTPUT_FORMATS = ("llm", "markdown", "json", "github", "codequality", "junit")


@dataclass(frozen=True, slots=True)
class Verb:
    """One `ci-agent VERB`: its line in `ci-agent --help`, its own help's description, how its
    arguments are added, and what runs it.

    A verb module keeps its engine imports inside the verb's run, so the table costs nothing at
    start-up but the argument definitions."""

    name: str
    help: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


DISTILL_HELP = "read build logs and test results, print one duplicate-free failure report"
DISTILL_DESCRIPTION = ("Read build logs and test-result files (TRX, JUnit, NUnit, xUnit, console logs) "
                       "and print one short, duplicate-free report. No API key needed.")


def _distill_arguments(distill: argparse.ArgumentParser) -> None:
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


# In the order `ci-agent --help` lists them.
VERBS: tuple[Verb, ...] = (
    Verb("distill", DISTILL_HELP, DISTILL_DESCRIPTION, _distill_arguments, run_distill),
    Verb("patch", patch.HELP, patch.DESCRIPTION, patch.add_arguments, patch.run_patch),
    Verb("fix", fix.HELP, fix.DESCRIPTION, fix.add_arguments, fix.run_fix_command),
    Verb("init", init.HELP, init.DESCRIPTION, init.add_arguments, init.run_init),
    Verb("doctor", doctor.HELP, doctor.DESCRIPTION, doctor.add_arguments, doctor.run_doctor),
    Verb("command", command.HELP, command.DESCRIPTION, command.add_arguments, command.run_command),
    Verb("serve", serve.HELP, serve.DESCRIPTION, serve.add_arguments, serve.run_serve),
    Verb("poll", poll.HELP, poll.DESCRIPTION, poll.add_arguments, poll.run_poll),
)
_VERB_BY_NAME = {verb.name: verb for verb in VERBS}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ci-agent",
        description="Turns a red pipeline into a reviewed fix.",
    )
    parser.add_argument("--version", action="version", version=f"ci-agent {__version__}")
    verbs = parser.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    for verb in VERBS:
        verb.add_arguments(verbs.add_parser(verb.name, help=verb.help, description=verb.description))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # On a GitHub runner nothing we print may become a workflow command: one guard on both
    # streams, for every verb (logguard).
    guards = logguard.install(os.environ)
    try:
        args = build_parser().parse_args(argv)
        verb = _VERB_BY_NAME[args.verb]
        return run_reporting_errors(lambda: verb.run(args))
    finally:
        logguard.uninstall(guards)
