"""The handler table: the one place that says which `/ci-agent` commands exist. Per command: its
name, the line `/ci-agent help` prints for it, whether it needs the repository's code, who may
run it, and the function that carries it out. Parsing (which words are commands), the gate (who
may run one), dispatch (what runs) and help (what is listed) all read it: dispatch hands
`COMMANDS` / `MAY_RUN` to the pure parser and gate, which never import the handlers (the relay
and the poller read comments without loading the fix engine).

Adding a command is adding a row here and its handler; its help line is then listed, parsed and
gated without another edit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ci_agent.engine import texts
from ci_agent.engine.forge import Permission
from ci_agent.engine.runner import Result
from ci_agent.errors import ExitCode
from ci_agent.slash.apply import apply_proposal
from ci_agent.slash.context import Context, answer
from ci_agent.slash.handlers import pause, post_status, resume, retry_cycle, run_fix_cycle
from ci_agent.slash.help import render_help
from ci_agent.slash.request import SlashCommand

Handle = Callable[[Context, SlashCommand], Result]


@dataclass(frozen=True)
class Handler:
    name: str  # the word after `/ci-agent`
    usage: str  # how help writes the command, with its arguments
    help: str  # what help says it does
    # Runs or pushes the repository's code: refused on a fork's change request (never checked out
    # with this repository's secrets) and not run on a closed one.
    needs_checkout: bool
    run: Handle
    may_run: Permission = Permission.WRITE  # the least permission of an author who may run it


def post_help(ctx: Context, command: SlashCommand) -> Result:
    answer(ctx, "commands", [texts.Markup(help_text(command.unknown))])
    return Result("skipped", ExitCode.OK, "help posted", ctx.fix_branch)


HANDLERS: tuple[Handler, ...] = (
    Handler("fix", "fix [instructions]", "run a fix attempt now, following your instructions "
            "(same budget and patch policy).", True, run_fix_cycle),
    Handler("explain", "explain", "post a root-cause analysis of the latest failure, without a patch.",
            True, run_fix_cycle),
    Handler("retry", "retry", "start a new count of attempts after an escalation, and run again.",
            True, retry_cycle),
    Handler("stop", "stop", "pause automatic attempts on this branch (label `ci-agent:paused`).",
            False, pause),
    Handler("resume", "resume", "resume automatic attempts on this branch.", False, resume),
    Handler("status", "status", "show the attempts made, the budget left and the tokens spent.",
            False, post_status),
    Handler("apply", "apply", "apply exactly the patch ci-agent last proposed in a comment.",
            True, apply_proposal),
    Handler("help", "help", "show this list.", False, post_help),
)

COMMANDS: tuple[str, ...] = tuple(handler.name for handler in HANDLERS)
BY_NAME: Mapping[str, Handler] = MappingProxyType({handler.name: handler for handler in HANDLERS})
MAY_RUN: Mapping[str, Permission] = MappingProxyType({handler.name: handler.may_run for handler in HANDLERS})


def help_text(unknown: str = "") -> str:
    """The answer to `/ci-agent help`: every command of the table in its order; first, when
    given, that `unknown` is not a command."""
    return render_help(((handler.usage, handler.help) for handler in HANDLERS), unknown)
