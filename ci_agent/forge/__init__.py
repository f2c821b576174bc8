"""Forges (DESIGN.md §4.6): the neutral `Forge` protocol and its implementations.

`base` holds the contract and the small frozen types; `github` (PyGithub) and `local` (a JSON
file: the test double and the dry run) implement it. Import an implementation module directly;
this package imports none of them, so `github` is only loaded when used.
"""

from ci_agent.forge.base import (
    Artifact,
    ChangeRequest,
    CommandForge,
    Comment,
    Forge,
    Job,
    JobLog,
    Limits,
    Permission,
    PipelineStarter,
    parse_marker,
    render_marker,
)

__all__ = [
    "Artifact",
    "ChangeRequest",
    "CommandForge",
    "Comment",
    "Forge",
    "Job",
    "JobLog",
    "Limits",
    "Permission",
    "PipelineStarter",
    "parse_marker",
    "render_marker",
]
