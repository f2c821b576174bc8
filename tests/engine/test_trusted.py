"""`ci_agent.engine.trusted`: the configuration read from origin's default branch on real git,
in the checkouts runners make (full history, and actions/checkout's default depth 1)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ci_agent.engine.trusted import branch_copy, change_note, config_path, trusted_settings
from ci_agent.engine.types import ActionInputs
from ci_agent.errors import ConfigError, UsageError

MAIN_CONFIG = "notes:\n  - main's note\n"
BRANCH_CONFIG = "notes:\n  - the branch's note\npatch:\n  use_default_deny: false\n"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=T", "-c", "user.email=t@e.x", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    """A bare origin: main (three commits, the last adds `.ci-agent.yml`) and `feature`, which
    changes it."""
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    work = tmp_path / "author"
    git(tmp_path, "clone", "-q", str(bare), str(work))
    git(work, "checkout", "-q", "-b", "main")
    for n in range(2):
        (work / "a.txt").write_text(f"{n}\n")
        git(work, "add", "a.txt")
        git(work, "commit", "-q", "-m", f"commit {n}")
    (work / ".ci-agent.yml").write_text(MAIN_CONFIG)
    git(work, "add", ".ci-agent.yml")
    git(work, "commit", "-q", "-m", "config")
    git(work, "push", "-q", "origin", "main")
    git(work, "checkout", "-q", "-b", "feature")
    (work / ".ci-agent.yml").write_text(BRANCH_CONFIG)
    git(work, "commit", "-q", "-am", "widen the policy")
    git(work, "push", "-q", "origin", "feature")
    return bare


def checkout(origin: Path, branch: str, *, shallow: bool) -> Path:
    path = origin.parent / f"runner-{branch}-{shallow}"
    depth = ["--depth", "1"] if shallow else []
    git(origin.parent, "clone", "-q", *depth, "--branch", branch, f"file://{origin}", str(path))
    return path


@pytest.mark.parametrize("shallow", [True, False])
def test_the_default_branchs_file_is_read_from_a_checkout_of_the_branch(origin: Path, shallow: bool) -> None:
    repo = checkout(origin, "feature", shallow=shallow)
    assert "the branch's note" in (repo / ".ci-agent.yml").read_text()

    trusted = trusted_settings(repo, {}, ActionInputs(), "main", [])

    assert trusted.settings.notes == ("main's note",)
    assert trusted.settings.patch.use_default_deny is True
    assert trusted.text == MAIN_CONFIG and trusted.branch == "main"
    if shallow:  # one commit fetched, the checkout still shallow: no whole history pulled in
        assert git(repo, "rev-parse", "--is-shallow-repository") == "true"
        assert git(repo, "rev-list", "--count", "refs/ci-agent/trusted/main") == "1"
    note = change_note(trusted, branch_copy(repo, [git(repo, "rev-parse", "HEAD")], ".ci-agent.yml"))
    assert note == ("`.ci-agent.yml` changed on this branch: it takes effect after merge; this run uses "
                    "the copy on the default branch `main`.")


def test_origin_is_read_now_not_the_checkouts_stale_copy(origin: Path) -> None:
    repo = checkout(origin, "main", shallow=False)
    author = origin.parent / "author"
    git(author, "checkout", "-q", "main")
    (author / ".ci-agent.yml").write_text("notes:\n  - merged since\n")
    git(author, "commit", "-q", "-am", "new notes")
    git(author, "push", "-q", "origin", "main")
    assert trusted_settings(repo, {}, ActionInputs(), "main", []).settings.notes == ("merged since",)


def test_absent_on_the_default_branch_means_defaults(origin: Path) -> None:
    repo = checkout(origin, "feature", shallow=True)
    author = origin.parent / "author"
    git(author, "checkout", "-q", "main")
    git(author, "rm", "-q", ".ci-agent.yml")
    git(author, "commit", "-q", "-m", "no config")
    git(author, "push", "-q", "origin", "main")

    trusted = trusted_settings(repo, {}, ActionInputs(), "main", [])

    assert trusted.text is None and trusted.settings.notes == ()
    assert "this run uses the defaults (`main` has none)" in change_note(trusted, BRANCH_CONFIG)
    assert change_note(trusted, None) == ""


def test_a_named_config_file_missing_everywhere_is_a_usage_error(origin: Path) -> None:
    repo = checkout(origin, "feature", shallow=True)
    with pytest.raises(UsageError, match="neither on the default branch main nor in this checkout"):
        trusted_settings(repo, {}, ActionInputs(config="ci/agent.yml"), "main", [])
    (repo / "ci").mkdir()
    (repo / "ci" / "agent.yml").write_text(BRANCH_CONFIG)  # only the branch has it: defaults apply
    trusted = trusted_settings(repo, {}, ActionInputs(config="./ci/agent.yml"), "main", [])
    assert trusted.text is None and trusted.settings.notes == ()
    assert trusted.settings.patch.config_paths == ("ci/agent.yml",), "still denied to patches"


def test_a_broken_default_branch_config_names_where_it_was_read(origin: Path) -> None:
    author = origin.parent / "author"
    git(author, "checkout", "-q", "main")
    (author / ".ci-agent.yml").write_text("patch:\n  max_filez: 3\n")
    git(author, "commit", "-q", "-am", "typo")
    git(author, "push", "-q", "origin", "main")
    repo = checkout(origin, "feature", shallow=True)
    with pytest.raises(ConfigError, match=r"max_filez.*read from the default branch main"):
        trusted_settings(repo, {}, ActionInputs(), "main", [])


def test_a_symbolic_link_is_not_a_configuration_file(origin: Path) -> None:
    author = origin.parent / "author"
    git(author, "checkout", "-q", "main")
    git(author, "rm", "-q", ".ci-agent.yml")
    (author / ".ci-agent.yml").symlink_to("/etc/passwd")
    git(author, "add", ".ci-agent.yml")
    git(author, "commit", "-q", "-m", "link")
    git(author, "push", "-q", "origin", "main")
    repo = checkout(origin, "feature", shallow=True)
    with pytest.raises(UsageError, match="not a regular file"):
        trusted_settings(repo, {}, ActionInputs(), "main", [])


def test_a_missing_default_branch_is_a_forge_error(origin: Path) -> None:
    from ci_agent.errors import ForgeError

    repo = checkout(origin, "feature", shallow=True)
    with pytest.raises(ForgeError, match="cannot fetch the default branch trunk"):
        trusted_settings(repo, {}, ActionInputs(), "trunk", [])


@pytest.mark.parametrize("name", ["/etc/passwd", "../x.yml", "..", ".", "a/../../x.yml"])
def test_config_paths_stay_inside_the_repository(name: str) -> None:
    with pytest.raises(UsageError, match="inside the repository"):
        config_path(name)


def test_config_paths_are_normalised() -> None:
    assert config_path("./.github/ci-agent.yml") == ".github/ci-agent.yml"
    assert config_path("") == ".ci-agent.yml"
