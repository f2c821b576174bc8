"""Reviewers' slash commands in PR/MR comments (`/ci-agent fix ...`), on top of the fix engine.

`table` is the one list of commands (name, help line, whether it needs the repository's code,
who may run it, handler); `parse` finds a command in a comment and `gate` decides whether it runs
(both pure); `dispatch` is what a platform calls for one comment; `context` is what handlers
share; `handlers` and `apply` carry the commands out; `help` writes the list.
"""
