"""The sample repositories themselves: each fails for real, the scripted fix fixes it for real.

These checks use only git, pytest, make/gcc and the dotnet replay shim — no ci-agent loop — so
a scenario failure later points at ci-agent, not at a broken sample.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scenarios.sample_repos import (
    DOTNET,
    DOTNET_LOG,
    PYTHON,
    PYTHON_CANARY,
    PYTHON_HOSTILE,
    C,
    Sample,
    SampleRepo,
    create_sample_repo,
    install_dotnet_shim,
    run,
    shim_calls,
)


def distilled(output: str, repo: Path) -> dict[str, object]:
    log = repo.parent / "build.log"
    log.write_text(output, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "ci_agent", "distill", str(log), "-o", "json"],
                          cwd=repo, text=True, capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


def apply(repo: SampleRepo, diff: str) -> None:
    done = subprocess.run(["git", "apply", "--index", "-"], cwd=repo.path, input=diff, text=True,
                          capture_output=True, check=False)
    assert done.returncode == 0, f"the scripted diff does not apply: {done.stderr}\n{diff}"


def failed_names(report: dict[str, object]) -> set[str]:
    tests = report["tests"]
    assert isinstance(tests, dict)
    return {f["name"] for f in tests["failures"]}


def test_python_sample_fails_in_the_package_and_the_fix_fixes_it(tmp_path: Path) -> None:
    repo = create_sample_repo(tmp_path, PYTHON)
    broken = run(PYTHON.command, repo.path)
    assert broken.returncode == 1, broken.stdout
    report = distilled(broken.stdout, repo.path)
    assert {n.rsplit("::", 1)[-1].rsplit(".", 1)[-1] for n in failed_names(report)} == {
        "test_no_ratings_yet", "test_stars_of_a_new_product"}
    assert "shop/ratings.py:10: ZeroDivisionError" in broken.stdout  # the bug is in the package
    apply(repo, repo.diff(PYTHON.fix))
    fixed = run(PYTHON.verify, repo.path)
    assert fixed.returncode == 0, fixed.stdout
    assert "4 passed" in fixed.stdout


def test_python_sample_history_works_then_breaks(tmp_path: Path) -> None:
    repo = create_sample_repo(tmp_path, PYTHON)
    assert repo.git("log", "--format=%s").splitlines() == [PYTHON.bug_message, "initial version"]
    assert repo.git("rev-parse", "origin/main") == repo.git("rev-parse", "HEAD")
    repo.git("checkout", "-q", "HEAD~1")
    assert run(PYTHON.verify, repo.path).returncode == 0


@pytest.mark.parametrize("name", sorted(PYTHON.wrong))
def test_python_wrong_fixes_apply_but_fail_verification(tmp_path: Path, name: str) -> None:
    repo = create_sample_repo(tmp_path, PYTHON)
    apply(repo, repo.diff(PYTHON.wrong[name]))
    assert run(PYTHON.verify, repo.path).returncode == 1


def test_wrong_fixes_floor_and_floor_float_fail_the_same_tests(tmp_path: Path) -> None:
    """The three-failure scenario relies on this to see a repeated fingerprint (no progress)."""
    names = []
    for wrong in ("floor", "floor_float"):
        repo = create_sample_repo(tmp_path / wrong, PYTHON)
        apply(repo, repo.diff(PYTHON.wrong[wrong]))
        names.append(failed_names(distilled(run(PYTHON.verify, repo.path).stdout, repo.path)))
    assert names[0] == names[1] != set()


def test_canary_sample_prints_the_secret_in_its_build_log(tmp_path: Path) -> None:
    canary = "ci-agent-canary-0123456789abcdef"
    repo = create_sample_repo(tmp_path, PYTHON_CANARY, {"CANARY": canary})
    assert canary in (repo.path / "shop" / "settings.py").read_text()
    broken = run(PYTHON_CANARY.command, repo.path, env={**os.environ, "CANARY_TOKEN": canary})
    assert broken.returncode == 1
    # in the failure message (what a distiller keeps), and in captured output
    assert f"AssertionError: reviews summary failed for CANARY_TOKEN={canary}" in broken.stdout
    assert f"using CANARY_TOKEN={canary}" in broken.stdout
    apply(repo, repo.diff(PYTHON_CANARY.fix))
    assert run(PYTHON_CANARY.verify, repo.path, env={**os.environ, "CANARY_TOKEN": canary}).returncode == 0


def test_hostile_sample_prints_hostile_text_raw(tmp_path: Path) -> None:
    repo = create_sample_repo(tmp_path, PYTHON_HOSTILE)
    broken = run(PYTHON_HOSTILE.command, repo.path)
    assert broken.returncode == 1
    for raw in ("<!-- ci-agent:v1 ", "\u200b", "\u202e", "</untrusted-data>", "ignore previous instructions"):
        assert raw in broken.stdout, repr(raw)
    apply(repo, repo.diff(PYTHON_HOSTILE.fix))
    assert run(PYTHON_HOSTILE.verify, repo.path).returncode == 0


def test_c_sample_has_a_gcc_error_and_the_fix_fixes_it(tmp_path: Path) -> None:
    repo = create_sample_repo(tmp_path, C)
    broken = run(C.command, repo.path)
    output = broken.stdout + broken.stderr
    assert broken.returncode != 0
    report = distilled(output, repo.path)
    errors = [d for d in report["diagnostics"] if d["severity"] == "error"]  # type: ignore[attr-defined]
    assert [(d["file"], d["line"]) for d in errors] == [("src/stats.c", 9)]
    apply(repo, repo.diff(C.fix))
    fixed = run(C.verify, repo.path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr


def test_c_wrong_fix_compiles_but_fails_the_check(tmp_path: Path) -> None:
    repo = create_sample_repo(tmp_path, C)
    apply(repo, repo.diff(C.wrong["zero"]))
    assert run(C.command, repo.path).returncode == 0
    assert run(C.verify, repo.path).returncode != 0


def _env_with(bin_dir: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


def test_dotnet_layout_matches_the_real_log(tmp_path: Path) -> None:
    """The log says MetricsGrid.razor(49,90): our file has the un-awaited call right there."""
    repo = create_sample_repo(tmp_path, DOTNET)
    line = (repo.path / DOTNET.fix.path).read_text(encoding="utf-8").split("\n")[48]
    assert line[89:].startswith("LoadMetricsAsync();")
    assert b"MetricsGrid.razor(49,90): error CS4014" in DOTNET_LOG.read_bytes()
    report = distilled(DOTNET_LOG.read_text(encoding="utf-8"), repo.path)
    assert [(d["file"], d["line"], d["column"], d["in_repo"]) for d in report["diagnostics"]] == [  # type: ignore[attr-defined]
        (DOTNET.fix.path, 49, 90, True)]


def test_dotnet_shim_replays_the_log_until_the_fix(tmp_path: Path) -> None:
    repo = create_sample_repo(tmp_path, DOTNET)
    calls = install_dotnet_shim(tmp_path / "bin")
    env = _env_with(tmp_path / "bin")
    broken = subprocess.run(["dotnet", "build"], cwd=repo.path, env=env, capture_output=True, check=False)
    assert broken.returncode == 1
    assert broken.stdout == DOTNET_LOG.read_bytes()  # byte for byte, nothing rewritten
    apply(repo, repo.diff(DOTNET.fix))
    fixed = subprocess.run(["dotnet", "build"], cwd=repo.path, env=env, text=True, capture_output=True,
                           check=False)
    assert fixed.returncode == 0
    assert "Build succeeded." in fixed.stdout
    assert [c["cwd"] for c in shim_calls(calls)] == [str(repo.path)] * 2


def test_dotnet_shim_refuses_other_verbs(tmp_path: Path) -> None:
    create_sample_repo(tmp_path, DOTNET)
    install_dotnet_shim(tmp_path / "bin")
    done = subprocess.run(["dotnet", "test"], cwd=tmp_path, env=_env_with(tmp_path / "bin"), text=True,
                          capture_output=True, check=False)
    assert done.returncode == 2
    assert "only `dotnet build`" in done.stderr


@pytest.mark.parametrize("sample", [PYTHON, C, DOTNET], ids=lambda s: s.name)
def test_fix_diffs_are_plain_unified_diffs(tmp_path: Path, sample: Sample) -> None:
    diff = create_sample_repo(tmp_path, sample).diff(sample.fix)
    assert diff.startswith(f"--- a/{sample.fix.path}\n+++ b/{sample.fix.path}\n@@ -")
