"""What every scenario harness shares, whatever CI runs ci-agent: the sample's wording (root cause,
summary, fix branch), reading the bare origin (tips, commits, files, trailers), running one
ci-agent job in this process or in a child one with a clean environment, and the fixture that
builds a `World` around a platform fake.

The GitHub (tests/github_scenarios/harness.py), GitLab (tests/gitlab_scenarios/harness.py) and
local (tests/scenarios/harness.py) harnesses build on it; each keeps what its platform does.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar

import pytest

import ci_agent
from ci_agent.cli.main import main
from ci_agent.engine.forge import parse_marker
from tests.fakes.anthropic_fake import AnthropicFake
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import PYTHON, Sample, SampleRepo, create_sample_repo, git

FIX_BRANCH = "ci-agent/fix/main"
ROOT_CAUSE = ("average_rating in shop/ratings.py divides by len(ratings), which is zero for a product "
              "without ratings, so tests/test_ratings.py::test_no_ratings_yet raises ZeroDivisionError.")
SUMMARY = "Return 0.0 from average_rating when there are no ratings."
OUTCOMES = {"fixed", "committed", "escalated", "gave_up", "nothing_to_do", "skipped", "refused"}
# Variables a job never inherits from the test process, whatever their prefix.
SECRETS = frozenset({"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "GITHUB_TOKEN", "CI"})


def parse_trailers(text: str) -> dict[str, list[str]]:
    """`git log --format=%(trailers:only,unfold)` output as {key: [values]}."""
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            found.setdefault(key.strip(), []).append(value.strip())
    return found


def trailers_of(repo: Path, rev: str) -> dict[str, list[str]]:
    return parse_trailers(git(repo, "log", "-1", "--format=%(trailers:only,unfold)", rev))


def push_file(repo: SampleRepo, branch: str, path: str, text: str, *, new_branch: bool = False) -> str:
    """A person commits `text` as `path` on `branch` (`new_branch`: a new one from main) in a clone
    of their own and pushes it to origin; returns the commit."""
    clone = Path(tempfile.mkdtemp(prefix="person-", dir=repo.path.parent))
    git(clone, "clone", "-q", "--branch", "main" if new_branch else branch, f"file://{repo.origin}", ".")
    git(clone, "config", "user.name", "Dev Person")
    git(clone, "config", "user.email", "dev@example.com")
    git(clone, "checkout", "-q", "-B", branch)
    (clone / path).parent.mkdir(parents=True, exist_ok=True)
    (clone / path).write_text(text)
    git(clone, "add", path)
    git(clone, "commit", "-q", "-m", f"change {path}")
    git(clone, "push", "-q", "origin", branch)
    return git(clone, "rev-parse", "HEAD").strip()


class OriginReads:
    """Reads of the scenario's bare origin, where every job's pushes land."""

    repo: SampleRepo

    def origin_tip(self, branch: str) -> str | None:
        out = git(self.repo.origin, "rev-parse", "--verify", "-q", f"refs/heads/{branch}^{{commit}}",
                  check=False)
        return out.strip() or None

    def origin_branches(self) -> list[str]:
        return git(self.repo.origin, "for-each-ref", "--format=%(refname:short)", "refs/heads/").split()

    def commits(self, base: str, branch: str) -> list[str]:
        return git(self.repo.origin, "rev-list", f"{base}..refs/heads/{branch}").split()

    def show(self, branch: str, path: str) -> str:
        return git(self.repo.origin, "show", f"refs/heads/{branch}:{path}")

    def trailers(self, rev: str) -> dict[str, list[str]]:
        return trailers_of(self.repo.origin, rev)


def _inherited(name: str, ours: tuple[str, ...]) -> bool:
    """Whether the job may see the test process's variable `name` (the runner starts clean)."""
    return not name.startswith(ours) and name not in SECRETS


def child_environment(variables: Mapping[str, str], ours: tuple[str, ...]) -> dict[str, str]:
    """The environment of `python -m ci_agent` as a job's container runs it: the test process's
    own minus anything of ours, plus the job's `variables`, importing the code under test (not
    whatever checkout the environment's editable install names)."""
    base = {k: v for k, v in os.environ.items() if _inherited(k, ours)}
    source = str(Path(ci_agent.__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (source, base.get("PYTHONPATH", "")) if p)
    return {**base, **variables, "PYTHONPATH": path}


def child_command(*argv: str) -> list[str]:
    return [sys.executable, "-m", "ci_agent", *argv]


def run_in_process(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str],
                   variables: Mapping[str, str], workspace: Path, argv: list[str],
                   ours: tuple[str, ...]) -> tuple[int, str, str]:
    """`ci_agent.cli.main.main(argv)` as a job would run it: only the job's `variables` of ours in
    the environment, in its `workspace`; returns the exit code and what it printed."""
    with monkeypatch.context() as patch:
        for name in list(os.environ):
            if not _inherited(name, ours):
                patch.delenv(name)
        for name, value in variables.items():
            patch.setenv(name, value)
        patch.chdir(workspace)
        capfd.readouterr()
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse: the job would end with this code
            code = exit_.code if isinstance(exit_.code, int) else 1
        out, err = capfd.readouterr()
    return code, out, err


class PlatformFake(Protocol):
    """A loopback platform fake serving a scenario's origin (tests/fakes, fake_site.py)."""

    failures: list[Any]

    def __enter__(self) -> Any: ...

    def __exit__(self, *exc: object) -> Any: ...


FakeT = TypeVar("FakeT", bound=PlatformFake)
WorldT = TypeVar("WorldT")
T = TypeVar("T", bound=Mapping[str, Any])


def world_builder(tmp_path: Path, api: AnthropicFake, monkeypatch: pytest.MonkeyPatch,
                  capfd: pytest.CaptureFixture[str], serve: Callable[[Path], FakeT],
                  world: Callable[[Path, SampleRepo, FakeT, AnthropicFake, pytest.MonkeyPatch,
                                   pytest.CaptureFixture[str]], WorldT]) -> Iterator[Callable[..., WorldT]]:
    """The body of a `make_world` fixture: `build(sample, substitutions)` makes the sample's repo,
    starts the platform fake (`serve(origin)`) on it and returns the `world` around them; on
    teardown every fake is stopped and must have seen no unexpected request."""
    fakes: list[FakeT] = []
    # A request past the end of a test's script gets a give_up (not a 500 the client would retry);
    # every test counts the requests, so an extra one still fails it.
    api.reply_always(model.give_up("(the scenario's script has no more answers)"))

    def build(sample: Sample = PYTHON, substitutions: dict[str, str] | None = None) -> WorldT:
        repo = create_sample_repo(tmp_path, sample, substitutions)
        fake = serve(repo.origin)
        fake.__enter__()
        fakes.append(fake)
        return world(tmp_path, repo, fake, api, monkeypatch, capfd)

    yield build
    for fake in fakes:
        fake.__exit__(None, None, None)
        assert fake.failures == [], fake.failures


def with_marker(items: Iterable[T]) -> list[T]:
    """The comments / notes of `items` that carry ci-agent's status marker."""
    return [i for i in items if parse_marker(i["body"]) is not None]
