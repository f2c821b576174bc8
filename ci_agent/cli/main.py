"""Command line: `ci-agent VERB ...`. One function per verb; errors become exit codes here only."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ci_agent import __version__, logguard
from ci_agent.cli import command, doctor, fix, init, patch, poll, run_reporting_errors, serve
from ci_agent.cli.distill import run_distill

OUTPUT_FORMATS = ("llm", "markdown", "json", "github", "codequality", "junit")


@dataclass(frozen=True, slots=True)
class Verb:
    """One `ci-agent VERB`: how its arguments are added to the parser, and what runs it.

    A verb module keeps its engine imports inside the verb's run, so the table costs nothing at
    start-up but the argument definitions."""

    name: str
    register: Callable[[Any], None]  # adds the verb's subparser to the top-level subparsers
    run: Callable[[argparse.Namespace], int]


def _register_distill(verbs: Any) -> None:
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


# In the order `ci-agent --help` lists them.
VERBS: tuple[Verb, ...] = (
    Verb("distill", _register_distill, run_distill),
    Verb("patch", patch.register, patch.run_patch),
    Verb("fix", fix.register, fix.run_fix_command),
    Verb("init", init.register, init.run_init),
    Verb("doctor", doctor.register, doctor.run_doctor),
    Verb("command", command.register, command.run_command),
    Verb("serve", serve.register, serve.run_serve),
    Verb("poll", poll.register, poll.run_poll),
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
        verb.register(verbs)
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
