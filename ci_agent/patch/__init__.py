"""The patch engine: extract a model's diff, police it (paths, sizes, fake-fix gates), check it
with git and apply it all or nothing — never a half-applied tree (DESIGN.md §4.4)."""

from ci_agent.patch.apply import ApplyError, Trailers, commit, rollback, snapshot
from ci_agent.patch.diff import Rejection
from ci_agent.patch.engine import Verdict, apply_patch, review

__all__ = ["ApplyError", "Rejection", "Trailers", "Verdict", "apply_patch", "commit", "review",
           "rollback", "snapshot"]
