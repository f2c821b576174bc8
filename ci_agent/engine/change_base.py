"""The base of the change under test in a CI cycle: a pull request's history section shows its
diff against the merge base with its target branch (`ci_agent.context.history`), so the engine
names that branch as a local ref in `context.base_ref` (an explicit `context.base_ref` in the
configuration wins). A run without a pull request keeps the failing commit against its parent."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ci_agent import git
from ci_agent.config import Settings
from ci_agent.engine import state

BASE_PREFIX = "refs/ci-agent/base/"
_FETCH_TIMEOUT = 120.0


def target_ref(repo: Path, target: str, auth: list[str]) -> str | None:
    """A local ref for origin's `target` branch: the remote-tracking branch a full checkout has
    (actions/checkout with fetch-depth 0), else fetched to `refs/ci-agent/base/<target>` (a
    GitLab job fetches only its own branch); None when neither works: the context then says
    the diff is against the parent."""
    tracking = f"refs/remotes/origin/{target}"
    if state.rev(repo, tracking) is not None:
        return tracking
    ref = BASE_PREFIX + state.sanitise_branch(target)
    fetched = git.git(repo, [*auth, "fetch", "--quiet", "--no-tags", "origin", f"+refs/heads/{target}:{ref}"],
                      timeout=_FETCH_TIMEOUT)
    return ref if fetched.ok and state.rev(repo, ref) is not None else None


def with_change_base(settings: Settings, repo: Path, target: str | None, auth: list[str]) -> Settings:
    """`settings` whose context diffs a pull request against its target's merge base."""
    if settings.context.base_ref or not target:
        return settings
    ref = target_ref(repo, target, auth)
    return replace(settings, context=replace(settings.context, base_ref=ref)) if ref else settings
