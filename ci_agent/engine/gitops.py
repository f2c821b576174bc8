"""Git on the runner in PR mode: the source branch as origin has it, the local copy of the fix
branch, and the fast-forward-only push."""

from __future__ import annotations

import base64
import urllib.parse
from pathlib import Path

from ci_agent import git
from ci_agent.engine import state
from ci_agent.errors import ForgeError

SOURCE_PREFIX = "refs/ci-agent/source/"


def auth_config(repo: Path, token: str, server_url: str, user: str = "x-access-token") -> list[str]:
    """`-c` options authenticating an https push to the server the way actions/checkout does, so
    the push uses our token (an App token or PAT starts CI; the checkout's token may not). Only
    for an origin on the forge's own server (credentials in the URL, as GitLab runners write
    them, do not count), never in `.git/config`. GitLab takes any user name with an access
    token; `gitlab-ci-token` names the job token."""
    url = git.config_get(repo, "remote.origin.url") or ""
    parsed = urllib.parse.urlparse(url)
    server = urllib.parse.urlparse(server_url)
    if not token or parsed.scheme != "https" or _host(parsed) != _host(server):
        return []
    basic = base64.b64encode(f"{user}:{token}".encode()).decode()
    return ["-c", f"http.{server.scheme}://{server.netloc}/.extraheader=AUTHORIZATION: basic {basic}"]


def _host(url: urllib.parse.ParseResult) -> tuple[str, int | None]:
    return (url.hostname or "").lower(), url.port


def fetch_source(repo: Path, branch: str, auth: list[str]) -> str:
    """The source branch as `origin` has it now, fetched to `refs/ci-agent/source/<branch>`."""
    ref = SOURCE_PREFIX + state.sanitise_branch(branch)
    result = git.git(repo, [*auth, "fetch", "--quiet", "--no-tags", "origin",
                            f"+refs/heads/{branch}:{ref}"], timeout=300)
    if not result.ok:
        raise ForgeError(f"cannot fetch {branch} from origin: {result.stderr.strip()[:300]}")
    return ref


def reset_local_fix_branch(repo: Path, fix_branch: str, remote_tip: str | None) -> None:
    """The runner's `refs/heads/<fix branch>` made equal to origin's (absent when origin has none):
    the attempt engine starts from the branch as origin has it on every run."""
    ref = "refs/heads/" + fix_branch
    if remote_tip is None:
        if state.rev(repo, ref) is not None:
            git.git_ok(repo, ["update-ref", "-d", ref])
    else:
        git.git_ok(repo, ["update-ref", ref, remote_tip])


def push_fast_forward(repo: Path, commit: str, fix_branch: str, auth: list[str]) -> str | None:
    """Push `commit` to origin's fix branch without force; None on success, else git's reason.
    A rejection means someone else pushed first: the caller re-reads, never forces."""
    result = git.git(repo, [*auth, "push", "--porcelain", "origin", f"{commit}:refs/heads/{fix_branch}"],
                     timeout=300)
    return None if result.ok else (result.stderr.strip() or result.stdout.strip())[:500]


def undo_push(repo: Path, branch: str, ours: str, before: str | None, auth: list[str]) -> bool:
    """Put origin's `branch` back to `before` (deleted when None), but only while it is still
    exactly our commit `ours` (`--force-with-lease`): someone else's push is never overwritten.
    True when origin is back as it was."""
    target = f"{before}:refs/heads/{branch}" if before else f":refs/heads/{branch}"
    result = git.git(repo, [*auth, "push", "--porcelain", f"--force-with-lease=refs/heads/{branch}:{ours}",
                            "origin", target], timeout=300)
    return result.ok
