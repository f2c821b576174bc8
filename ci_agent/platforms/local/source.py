"""What `ci-agent fix --local` fixes and on which branch: the checked-out branch, or on a
detached HEAD (a tag, a bisect, a CI-style checkout) the commit itself.

A detached HEAD names no branch, but the commit is all a local fix needs: the fix branch is
named from its short id, `ci-agent/fix/detached-<12 hex digits>`, and starts there. The name is
stable, so a rerun on the same commit continues the same fix branch and attempt count. CI runs
do not come here: a tag or detached run in CI is still skipped (`engine.types.judge`), since
there is nothing there to open a change request against.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ci_agent import git
from ci_agent.engine import state
from ci_agent.engine.types import is_attempt_message
from ci_agent.errors import UsageError

DETACHED_PREFIX = "detached-"
SHORT_ID = 12  # hex digits of the commit id in the branch name; unique in any real repository


@dataclass(frozen=True, slots=True)
class LocalSource:
    """`ref`: what the fix branch starts from (a branch name, or a full commit id when HEAD is
    detached); `note`: said to the user when the fix branch was named from a commit."""

    ref: str
    fix_branch: str
    note: str | None = None


def detached_fix_branch(commit: str) -> str:
    return state.FIX_PREFIX + DETACHED_PREFIX + commit[:SHORT_ID]


def local_source(repo: Path) -> LocalSource:
    """The checked-out branch and its fix branch; a UsageError when there is nothing to fix."""
    branch = state.current_branch(repo)
    if branch is None:
        head = state.rev(repo, "HEAD")
        if head is None:
            raise UsageError(f"{repo} has no commit yet; nothing to fix")
        if is_attempt_message(git.git(repo, ["log", "-1", "--format=%B", head]).stdout):
            # Detaching must not be a way around the rule below.
            raise UsageError(f"HEAD is detached at {head[:SHORT_ID]}, an attempt commit of ci-agent; "
                             "ci-agent never fixes its own fixes (check out the branch it came from)")
        fix_branch = detached_fix_branch(head)
        return LocalSource(head, fix_branch, f"HEAD is detached at {head[:SHORT_ID]}: the fix "
                           f"goes on {fix_branch}, a branch named from that commit")
    if branch.startswith("ci-agent/"):
        raise UsageError(f"{branch} is a ci-agent branch; ci-agent never fixes its own fixes "
                         "(check out the branch it came from)")
    return LocalSource(branch, state.fix_branch_for(branch))
