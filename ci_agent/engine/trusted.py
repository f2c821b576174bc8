"""Configuration from the trusted side (DESIGN.md §4.5).

In CI modes `.ci-agent.yml` (or the file the `config` input names) decides what a patch may touch,
the budget, the team notes in the model's system prompt: it must not come from the branch being
fixed, which anyone who can push a branch or open a pull request writes. It is read from the
DEFAULT branch as origin has it now: fetched into `refs/ci-agent/trusted/<branch>` (one commit
deep when the checkout is shallow, as runners' checkouts often are) and read with git. Absent
there: the defaults apply, even when the branch adds one. When the branch's copy differs, the
status comment says in one line that it takes effect after merge. The repository guidance of
the system prompt (`AGENTS.md` and the like, `ci_agent.engine.guidance`) is read from the same
tree.
"""

from __future__ import annotations

import posixpath
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ci_agent import git
from ci_agent.config import CONFIG_FILE, Settings
from ci_agent.config.load import parse_yaml, settings_from_layers
from ci_agent.engine import state
from ci_agent.engine.guidance import at_revision, with_guidance
from ci_agent.engine.platform import Words
from ci_agent.engine.types import ActionInputs, Trigger
from ci_agent.errors import ConfigError, ForgeError, UsageError
from ci_agent.logguard import log_line

TRUSTED_PREFIX = "refs/ci-agent/trusted/"
_FILE_MODES = ("100644", "100755")


@dataclass(frozen=True)
class TrustedConfig:
    settings: Settings
    path: str  # the configuration file, repository-relative
    branch: str  # the default branch it was read from
    text: str | None  # its content there (None: absent, the defaults apply)


def config_path(name: str) -> str:
    """The `config` input as a repository-relative path; a usage error when it leaves the repository."""
    clean = posixpath.normpath(name.strip().replace("\\", "/")) if name.strip() else CONFIG_FILE
    if clean.startswith("/") or clean == ".." or clean.startswith("../") or clean == ".":
        raise UsageError(f"input config must name a file inside the repository, not {name[:200]!r}")
    return clean


def fetch_default_branch(repo: Path, branch: str, auth: Sequence[str]) -> str:
    """The default branch as origin has it now, in a ref of ours; its name."""
    ref = TRUSTED_PREFIX + state.sanitise_branch(branch)
    shallow = git.git(repo, ["rev-parse", "--is-shallow-repository"]).stdout.strip() == "true"
    depth = ["--depth=1"] if shallow else []  # never deepen a shallow checkout by a whole history
    result = git.git(repo, [*auth, "fetch", "--quiet", "--no-tags", *depth, "origin",
                            f"+refs/heads/{branch}:{ref}"], timeout=300)
    if not result.ok:
        raise ForgeError(f"cannot fetch the default branch {branch} from origin to read ci-agent's "
                         f"configuration from it: {result.stderr.strip()[:300]}")
    return ref


def read_file_at(repo: Path, revision: str, path: str) -> str | None:
    """A regular file's text in `revision`'s tree; None when the tree has no such file."""
    listed = git.git(repo, ["ls-tree", "-z", revision, "--", path])
    if not listed.ok:
        return None
    entry = next((e for e in listed.stdout.split("\0") if e.partition("\t")[2] == path), "")
    if not entry:
        return None
    mode = entry.split(" ", 1)[0]
    if mode not in _FILE_MODES:
        raise UsageError(f"{path} on {revision.removeprefix(TRUSTED_PREFIX)} is not a regular file "
                         f"(git mode {mode}); ci-agent reads its configuration from a file")
    shown = git.git(repo, ["cat-file", "blob", f"{revision}:{path}"])
    if not shown.ok:
        return None
    return shown.stdout


def trusted_settings(repo: Path, env: Mapping[str, str], inputs: ActionInputs, branch: str,
                     auth: Sequence[str]) -> TrustedConfig:
    """The run's settings: the default branch's configuration file under the inputs that override
    it (`max_attempts`, `model`) and the `CI_AGENT_*` variables of the job."""
    path = config_path(inputs.config)
    trusted_ref = fetch_default_branch(repo, branch, auth)
    text = read_file_at(repo, trusted_ref, path)
    if text is None and path != CONFIG_FILE and not (repo / path).is_file():
        raise UsageError(f"input config names {inputs.config}, which is a file neither on the default "
                         f"branch {branch} nor in this checkout")
    overrides: dict[str, object] = {"budget.max_attempts": inputs.max_attempts,
                                    "model.name": inputs.model or None}
    try:
        settings = settings_from_layers(parse_yaml(text) if text is not None else None, env, overrides)
    except ConfigError as exc:
        raise ConfigError(f"{exc} (read from the default branch {branch})") from exc
    if path != CONFIG_FILE:
        # the file later runs read their limits from is as protected as .ci-agent.yml
        settings = replace(settings, patch=replace(settings.patch, config_paths=(path,)))
    # AGENTS.md and the like, for the system prompt: from the same trusted tree as the config
    settings = with_guidance(settings, at_revision(repo, trusted_ref))
    return TrustedConfig(settings, path, branch, text)


def branch_copy(repo: Path, revisions: Sequence[str], path: str) -> str | None:
    """The configuration file as the branch being fixed has it: in the first of `revisions` this
    checkout holds, else in the working tree."""
    for revision in revisions:
        if revision and git.git(repo, ["cat-file", "-e", f"{revision}^{{commit}}"]).ok:
            try:
                return read_file_at(repo, revision, path)
            except UsageError:
                return ""  # not a regular file there: a change all the same
    try:
        return (repo / path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def change_note(trusted: TrustedConfig, branch_text: str | None) -> str:
    """One line for the status comment when the branch's copy is not the one in force ("" when equal)."""
    if branch_text == trusted.text:
        return ""
    uses = (f"this run uses the copy on the default branch `{trusted.branch}`" if trusted.text is not None
            else f"this run uses the defaults (`{trusted.branch}` has none)")
    return f"`{trusted.path}` changed on this branch: it takes effect after merge; {uses}."


def cycle_config(repo: Path, env: Mapping[str, str], inputs: ActionInputs, trig: Trigger, default: str,
                 auth: Sequence[str], words: Words) -> tuple[Settings, str]:
    """A fix cycle's settings and the status comment's line about the branch's own copy ("" when
    none is due). Both facts are also said once in the job's log."""
    trusted = trusted_settings(repo, env, inputs, default, auth)
    note = ""
    if trig.branch != default:  # an older commit of the default branch is no change to announce
        note = change_note(trusted, branch_copy(repo, [trig.sha], trusted.path))
    if note:
        print(log_line(f"ci-agent: {note}"), file=sys.stderr, flush=True)
    if trusted.settings.commands.verify and not inputs.verify:
        print(log_line(f"ci-agent: commands.verify of {trusted.path} is for `ci-agent fix --local`; here "
                       f"CI on the fix branch verifies ({words.verify_input} runs a command in this job)"),
              file=sys.stderr, flush=True)
    return trusted.settings, note
