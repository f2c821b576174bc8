"""The platform fixtures of tests/hardening/platforms (`side`, `command_side` and the scenario
fixtures they are built on) for every hardening test, so that a test parametrised over the forges
asks for `side` and nothing else. A module that imports a scenario suite's own fixtures (`world`,
`forge_waits` ...) keeps them: a module's fixture wins over this file's."""

from tests.hardening.platforms import (
    anthropic_fake,
    command_side,
    forge_waits,
    github_command_world,
    github_forge_waits,
    github_make_world,
    gitlab_command_world,
    gitlab_forge_waits,
    gitlab_make_world,
    side,
)

__all__ = ["anthropic_fake", "command_side", "forge_waits", "github_command_world", "github_forge_waits",
           "github_make_world", "gitlab_command_world", "gitlab_forge_waits", "gitlab_make_world", "side"]
