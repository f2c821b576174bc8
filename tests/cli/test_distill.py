"""`ci-agent distill` end to end through main(), on the real shared fixtures."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from lxml import etree

from ci_agent.cli.main import main
from ci_agent.parsers import XML_PARSERS
from tests.conftest import REPO_ROOT, SHARED_FIXTURES, shared_fixture

SCHEMA_FILE = REPO_ROOT / "ci_agent" / "schemas" / "report-v1.json"
SCHEMA = json.loads(SCHEMA_FILE.read_text())
CS_ERRORS = "dotnet-logs/cs-errors-multi-win.log"
NUGET = "dotnet-logs/nuget-restore-nu1605-warnaserror.log"
YAMI_TRX = "enricomi/trx/yami_YAMILEX_2015-10-24_04_18_59.trx"
BIG_TRX = "enricomi/trx/nunit/FluentValidation.Tests.trx"
Cap = pytest.CaptureFixture[str]


def _run(capsys: Cap, *argv: str) -> tuple[int, str, str]:
    code = main(["distill", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _json(capsys: Cap, *argv: str) -> dict[str, object]:
    code, out, err = _run(capsys, "--output", "json", *argv)
    assert code == 0, err
    data: dict[str, object] = json.loads(out)
    jsonschema.validate(data, SCHEMA)
    return data


def test_msbuild_log_gives_the_expected_unique_errors_and_warnings(capsys: Cap) -> None:
    log = shared_fixture(CS_ERRORS)
    expected = json.loads(log.with_name(log.name + ".expected.json").read_text())
    data = _json(capsys, str(log))
    diags = data["diagnostics"]
    assert isinstance(diags, list)
    errors = [d for d in diags if d["severity"] == "error"]
    warnings = [d for d in diags if d["severity"] == "warning"]
    assert (len(errors), len(warnings)) == (20, 3) == (expected["unique_error_count"],
                                                       expected["unique_warning_count"])
    assert diags[:20] == errors  # errors first
    assert all(d["in_repo"] and d["file"].startswith("Games/StarCoreDefense/") for d in diags)
    assert all(d["project"] == "PureBattleGame.csproj" for d in diags)
    assert data["sources"] == [{"path": str(log), "format": "msbuild", "bytes": log.stat().st_size}]
    assert data["stats"] == {"input_bytes": log.stat().st_size, "printed_diagnostics": 46,
                             "unique_diagnostics": 23, "llm_bytes": data["stats"]["llm_bytes"]}  # type: ignore[index]


def test_real_trx_gives_failures(capsys: Cap) -> None:
    data = _json(capsys, str(shared_fixture(YAMI_TRX)))
    tests = data["tests"]
    assert isinstance(tests, dict)
    # By eye in the file: 25 results; Failed/Error/Aborted ones are failures for us (EnricoMi
    # counts Aborted as skipped; DESIGN.md §4.1 says aborted is a failure).
    assert tests["total"] == 25
    assert tests["failed"] == len(tests["failures"]) == 4
    assert {f["outcome"] for f in tests["failures"]} >= {"failed", "aborted"}
    assert data["run_errors"]


def test_llm_output_is_the_default_and_shrinks_a_failed_msbuild_log(capsys: Cap) -> None:
    log = shared_fixture(NUGET)
    code, out, _ = _run(capsys, str(log))
    assert code == 0
    assert out.startswith("ci-agent report: 44 errors, 33 warnings")
    llm_bytes = len(out.encode("utf-8"))
    assert llm_bytes <= 8000
    # DESIGN.md §6: at least the article's 4.3x on a failed MSBuild build.
    assert log.stat().st_size / llm_bytes >= 4.3
    assert "more errors omitted (see the JSON report)" in out or "more warnings omitted" in out


def test_llm_output_shrinks_a_large_trx_170_fold(capsys: Cap) -> None:
    trx = shared_fixture(BIG_TRX)
    code, out, _ = _run(capsys, str(trx))
    assert code == 0
    assert "tests: 0 failed, 803 passed, 1 skipped of 804" in out
    assert trx.stat().st_size / len(out.encode("utf-8")) >= 170


def test_json_stats_llm_bytes_is_the_llm_rendering_size(capsys: Cap) -> None:
    log = str(shared_fixture(NUGET))
    _, llm, _ = _run(capsys, "--max-bytes", "3000", log)
    data = _json(capsys, "--max-bytes", "3000", log)
    assert data["stats"]["llm_bytes"] == len(llm.encode("utf-8")) <= 3000  # type: ignore[index]
    assert len(data["diagnostics"]) == 77  # type: ignore[arg-type]  # nothing dropped from JSON


def test_stdin(capsys: Cap, monkeypatch: pytest.MonkeyPatch) -> None:
    log = shared_fixture(CS_ERRORS)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(log.read_bytes())))
    data = _json(capsys, "-")
    assert data["sources"] == [{"path": "<stdin>", "format": "msbuild", "bytes": log.stat().st_size}]
    assert len(data["diagnostics"]) == 23  # type: ignore[arg-type]


def test_recursive_glob_is_expanded_and_sorted(capsys: Cap) -> None:
    pattern = str(SHARED_FIXTURES / "enricomi" / "trx" / "**" / "*.trx")
    data = _json(capsys, pattern)
    paths = [s["path"] for s in data["sources"]]  # type: ignore[attr-defined]
    expected = sorted(str(p) for p in (SHARED_FIXTURES / "enricomi" / "trx").rglob("*.trx"))
    assert paths == expected
    assert any("/nunit/" in p for p in paths)  # found in sub-folders


def test_missing_path_is_named_on_stderr_and_the_rest_is_still_read(
        capsys: Cap, tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.log")
    code, out, err = _run(capsys, missing, str(tmp_path / "*.trx"), str(shared_fixture(CS_ERRORS)))
    assert code == 0
    assert f"{missing!r}: no such file" in err
    assert "no file matches" in err and "*.trx" in err
    assert out.startswith("ci-agent report: 20 errors, 3 warnings")


def test_nothing_readable_is_exit_1_with_a_clear_error(capsys: Cap, tmp_path: Path) -> None:
    code, out, err = _run(capsys, str(tmp_path / "nope.log"))
    assert code == 1 and out == ""
    assert "no input could be read" in err and "nope.log" in err


def test_unreadable_file_names_the_path(capsys: Cap, tmp_path: Path) -> None:
    dangling = tmp_path / "build.log"
    os.symlink(tmp_path / "gone", dangling)  # exists as a name, cannot be opened (works as root too)
    code, _, err = _run(capsys, str(dangling))
    assert code == 1
    assert f"cannot read {dangling}" in err


def test_max_bytes_too_small_is_a_usage_error(capsys: Cap) -> None:
    code, _, err = _run(capsys, "--max-bytes", "10", str(shared_fixture(CS_ERRORS)))
    assert code == 2 and "--max-bytes" in err


def test_github_output_has_only_our_commands(capsys: Cap) -> None:
    code, out, _ = _run(capsys, "--output", "github", str(shared_fixture(NUGET)))
    assert code == 0
    lines = out.splitlines()
    assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in lines)
    assert sum(line.startswith("::error ") for line in lines) == 10
    assert "34 errors, 23 warnings not annotated" in lines[-1]


def test_markdown_and_codequality(capsys: Cap) -> None:
    log = str(shared_fixture(CS_ERRORS))
    code, md, _ = _run(capsys, "--output", "markdown", log)
    assert code == 0 and md.startswith("## ci-agent: 20 errors, 3 warnings")
    code, cq, _ = _run(capsys, "--output", "codequality", log)
    issues = json.loads(cq)
    assert len(issues) == 23 and issues[0]["location"]["path"].startswith("Games/StarCoreDefense/")


def test_junit_conversion_of_a_trx(capsys: Cap) -> None:
    code, out, _ = _run(capsys, "--output", "junit", str(shared_fixture(BIG_TRX)))
    assert code == 0
    root = etree.fromstring(out.encode("utf-8"))
    assert root.tag == "testsuites" and root.get("tests") == "804" and root.get("skipped") == "1"
    assert len(root.findall(".//testcase")) == 804
    if "junit" in XML_PARSERS:  # our own JUnit reader reads back the same counts as the TRX reader
        back = XML_PARSERS["junit"].parse(io.BytesIO(out.encode("utf-8")), "converted.xml")
        assert (back.counts.total, back.counts.skipped, back.counts.failed) == (804, 1, 0)  # type: ignore[union-attr]
        assert not back.run_errors


def test_report_validates_with_check_jsonschema(capsys: Cap, tmp_path: Path) -> None:
    _, out, _ = _run(capsys, "--output", "json", str(shared_fixture(NUGET)), str(shared_fixture(YAMI_TRX)))
    report = tmp_path / "report.json"
    report.write_text(out, encoding="utf-8")
    exe = Path(sys.executable).with_name("check-jsonschema")
    argv = [str(exe) if exe.exists() else "check-jsonschema", "--schemafile", str(SCHEMA_FILE), str(report)]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_explicit_repo_root(capsys: Cap) -> None:
    root = "C:\\Users\\18229\\.openclaw\\workspace"
    data = _json(capsys, "--repo-root", root, str(shared_fixture(CS_ERRORS)))
    assert data["diagnostics"][0]["file"].startswith("PureBattleGame/Games/")  # type: ignore[index]


def test_unparseable_input_is_a_run_error_in_the_report_not_a_crash(capsys: Cap, tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    binary = tmp_path / "blob.trx"
    binary.write_bytes(bytes(range(256)) * 4)
    data = _json(capsys, str(empty), str(binary))
    sources = {e["source"] for e in data["run_errors"]}  # type: ignore[attr-defined]
    assert sources == {str(empty), str(binary)}


def test_forced_and_unknown_input_format(capsys: Cap) -> None:
    log = str(shared_fixture(CS_ERRORS))
    data = _json(capsys, "--format", "msbuild", log)
    assert data["sources"][0]["format"] == "msbuild"  # type: ignore[index]
    code, _, err = _run(capsys, "--format", "nope", log)
    assert code == 2 and "unknown format 'nope'" in err


def test_git_root_of_the_cwd_makes_real_gcc_paths_repo_relative(
        capsys: Cap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.fail("gcc not installed: the end-to-end compiler test needs it")
    repo = tmp_path / "repo"
    (repo / "src" / "c").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    source = repo / "src" / "c" / "broken.c"
    shutil.copy(REPO_ROOT / "tests" / "fixtures" / "compilers" / "src" / "c" / "broken.c", source)
    # Real gcc output with absolute paths, as a CI runner's build step would print them.
    build = subprocess.run([gcc, "-fsyntax-only", str(source)], capture_output=True, timeout=60)
    log = tmp_path / "build.log"
    log.write_bytes(build.stderr)
    monkeypatch.chdir(repo / "src")
    data = _json(capsys, str(log))
    files = {d["file"] for d in data["diagnostics"]}  # type: ignore[attr-defined]
    assert files == {"src/c/broken.c"}
    assert all(d["in_repo"] for d in data["diagnostics"])  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "name", ["cs-errors-multi-win.log", "msbuildexe-netfx-msb3822.log", "msb3026-retry-warnings-crlf.log",
             "gha-docker-buildkit-cs0023.log"],
)
def test_failed_builds_with_a_duplicated_summary_shrink_4_3_fold_with_nothing_lost(
    capsys: Cap, name: str
) -> None:
    """DESIGN.md §6 on the real logs that print every diagnostic inline and again in the summary:
    at least 4.3x fewer bytes for the model, and still every unique location in the text."""
    log = shared_fixture(f"dotnet-logs/{name}")
    code, out, _ = _run(capsys, str(log))
    assert code == 0
    assert log.stat().st_size / len(out.encode("utf-8")) >= 4.3
    assert "omitted" not in out
    expected = json.loads(log.with_name(name + ".expected.json").read_text())
    for item in expected["errors"] + expected["warnings"]:
        if item["line"] is not None:
            column = item["column"]
            position = f"({item['line']},{column})" if column is not None else f"({item['line']})"
            assert position in out, (item, out)
        assert (item["code"] or "") in out
