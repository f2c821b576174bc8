"""`ci-agent patch check|apply` through `ci_agent.cli.main.main`, on real repositories."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from ci_agent.cli.main import main
from tests.patch.conftest import Repo
from tests.patch.test_apply import FIX


def write_patch(tmp_path: Path, text: str, name: str = "fix.patch") -> str:
    path = tmp_path / name
    path.write_bytes(text.encode())
    return str(path)


def test_check_ok_json_changes_nothing(repo: Repo, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    before = repo.snapshot()
    code = main(["patch", "check", write_patch(tmp_path, FIX), "--repo", str(repo.path), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out == {"ok": True, "files": ["src/App/Calc.cs"], "added": 1, "removed": 1, "rejections": [],
                   "build_change": []}
    assert repo.snapshot() == before


def test_apply_ok_text(repo: Repo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["patch", "apply", write_patch(tmp_path, FIX), "--repo", str(repo.path)])
    assert code == 0
    assert capsys.readouterr().out.startswith("applied: 1 file(s), +1 -1\n  src/App/Calc.cs\n")
    assert b"a + b" in repo.read("src/App/Calc.cs")
    assert repo.staged() == "M\tsrc/App/Calc.cs\n"


def test_rejected_json_and_exit_1(repo: Repo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hostile = FIX + "--- /dev/null\n+++ b/.github/workflows/ci.yml\n@@ -0,0 +1 @@\n+on: push\n"
    before = repo.snapshot()
    code = main(["patch", "apply", write_patch(tmp_path, hostile), "--repo", str(repo.path), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    assert set(out) == {"ok", "files", "added", "removed", "rejections", "build_change"}
    assert out["ok"] is False
    assert out["files"] == ["src/App/Calc.cs", ".github/workflows/ci.yml"]
    rejections = [(r["rule"], r["path"]) for r in out["rejections"]]
    assert rejections == [("path.denied", ".github/workflows/ci.yml")]
    assert set(out["rejections"][0]) == {"rule", "path", "message"}
    assert repo.snapshot() == before


def test_rejected_text_lists_rules(repo: Repo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["patch", "check", write_patch(tmp_path, "no diff here"), "--repo", str(repo.path)])
    assert code == 1
    assert "[patch.empty]" in capsys.readouterr().out


def test_stdin_keeps_crlf_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    from tests.patch.conftest import make_repo

    repo = make_repo(tmp_path / "r", {"a.txt": b"one\r\ntwo\r\n"})
    patch = "--- a/a.txt\r\n+++ b/a.txt\r\n@@ -1,2 +1,2 @@\r\n one\r\n-two\r\n+TWO\r\n"

    class FakeStdin:
        buffer = io.BytesIO(patch.encode())

    monkeypatch.setattr(sys, "stdin", FakeStdin())
    code = main(["patch", "apply", "-", "--repo", str(repo.path / "."), "--json"])
    assert code == 0, capsys.readouterr().out
    assert repo.read("a.txt") == b"one\r\nTWO\r\n"


def test_repo_defaults_to_current_directory_subdir(repo: Repo, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo.path / "src")
    assert main(["patch", "check", write_patch(tmp_path, FIX)]) == 0


def test_config_from_repo_applies(repo: Repo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write(".ci-agent.yml", "patch:\n  max_changed_lines: 1\n")
    repo.commit_all("config")
    assert main(["patch", "check", write_patch(tmp_path, FIX), "--repo", str(repo.path), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["rejections"][0]["rule"] == "size.lines"


def test_bad_config_is_exit_2_naming_the_key(repo: Repo, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    repo.write(".ci-agent.yml", "patch:\n  max_file: 3\n")
    assert main(["patch", "check", write_patch(tmp_path, FIX), "--repo", str(repo.path)]) == 2
    err = capsys.readouterr().err
    assert "patch.max_file" in err and "max_files" in err


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["patch", "check", "x.patch", "--repo", str(tmp_path)]) == 2
    assert "not inside a git repository" in capsys.readouterr().err
    assert main(["patch", "check", "x.patch", "--repo", str(tmp_path / "nope")]) == 2


def test_missing_patch_file_is_exit_1(repo: Repo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["patch", "apply", str(tmp_path / "missing.patch"), "--repo", str(repo.path)]) == 1
    assert "cannot read patch" in capsys.readouterr().err


def test_non_utf8_patch_is_rejected_not_a_crash(repo: Repo, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "latin1.patch"
    path.write_bytes(b"--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@ caf\xe9\n-# demo\n+# d\xe9mo\n")
    assert main(["patch", "check", str(path), "--repo", str(repo.path), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["rejections"][0]["rule"] == "patch.encoding"
