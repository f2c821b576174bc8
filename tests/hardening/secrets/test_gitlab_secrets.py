"""Canary secrets on `ci-agent fix --gitlab` that only GitLab's runner plants: the job token in
the checkout's origin URL. (The canaries both forges share are test_forge_secrets.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitlab_scenarios.conftest import anthropic_fake, forge_waits, make_world, world
from tests.gitlab_scenarios.harness import FIX_BRANCH, World
from tests.hardening.platforms import GitLabSide
from tests.hardening.secrets.canaries import GIT_CONFIG, ORIGIN_URL, Canary, custom_secret, scan
from tests.hardening.secrets.on_forge import env_canaries, places
from tests.scenarios.sample_repos import git

__all__ = ["anthropic_fake", "forge_waits", "make_world", "world"]


def test_the_runners_credentialed_origin_url_goes_nowhere(world: World,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """GitLab runners check out with `https://gitlab-ci-token:<CI_JOB_TOKEN>@host/group/project.git`
    as origin, in `.git/config`. Git is pointed at the bare origin by `url.<base>.insteadOf`, so
    fetch and push work while ci-agent reads the credentialed URL as the runner leaves it."""
    side = GitLabSide(world)
    planted = env_canaries(side, monkeypatch)
    job_token = f"glcbt-{custom_secret()}"
    world.gitlab.add_token(job_token, "maint", "job")
    planted.append(Canary(ORIGIN_URL, job_token))
    runner_url = f"https://gitlab-ci-token:{job_token}@gitlab.example.com/acme/shop.git"
    plain_clone = world.clone

    def runner_clone(ref: str, name: str) -> Path:
        path = plain_clone(ref, name)
        git(path, "remote", "set-url", "origin", runner_url)
        git(path, "config", f"url.file://{world.repo.origin}.insteadOf", runner_url)
        return path

    world.clone = runner_clone  # type: ignore[method-assign]
    red = world.pipeline("main")
    side.answer("broken", "fix")

    run = side.run(red, env={"CI_JOB_TOKEN": job_token})

    assert run.exit_code == 0, str(run)
    assert run.outcome == "committed", str(run)
    commits = git(world.repo.origin, "log", "-p", f"refs/heads/{FIX_BRANCH}", "--not", red.sha,
                  "--format=%B")
    assert commits.strip(), "the fix was pushed"
    found = places(side, run, commits)
    config = found.pop(GIT_CONFIG)
    assert config.count(job_token) == 2, "the runner's URL (and our test's insteadOf) only: nothing added"
    assert scan("gitlab", planted, found) == []
    assert scan("gitlab", planted[:-1], {GIT_CONFIG: config}) == []
