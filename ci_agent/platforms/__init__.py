"""Platforms as plug-ins: where ci-agent runs (GitHub Actions, GitLab CI, this machine), and the
registry `ci-agent fix --ci NAME` and `ci-agent command --ci NAME` pick one from.

The fix engine (`ci_agent.engine`) knows no platform: it works through the neutral types of
`engine/types.py` (`ActionInputs`, `Trigger`), the `Forge` protocol of `engine/forge.py` and the
`Platform` protocol and `Words` of `engine/platform.py`. No platform imports another
(`tools/check_imports.py` checks it); what two of them share lives in the engine or in
`platforms/download.py`.

What a new platform implements
------------------------------
One folder, `ci_agent/platforms/<name>/`, and one line in this file:

1. `env.py`: the CI job's environment, read once: whether this job runs there (`--ci auto`:
   `in_github_actions`, `in_gitlab_ci`), a frozen context dataclass of its variables, its inputs as
   `ActionInputs` (each variable's text handed to `engine.types.read_inputs`, which validates them
   as on every platform), and the run as a `Trigger` judged by `engine.types.judge` (forks refused,
   our own branches and green runs skipped).
2. `words.py`: a `Words` (engine/platform.py): the forge's name, what a change request is called,
   the reference prefix (`#`, `!`), what a CI run is called, where the verify input is set.
3. `forge.py` (split by job where it grows: `http.py`, `forge_calls.py`, `forge_runs.py`): a
   class satisfying the `Forge` protocol (engine/forge.py: runs, jobs, logs and artifacts;
   `start_ci` on a branch; change requests; the status comment and its marker; labels;
   permissions; branches), `CommandForge` too for slash commands; tests/forge/test_contract.py
   runs the same contract against every forge. Errors are `ForgeError` (`StatusForgeError` when
   the status matters), one sentence each, the token never in them.
4. `cycle.py`: a class satisfying the `Platform` protocol (engine/platform.py: `words`,
   `workspace`, `protected_fix_branch_ok`, `missing_key`, `token`, `forge`, `push_auth`,
   `sources`, `start_ci`), and the two entries of the registry below, each
   `(env, client_factory, out) -> exit code`: `fix` (read the environment, judge the trigger,
   `engine.runner.run_cycle`, then write the outputs) and `command` (read the comment the job
   was started for, `slash.dispatch.handle_command`, then write the outputs).
5. `output.py`: what a job leaves besides its log line: step outputs or a dotenv report, the
   Markdown summary (`engine.runner.summary` with the platform's words), a dry run's request
   printed as data, and the last log line. Whatever the job writes to its log goes through
   `logguard` (GitHub) or is stripped of control characters (GitLab): untrusted text is data.
6. Here: a `CiPlatform(name, detect, fix, command)` in `CI_PLATFORMS`, before
   any platform whose detection it could shadow. `--ci <name>` and `--ci auto` then find it.

The local platform (`platforms/local/`) has no job environment: `--ci local` (`--local`) is the
CLI's own `fix --local`, the attempt engine on this repository. Its `LocalPlatform` (cycle.py)
is the whole `Platform` over the local forge (forge.py, a JSON file): the CI cycle run on it
writes change requests, comments, labels and CI starts to that file instead of a forge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from ci_agent.errors import UsageError
from ci_agent.platforms.github.cycle import github_command, github_fix
from ci_agent.platforms.github.env import in_github_actions
from ci_agent.platforms.gitlab.cycle import gitlab_command, gitlab_fix
from ci_agent.platforms.gitlab.env import in_gitlab_ci

if TYPE_CHECKING:
    from ci_agent.llm.client import ModelClient

ClientFactory = Callable[[], "ModelClient"]
# A platform's verb: the job's environment, a scripted model client (tests) and the stream its
# log goes to (stdout when None); the exit code.
Verb = Callable[[Mapping[str, str], "ClientFactory | None", "TextIO | None"], int]


@dataclass(frozen=True)
class CiPlatform:
    """A CI system ci-agent runs inside as a job."""

    name: str  # the value of `--ci`, and the alias flag `--<name>`
    detect: Callable[[Mapping[str, str]], bool]  # this job runs on it (`--ci auto`)
    fix: Verb  # `ci-agent fix`: the job after a failed run (or a fix branch's green one)
    command: Verb  # `ci-agent command`: the job started for one `/ci-agent` comment


GITHUB = CiPlatform("github", in_github_actions, github_fix, github_command)
GITLAB = CiPlatform("gitlab", in_gitlab_ci, gitlab_fix, gitlab_command)
# Detection order for `auto`: the first whose environment matches.
CI_PLATFORMS: tuple[CiPlatform, ...] = (GITHUB, GITLAB)
LOCAL = "local"  # this repository, no CI job: `fix --local`
AUTO = "auto"
NAMES: tuple[str, ...] = (*(p.name for p in CI_PLATFORMS), LOCAL)


def detect(env: Mapping[str, str]) -> str:
    """`--ci auto`: the CI this process runs in, else local."""
    return next((p.name for p in CI_PLATFORMS if p.detect(env)), LOCAL)


def platform_named(name: str, env: Mapping[str, str]) -> CiPlatform | None:
    """The CI platform `--ci NAME` means (`auto` detected from `env`); None for the local one."""
    chosen = detect(env) if name == AUTO else name
    for platform in CI_PLATFORMS:
        if platform.name == chosen:
            return platform
    if chosen == LOCAL:
        return None
    raise UsageError(f"--ci must be one of {', '.join(NAMES)} or {AUTO}, not {name[:40]!r}")
